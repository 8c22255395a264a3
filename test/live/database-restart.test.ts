// PostgreSQL restarted (cleanly, then as after a crash) while v1 traffic runs on two server
// processes (test/support/fault-drill.ts): requests during each outage are answered quickly with
// 503 `database_unavailable` and Retry-After (never a hang, a 500 or a crash); both processes
// reconnect by themselves, listen for the feed again and carry on; and every decision acknowledged
// with 200, before, during or after an outage, is in the decision log exactly once, including those
// that were answered 503 and sent again with the same id. The server is the test's own, so stopping
// it disturbs no other test.

import t from 'tap';
import postgres from 'postgres';
import { FaultDrill, HANG_MS, sleep } from '../support/fault-drill.ts';
import { needs } from '../support/components.ts';
import type { ServerProcess } from '../support/processes.ts';

t.test('PostgreSQL restarted twice under v1 traffic', { skip: needs('own-postgres') }, async (t) => {
  const drill = await FaultDrill.start();
  t.teardown(async () => {
    // What a process that died said, for the failure's report.
    if (!t.passing()) for (const line of drill.exits()) t.comment(line);
    await drill.stop();
  });
  const [a, b] = drill.servers as [ServerProcess, ServerProcess];
  const traffic = drill.traffic(4);
  const refusedSoFar = () => [...traffic.answers.values()].filter((tries) => tries[0] && tries[0].status !== 200).length;

  // Two outages: a clean restart (`fast`: sessions ended, a checkpoint) and a crash of the server
  // (`immediate`: commits in flight may be lost or kept, their answers lost either way).
  const outages: string[] = [];
  await sleep(1_500);
  for (const mode of ['fast', 'immediate'] as const) {
    const before = refusedSoFar();
    await drill.pg.stop(mode);
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
    await drill.pg.start();
    const outageMs = performance.now() - stoppedAt;
    await sleep(2_500);
    const refused = refusedSoFar() - before;
    outages.push(`${mode} stop, ${Math.round(outageMs)} ms: ${refused} answered 503`);
    t.ok(refused > 0, `the ${mode} stop was met: ${refused} requests answered 503 during its ${Math.round(outageMs)} ms`);
  }
  await traffic.stop();

  t.same(traffic.hung, [], `no request hung (each answered within ${HANG_MS / 1000} s)`);
  t.same(drill.exits(), [], 'neither process exited');
  const all = [...traffic.answers.values()].flat();
  const refused = all.filter((x) => x.status !== 200);
  const wrong = refused.filter((x) => x.status !== 503 || x.reason !== 'database_unavailable' || !(Number(x.retryAfter) > 0));
  t.same(
    wrong.map((x) => `${x.status} ${x.text.slice(0, 200)}`),
    [],
    'every refusal is 503 database_unavailable with Retry-After',
  );
  t.ok(refused.length > 0, `${refused.length} of ${all.length} requests answered 503 (${outages.join('; ')})`);
  const slowest = Math.max(...refused.map((x) => x.ms));
  t.ok(slowest < HANG_MS, `each 503 came quickly (slowest ${Math.round(slowest)} ms)`);
  t.ok(all.length - refused.length > refused.length, 'most requests, before and after the outage, were answered 200');

  // Those refused are sent again, as a client honouring Retry-After would: each is recorded once.
  t.same(await drill.settle(traffic.answers), [], 'each refused one is answered 200 when sent again');
  const audit = await drill.audit(traffic.answers);
  t.equal(audit.stored, traffic.answers.size, `all ${traffic.answers.size} acknowledged transactions are stored`);
  t.same(audit.missing, [], 'every transaction id acknowledged is in the log');
  t.same(audit.duplicates, [], 'each exactly once');
  t.same(audit.differing, [], 'every 200 for an id carries the one stored decision');

  // Both processes listen for the feed again, and what one records reaches the other.
  const sql = postgres(drill.pg.url, { max: 1, onnotice: () => {} });
  try {
    let listening = 0;
    for (let tries = 0; tries < 50 && listening < 2; tries++, await sleep(100)) {
      [{ listening }] = await sql<{ listening: number }[]>`SELECT count(*)::int AS listening FROM pg_stat_activity WHERE query ILIKE 'listen%'`;
    }
    t.equal(listening, 2, 'both processes LISTEN on the feed again');
  } finally {
    await sql.end();
  }
  const feed = await drill.feedCarries(a, b);
  t.ok(feed.seen, `A scores after the restarts, and B's feed resumed: it counts A's transaction (${Math.round(feed.ms)} ms)`);
  for (const s of [a, b]) {
    let health: { status: string; database: { status: string }; feed: { state: string } } | undefined;
    for (let tries = 0; tries < 50 && health?.feed.state !== 'current'; tries++, await sleep(100)) health = await (await fetch(`${s.base}/api/health`)).json();
    t.equal(health!.database.status, 'ok', 'health: the database is back');
    t.equal(health!.feed.state, 'current', 'health: the feed is current again');
  }
  await drill.stop();
});
