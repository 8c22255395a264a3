// A fault drill, shared by the fault tests and `npm run bench:faults`: a PostgreSQL server of the
// drill's own, a fault proxy in front of it (fault-proxy.ts), two real server processes that reach
// the database only through the proxy, an organization with an API key, and v1 traffic from several
// lanes that keeps every answer with its timing. A rule blocks the payments of 95 or more, and a
// webhook endpoint on a receiver of the drill's takes their `decision.block` events, so deliveries
// go on through the faults too. After the faults, `settle` sends each refused
// transaction again as a client honouring Retry-After would, and `audit` reads the decision log
// directly (not through the proxy): every transaction acknowledged with 200 must be there exactly
// once, and nothing else.

import postgres from 'postgres';
import { startFaultProxy, type FaultProxy } from './fault-proxy.ts';
import { startOwnPostgres, type OwnPostgres } from './own-postgres.ts';
import { SignIn, spawnServer, type KeyedOrganization, type ServerProcess } from './processes.ts';
import { Receiver } from './receiver.ts';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Longer than any answer may take, fault or not: past it a request counts as hung. */
export const HANG_MS = 15_000;

export interface Answer {
  status: number;
  reason: string | undefined;
  retryAfter: string | null;
  /** When it was sent and answered (performance.now()), and how long it took. */
  sentAt: number;
  at: number;
  ms: number;
  text: string;
}

export interface Traffic {
  /** Every transaction id sent, with its answers in order (a retry appends). */
  answers: Map<string, Answer[]>;
  /** Requests that got no answer within HANG_MS. */
  hung: string[];
  stop(): Promise<void>;
}

export interface Audit {
  /** Transaction ids of the traffic stored in the decision log. */
  stored: number;
  /** Acknowledged with 200 but not stored. */
  missing: string[];
  /** Stored more than once. */
  duplicates: string[];
  /** Answered 200 more than once with different bodies. */
  differing: string[];
}

