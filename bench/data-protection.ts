// bench:data-protection: what an erasure and a retention sweep cost the requests they run beside.
// One server process on PostgreSQL (DATABASE_URL) holds an organization of N transactions (its last
// 30 days, bench/history-seed.ts) with customers of 1,000 of them each, and takes recorded scores of
// that organization at a fixed rate. The baseline is that load's p99 before anything runs; then
// (1) each of those customers' erasure is asked through the API in turn: how long until it is done,
// and the p99 from the request until done (the windows of every erasure pooled: one lasts under a
// second, too few answers for a p99 of its own), and in the seconds after while the process builds
// the history again without the customer; (2) a second
// organization's E transactions, all older than its retention period, are swept by the server's
// own sweeper: how long, how many rows a second, and the p99 meanwhile. Prints the ratios, then
// one JSON object.

import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { wholeNumber } from '../src/command-line.ts';
import { fixedRate, latencyFigures, running, type Load } from './fixed-rate.ts';
import { benchmarkCommandLine, quick } from './harness.ts';
import { seed, type Run } from './history-seed.ts';
import { startServer, stopServer } from './server-process.ts';
import { dropDatabase } from '../test/support/server.ts';
import { SignIn } from '../test/support/processes.ts';

const options = benchmarkCommandLine({
  name: 'bench:data-protection',
  about: "A customer's erasure and a retention sweep beside recorded scores at a fixed rate, on PostgreSQL.",
  quick: '100,000 transactions held and 200,000 expired, 5 s loads (the full run: 1,000,000 and 2,000,000, 15 s)',
  options: {
    transactions: wholeNumber('transactions the scored organization holds', { min: 10_000 }),
    expired: wholeNumber('expired transactions the swept organization holds', { min: 1_000 }),
    erasures: wholeNumber('customers of 1,000 transactions erased one after another (5; 3 with --quick)', { min: 1 }),
  },
  notes: ['DATABASE_URL (required): a PostgreSQL server on which this role may create and drop databases.'],
});

