// bench:history, key fields part: what three key fields' values add to an organization's history
// held in memory (the goal: at most 3 MB per 100,000 transactions above the same history without
// them), and to its build. In this process, not a server's: the figure is the history's own, with
// no other allocation of a server's in the difference.
// The rows are bench:history's (history-seed.ts: 1,000,000 of one organization's last 30 days;
// 100,000 with --quick), each with the values of three key fields as a payment that carried them
// is recorded (`field_keys`: a device hash, an e-mail domain and a card's BIN country, with the
// cardinalities of bench/field-values.ts), seeded once on the embedded database (or, with
// DATABASE_URL, a schema on that PostgreSQL server). They are read once the way a process loads a
// history (storage/history-load.ts: pages of columns, the first uses, the outcomes, the totals,
// the key values' among them), and the pages are kept; then the history is built from them as a
// process builds it (src/live/tenant.ts's loader), alternately with the key values and without (the
// same pages, `keys` left out, and the key values' totals), each build after a full collection and
// measured after another: the typed arrays it holds (`history.byteLength`, by part, and the key
// fields' part by its own parts), the heap and array buffers it adds, and its time.

import { collectGarbage } from '../src/addon/collect.ts';
import { DEFAULT_LABEL_DELAY_MS } from '../src/domain/history/history.ts';
import type { EntityTotals } from '../src/domain/history/horizon.ts';
import type { TransactionColumns, UseColumns } from '../src/domain/history/records.ts';
import { Tenant } from '../src/live/tenant.ts';
import type { HistoryLoader } from '../src/storage/history-load.ts';
import { organizationData } from '../src/storage/organization-data.ts';
import { benchDatabase } from './database.ts';
import { seed } from './history-seed.ts';

const ORGANIZATION = 'org_bench_keys';

/** What a load handed over, kept to build the history again. */
interface Recorded {
  floor: number;
  expected: number;
  uses: UseColumns[];
  pages: TransactionColumns[];
  labels: Parameters<HistoryLoader['labels']>[0][];
  totals: EntityTotals[];
}

/** One build: its time, and what the history it made holds. */
interface Build {
  keys: boolean;
  seconds: number;
  /** Typed arrays by part (`history.byteLength`), MB. */
  parts_mb: Record<string, number>;
  typed_arrays_mb: number;
  /** What the build added, after a full collection: V8's heap, array buffers (typed arrays and
   *  Buffers, outside the heap), and both. */
  heap_mb: number;
  array_buffers_mb: number;
  heap_and_buffers_mb: number;
  /** The key fields' part by its own parts, bytes. */
  key_parts?: Record<string, number>;
}

export interface KeysFigures {
  transactions: number;
  database: string;
  seed_seconds: number;
  /** Distinct values of each key field, and the share of payments of its most common value. */
  values: Record<string, { distinct: number; top_share: number }>;
  /** Each build's figures, in the order run. */
  builds: Build[];
  /** Per 100,000 transactions, the median of the builds of each kind. */
  per_100k: {
    without: { typed_arrays_mb: number; heap_and_buffers_mb: number };
    with_keys: { typed_arrays_mb: number; heap_and_buffers_mb: number };
    /** With keys minus without: the goal's figure (≤ 3). */
    added_typed_arrays_mb: number;
    added_heap_and_buffers_mb: number;
    /** Where the added typed arrays go (`keys`' own parts), MB per 100,000. */
    key_parts_mb: Record<string, number>;
  };
  /** Build time, median seconds of each kind, and with ÷ without. */
  build_seconds: { without: number; with_keys: number; ratio: number };
}