const percentile = (xs: number[], p: number): number => {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
export { percentile };

export class FaultDrill {
  readonly pg: OwnPostgres;
  readonly proxy: FaultProxy;
  private readonly signIn: SignIn;
  readonly servers: ServerProcess[];
  readonly org: KeyedOrganization;
  readonly receiver: Receiver;

  private constructor(pg: OwnPostgres, proxy: FaultProxy, signIn: SignIn, servers: ServerProcess[], org: KeyedOrganization, receiver: Receiver) {
    this.pg = pg;
    this.proxy = proxy;
    this.signIn = signIn;
    this.servers = servers;
    this.org = org;
    this.receiver = receiver;
  }

  /** Starts the server, the proxy and two processes (`env` added to theirs). The caller must `stop`. */
  static async start(env: Record<string, string> = {}): Promise<FaultDrill> {
    const pg = await startOwnPostgres();
    const proxy = await startFaultProxy({ host: '127.0.0.1', port: pg.port });
    const signIn = await SignIn.start();
    const receiver = await new Receiver().start();
    const servers: ServerProcess[] = [];
    try {
      const serverEnv = { ...signIn.env, DATABASE_URL: proxy.via(pg.url), WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', ...env };
      servers.push(await spawnServer(serverEnv, { stdout: 'pipe' }));
      servers.push(await spawnServer(serverEnv, { stdout: 'pipe' }));
      const org = await signIn.organization(servers[0]!.base, 'faults');
      const post = async (path: string, body: unknown) => {
        const res = await fetch(`${servers[0]!.base}/api/organizations/${org.id}${path}`, { method: 'POST', headers: org.member, body: JSON.stringify(body) });
        if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      };
      await post('/rules', { name: 'Large', expression: 'amount >= 95.0', action: 'block', status: 'active' });
      await post('/webhooks', { url: receiver.url, events: ['decision.block'] });
      // Both processes learn of the endpoint by a notification; a second is the documented bound.
      await sleep(1_000);
      const drill = new FaultDrill(pg, proxy, signIn, servers, org, receiver);
      // Both load the organization before any fault.
      for (const [k, s] of servers.entries()) {
        const warm = await drill.score(s, `warm-${k}`, k);
        if (warm.status !== 200) throw new Error(`warming up ${s.base}: ${warm.status} ${warm.text}`);
      }
      return drill;
    } catch (e) {
      await Promise.all(servers.map((s) => s.stop('SIGKILL')));
      await receiver.close();
      await signIn.close();
      await proxy.stop();
      await pg.destroy();
      throw e;
    }
  }

  /** What each process that exited wrote last (for a failure's report). */
  exits(): string[] {
    return this.servers
      .filter((s) => s.child.exitCode !== null || s.child.signalCode !== null)
      .map((s) => `${s.base} (exit ${s.child.exitCode ?? s.child.signalCode}): ${s.stderr().slice(-4000)}`);
  }

  #stopped = false;

  /** Stops everything; once (a test calls it at its end and again in its teardown). */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    await Promise.all(this.servers.map((s) => s.stop('SIGKILL')));
    await this.receiver.close();
    await this.signIn.close();
    await this.proxy.stop();
    await this.pg.destroy();
  }

  /** One v1 score of a new transaction (`i` picks its customer, merchant and amount). */
  async score(s: ServerProcess, id: string, i: number, customer = `c-${i % 11}`): Promise<Answer> {
    const sentAt = performance.now();
    const res = await fetch(`${s.base}/api/v1/risk/score`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${this.org.secret}` },
      body: JSON.stringify({ transaction_id: id, amount: 10 + (i % 90), customer_id: customer, merchant_id: `m-${i % 5}` }),
      signal: AbortSignal.timeout(HANG_MS),
    });
    const text = await res.text();
    let reason: string | undefined;
    try {
      reason = JSON.parse(text)?.detail?.reason;
    } catch {
      reason = undefined;
    }
    const at = performance.now();
    return { status: res.status, reason, retryAfter: res.headers.get('retry-after'), sentAt, at, ms: at - sentAt, text };
  }

  /** `lanes` lanes, each sending new transactions one after another to the processes in turn. */
  traffic(lanes = 4, prefix = 'r'): Traffic {
    const answers = new Map<string, Answer[]>();
    const hung: string[] = [];
    let stopped = false;
    let next = 0;
    const running = Array.from({ length: lanes }, async (_, lane) => {
      while (!stopped) {
        const i = next++;
        const id = `${prefix}-${i}`;
        try {
          answers.set(id, [await this.score(this.servers[lane % this.servers.length]!, id, i)]);
        } catch (e) {
          hung.push(`${id}: ${(e as Error).message}`);
          answers.set(id, []);
        }
        await sleep(5);
      }
    });
    return {
      answers,
      hung,
      async stop() {
        stopped = true;
        await Promise.all(running);
      },
    };
  }

  /** Sends every transaction not yet answered 200 again, honouring Retry-After, until it is (at
   *  most 10 rounds, 8 at a time). Returns the ids still not acknowledged. */
  async settle(answers: Map<string, Answer[]>): Promise<string[]> {
    const acknowledged = (tries: Answer[]) => tries.some((x) => x.status === 200);
    for (let round = 0; round < 10; round++) {
      const left = [...answers].filter(([, tries]) => !acknowledged(tries));
      if (left.length === 0) break;
      await sleep(Math.max(0, ...left.map(([, tries]) => Number(tries[tries.length - 1]?.retryAfter ?? 1))) * 1000);
      for (let k = 0; k < left.length; k += 8) {
        await Promise.all(
          left.slice(k, k + 8).map(async ([id, tries]) => {
            const i = Number(id.slice(id.lastIndexOf('-') + 1));
            tries.push(await this.score(this.servers[i % this.servers.length]!, id, i));
          }),
        );
      }
    }
    return [...answers].filter(([, tries]) => !acknowledged(tries)).map(([id]) => id);
  }

  /** Whether a transaction `a` records reaches `b`'s features (its live feed) within 5 s, and when. */
  async feedCarries(a: ServerProcess, b: ServerProcess): Promise<{ seen: boolean; ms: number }> {
    const id = `feed-${performance.now().toFixed(0)}`;
    const recorded = await this.score(a, id, 0, 'c-feed');
    if (recorded.status !== 200) throw new Error(`recording ${id}: ${recorded.status} ${recorded.text}`);
    const started = performance.now();
    for (let k = 1; performance.now() - started < 5_000; k++) {
      const probe = JSON.parse((await this.score(b, `${id}-probe-${k}`, k, 'c-feed')).text);
      if ((probe.graph_evidence?.['c-feed'] ?? []).some((e: { transaction_id: string }) => e.transaction_id === id))
        return { seen: true, ms: performance.now() - started };
      await sleep(50);
    }
    return { seen: false, ms: performance.now() - started };
  }

  /** The acknowledged transactions that were blocked and whose `decision.block` event has not
   *  reached the receiver within `waitMs` (deliveries are retried with backoff). */
  async undelivered(answers: Map<string, Answer[]>, waitMs = 30_000): Promise<string[]> {
    const blocked = new Set<string>();
    for (const [id, tries] of answers) {
      const ok = tries.find((x) => x.status === 200);
      if (ok && JSON.parse(ok.text).decision === 'block') blocked.add(id);
    }
    const started = performance.now();
    for (;;) {
      const seen = new Set(this.receiver.events().map((e) => e.data.transaction_id as string));
      const left = [...blocked].filter((id) => !seen.has(id));
      if (left.length === 0 || performance.now() - started > waitMs) return left;
      await sleep(250);
    }
  }

  /** The decision log against the answers (see the header). */
  async audit(answers: Map<string, Answer[]>, prefix = 'r'): Promise<Audit> {
    const sql = postgres(this.pg.url, { max: 1, onnotice: () => {} });
    try {
      const rows = await sql<{ transaction_id: string; n: number }[]>`
        SELECT transaction_id, count(*)::int AS n FROM transactions
        WHERE organization_id = ${this.org.id} AND transaction_id LIKE ${`${prefix}-%`} GROUP BY 1`;
      const stored = new Map(rows.map((r) => [r.transaction_id, r.n]));
      const acknowledged = [...answers].filter(([, tries]) => tries.some((x) => x.status === 200)).map(([id]) => id);
      return {
        stored: stored.size,
        missing: acknowledged.filter((id) => !stored.has(id)),
        duplicates: rows.filter((r) => r.n !== 1).map((r) => r.transaction_id),
        differing: [...answers].filter(([, tries]) => new Set(tries.filter((x) => x.status === 200).map((x) => x.text)).size > 1).map(([id]) => id),
      };
    } finally {
      await sql.end();
    }
  }
}
