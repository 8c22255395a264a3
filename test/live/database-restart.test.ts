// PostgreSQL restarted (cleanly, then as after a crash) while v1 traffic runs on two server
// processes: requests during each outage are answered quickly with 503 `database_unavailable` and
// Retry-After (never a hang, a 500 or a crash); both processes reconnect by themselves, listen for
// the feed again and carry on; and every decision acknowledged with 200, before, during or after
// an outage, is in the decision log exactly once, including those that were answered 503 and sent
// again with the same id. The server is the test's own (test/support/own-postgres.ts), so stopping
// it disturbs no other test.

import t from 'tap';
import postgres from 'postgres';
import { startOwnPostgres, type OwnPostgres } from '../support/own-postgres.ts';
import { serverPair, SignIn, type ServerProcess } from '../support/processes.ts';
import { needs } from '../support/components.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Longer than any answer may take, outage or not: past it a request counts as hung. */
const HANG_MS = 15_000;

interface Answer {
  status: number;
  reason: string | undefined;
  retryAfter: string | null;
  ms: number;
  text: string;
}

t.test('PostgreSQL restarted twice under v1 traffic', { skip: needs('own-postgres') }, async (t) => {
  const pg: OwnPostgres = await startOwnPostgres();
  const signIn = await SignIn.start();
  const servers: ServerProcess[] = [];
  t.teardown(async () => {
    // What a process that died said, for the failure's report.
    for (const s of servers) if (s.child.exitCode !== null || !t.passing()) t.comment(`${s.base} (exit ${s.child.exitCode}): ${s.stderr().slice(-4000)}`);
    await Promise.all(servers.map((s) => s.stop('SIGKILL')));
    await signIn.close();
    await pg.destroy();
  });
  const env = { ...signIn.env, DATABASE_URL: pg.url };
  const { a, b, org } = await serverPair(env, servers, signIn, 'restarted');

  const score = async (s: ServerProcess, body: Record<string, unknown>): Promise<Answer> => {
    const started = performance.now();
    const res = await fetch(`${s.base}/api/v1/risk/score`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${org.secret}` },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(HANG_MS),
    });
    const text = await res.text();
    let reason: string | undefined;
    try {
      reason = JSON.parse(text)?.detail?.reason;
    } catch {
      reason = undefined;
    }
    return { status: res.status, reason, retryAfter: res.headers.get('retry-after'), ms: performance.now() - started, text };
  };
  const bodyOf = (id: string, i: number) => ({ transaction_id: id, amount: 10 + (i % 90), customer_id: `c-${i % 11}`, merchant_id: `m-${i % 5}` });
  // Both load the organization before the outage.
  t.equal((await score(a, bodyOf('warm-a', 0))).status, 200, 'A scores');
  t.equal((await score(b, bodyOf('warm-b', 1))).status, 200, 'B scores');

  // Traffic: four lanes, each sending new transactions one after another to A or B, until told to
  // stop. Every answer is kept with its transaction id.
  const answers = new Map<string, Answer[]>();
  const hung: string[] = [];
  let stop = false;
  let next = 0;
  const lanes = Array.from({ length: 4 }, async (_, lane) => {
    while (!stop) {
      const i = next++;
      const id = `r-${i}`;
      try {
        const answer = await score(lane % 2 ? a : b, bodyOf(id, i));
        answers.set(id, [answer]);
      } catch (e) {
        hung.push(`${id}: ${(e as Error).message}`);
      }
      await sleep(5);
    }
  });

  // Two outages: a clean restart (`fast`: sessions ended, a checkpoint) and a crash of the server
  // (`immediate`: commits in flight may be lost or kept, their answers lost either way).
  const refusedSoFar = () => [...answers.values()].filter((tries) => tries[0]!.status !== 200).length;
  const outages: string[] = [];
  await sleep(1_500);
  for (const mode of ['fast', 'immediate'] as const) {
    const before = refusedSoFar();
    await pg.stop(mode);
    const stoppedAt = performance.now();
    // During the outage: health says so, on both.
    await sleep(500);
    for (const s of [a, b]) {
      const health = await (await fetch(`${s.base}/api/health`, { signal: AbortSignal.timeout(HANG_MS) })).json();
      t.equal(health.database.status, 'unavailable', `${mode} stop: health says the database is unavailable`);
      t.equal(health.feed.state, 'behind', `${mode} stop: health says the feed is behind`);
      t.equal(health.feed.reason, 'database_unavailable', `${mode} stop: because the database is unavailable`);
    }
    await sleep(2_500);
    await pg.start();
    const outageMs = performance.now() - stoppedAt;
    await sleep(2_500);
    const refused = refusedSoFar() - before;
    outages.push(`${mode} stop, ${Math.round(outageMs)} ms: ${refused} answered 503`);
    t.ok(refused > 0, `the ${mode} stop was met: ${refused} requests answered 503 during its ${Math.round(outageMs)} ms`);
  }
  stop = true;
  await Promise.all(lanes);

  t.same(hung, [], `no request hung (each answered within ${HANG_MS / 1000} s)`);
  t.equal(a.child.exitCode, null, 'A did not exit');
  t.equal(b.child.exitCode, null, 'B did not exit');
  const all = [...answers.values()].flat();
  const refused = all.filter((x) => x.status !== 200);
  const wrong = refused.filter((x) => x.status !== 503 || x.reason !== 'database_unavailable' || !(Number(x.retryAfter) > 0));
  t.same(wrong.map((x) => `${x.status} ${x.text.slice(0, 200)}`), [], 'every refusal is 503 database_unavailable with Retry-After');
  t.ok(refused.length > 0, `${refused.length} of ${all.length} requests answered 503 (${outages.join('; ')})`);
  const slowest = Math.max(...refused.map((x) => x.ms));
  t.ok(slowest < HANG_MS, `each 503 came quickly (slowest ${Math.round(slowest)} ms)`);
  t.ok(all.filter((x) => x.status === 200).length > refused.length, 'most requests, before and after the outage, were answered 200');

  // Those refused are sent again, as a client honouring Retry-After would: each is recorded once.
  const retried = [...answers].filter(([, tries]) => tries[0]!.status !== 200);
  await sleep(Math.max(...retried.map(([, tries]) => Number(tries[0]!.retryAfter))) * 1000);
  for (const [id, tries] of retried) {
    const i = Number(id.slice(2));
    tries.push(await score(i % 2 ? a : b, bodyOf(id, i)));
    while (tries[tries.length - 1]!.status !== 200 && tries.length < 10) {
      await sleep(Number(tries[tries.length - 1]!.retryAfter ?? 1) * 1000);
      tries.push(await score(i % 2 ? a : b, bodyOf(id, i)));
    }
  }
  t.same(retried.filter(([, tries]) => tries[tries.length - 1]!.status !== 200).map(([id]) => id), [], `each of the ${retried.length} refused is answered 200 when sent again`);

  // The decision log: every acknowledged transaction once, and nothing else.
  const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
  try {
    const rows = await sql<{ transaction_id: string; n: number }[]>`
      SELECT transaction_id, count(*)::int AS n FROM transactions
      WHERE organization_id = ${org.id} AND transaction_id LIKE 'r-%' GROUP BY 1`;
    const stored = new Map(rows.map((r) => [r.transaction_id, r]));
    t.equal(stored.size, answers.size, `all ${answers.size} acknowledged transactions are stored`);
    t.ok(rows.every((r) => r.n === 1), 'each exactly once');
    const acknowledged = [...answers].filter(([id, tries]) => tries.some((x) => x.status === 200) && stored.has(id));
    t.equal(acknowledged.length, answers.size, 'every transaction id acknowledged is in the log');
    // A retry answers what was stored: one decision per id whichever attempt stored it.
    const differing = [...answers].filter(([, tries]) => new Set(tries.filter((x) => x.status === 200).map((x) => x.text)).size !== 1);
    t.same(differing.map(([id]) => id), [], 'every 200 for an id carries the one stored decision');

    // Both processes listen for the feed again, and what one records reaches the other.
    let listening = 0;
    for (let tries = 0; tries < 50 && listening < 2; tries++, await sleep(100)) {
      [{ listening }] = await sql<{ listening: number }[]>`SELECT count(*)::int AS listening FROM pg_stat_activity WHERE query ILIKE 'listen%'`;
    }
    t.equal(listening, 2, 'both processes LISTEN on the feed again');
  } finally {
    await sql.end();
  }
  t.equal((await score(a, { transaction_id: 'after-a', amount: 51, customer_id: 'c-after', merchant_id: 'm-after' })).status, 200, 'A scores after the restarts');
  let seen = false;
  const started = performance.now();
  for (let k = 0; !seen && performance.now() - started < 5_000; k++) {
    const probe = JSON.parse((await score(b, { transaction_id: `after-probe-${k}`, amount: 1, customer_id: 'c-after', merchant_id: `m-probe-${k}` })).text);
    seen = (probe.graph_evidence?.['c-after'] ?? []).some((e: { transaction_id: string }) => e.transaction_id === 'after-a');
    if (!seen) await sleep(50);
  }
  t.ok(seen, `B's feed resumed: it counts A's transaction recorded after the restart (${Math.round(performance.now() - started)} ms)`);
  for (const s of [a, b]) {
    let health: { status: string; database: { status: string }; feed: { state: string } } | undefined;
    for (let tries = 0; tries < 50 && health?.feed.state !== 'current'; tries++, await sleep(100)) health = await (await fetch(`${s.base}/api/health`)).json();
    t.equal(health!.database.status, 'ok', 'health: the database is back');
    t.equal(health!.feed.state, 'current', 'health: the feed is current again');
  }
});