const mb = (bytes: number) => bytes / 1e6;
const round2 = (x: number) => Math.round(x * 100) / 100;
const median = (v: readonly number[]) => {
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Memory after full collections, once the array buffers they freed are given back: V8 frees a
 *  typed array's memory after the collection that finds it unreachable, on another thread, so a
 *  reading right after one still counts some, and a second collection after a pause frees the rest. */
async function settled(): Promise<NodeJS.MemoryUsage> {
  for (let i = 0; i < 3; i++) {
    collectGarbage();
    await sleep(200);
  }
  return process.memoryUsage();
}

/** A loader that keeps what it is handed. */
function recorder(r: Recorded): HistoryLoader {
  return {
    start: (floor, expected) => {
      r.floor = floor;
      r.expected = expected;
    },
    uses: (page) => void r.uses.push(page),
    transactions: (page) => void r.pages.push(page),
    labels: (rows) => void r.labels.push(rows),
    finish: (totals) => void r.totals.push(...(totals ?? [])),
    restore: () => false,
  };
}

/**
 * The key fields' part of a history by its own parts, in bytes. They are private to the history's
 * classes (key-fields.ts, series.ts, strings.ts): read here through casts, for this measurement
 * only, so that src/ keeps no accessor for them.
 */
function keyParts(tenant: Tenant): Record<string, number> {
  type Sized = { byteLength: number };
  type Parts<K extends string> = Sized & Record<K, Sized>;
  const keys = (
    tenant.history as unknown as {
      keys: Parts<'lo' | 'dup'> & { ids: Parts<'strings' | 'index'>; series: Parts<'entries' | 'checkpoints'> };
    }
  ).keys;
  const series = keys.series;
  return {
    value_strings: keys.ids.strings.byteLength,
    value_index: keys.ids.index.byteLength,
    // The records under each value, with the `next` byte beside each.
    series_entries: series.entries.byteLength,
    series_checkpoints: series.checkpoints.byteLength,
    series_per_value: series.byteLength - series.entries.byteLength - series.checkpoints.byteLength,
    value_windows: keys.lo.byteLength + keys.dup.byteLength,
  };
}

/** Builds the history from `r` as a process's load does, with or without the key values. */
async function build(r: Recorded, keys: boolean, stored: Tenant['stored']): Promise<{ tenant: Tenant; seconds: number }> {
  const tenant = new Tenant(ORGANIZATION, stored, DEFAULT_LABEL_DELAY_MS);
  const into = tenant.loader();
  const t0 = performance.now();
  into.start(r.floor, r.expected);
  for (const page of r.uses) await into.uses(page);
  for (const page of r.pages) await into.transactions(keys ? page : { ...page, keys: undefined });
  for (const rows of r.labels) await into.labels(rows);
  await into.finish(keys ? r.totals : r.totals.filter((t) => t.kind !== 'field'));
  return { tenant, seconds: (performance.now() - t0) / 1000 };
}

/** One build and what it holds. A function of its own: the history is unreachable once it returns
 *  (an async function's frame keeps a finished block's variables until they are overwritten, which
 *  would hold one build's history through the next one's reading before). */
async function measured(r: Recorded, keys: boolean, stored: Tenant['stored']): Promise<Build> {
  const before = await settled();
  const { tenant, seconds } = await build(r, keys, stored);
  const after = await settled();
  const parts = tenant.history.byteLength;
  const heap = mb(after.heapUsed - before.heapUsed);
  const buffers = mb(after.arrayBuffers - before.arrayBuffers);
  return {
    keys,
    seconds: round2(seconds),
    parts_mb: Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, round2(mb(v))])),
    typed_arrays_mb: round2(mb(Object.values(parts).reduce((a, v) => a + v, 0))),
    heap_mb: round2(heap),
    array_buffers_mb: round2(buffers),
    heap_and_buffers_mb: round2(heap + buffers),
    ...(keys ? { key_parts: keyParts(tenant) } : {}),
  };
}

