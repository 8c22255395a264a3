// The live feed under a stalled transaction: with a write transaction held open for 60 s on the
// same PostgreSQL server (it has written transactions of the organization and holds the server's
// oldest running transaction id all along), what one server process records, and the outcomes
// reported on it, reach another process within 1 s at p99 (measured by polling the other process
// until its scoring shows the change); /api/health says the feed is current and waiting on the
// transaction; and when the transaction commits, its transactions count once in both processes.
// The server is the test's own (test/support/own-postgres.ts), so holding it back disturbs no
// other test.

import t from 'tap';
import postgres from 'postgres';
import { startOwnPostgres } from '../support/own-postgres.ts';
import { serverPair, SignIn, withKey, type ServerProcess } from '../support/processes.ts';
import { needs } from '../support/components.ts';

/** How long the transaction is held open. */
const STALL_MS = 60_000;
/** The visibility required of the feed, at p99. */
const VISIBLE_MS = 1_000;
/** How often the other process is asked whether it sees a change yet. */
const PROBE_EVERY_MS = 20;
/** How long one change is waited for before it counts as not seen (far past the bound). */
const GIVE_UP_MS = 10_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

t.test('the live feed while a write transaction is held open for 60 s', { skip: needs('own-postgres') }, async (t) => {
  const pg = await startOwnPostgres();
  const signIn = await SignIn.start();
  const servers: ServerProcess[] = [];
  const stall = postgres(pg.url, { max: 1, onnotice: () => {} });
  let release: () => void = () => {};
  let stalled: Promise<unknown> = Promise.resolve();
  t.teardown(async () => {
    release();
    await stalled.catch(() => {});
    await stall.end({ timeout: 5 });
    await Promise.all(servers.map((s) => s.stop('SIGKILL')));
    await signIn.close();
    await pg.destroy();
  });
  const env = { ...signIn.env, DATABASE_URL: pg.url };
  const { a, b, org } = await serverPair(env, servers, signIn, 'stalled');
  const score = (s: ServerProcess, body: Record<string, unknown>) => withKey(s.base, org.secret, '/api/v1/risk/score', body);
  // Both load the organization first, so what follows reaches each through the feed.
  t.equal((await score(a, { transaction_id: 'warm-a', amount: 5, customer_id: 'c-warm', merchant_id: 'm-warm' })).status, 200);
  t.equal((await score(b, { transaction_id: 'warm-b', amount: 5, customer_id: 'c-warm', merchant_id: 'm-warm' })).status, 200);

  // The stalled transaction: three transactions of the organization written, then held open.
  let wrote!: (xid: number) => void;
  const written = new Promise<number>((resolve) => (wrote = resolve));
  const held = new Promise<void>((resolve) => (release = resolve));
  const now = Date.now();
  stalled = stall.begin(async (tx) => {
    for (let i = 0; i < 3; i++) {
      await tx`INSERT INTO transactions (organization_id, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, source)
               VALUES (${org.id}, ${`stalled-${i}`}, ${now - 60_000 + i}, 20, 'c-stall', 'm-stall', 'Lisbon', 'wallet', 'scored')`;
    }
    const [{ xid }] = await tx`SELECT pg_current_xact_id()::text AS xid`;
    wrote(Number(xid));
    await held;
  });
  const stallXid = await written;
  const stallBegan = performance.now();
  const other = postgres(pg.url, { max: 1, onnotice: () => {} });
  const [{ watermark }] = await other`SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS watermark`.finally(() => other.end());
  t.equal(Number(watermark), stallXid, "the held transaction is the server's oldest running one: every later commit is above it");

  /** Asks B (by scoring a probe) until `seen` holds of its answer; the time from `since` to that answer. */
  let probes = 0;
  const until = async (customer: string, seen: (probe: any) => boolean, since: number): Promise<number> => {
    for (;;) {
      const probe = await score(b, { transaction_id: `probe-${++probes}`, amount: 1, customer_id: customer, merchant_id: `m-probe-${probes}` });
      if (probe.status !== 200) throw new Error(`probe answered ${probe.status}: ${probe.text}`);
      const at = performance.now();
      if (seen(probe.json)) return at - since;
      if (at - since > GIVE_UP_MS) return Number.POSITIVE_INFINITY;
      await sleep(PROBE_EVERY_MS);
    }
  };
  const evidence = (probe: any, customer: string, id: string) =>
    (probe.graph_evidence?.[customer] ?? []).find((e: { transaction_id: string }) => e.transaction_id === id);

  const transactions: number[] = [];
  const outcomes: number[] = [];
  const refused: string[] = [];
  let health: any;
  for (let i = 0; performance.now() - stallBegan < STALL_MS; i++) {
    const customer = `c-s${i}`;
    const recorded = await score(a, { transaction_id: `s-${i}`, amount: 30 + (i % 40), customer_id: customer, merchant_id: `m-s${i % 7}` });
    if (recorded.status !== 200) refused.push(`s-${i}: ${recorded.status}`);
    transactions.push(await until(customer, (p) => evidence(p, customer, `s-${i}`) !== undefined, performance.now()));
    if (i % 3 === 0) {
      const reported = await withKey(a.base, org.secret, `/api/v1/transactions/s-${i}/outcome`, { outcome: 'fraud', source: 'chargeback' });
      if (reported.status !== 200) refused.push(`outcome of s-${i}: ${reported.status}`);
      outcomes.push(await until(customer, (p) => evidence(p, customer, `s-${i}`)?.outcome === 'fraud', performance.now()));
    }
    if (i === 10) health = await (await fetch(`${b.base}/api/health`)).json();
    await sleep(150);
  }
  const heldFor = performance.now() - stallBegan;

  const p = (xs: number[], q: number) => [...xs].sort((x, y) => x - y)[Math.ceil(q * xs.length) - 1]!;
  const figures = (xs: number[]) =>
    `n=${xs.length}, p50 ${Math.round(p(xs, 0.5))} ms, p99 ${Math.round(p(xs, 0.99))} ms, max ${Math.round(Math.max(...xs))} ms`;
  t.same(refused, [], 'every transaction and outcome was recorded on A (200)');
  t.ok(heldFor >= STALL_MS, `the transaction was held open ${Math.round(heldFor / 1000)} s`);
  t.ok(transactions.length >= 30 && outcomes.length >= 10, `enough samples: ${transactions.length} transactions, ${outcomes.length} outcomes`);
  t.ok(p(transactions, 0.99) <= VISIBLE_MS, `a transaction recorded on A counts on B within ${VISIBLE_MS} ms at p99 (${figures(transactions)})`);
  t.ok(p(outcomes, 0.99) <= VISIBLE_MS, `an outcome reported on A counts on B within ${VISIBLE_MS} ms at p99 (${figures(outcomes)})`);
  t.equal(health?.feed.state, 'current', "health during the stall: B's feed is current");
  t.ok(health?.feed.waiting_on_transactions >= 1, `health during the stall: it waits on the held transaction (${health?.feed.waiting_on_transactions})`);
  t.equal(health?.status, 'ok', 'health during the stall: ok');

  // The stalled transaction ends: its three transactions reach both processes, once (it sent no
  // notification, so the catch-up poll finds them).
  release();
  await stalled;
  const stallProbes = { a: 0, b: 0 };
  const stallCount = async (s: ServerProcess, side: 'a' | 'b'): Promise<number> => {
    const probe = await score(s, {
      transaction_id: `stall-probe-${side}-${++stallProbes[side]}`,
      amount: 1,
      customer_id: 'c-stall',
      merchant_id: 'm-stall-probe',
    });
    return probe.json.entity_history['c-stall'].prior_transactions;
  };
  // A probe counts the customer's earlier transactions: the held three and this side's own probes.
  let onB = 0;
  const committed = performance.now();
  while ((onB = (await stallCount(b, 'b')) - (stallProbes.b - 1)) < 3 && performance.now() - committed < GIVE_UP_MS) await sleep(PROBE_EVERY_MS);
  t.equal(onB, 3, `B counts the held transaction's three once it commits (${Math.round(performance.now() - committed)} ms)`);
  // Past a few polls, nothing arrives twice: B counts those three and its own probes; A those, B's
  // probes (through the feed) and its own.
  await sleep(3_000);
  t.equal(await stallCount(b, 'b'), 3 + stallProbes.b - 1, 'B still counts each once');
  await sleep(1_000);
  t.equal(await stallCount(a, 'a'), 3 + stallProbes.b, "A counts each once, and B's probes");
  let after: any;
  for (let tries = 0; tries < 50 && after?.feed.waiting_on_transactions !== 0; tries++, await sleep(100))
    after = await (await fetch(`${b.base}/api/health`)).json();
  t.equal(after.feed.waiting_on_transactions, 0, 'health after: the feed waits on nothing');
  t.equal(after.feed.state, 'current', 'health after: current');
});
