// `npm run bench:start [-- --quick]`: what a server process costs to start.
// On the embedded database (always): a new install's first start, on an empty data directory, from
// spawn until the server listens, against the next start on the same directory (a restart).
// On PostgreSQL (with DATABASE_URL: a server on which the benchmark may create and drop databases):
// whether a start costs more with history older than the features can reach. Two databases are
// seeded, one with 1,000,000 transactions and one with 5,000,000 (a tenth with --quick), holding
// the same last 30 days row for row and the same entities; a process needs only each entity's last
// 31 days and its all-time totals, so starting on either should cost the same. Each start is a
// fresh `npm start` process, timed from spawn until its first score with the organization's API key
// is answered (that score loads the history), with its resident memory then and a second later.
// Starts alternate; medians. Prints a table, then one JSON object.

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { join } from 'node:path';
import postgres from 'postgres';
import { dropDatabase } from '../test/support/server.ts';
import { withoutSecondaryIndexes } from './database.ts';
import { benchmarkCommandLine, quick } from './harness.ts';
import { memoryMb, root, startFlags, waitFor } from './server-process.ts';
import { SignIn } from '../test/support/processes.ts';
import { tempDir } from '../test/support/temp.ts';

benchmarkCommandLine({
  name: 'bench:start',
  about: "A server process's start against 1 M and 5 M stored transactions that share their last 31 days.",
  quick: 'seeds 100,000 and 500,000 transactions, two starts each (the full run: 1 M and 5 M, three each)',
  notes: ['The PostgreSQL part needs DATABASE_URL: a server on which this role may create and drop databases. Without it only the embedded part runs.'],
});

const adminUrl = process.env.DATABASE_URL || undefined;

const DAY = 86_400_000;
/** Rows in the window both databases share: the last 30 days, one day inside the server's 31-day
 *  horizon, so that the minutes the run takes never move a row across it. */
const RECENT = quick ? 30_000 : 150_000;
const SIZES = { small: quick ? 100_000 : 1_000_000, large: quick ? 500_000 : 5_000_000 };
const REPEATS = quick ? 2 : 3;
/** Rows per INSERT statement. */
const CHUNK = 500_000;
// Every customer pays a few merchants of its own (SLOTS), each in one location with one payment
// type, and every block of CUSTOMERS × SLOTS consecutive rows uses each of those pairs exactly once.
// The shared window holds at least one whole block, so both databases have the same customers,
// merchants, channels and customer–merchant pairs: the same number of rows in any per-entity table.
const CUSTOMERS = quick ? 4_000 : 20_000;
const MERCHANTS = quick ? 200 : 1_000;
const SLOTS = 5;
const PAIRS = CUSTOMERS * SLOTS;
const LOCATIONS = ['Lisbon', 'Porto', 'Madrid', 'Paris', 'Berlin', 'Rome'];
const PAYMENT_TYPES = ['card_present', 'card_not_present', 'wallet', 'bank_transfer'];
/** One row every SPACING ms, in the shared window and before it alike. */
const SPACING = (30 * DAY) / RECENT;
// The server's clock is the real one, so the window ends now (rounded down, so no row is in the
// future).
const NOW = Math.floor(Date.now() / 60_000) * 60_000;
const LABEL_DELAY = 7 * DAY;
if (RECENT < PAIRS) throw new Error('the shared window must hold every customer–merchant pair');