const adminUrl = process.env.DATABASE_URL;
if (!adminUrl) {
  process.stderr.write('bench:data-protection needs DATABASE_URL (a PostgreSQL server on which this role may create databases).\n');
  process.exit(2);
}
const N = options.transactions ?? (quick ? 100_000 : 1_000_000);
const E = options.expired ?? (quick ? 200_000 : 2_000_000);
const SECONDS = quick ? 5 : 15;
const RATE = 300;
const CONNECTIONS = 32;
const K = options.erasures ?? (quick ? 3 : 5);
const erased = (k: number) => `cus_erase_bench_${k}`;
const DAY = 86_400_000;
const NOW = Math.floor(Date.now() / 60_000) * 60_000;
const started = performance.now();
const say = (msg: string) => process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1)} s] ${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
const dbName = `bench_dp_${randomBytes(4).toString('hex')}`;
const url = Object.assign(new URL(adminUrl), { pathname: `/${dbName}` }).toString();
const signIn = await SignIn.start();
let server: Awaited<ReturnType<typeof startServer>> | undefined;
let sql: postgres.Sql | undefined;

const result: Record<string, unknown> = { transactions: N, expired: E, rate: RATE };
try {
  await admin.unsafe(`CREATE DATABASE ${dbName}`);
  const env = { ...signIn.env, DATABASE_URL: url, WEB_CONCURRENCY: '1', SCORE_RATE_PER_MINUTE: '100000000' };
  server = await startServer(env);
  const held = await signIn.organization(server.url, 'bench-held');
  const old = await signIn.organization(server.url, 'bench-old');
  await stopServer(server.child);

  sql = postgres(url, { max: 1, onnotice: () => {} });
  const run: Run = async (text, params) => [...(await sql!.unsafe(text, params as never[]))];
  say(`storing ${N.toLocaleString('en')} transactions, and ${E.toLocaleString('en')} older than the retention period…`);
  await seed(run, held.id, N, NOW);
  await seed(run, old.id, E, NOW - 431 * DAY);
  // The erased customers: 1,000 payments each at the held organization's merchants, spread over its span.
  for (let k = 0; k < K; k++)
    await run(
      `INSERT INTO transactions (organization_id, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, source)
       SELECT organization_id, 'erase_' || $4::int || '_' || seq, time_ms + 1 + $4::int, amount, $2, merchant_id, location, payment_type, 'import'
       FROM transactions WHERE organization_id = $1 AND seq % $3 = $4::int AND customer_id NOT LIKE 'cus_erase_bench_%' ORDER BY seq LIMIT 1000`,
      [held.id, erased(k), Math.floor(N / 1000), k],
    );
  // No sweep until this benchmark asks for it.
  await run('UPDATE organizations SET retention_swept_at_ms = $1', [NOW]);
  await run('ANALYZE');
  const bodies = (await run(
    `SELECT customer_id, merchant_id, location, payment_type, amount FROM transactions WHERE organization_id = $1 AND seq % $2 = 0 LIMIT 2000`,
    [held.id, Math.max(1, Math.floor(N / 2000))],
  )) as { customer_id: string; merchant_id: string; location: string; payment_type: string; amount: number }[];
  let k = 0;
  const makeBody = () => {
    const r = bodies[k++ % bodies.length]!;
    return JSON.stringify({ transaction_id: `b_${k}_${randomBytes(4).toString('hex')}`, ...r, amount: Number(r.amount) });
  };

  server = await startServer(env);
  const base = server.url;
  const load = (seconds: number, until?: Promise<unknown>): Promise<Load> =>
    fixedRate({ base, key: held.secret, makeBody, rate: RATE, connections: CONNECTIONS, seconds, until });
  say('the first score loads the held organization…');
  for (let tries = 1; ; tries++) {
    const first = await fetch(`${base}/api/v1/risk/score`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${held.secret}` },
      body: makeBody(),
    });
    if (first.status === 200) break;
    // history_loading: sent again after Retry-After, as a client does.
    if (first.status !== 503 || tries > 300) throw new Error(`first score: ${first.status} ${await first.text()}`);
    await sleep(Number(first.headers.get('retry-after') ?? 2) * 1000);
  }
  // Measured once the start's own work is over: the ring analyses queued at start (jobs), and the
  // snapshot of the history the first load stores (at a pace, beside the requests).
  for (let idle = 0; idle < 3; ) {
    const health = (await (await fetch(`${base}/api/health`)).json()) as { jobs_running: Record<string, number> };
    idle = Object.keys(health.jobs_running).length ? 0 : idle + 1;
    await sleep(1000);
  }
  for (let i = 0; i < 600 && (await run('SELECT 1 FROM history_snapshots WHERE organization_id = $1', [held.id])).length === 0; i++) await sleep(500);
  say('start-up jobs done, snapshot stored');
  await load(3);
  const baseline = await load(SECONDS);
  result.baseline = baseline;
  say(`baseline p99 ${baseline.p99_ms} ms`);

  // (1) The erasures, one after another: the load from each request until it is done (pooled),
  // then while the process builds the organization's history again without the customer.
  const ratio = (l: { p99_ms: number }) => Math.round((l.p99_ms / baseline.p99_ms) * 100) / 100;
  const until: number[] = [];
  const seconds: number[] = [];
  const after: Load[] = [];
  let counts: unknown;
  let errors = 0;
  for (let k = 0; k < K; k++) {
    const t0 = performance.now();
    const done = (async () => {
      await sleep(500);
      const asked = await fetch(`${base}/api/v1/customers/${erased(k)}/erasure`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${held.secret}` },
        body: '{}',
      });
      if (asked.status !== 202) throw new Error(`erasure: ${asked.status} ${await asked.text()}`);
      const { id } = (await asked.json()) as { id: string };
      const askedAt = performance.now();
      for (;;) {
        const [row] = await run(`SELECT status, counts FROM erasures WHERE organization_id = $1 AND id = $2`, [held.id, id]);
        if (row?.status === 'done') {
          counts = row.counts;
          return (performance.now() - askedAt) / 1000;
        }
        if (performance.now() - t0 > 120_000) throw new Error('the erasure was not done within 2 minutes');
        await sleep(10);
      }
    })();
    const during = await fixedRate({ base, key: held.secret, makeBody, rate: RATE, connections: CONNECTIONS, seconds: 600, until: done, latencies: until });
    errors += during.errors;
    seconds.push(await done);
    after.push(await load(SECONDS));
  }
  const pooled = { answers: until.length, ...latencyFigures(until), errors };
  const afterP99 = Math.max(...after.map((l) => l.p99_ms));
  result.erasure = {
    erasures: K,
    seconds: seconds.map((x) => Math.round(x * 100) / 100),
    counts,
    during: pooled,
    ratio_p99: ratio(pooled),
    rebuilding: after,
    ratio_p99_rebuilding: ratio({ p99_ms: afterP99 }),
  };
  const erasureSeconds = Math.max(...seconds);
  say(
    `${K} erasures done in ${seconds.map((x) => x.toFixed(2)).join(', ')} s; p99 ${pooled.p99_ms} ms until done (${pooled.answers} answers pooled), at most ${afterP99} ms in the ${SECONDS} s after each`,
  );

  // (2) The sweep of the old organization: its claim is released, the server's sweeper takes it.
  await load(2);
  const sweepWindowStart = performance.now();
  const done = (async () => {
    await run('UPDATE organizations SET retention_swept_at_ms = NULL WHERE id = $1', [old.id]);
    for (;;) {
      const [row] = await run(`SELECT detail FROM data_protection_audit WHERE organization_id = $1 AND action = 'retention_swept'`, [old.id]);
      if (row) return row.detail as { counts: { transactions: number } };
      if (performance.now() - sweepWindowStart > 30 * 60_000) throw new Error('no sweep within 30 minutes');
      await sleep(100);
    }
  })();
  const duringSweep = await fixedRate({ base, key: held.secret, makeBody, rate: RATE, connections: CONNECTIONS, seconds: 3600, until: done });
  const swept = await done;
  const sweepSeconds = (performance.now() - sweepWindowStart) / 1000;
  result.sweep = {
    seconds_incl_wait_for_tick: Math.round(sweepSeconds * 10) / 10,
    transactions: swept.counts.transactions,
    rows_per_second: Math.round(swept.counts.transactions / sweepSeconds),
    during: duringSweep,
    ratio_p99: ratio(duringSweep),
  };
  say(
    `swept ${swept.counts.transactions.toLocaleString('en')} rows in ${sweepSeconds.toFixed(1)} s (with up to 10 s before the sweeper's tick); p99 ${duringSweep.p99_ms} ms`,
  );
  process.stdout.write(
    `erasure of 1,000 transactions among ${N.toLocaleString('en')}: at most ${erasureSeconds.toFixed(2)} s, p99 ×${ratio(pooled)} the baseline until done (${K} pooled), ×${ratio({ p99_ms: afterP99 })} after\n` +
      `retention sweep of ${E.toLocaleString('en')} rows: p99 ×${(result.sweep as { ratio_p99: number }).ratio_p99} the baseline\n`,
  );
} catch (e) {
  result.error = (e as Error).message;
  say(`failed: ${(e as Error).message}`);
  process.exitCode = 1;
} finally {
  for (const l of running) l.stop();
  if (server) await stopServer(server.child).catch(() => {});
  await sql?.end({ timeout: 5 });
  await signIn.close();
  await dropDatabase(admin, dbName).catch((e: Error) => say(`could not drop ${dbName}: ${e.message}`));
  await admin.end({ timeout: 5 });
}
process.stdout.write(`${JSON.stringify(result)}\n`);
