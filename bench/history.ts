// `npm run bench:history [-- --quick]`: what a realistic payment team's history costs a server
// process, measured before anything is optimised. Each process keeps, per organization, the last 31
// days of transactions in its JavaScript heap (src/live/tenant.ts, src/domain/history/history.ts).
// One organization's last 30 days are seeded with 1,000,000 and 5,000,000 transactions (100,000 and
// 500,000 with --quick), on the embedded database and on PostgreSQL, deterministically in SQL: about
// N/20 customers and N/1,000 merchants with lognormal-like weights, each customer paying a handful of
// favourite merchants (mostly in its home city) plus occasional others, the simulator's cities and
// payment types, lognormal amounts in cents, times in whole milliseconds (as the API records them),
// 2 % fraud whose outcome is known 5–30 days later
// (legitimate ones 1–5 days), so the newest outcomes are unknown. Ids are shaped like a payment
// provider's (`pay_` + 20 hex digits, `cus_` + 14, `acct_` + 16): a history holds every id, so short
// synthetic ones would understate its memory. In one `npm start` process per size, once the ring
// analyses its start queues are done: an empty second organization's recorded scores at a fixed
// 300 req/s (the baseline); the large organization's first score (its history's load), the memory
// it then holds (resident, and the heap from /api/health; its peak, and a minute on), its own scores
// at 300 req/s from 2 s after that first score (while the snapshot it built is stored) and again
// once warmed up, the empty organization's while the large one loads from the rows and again while it
// is held; in a second process (a restart), the empty organization's latency while the large one
// loads from its snapshot. First, in this process, the shapes part (history-shapes.ts: scores against
// the example history built and read back from a snapshot) and the key fields part (history-keys.ts:
// the same rows with three key fields' values each, the history built with and without them).
// Prints a table, then one JSON object.

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import autocannon from 'autocannon';
import postgres from 'postgres';
import { dropDatabase as dropTestDatabase } from '../test/support/server.ts';
import { benchmarkCommandLine, quick } from './harness.ts';
import { memoryMb, resetPeakMemory, root, serverNodeArgs, startFlags, threadsOf, waitFor } from './server-process.ts';
import { scoreRequests } from './requests.ts';
import { fixedRate, running, type Load } from './fixed-rate.ts';
import { oneOf, UsageError, type Option } from '../src/command-line.ts';
import { openDatabase } from '../src/storage/open.ts';
import { seed as seedRows, type Run } from './history-seed.ts';
import { measureKeys, type KeysFigures } from './history-keys.ts';
import { measureShapes, type ShapesFigures } from './history-shapes.ts';
import { SignIn } from '../test/support/processes.ts';
import { tempDir } from '../test/support/temp.ts';

const sizesOption: Option<number[] | undefined> = {
  value: 'N,N',
  description: 'the history sizes to seed, comma-separated (default 1000000,5000000; with --quick 100000,500000)',
  absent: undefined,
  parse: (raw) => {
    const sizes = raw.split(',').map((s) => s.trim().replace(/_/g, ''));
    if (!sizes.every((s) => /^\d+$/.test(s) && Number(s) >= 1_000 && Number(s) <= 50_000_000))
      throw new UsageError(`must be whole numbers from 1000 to 50000000, comma-separated, got ${JSON.stringify(raw)}`);
    return sizes.map(Number);
  },
};

const options = benchmarkCommandLine({
  name: 'bench:history',
  about: "What one organization's 31-day history of 1 M and 5 M transactions costs a server process: its load, its memory, latency at 300 req/s.",
  quick:
    'seeds 100,000 and 500,000 transactions, 5 s a load instead of 20 s: 2½–3½ minutes a back end on a 2-core host (the full run: 5 minutes a back end for 1 M, 17 for 5 M)',
  options: {
    backend: oneOf(['embedded', 'postgres', 'both'], 'the database(s) to run on (default: both with DATABASE_URL, else embedded)'),
    sizes: sizesOption,
    only: oneOf(
      ['shapes', 'keys', 'servers'],
      'run only this part: shapes (in this process: scores against the example history built and read back from a snapshot), keys (in this process: a history with three key fields against without, the first of the sizes) or servers (the rest); default all three',
    ),
  },
  notes: [
    'The key fields part seeds its rows on the embedded database, or with DATABASE_URL in a schema of its own there (dropped at the end); its builds run in this process.',
    'DATABASE_URL: a PostgreSQL server on which this role may create and drop databases (each size gets its own, dropped at the end). Without it only the embedded database runs.',
  ],
});