type Size = keyof typeof SIZES;
const started = performance.now();
const say = (msg: string) => process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1)} s] ${msg}\n`);

// --- what is cleaned up, whatever happens --------------------------------------------------------
const admin = adminUrl ? postgres(adminUrl, { max: 1, onnotice: () => {} }) : undefined;
const databases: string[] = [];
const children = new Set<ChildProcess>();
let signIn: SignIn | undefined;

function stop(child: ChildProcess): Promise<void> {
  children.delete(child);
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  return exited;
}

let cleaned: Promise<void> | undefined;
function cleanUp(): Promise<void> {
  cleaned ??= (async () => {
    await Promise.all([...children].map(stop));
    await signIn?.close().catch(() => {});
    for (const name of databases) await dropDatabase(admin!, name).catch((e: Error) => say(`could not drop ${name}: ${e.message}`));
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

async function database(): Promise<{ name: string; url: string }> {
  const name = `bench_start_${randomBytes(4).toString('hex')}`;
  await admin!.unsafe(`CREATE DATABASE ${name}`);
  databases.push(name);
  const u = new URL(adminUrl!);
  u.pathname = `/${name}`;
  return { name, url: u.toString() };
}

// --- seeding ---------------------------------------------------------------------------------------
// Row n (0 the newest) is the same row in both databases: the same id, time, amount, customer,
// merchant, location, payment type and outcome. Rows 0 … RECENT−1 are the shared window; older rows
// continue one day before its start, going back as far as the database's size takes them. All are
// imported with an outcome known LABEL_DELAY after the transaction; about 2 % are fraud.
const SEED_SQL = `
  INSERT INTO transactions (organization_id, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, source, label, label_known_ms)
  SELECT $1, 'tx-' || n, t,
         round(exp(1.5 + (h % 10000) / 2000.0)::numeric, 2)::float8,
         'C' || lpad(c::text, 5, '0'), 'M' || lpad((hp % ${MERCHANTS})::text, 4, '0'),
         (ARRAY[${LOCATIONS.map((l) => `'${l}'`).join(',')}])[1 + ((hp % ${MERCHANTS}) % ${LOCATIONS.length})::int],
         (ARRAY[${PAYMENT_TYPES.map((p) => `'${p}'`).join(',')}])[1 + ((hp / ${MERCHANTS}) % ${PAYMENT_TYPES.length})::int],
         'import',
         CASE WHEN (h / 10000) % 100 < 2 THEN 1 ELSE 0 END, t + ${LABEL_DELAY}::float8
  FROM (SELECT n, t, h, c, hashint8extended(c * 16 + slot, 2) & 9223372036854775807 AS hp
        FROM (SELECT n, t, h, p % ${CUSTOMERS} AS c, p / ${CUSTOMERS} AS slot
              FROM (SELECT n,
                           CASE WHEN n < ${RECENT} THEN $2::float8 - (n + 1) * ${SPACING}::float8
                                ELSE $2::float8 - ${31 * DAY}::float8 - (n - ${RECENT} + 1) * ${SPACING}::float8 END AS t,
                           hashint8extended(n, 1) & 9223372036854775807 AS h,
                           (n * 7919 + (n / ${PAIRS}) * 104729) % ${PAIRS} AS p
                    FROM generate_series($3::bigint, $4::bigint, -1) AS n) AS a) AS b) AS r`;

/** Stores `total` rows, oldest first (the order a history is recorded in), without the secondary
 *  indexes during the load (bench/database.ts). */
async function seed(sql: postgres.Sql, organizationId: string, total: number): Promise<void> {
  await withoutSecondaryIndexes(
    async (text) => [...(await sql.unsafe(text))],
    '256MB',
    async () => {
      for (let hi = total - 1; hi >= 0; hi -= CHUNK) {
        await sql.unsafe(SEED_SQL, [organizationId, NOW, hi, Math.max(0, hi - CHUNK + 1)]);
      }
    },
  );
  await sql.unsafe('VACUUM ANALYZE');
}

interface Stored {
  transactions: number;
  last_31_days: number;
  /** A digest of the rows in the last 31 days: equal in both databases. */
  window_digest: string;
  /** Rows of the per-entity totals tables, where the schema has them. */
  aggregate_rows: Record<string, number>;
}

async function stored(sql: postgres.Sql): Promise<Stored> {
  const [c] = await sql.unsafe<{ total: string; recent: string; digest: string }[]>(
    `SELECT count(*) AS total, count(*) FILTER (WHERE time_ms > $1) AS recent,
            md5(string_agg(concat_ws(':', transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, label, label_known_ms), ',' ORDER BY transaction_id)
                FILTER (WHERE time_ms > $1)) AS digest
     FROM transactions`,
    [NOW - 31 * DAY],
  );
  const aggregate_rows: Record<string, number> = {};
  for (const table of ['entity_totals', 'customer_uses']) {
    const [exists] = await sql.unsafe<{ t: string | null }[]>('SELECT to_regclass($1)::text AS t', [table]);
    if (exists?.t) aggregate_rows[table] = Number((await sql.unsafe<{ n: string }[]>(`SELECT count(*) AS n FROM ${table}`))[0]!.n);
  }
  return { transactions: Number(c!.total), last_31_days: Number(c!.recent), window_digest: c!.digest, aggregate_rows };
}

// --- one start -----------------------------------------------------------------------------------
interface Sample {
  /** Spawn until the server listens (its "ready" line). */
  ready_ms: number;
  /** Listening until its first score is answered (the organization's history loads). */
  first_score_ms: number;
  /** Spawn until the first score is answered. */
  start_ms: number;
  rss_ready_mb: number;
  rss_after_score_mb: number;
  /** One second after the first score. */
  rss_mb: number;
  /** Peak resident memory since the spawn. */
  peak_mb: number;
  startup_steps: Record<string, number>;
}

/** POST over a fresh connection with no client-side time limit (a slow load is a result, not an
 *  error). */
function post(url: string, key: string, body: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

interface Target {
  size: Size;
  url: string;
  key: string;
  probe: { customer_id: string; merchant_id: string; location: string; payment_type: string };
}

const env = () => ({ SCORE_RATE_PER_MINUTE: '100000000', WEB_CONCURRENCY: '1', DURABILITY: 'commit', ...signIn!.env });
let probes = 0;

interface Launched {
  child: ChildProcess;
  port: number;
  /** When it was spawned (performance.now()). */
  spawned: number;
  /** Its "ready" line, with the start-up steps it reports. */
  ready: Promise<RegExpMatchArray>;
  /** What it wrote to standard error so far. */
  output(): string;
}

/** A server process as `npm start` runs it, on `databaseUrl`. WEB_CONCURRENCY=1: the spawned
 *  process is the server itself, so its /proc figures are the server's. */
function launch(databaseUrl: string, dataDir = tempDir('bench-start-')): Launched {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const spawned = performance.now();
  const child = spawn(process.execPath, [...startFlags(), join(root, 'scripts/start.mjs')], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...env(), DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.add(child);
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const ready = waitFor(child, /ready on .* start-up steps ms: (\{.*\})/, 'stderr', 30 * 60_000);
  // Awaited later; a failure meanwhile must not count as unhandled.
  ready.catch(() => {});
  return { child, port, spawned, ready, output: () => err };
}

/** A start measured, or undefined when the process compiled src/ first (someone changed it during
 *  the run): that is not start-up, and the next start is taken instead. */
async function startOnce(t: Target): Promise<Sample | undefined> {
  const s = launch(t.url);
  try {
    const ready = await s.ready;
    const tReady = performance.now();
    const pid = s.child.pid!;
    const rssReady = memoryMb(pid);
    const res = await post(`http://127.0.0.1:${s.port}/api/v1/risk/score`, t.key, {
      transaction_id: `start-probe-${++probes}`,
      amount: 42.5,
      ...t.probe,
      explain: true,
    });
    const tScore = performance.now();
    if (res.status !== 200) throw new Error(`the first score answered ${res.status}: ${res.text.slice(0, 500)}`);
    const rssScore = memoryMb(pid);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const sample: Sample = {
      ready_ms: Math.round(tReady - s.spawned),
      first_score_ms: Math.round(tScore - tReady),
      start_ms: Math.round(tScore - s.spawned),
      rss_ready_mb: rssReady,
      rss_after_score_mb: rssScore,
      rss_mb: memoryMb(pid),
      peak_mb: memoryMb(pid, 'VmHWM'),
      startup_steps: JSON.parse(ready[1]!) as Record<string, number>,
    };
    return /compiling src\//.test(s.output()) ? undefined : sample;
  } catch (e) {
    throw new Error(`${t.size}: ${(e as Error).message}\nserver output: ${s.output().slice(-2000)}`);
  } finally {
    await stop(s.child);
  }
}