/** `rounds` builds of each kind, alternating (the order flipped each round). */
export async function measureKeys(o: { quick: boolean; log: (line: string) => void; transactions?: number }): Promise<KeysFigures> {
  const n = o.transactions ?? (o.quick ? 100_000 : 1_000_000);
  const rounds = 3;
  // Every row within the last 30 days, one day inside the horizon (as bench:history's).
  const now = Math.floor(Date.now() / 60_000) * 60_000;
  const bench = await benchDatabase('history_keys', 3_600);
  const recorded: Recorded = { floor: 0, expected: 0, uses: [], pages: [], labels: [], totals: [] };
  let database: string;
  let seedSeconds: number;
  let stored: Tenant['stored'];
  const values: KeysFigures['values'] = {};
  try {
    const db = bench.db;
    database = db.kind === 'pglite' ? 'embedded' : 'PostgreSQL';
    await db.query(`INSERT INTO users (id, email) VALUES ('u_bench_keys', 'bench-keys@example.com')`);
    await db.query(`INSERT INTO organizations (id, name, stage, created_by) VALUES ($1, 'bench keys', 'test', 'u_bench_keys')`, [ORGANIZATION]);
    const t0 = performance.now();
    await seed((text, params) => db.query(text, params), ORGANIZATION, n, now, {
      keys: true,
      stored: (rows) => o.log(`  stored ${rows.toLocaleString('en')} of ${n.toLocaleString('en')} (${database})`),
    });
    seedSeconds = round2((performance.now() - t0) / 1000);
    for (const row of await db.query<{ field: string; distinct: number; top: number; total: number }>(
      `SELECT split_part(key, '=', 1) AS field, count(*)::int AS distinct, max(transactions)::float8 AS top, sum(transactions)::float8 AS total
       FROM entity_totals WHERE organization_id = $1 AND kind = 'f' GROUP BY 1 ORDER BY 1`,
      [ORGANIZATION],
    ))
      values[row.field] = { distinct: row.distinct, top_share: round2(Number(row.top) / Number(row.total)) };
    o.log(`  seeded in ${seedSeconds} s; key values: ${JSON.stringify(values)}`);
    const data = organizationData(db, ORGANIZATION);
    stored = data.transactions;
    await data.history.load(now, recorder(recorded));
  } finally {
    // The builds below read only the pages kept: the database is closed before they start.
    await bench.close();
  }
  o.log(`  read ${recorded.pages.reduce((s, p) => s + p.count, 0).toLocaleString('en')} transactions in ${recorded.pages.length} pages; building`);

  const builds: Build[] = [];
  for (let i = 0; i < rounds; i++) {
    for (const keys of i % 2 === 0 ? [false, true] : [true, false]) {
      const b = await measured(recorded, keys, stored);
      builds.push(b);
      o.log(
        `  ${keys ? 'with keys' : 'without  '}: ${b.seconds} s, typed arrays ${b.typed_arrays_mb} MB ${JSON.stringify(b.parts_mb)}, heap + array buffers ${b.heap_and_buffers_mb} MB (heap ${b.heap_mb})`,
      );
    }
  }

  const per100k = (x: number) => round2((x * 100_000) / n);
  const kind = (keys: boolean) => builds.filter((b) => b.keys === keys);
  const side = (keys: boolean) => ({
    typed_arrays_mb: per100k(median(kind(keys).map((b) => b.typed_arrays_mb))),
    heap_and_buffers_mb: per100k(median(kind(keys).map((b) => b.heap_and_buffers_mb))),
  });
  const without = side(false);
  const withKeys = side(true);
  const parts = kind(true)[0]!.key_parts!;
  const seconds = { without: median(kind(false).map((b) => b.seconds)), with_keys: median(kind(true).map((b) => b.seconds)) };
  return {
    transactions: n,
    database,
    seed_seconds: seedSeconds,
    values,
    builds,
    per_100k: {
      without,
      with_keys: withKeys,
      added_typed_arrays_mb: round2(withKeys.typed_arrays_mb - without.typed_arrays_mb),
      added_heap_and_buffers_mb: round2(withKeys.heap_and_buffers_mb - without.heap_and_buffers_mb),
      key_parts_mb: Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, per100k(mb(v))])),
    },
    build_seconds: { ...seconds, ratio: round2(seconds.with_keys / seconds.without) },
  };
}