const adminUrl = process.env.DATABASE_URL || undefined;
const backendChoice = options.backend ?? (adminUrl ? 'both' : 'embedded');
if (backendChoice !== 'embedded' && !adminUrl) {
  process.stderr.write('bench:history: --backend postgres or both needs DATABASE_URL\n');
  process.exit(2);
}
const BACKENDS = (backendChoice === 'both' ? ['postgres', 'embedded'] : [backendChoice]) as Backend[];
type Backend = 'embedded' | 'postgres';
const SIZES = options.sizes ?? (quick ? [100_000, 500_000] : [1_000_000, 5_000_000]);

/** Seconds of each fixed-rate load. */
const DURATION = quick ? 5 : 20;
/** The fixed rate: well below what one process serves here (bench:http: ≈ 2,000 recorded req/s),
 *  so latency shows how long the event loop is held, not how two cores are shared. */
const RATE = 300;
/** A connection waits for each answer before its next request: 32 keep up 300 req/s while answers
 *  take up to ≈ 100 ms, and a stall shows as latency rather than as requests never sent. */
const CONNECTIONS = 32;
/** When the memory after a load from the rows is read again: a minute on (15 s with --quick). */
const SETTLED_MS = quick ? 15_000 : 60_000;
/** The first score may take minutes (a 5 M history); a slow load is a result, not an error. */
const FIRST_SCORE_TIMEOUT_MS = 20 * 60_000;
// The server's clock is the real one: every row is within the last 30 days, one day inside the
// 31-day horizon, so that the minutes the run takes never move a row out of it.
const NOW = Math.floor(Date.now() / 60_000) * 60_000;

const started = performance.now();
const say = (msg: string) => process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1)} s] ${msg}\n`);
const round1 = (x: number) => Math.round(x * 10) / 10;

// --- what is cleaned up, whatever happens --------------------------------------------------------
const admin = adminUrl ? postgres(adminUrl, { max: 1, onnotice: () => {} }) : undefined;
const databases = new Set<string>();
const directories = new Set<string>();
const children = new Set<ChildProcess>();
let signIn: SignIn | undefined;

function stop(child: ChildProcess): Promise<void> {
  children.delete(child);
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  // A server stuck in a collection near its heap limit may not stop in time.
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return exited.finally(() => clearTimeout(timer));
}

async function dropDatabase(name: string): Promise<void> {
  databases.delete(name);
  await dropTestDatabase(admin!, name).catch((e: Error) => say(`could not drop ${name}: ${e.message}`));
}

async function removeDirectory(dir: string): Promise<void> {
  directories.delete(dir);
  await rm(dir, { recursive: true, force: true });
}

let cleaned: Promise<void> | undefined;
function cleanUp(): Promise<void> {
  cleaned ??= (async () => {
    for (const l of running) l.stop();
    await Promise.all([...children].map(stop));
    await signIn?.close().catch(() => {});
    for (const name of [...databases]) await dropDatabase(name);
    for (const dir of [...directories]) await removeDirectory(dir);
    await admin?.end({ timeout: 5 });
  })();
  return cleaned;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    say(`${signal}: cleaning up`);
    void cleanUp().finally(() => process.exit(130));
  });
}

// --- seeding -------------------------------------------------------------------------------------
/** Stores `n` rows of `organizationId` (history-seed.ts), then flushes them. */
async function seed(run: Run, organizationId: string, n: number): Promise<void> {
  await seedRows(run, organizationId, n, NOW, { stored: (rows) => say(`  stored ${rows.toLocaleString('en')} of ${n.toLocaleString('en')}`) });
  await run('VACUUM ANALYZE');
  // What seeding wrote flushed now, not by a checkpoint in the middle of a measurement (PostgreSQL:
  // needs pg_checkpoint or a superuser; without, the measurements may meet that checkpoint).
  await run('CHECKPOINT').catch((e: Error) => say(`  no CHECKPOINT after seeding (${e.message}); the server's own may fall in a measurement`));
}