async function measure(t: Target): Promise<Sample> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const s = await startOnce(t);
    if (s) {
      say(
        `${t.size}: listening after ${s.ready_ms} ms, first score after ${s.start_ms} ms; ${s.rss_ready_mb} → ${s.rss_after_score_mb} → ${s.rss_mb} MB (peak ${s.peak_mb})`,
      );
      return s;
    }
    say(`${t.size}: the server compiled src/ before starting (it changed during the run); starting again`);
  }
  throw new Error('src/ kept changing: no start without a compile');
}

const median = (values: number[]) => {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

// --- the embedded database ---------------------------------------------------------------------------
interface EmbeddedStarts {
  /** Spawn until listening, on a new data directory. */
  empty_ms: number[];
  /** The same on that directory again: the baseline. */
  restart_ms: number[];
  /** The first start's own steps (src/app/service.ts), per start. */
  empty_steps: Record<string, number>[];
}

/** Spawn until listening (undefined when the process compiled src/ first: not a start). */
async function listening(dataDir: string): Promise<{ ms: number; steps: Record<string, number> } | undefined> {
  const s = launch('', dataDir);
  try {
    const ready = await s.ready;
    const ms = Math.round(performance.now() - s.spawned);
    return /compiling src\//.test(s.output()) ? undefined : { ms, steps: JSON.parse(ready[1]!) as Record<string, number> };
  } catch (e) {
    throw new Error(`embedded: ${(e as Error).message}\nserver output: ${s.output().slice(-2000)}`);
  } finally {
    await stop(s.child);
  }
}

async function embeddedStarts(): Promise<EmbeddedStarts> {
  const out: EmbeddedStarts = { empty_ms: [], restart_ms: [], empty_steps: [] };
  for (let r = 0; r < REPEATS + 1; r++) {
    const dataDir = tempDir('bench-start-embedded-');
    const empty = await listening(dataDir);
    const restart = await listening(dataDir);
    // The first pair warms the page cache (and compiles src/ if it changed): not counted.
    if (r === 0 || !empty || !restart) continue;
    out.empty_ms.push(empty.ms);
    out.empty_steps.push(empty.steps);
    out.restart_ms.push(restart.ms);
    say(`embedded: an empty data directory listening after ${empty.ms} ms (${JSON.stringify(empty.steps)}), the restart after ${restart.ms} ms`);
  }
  return out;
}

// --- PostgreSQL: starts against 1 M and 5 M stored transactions --------------------------------------
async function postgresStarts(embeddedSummary: object): Promise<void> {
  const dbs = { small: await database(), large: await database() };

  // A first start on each database applies the migrations; an organization and its key are made
  // through the API, as a customer makes them.
  say('applying migrations and making an organization on each database…');
  // The second starts once the first has its compiled code (it compiles src/ when that changed),
  // so that two compilations never write dist/ at once.
  const first = launch(dbs.small.url);
  await waitFor(first.child, /starting \(storage/, 'stderr', 10 * 60_000);
  const second = launch(dbs.large.url);
  const made = {} as Record<Size, { id: string; secret: string }>;
  await Promise.all(
    (
      [
        ['small', first],
        ['large', second],
      ] as const
    ).map(async ([size, s]) => {
      try {
        await s.ready;
      } catch (e) {
        throw new Error(`${size}: ${(e as Error).message}\nserver output: ${s.output().slice(-2000)}`);
      }
      made[size] = await signIn!.organization(`http://127.0.0.1:${s.port}`, 'bench');
      await stop(s.child);
    }),
  );

  say(
    `storing ${SIZES.small.toLocaleString('en')} and ${SIZES.large.toLocaleString('en')} transactions (${RECENT.toLocaleString('en')} of them shared, in the last 30 days)…`,
  );
  const seedStarted = performance.now();
  const conns = { small: postgres(dbs.small.url, { max: 1, onnotice: () => {} }), large: postgres(dbs.large.url, { max: 1, onnotice: () => {} }) };
  const seeded = {} as Record<Size, Stored>;
  let probe: Target['probe'];
  try {
    await Promise.all((['small', 'large'] as const).map((size) => seed(conns[size], made[size].id, SIZES[size])));
    for (const size of ['small', 'large'] as const) seeded[size] = await stored(conns[size]);
    const [row] = await conns.small.unsafe<Target['probe'][]>(
      `SELECT customer_id, merchant_id, location, payment_type FROM transactions WHERE transaction_id = 'tx-0'`,
    );
    probe = row!;
  } finally {
    await Promise.all([conns.small.end(), conns.large.end()]);
  }
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  say(`stored in ${seedSeconds.toFixed(1)} s`);
  if (seeded.small.window_digest !== seeded.large.window_digest || seeded.small.last_31_days !== seeded.large.last_31_days) {
    throw new Error('the two databases differ in the last 31 days');
  }

  const targets = Object.fromEntries(
    (['small', 'large'] as const).map((size) => [size, { size, url: dbs[size].url, key: made[size].secret, probe }]),
  ) as Record<Size, Target>;
  const samples: Record<Size, Sample[]> = { small: [], large: [] };
  // Alternating, and in turn the other way round, so that drift of the host touches both alike.
  for (let r = 0; r < REPEATS; r++) {
    for (const size of r % 2 ? (['large', 'small'] as const) : (['small', 'large'] as const)) samples[size].push(await measure(targets[size]));
  }

  const summary = (size: Size) => {
    const s = samples[size];
    const m = (f: (x: Sample) => number) => Math.round(median(s.map(f)));
    return {
      transactions: seeded[size].transactions,
      last_31_days: seeded[size].last_31_days,
      aggregate_rows: seeded[size].aggregate_rows,
      start_ms: m((x) => x.start_ms),
      ready_ms: m((x) => x.ready_ms),
      first_score_ms: m((x) => x.first_score_ms),
      rss_ready_mb: m((x) => x.rss_ready_mb),
      rss_after_score_mb: m((x) => x.rss_after_score_mb),
      rss_mb: m((x) => x.rss_mb),
      peak_mb: m((x) => x.peak_mb),
      samples: s,
    };
  };
  const small = summary('small');
  const large = summary('large');
  const ratioStart = large.start_ms / small.start_ms;
  const ratioRss = large.rss_mb / small.rss_mb;
  // The part of a start that reads the organization's history; the rest (the public sandbox, built
  // from the simulator) does not depend on the database.
  const ratioLoad = large.first_score_ms / small.first_score_ms;
  const within = (ratio: number) => Math.abs(ratio - 1) <= 0.1;
  const n = (x: number) => x.toLocaleString('en');
  const aggregates = (a: Record<string, number>) =>
    Object.keys(a).length
      ? Object.entries(a)
          .map(([k, v]) => `${k} ${n(v)}`)
          .join(', ')
      : 'none';

  console.log('');
  console.log(
    `| Start on PostgreSQL (median of ${REPEATS}) | stored transactions | in the last 31 days | per-entity totals rows | listening ms | first score ms | start ms | RSS MB after first score | RSS MB 1 s later | peak RSS MB |`,
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const [name, x] of [
    ['small', small],
    ['large', large],
  ] as const) {
    console.log(
      `| ${name} | ${n(x.transactions)} | ${n(x.last_31_days)} | ${aggregates(x.aggregate_rows)} | ${n(x.ready_ms)} | ${n(x.first_score_ms)} | ${n(x.start_ms)} | ${n(x.rss_after_score_mb)} | ${n(x.rss_mb)} | ${n(x.peak_mb)} |`,
    );
  }
  console.log('');
  console.log(`large / small start time: ${ratioStart.toFixed(2)}× (${within(ratioStart) ? 'within' : 'NOT within'} 10 %)`);
  console.log(`large / small resident memory: ${ratioRss.toFixed(2)}× (${within(ratioRss) ? 'within' : 'NOT within'} 10 %)`);
  console.log(`large / small first score after listening (the history's load): ${ratioLoad.toFixed(2)}×`);
  console.log(
    JSON.stringify({
      benchmark: 'start',
      quick,
      repeats: REPEATS,
      embedded: embeddedSummary,
      seed_seconds: Math.round(seedSeconds * 10) / 10,
      small,
      large,
      ratio_start: Math.round(ratioStart * 1000) / 1000,
      ratio_rss: Math.round(ratioRss * 1000) / 1000,
      ratio_first_score: Math.round(ratioLoad * 1000) / 1000,
      goals: { start_within_10_percent: within(ratioStart), rss_within_10_percent: within(ratioRss) },
      run_seconds: Math.round((performance.now() - started) / 100) / 10,
    }),
  );
}

// --- the run ---------------------------------------------------------------------------------------
let exitCode = 0;
try {
  signIn = await SignIn.start();
  const embedded = await embeddedStarts();
  const embeddedSummary = {
    empty_ms: median(embedded.empty_ms),
    restart_ms: median(embedded.restart_ms),
    ratio_empty_to_restart: Math.round((median(embedded.empty_ms) / median(embedded.restart_ms)) * 1000) / 1000,
    goal_empty_under_2s: median(embedded.empty_ms) < 2000,
    samples: embedded,
  };
  console.log('');
  console.log(`| Start on the embedded database (median of ${REPEATS}) | spawn to listening, ms |`);
  console.log('|---|---|');
  console.log(`| empty data directory (a new install) | ${embeddedSummary.empty_ms} |`);
  console.log(`| the same directory again (baseline) | ${embeddedSummary.restart_ms} |`);
  console.log(
    `empty / restart: ${embeddedSummary.ratio_empty_to_restart.toFixed(2)}×; goal: under 2 s on an empty directory: ${embeddedSummary.goal_empty_under_2s ? 'met' : 'NOT met'}`,
  );
  if (!adminUrl)
    console.log(
      JSON.stringify({
        benchmark: 'start',
        quick,
        repeats: REPEATS,
        embedded: embeddedSummary,
        run_seconds: Math.round((performance.now() - started) / 100) / 10,
      }),
    );
  if (adminUrl) await postgresStarts(embeddedSummary);
  else say('DATABASE_URL is not set: the PostgreSQL part is skipped');
} catch (e) {
  process.stderr.write(`bench:start failed: ${(e as Error).stack ?? e}\n`);
  exitCode = 1;
} finally {
  await cleanUp();
}
process.exit(exitCode);