interface Seeded {
  transactions: number;
  customers: number;
  merchants: number;
  channels: number;
  /** Payments per customer and per merchant in the 30 days: percentiles 10, 50, 90, 99 and the most. */
  per_customer: number[];
  per_merchant: number[];
  fraud_share_of_known: number;
  outcome_unknown_share: number;
  seconds: number;
}

/** What was stored, from the per-entity totals the triggers kept (cheap on either database). */
async function describe(run: Run, organizationId: string, seconds: number): Promise<Seeded> {
  const spread = async (kind: string) => {
    const [r] = await run(
      `SELECT count(*)::int AS n, percentile_disc(ARRAY[0.1, 0.5, 0.9, 0.99]) WITHIN GROUP (ORDER BY transactions) AS p, max(transactions)::int AS most
       FROM entity_totals WHERE organization_id = $1 AND kind = $2`,
      [organizationId, kind],
    );
    return { n: Number(r!.n), spread: [...(r!.p as (string | number)[]).map(Number), Number(r!.most)] };
  };
  const [c, m, h] = [await spread('c'), await spread('m'), await spread('h')];
  const [t] = await run(
    `SELECT sum(transactions)::float8 AS n, sum(labels)::float8 AS labels, sum(frauds)::float8 AS frauds FROM entity_totals WHERE organization_id = $1 AND kind = 'c'`,
    [organizationId],
  );
  const total = Number(t!.n);
  return {
    transactions: total,
    customers: c.n,
    merchants: m.n,
    channels: h.n,
    per_customer: c.spread,
    per_merchant: m.spread,
    fraud_share_of_known: Math.round((Number(t!.frauds) / Number(t!.labels)) * 10_000) / 10_000,
    outcome_unknown_share: Math.round((1 - Number(t!.labels) / total) * 10_000) / 10_000,
    seconds: round1(seconds),
  };
}

/** Request bodies for the large organization: its own customers, merchants and channels (a spread
 *  sample of the stored rows), each with a new transaction id. */
async function sampleBodies(run: Run, organizationId: string, n: number): Promise<() => string> {
  const step = Math.max(1, Math.floor(n / 2_000));
  const rows = (await run(
    `SELECT customer_id, merchant_id, location, payment_type, amount FROM transactions
     WHERE organization_id = $1 AND seq % $2 = 0 ORDER BY seq LIMIT 2000`,
    [organizationId, step],
  )) as { customer_id: string; merchant_id: string; location: string; payment_type: string; amount: number }[];
  if (rows.length === 0) throw new Error('no stored rows to sample');
  let k = 0;
  const prefix = randomBytes(3).toString('hex');
  return () => {
    const r = rows[k++ % rows.length]!;
    return JSON.stringify({
      transaction_id: `pay_${prefix}${k.toString(16).padStart(14, '0')}`,
      amount: Number(r.amount),
      customer_id: r.customer_id,
      merchant_id: r.merchant_id,
      location: r.location,
      payment_type: r.payment_type,
      explain: true,
    });
  };
}

// --- a server process ------------------------------------------------------------------------------
interface Launched {
  child: ChildProcess;
  base: string;
  ready: Promise<RegExpMatchArray>;
  output(): string;
}

/** A server process as `npm start` runs it. WEB_CONCURRENCY=1: the spawned process is the server
 *  itself, so its /proc figures are the server's. */
function launch(databaseUrl: string, dataDir: string): Launched {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const child = spawn(process.execPath, [...startFlags(), ...serverNodeArgs(), join(root, 'scripts/start.mjs')], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      SCORE_RATE_PER_MINUTE: '100000000',
      WEB_CONCURRENCY: '1',
      DURABILITY: 'commit',
      // The first score is what this measures (the history's load), so it may wait for the load
      // rather than be answered 503 history_loading at the usual 2 s.
      SCORE_DEADLINE_SECONDS: String(FIRST_SCORE_TIMEOUT_MS / 1000),
      ...signIn!.env,
      DATABASE_URL: databaseUrl,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.add(child);
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const ready = waitFor(child, /ready on .* start-up steps ms: (\{.*\})/, 'stderr', 10 * 60_000);
  ready.catch(() => {});
  return { child, base: `http://127.0.0.1:${port}`, ready, output: () => err };
}

/** Why a server process is gone, in a few words, from what it wrote last. */
function exitReason(s: Launched): string {
  const out = s.output();
  if (/heap out of memory|Allocation failed/i.test(out)) return 'server exited: heap out of memory';
  const code = s.child.exitCode ?? s.child.signalCode;
  return `server exited (${code}): ${out.trim().split('\n').slice(-3).join(' | ').slice(0, 300)}`;
}

/** POST over a fresh connection; rejects when the server exits first or after `timeoutMs`. */
function post(s: Launched, path: string, key: string, body: string, timeoutMs: number): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const onExit = () => reject(new Error(exitReason(s)));
    s.child.once('exit', onExit);
    const req = request(
      `${s.base}${path}`,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          s.child.off('exit', onExit);
          clearTimeout(timer);
          resolve({ status: res.statusCode!, text });
        });
        res.on('error', reject);
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    req.on('error', (e) => {
      // A connection reset because the server died is reported as its exit.
      setTimeout(() => reject(s.child.exitCode !== null || s.child.signalCode !== null ? new Error(exitReason(s)) : e), 200);
    });
    req.end(body);
  });
}

interface Memory {
  rss_mb: number;
  heap_used_mb: number;
  heap_total_mb: number;
  /** Typed arrays and Buffers outside the heap: where a history in columns lives. */
  array_buffers_mb: number;
}

/** The server's resident memory (/proc) and its own heap figures (/api/health). */
async function memory(s: Launched): Promise<Memory> {
  const health = (await (await fetch(`${s.base}/api/health`)).json()) as { memory: { heap_used_mb: number; heap_total_mb: number; array_buffers_mb: number } };
  return {
    rss_mb: memoryMb(s.child.pid!),
    heap_used_mb: health.memory.heap_used_mb,
    heap_total_mb: health.memory.heap_total_mb,
    array_buffers_mb: health.memory.array_buffers_mb,
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until the job threads have exited (an idle one exits after a minute: src/jobs/worker-pool.ts),
 *  seen as the process's threads dropping, or 70 s when none drops (no thread was left); then 2 s for
 *  the allocator's trim that follows. Returns the seconds waited. */
async function jobThreadsGone(s: Launched): Promise<number> {
  const t0 = performance.now();
  const before = threadsOf(s.child.pid!);
  while (threadsOf(s.child.pid!) >= before && performance.now() - t0 < 70_000) {
    if (s.child.exitCode !== null || s.child.signalCode !== null) throw new Error(exitReason(s));
    await sleep(500);
  }
  await sleep(2_000);
  return round1((performance.now() - t0) / 1000);
}

/** Waits until the process's jobs are done: on its start a process queues a `rings` job for each
 *  due weekly window of an organization's history (src/live/ring-windows.ts; with 30 days stored,
 *  three), which analyse the seeded weeks in a worker thread for minutes at 5 M. They are part of
 *  what a large history costs, but not of what holding it costs, so they end before anything is
 *  measured. Returns the seconds waited from the call: the jobs queued within `appearMs`, until
 *  none has run for 3 s. */
async function jobsDone(s: Launched, appearMs = 10_000): Promise<number> {
  const t0 = performance.now();
  let seen = false;
  let idleSince = performance.now();
  for (;;) {
    const health = (await (await fetch(`${s.base}/api/health`)).json()) as { jobs_running: Record<string, number> };
    const now = performance.now();
    if (Object.keys(health.jobs_running).length > 0) {
      seen = true;
      idleSince = now;
    } else if (seen ? now - idleSince >= 3_000 : now - t0 >= appearMs) {
      return round1((now - t0) / 1000);
    }
    if (s.child.exitCode !== null || s.child.signalCode !== null) throw new Error(exitReason(s));
    await sleep(500);
  }
}

/** Recorded scores at this benchmark's rate and connections. */
const atRate = (base: string, key: string, makeBody: () => string, seconds: number, until?: Promise<unknown>): Promise<Load> =>
  fixedRate({ base, key, makeBody, rate: RATE, connections: CONNECTIONS, seconds, until });

/** A short load at a low rate: the code paths compiled before anything is measured. */
async function warmUp(base: string, key: string, makeBody: () => string): Promise<void> {
  await autocannon({
    url: `${base}/api/v1/risk/score`,
    method: 'POST',
    connections: 2,
    amount: quick ? 600 : 2_000,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    requests: [{ setupRequest: (req) => ({ ...req, body: makeBody() }) }],
  });
}

// --- one back end and size -------------------------------------------------------------------------
interface Result {
  backend: Backend;
  transactions: number;
  seeded?: Seeded;
  /** Seconds from the start-up jobs' end until their worker threads had exited (and the process's
   *  allocator was trimmed), waited for before measuring memory. */
  job_threads_gone_s?: number;
  /** The process's start-up jobs (the seeded weeks' ring analyses), waited for before measuring. */
  jobs_at_start_s?: number;
  /** The empty organization at the fixed rate before the large one is loaded: the baseline. */
  empty?: Load;
  memory_before?: Memory;
  /** The large organization's first score, sent to answered (its history's load from the rows: no
   *  snapshot of it is stored yet). */
  first_score_s?: number;
  memory_after?: Memory;
  peak_rss_during_load_mb?: number;
  /** The empty organization from a second before the large one's first score (its load from the
   *  rows) until a second after. */
  empty_during_rows_load?: Load;
  /** The large organization from 2 s after its first score, while its snapshot may be stored. */
  just_loaded?: Load;
  ratio_p99_just_loaded?: number;
  /** Memory SETTLED_MS after the first score. */
  memory_settled?: Memory;
  /** What the held history adds, per 100,000 transactions: 2 s after the first score, at the peak
   *  (from before the load to the end of `just_loaded`), and SETTLED_MS after. */
  mb_per_100k?: { rss: number; heap: number; array_buffers: number; heap_and_buffers: number; peak_rss: number; settled_rss: number };
  organizations_loaded?: number;
  loaded?: Load;
  /** p99 on the large organization over p99 on the empty one. */
  ratio_p99?: number;
  /** The empty organization again, while the large one is held. */
  empty_while_held?: Load;
  /** A second process (a restart): the empty organization's load while the large one's history
   *  loads, from the snapshot the first process stored. */
  empty_during_load?: Load;
  first_score_under_load_s?: number;
  /** The stored snapshot the second process loads (PostgreSQL, where it can be read beside). */
  snapshot_mb?: number;
  /** What the history loaded from the snapshot holds, per 100,000 transactions. */
  snapshot_mb_per_100k?: { rss: number; heap_and_buffers: number };
  error?: string;
}

async function runOne(backend: Backend, n: number): Promise<Result> {
  const result: Result = { backend, transactions: n };
  const dataDir = tempDir('bench-history-');
  directories.add(dataDir);
  let url = '';
  let dbName: string | undefined;
  if (backend === 'postgres') {
    dbName = `bench_history_${randomBytes(4).toString('hex')}`;
    await admin!.unsafe(`CREATE DATABASE ${dbName}`);
    databases.add(dbName);
    const u = new URL(adminUrl!);
    u.pathname = `/${dbName}`;
    url = u.toString();
  }
  let current: Launched | undefined;
  try {
    // A first start makes the schema; two organizations and their keys are made through the API,
    // as a customer makes them. The server stops before seeding: an embedded data directory has
    // one user at a time, and the rows must be stored before the process that measures starts.
    say(`${backend} ${n.toLocaleString('en')}: making the organizations…`);
    current = launch(url, dataDir);
    await current.ready;
    const large = await signIn!.organization(current.base, 'bench-large');
    const empty = await signIn!.organization(current.base, 'bench-empty');
    await stop(current.child);

    say(`${backend} ${n.toLocaleString('en')}: storing the transactions…`);
    const t0 = performance.now();
    let makeLarge: () => string;
    if (backend === 'postgres') {
      const sql = postgres(url, { max: 1, onnotice: () => {} });
      const run: Run = async (text, params) => [...(await sql.unsafe(text, params as never[]))];
      try {
        await seed(run, large.id, n);
        result.seeded = await describe(run, large.id, (performance.now() - t0) / 1000);
        makeLarge = await sampleBodies(run, large.id, n);
      } finally {
        await sql.end({ timeout: 5 });
      }
    } else {
      const db = await openDatabase({ dataDir });
      const run: Run = (text, params) => db.query(text, params);
      try {
        await seed(run, large.id, n);
        result.seeded = await describe(run, large.id, (performance.now() - t0) / 1000);
        makeLarge = await sampleBodies(run, large.id, n);
      } finally {
        await db.close();
      }
    }
    say(`${backend} ${n.toLocaleString('en')}: stored in ${result.seeded.seconds} s: ${JSON.stringify(result.seeded)}`);

    // The process that measures.
    current = launch(url, dataDir);
    const s = current;
    await s.ready;
    result.jobs_at_start_s = await jobsDone(s);
    say(`  the jobs queued at start (the ring windows' analyses) done after ${result.jobs_at_start_s} s`);
    // Their worker threads exit after a minute idle, and the process gives their memory back then.
    result.job_threads_gone_s = await jobThreadsGone(s);
    say(`  their worker threads gone after ${result.job_threads_gone_s} s more`);
    const emptyBodies = scoreRequests().newTransaction;
    await warmUp(s.base, empty.secret, emptyBodies);
    result.empty = await atRate(s.base, empty.secret, emptyBodies, DURATION);
    say(`  empty organization at ${RATE} req/s: ${JSON.stringify(result.empty)}`);
    // Memory a couple of seconds after the last load, when the young generation has settled.
    await sleep(2_000);
    result.memory_before = await memory(s);
    resetPeakMemory(s.child.pid!);
    // The empty organization at the fixed rate from a second before the large one's first score
    // (its load from the rows) until a second after its answer.
    let rowsAnswered!: () => void;
    const rowsDone = new Promise<void>((resolve) => (rowsAnswered = resolve));
    const duringRows = atRate(s.base, empty.secret, emptyBodies, FIRST_SCORE_TIMEOUT_MS / 1000, rowsDone);
    await sleep(1_000);
    const tFirst = performance.now();
    try {
      const first = await post(s, '/api/v1/risk/score', large.secret, makeLarge(), FIRST_SCORE_TIMEOUT_MS).catch((e: Error) => {
        throw new Error(`first score: ${e.message}`);
      });
      if (first.status !== 200) throw new Error(`first score: ${first.status} ${first.text.slice(0, 300)}`);
      result.first_score_s = Math.round((performance.now() - tFirst) / 100) / 10;
      await sleep(1_000);
    } finally {
      rowsAnswered();
      result.empty_during_rows_load = await duringRows;
    }
    const answeredAt = tFirst + result.first_score_s * 1000;
    say(
      `  the large organization's first score after ${result.first_score_s} s; the empty organization meanwhile: ${JSON.stringify(result.empty_during_rows_load)}`,
    );
    await sleep(Math.max(0, answeredAt + 2_000 - performance.now()));
    result.memory_after = await memory(s);
    // From 2 s after the first score: the large organization's own scores while the process may
    // still be storing the snapshot it built (no warm-up: this is what its payment server meets).
    result.just_loaded = await atRate(s.base, large.secret, makeLarge, DURATION);
    result.ratio_p99_just_loaded = Math.round((result.just_loaded.p99_ms / result.empty.p99_ms) * 100) / 100;
    say(`  the large organization from 2 s after its first score: ${JSON.stringify(result.just_loaded)}`);
    result.peak_rss_during_load_mb = memoryMb(s.child.pid!, 'VmHWM');
    await sleep(Math.max(0, answeredAt + SETTLED_MS - performance.now()));
    result.memory_settled = await memory(s);
    const per100k = n / 100_000;
    result.mb_per_100k = {
      rss: round1((result.memory_after.rss_mb - result.memory_before.rss_mb) / per100k),
      heap: round1((result.memory_after.heap_used_mb - result.memory_before.heap_used_mb) / per100k),
      array_buffers: round1((result.memory_after.array_buffers_mb - result.memory_before.array_buffers_mb) / per100k),
      heap_and_buffers: round1(
        (result.memory_after.heap_used_mb + result.memory_after.array_buffers_mb - result.memory_before.heap_used_mb - result.memory_before.array_buffers_mb) /
          per100k,
      ),
      peak_rss: round1((result.peak_rss_during_load_mb - result.memory_before.rss_mb) / per100k),
      settled_rss: round1((result.memory_settled.rss_mb - result.memory_before.rss_mb) / per100k),
    };
    result.organizations_loaded = ((await (await fetch(`${s.base}/api/health`)).json()) as { organizations_loaded: number }).organizations_loaded;
    say(`  memory ${JSON.stringify(result.memory_before)} → ${JSON.stringify(result.memory_after)}: ${JSON.stringify(result.mb_per_100k)} MB per 100,000`);
    await warmUp(s.base, large.secret, makeLarge);
    result.loaded = await atRate(s.base, large.secret, makeLarge, DURATION);
    result.ratio_p99 = Math.round((result.loaded.p99_ms / result.empty.p99_ms) * 100) / 100;
    say(`  large organization at ${RATE} req/s: ${JSON.stringify(result.loaded)}`);
    result.empty_while_held = await atRate(s.base, empty.secret, emptyBodies, DURATION);
    say(`  empty organization while the large one is held: ${JSON.stringify(result.empty_while_held)}`);
    await stop(s.child);

    // A second process: the empty organization at the fixed rate from a second before the large
    // organization's first score until a second after its answer: does one load hold the others?
    if (backend === 'postgres') {
      const sql = postgres(url, { max: 1, onnotice: () => {} });
      try {
        const [row] = await sql`SELECT bytes::float8 AS bytes FROM history_snapshots WHERE organization_id = ${large.id}`;
        result.snapshot_mb = row ? round1((row.bytes as number) / 1e6) : 0;
      } finally {
        await sql.end({ timeout: 5 });
      }
    }
    current = launch(url, dataDir);
    const s2 = current;
    await s2.ready;
    await jobsDone(s2);
    await warmUp(s2.base, empty.secret, emptyBodies);
    await sleep(2_000);
    const before2 = await memory(s2);
    let answered!: () => void;
    const done = new Promise<void>((resolve) => (answered = resolve));
    const during = atRate(s2.base, empty.secret, emptyBodies, FIRST_SCORE_TIMEOUT_MS / 1000, done);
    await sleep(1_000);
    const t2 = performance.now();
    try {
      const r = await post(s2, '/api/v1/risk/score', large.secret, makeLarge(), FIRST_SCORE_TIMEOUT_MS);
      if (r.status !== 200) throw new Error(`first score under load: ${r.status} ${r.text.slice(0, 300)}`);
      result.first_score_under_load_s = Math.round((performance.now() - t2) / 100) / 10;
      await sleep(1_000);
    } finally {
      answered();
      result.empty_during_load = await during;
    }
    // As for the first process: 2 s after the answer, when the load's garbage has been handed back.
    await sleep(2_000);
    const after2 = await memory(s2);
    result.snapshot_mb_per_100k = {
      rss: round1((after2.rss_mb - before2.rss_mb) / per100k),
      heap_and_buffers: round1((after2.heap_used_mb + after2.array_buffers_mb - before2.heap_used_mb - before2.array_buffers_mb) / per100k),
    };
    say(`  empty organization while the large one loads (${result.first_score_under_load_s} s): ${JSON.stringify(result.empty_during_load)}`);
  } catch (e) {
    result.error = (e as Error).message;
    say(`${backend} ${n.toLocaleString('en')}: ${result.error}`);
  } finally {
    if (current) await stop(current.child);
    if (dbName) await dropDatabase(dbName);
    await removeDirectory(dataDir);
  }
  return result;
}

/** The key fields part's table (history-keys.ts). */
function keysTable(keys: KeysFigures): void {
  const k = keys.per_100k;
  const held = keys.transactions.toLocaleString('en');
  console.log('');
  console.log(
    `| ${held} transactions held, MB per 100,000 (median of ${keys.builds.length / 2} builds each) | typed arrays (history.byteLength) | heap + array buffers after a full collection | build s |`,
  );
  console.log('|---|---|---|---|');
  console.log(`| without key values | ${k.without.typed_arrays_mb} | ${k.without.heap_and_buffers_mb} | ${keys.build_seconds.without} |`);
  const values = Object.entries(keys.values).map(([field, v]) => `${field} ${v.distinct.toLocaleString('en')} values`);
  console.log(
    `| three key fields (${values.join(', ')}) | ${k.with_keys.typed_arrays_mb} | ${k.with_keys.heap_and_buffers_mb} | ${keys.build_seconds.with_keys} |`,
  );
  console.log(`| added | **${k.added_typed_arrays_mb}** | **${k.added_heap_and_buffers_mb}** | ${keys.build_seconds.ratio}× |`);
  const parts = Object.entries(k.key_parts_mb).map(([part, v]) => `${part} ${v}`);
  console.log(`three key fields add ${k.added_heap_and_buffers_mb} MB per 100,000 held (goal ≤ 3); the key fields' part, MB per 100,000: ${parts.join(', ')}`);
}

// --- the run ---------------------------------------------------------------------------------------
let exitCode = 0;
/** Whether `--only` leaves this part in. */
const runs = (part: NonNullable<typeof options.only>) => options.only === undefined || options.only === part;
try {
  let shapes: ShapesFigures | undefined;
  if (runs('shapes')) {
    say('shapes: the example history built and read back from a snapshot, scored in this process');
    shapes = await measureShapes({ quick, log: say });
  }
  let keys: KeysFigures | undefined;
  if (runs('keys')) {
    say(`key fields: ${SIZES[0]!.toLocaleString('en')} transactions with three key fields' values and without, built in this process`);
    keys = await measureKeys({ quick, log: say, transactions: SIZES[0]! });
  }
  const results: Result[] = [];
  if (runs('servers')) {
    signIn = await SignIn.start();
    for (const backend of BACKENDS) for (const n of SIZES) results.push(await runOne(backend, n));
  }

  const f = (x: number | undefined, digits = 0) =>
    x === undefined ? '–' : x.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  const pair = (l: Load | undefined) => (l ? `${f(l.p50_ms)} / ${f(l.p99_ms)}${l.errors ? ` (${l.errors} errors)` : ''}` : '–');
  if (keys) keysTable(keys);
  if (results.length > 0) {
    console.log('');
    console.log(
      `| Back end, transactions held | first score s (rows) | after a restart s (snapshot) | MB/100k resident: 2 s after / peak / settled | MB/100k heap + buffers | empty org p50 / p99 ms | large org from 2 s after its first load p50 / p99 ms (ratio) | loaded org p50 / p99 ms | p99 ratio | other org p99 while held | other org p99 / max during the load from the rows | … from the snapshot |`,
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
    for (const r of results) {
      const during = (l: Load | undefined) => (l ? `${f(l.p99_ms)} / ${f(l.max_ms)}` : '–');
      const memory = r.mb_per_100k ? `${f(r.mb_per_100k.rss, 1)} / ${f(r.mb_per_100k.peak_rss, 1)} / ${f(r.mb_per_100k.settled_rss, 1)}` : '–';
      console.log(
        `| ${r.backend}, ${f(r.transactions)}${r.error ? ` (${r.error})` : ''} | ${f(r.first_score_s, 1)} | ${f(r.first_score_under_load_s, 1)} | ${memory} | ${f(r.mb_per_100k?.heap_and_buffers, 1)} | ${pair(r.empty)} | ${pair(r.just_loaded)} (${f(r.ratio_p99_just_loaded, 2)}) | ${pair(r.loaded)} | ${f(r.ratio_p99, 2)} | ${f(r.empty_while_held?.p99_ms)} | ${during(r.empty_during_rows_load)} | ${during(r.empty_during_load)} |`,
      );
    }
    console.log('');
    console.log(
      `ring analyses the process queued on its start, waited for before measuring: ${results.map((r) => `${r.backend} ${f(r.transactions)}: ${f(r.jobs_at_start_s, 1)} s`).join('; ')}`,
    );
    console.log(
      `${RATE} req/s of recorded scores (POST /api/v1/risk/score, explain on) for ${DURATION} s a load, ${CONNECTIONS} connections; the baseline is an empty organization in the same process before the large one is loaded.`,
    );
  }
  console.log(
    JSON.stringify({
      benchmark: 'history',
      quick,
      machine: { cores: availableParallelism(), node: process.version },
      rate: RATE,
      duration_s: DURATION,
      connections: CONNECTIONS,
      results,
      shapes,
      keys,
      run_seconds: Math.round((performance.now() - started) / 100) / 10,
    }),
  );
  if (results.some((r) => r.error && !/heap out of memory/.test(r.error))) exitCode = 1;
} catch (e) {
  process.stderr.write(`bench:history failed: ${(e as Error).stack ?? e}\n`);
  exitCode = 1;
} finally {
  await cleanUp();
}
process.exit(exitCode);
