// The statements behind imported transactions' point-in-time features (jobs/imported-features.ts):
// the organization's whole history in time order, every source, a page at a time, each row saying
// whether it is an imported one still without features; and those features stored, once, in a
// table of their own (migration 031: an insert there costs a fraction of an update of the row the
// import just wrote), read beside a scored transaction's (its row's `features`, migration 012) so
// that training reads imported and scored transactions alike; and the imported ones, newest first
// with the outcome known now, that a challenger's backtest over the imported span scores.

import type { HistoryRow } from './live-rows.ts';
import type { OrganizationScope } from './organization-scope.ts';

/** Kept in a subquery so that the planner looks each row's features up by its key (a subquery with
 *  an OFFSET is never merged into the query around it): a join would let it read every stored
 *  feature of the table for one page whenever the table's statistics said it was small, as they do
 *  while an import fills it. */
const BY_KEY = 'OFFSET 0';

/** Rows per page of the replay (one JSON value per page: PGlite decodes one value far faster than
 *  thousands of rows). */
export const REPLAY_PAGE_ROWS = 5_000;
/** On the embedded database: a page there holds its one connection, which every score's commit
 *  needs, for as long as it is read (about 9 µs a row), so a score waits behind a fifth as much. */
export const EMBEDDED_REPLAY_PAGE_ROWS = 1_000;

/** A transaction as the replay adds it to its history, and whether it is an imported one with no
 *  features stored yet. */
export interface ReplayRow extends HistoryRow {
  seq: number;
  featureless: boolean;
}

/** The page of the organization's transactions after `after` ([time, seq]), oldest first, as the
 *  JSON text the database made (`parseReplayPage` reads it): read on one thread and parsed on
 *  another, a page costs the one that reads it a string. Null after the last page. */
export async function replayPageText(scope: OrganizationScope, after: [number, number] | undefined): Promise<string | null> {
  const params: unknown[] = [scope.organizationId, scope.db.kind === 'pglite' ? EMBEDDED_REPLAY_PAGE_ROWS : REPLAY_PAGE_ROWS];
  if (after) params.push(after[0], after[1]);
  const [row] = await scope.db.query<{ page: string | null }>(
    `SELECT json_agg(json_build_array(seq, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, label, label_known_ms,
                                      featureless) ORDER BY time_ms, seq)::text AS page
     FROM (SELECT seq, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, label, label_known_ms,
                  source = 'import' AND NOT EXISTS (SELECT 1 FROM imported_features f WHERE f.seq = t.seq ${BY_KEY}) AS featureless
           FROM transactions t WHERE organization_id = $1 ${after ? 'AND time_ms >= $3 AND (time_ms > $3 OR seq > $4)' : ''}
           ORDER BY time_ms, seq LIMIT $2) AS page_rows`,
    params,
  );
  return row?.page ?? null;
}

/** A page `replayPageText` read, as rows. */
export function parseReplayPage(text: string): ReplayRow[] {
  type Tuple = [number, string, number, number, string, string, string, string, 0 | 1 | null, number | null, boolean];
  return (JSON.parse(text) as Tuple[]).map((t) => ({
    seq: Number(t[0]),
    transaction_id: t[1],
    time: t[2],
    amount: t[3],
    customer_id: t[4],
    merchant_id: t[5],
    location: t[6],
    payment_type: t[7],
    label: t[8],
    label_known_ms: t[9],
    featureless: t[10],
  }));
}

/** How many of the organization's imported transactions have no features yet. */
export async function countFeatureless(scope: OrganizationScope): Promise<number> {
  const [row] = await scope.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM transactions t
     WHERE organization_id = $1 AND source = 'import' AND NOT EXISTS (SELECT 1 FROM imported_features f WHERE f.seq = t.seq)`,
    [scope.organizationId],
  );
  return row?.n ?? 0;
}

/** Imported transactions' features laid end to end: `bytes` holds `seqs.length` rows of the same
 *  width (every channel's features in the model's order, float32), row i for transaction `seqs[i]`. */
export interface FeatureBatch {
  seqs: number[];
  bytes: Uint8Array;
}

/** Stores a batch of imported transactions' features in one statement; a transaction that has
 *  features already keeps them. Returns how many were stored. */
export async function storeImportedFeatures(scope: OrganizationScope, batch: FeatureBatch): Promise<number> {
  const rows = batch.seqs.length;
  if (rows === 0) return 0;
  const width = batch.bytes.byteLength / rows;
  if (!Number.isInteger(width)) throw new Error(`${batch.bytes.byteLength} bytes of features for ${rows} transactions`);
  const all = Buffer.from(batch.bytes.buffer, batch.bytes.byteOffset, batch.bytes.byteLength);
  // Each transaction checked by its key (a nested loop over the array, whatever the table's
  // statistics say: the replay needs no ANALYZE first, and one of the whole table held every
  // organization's scores for its 0.3-0.4 s) to be this organization's and imported.
  const stored = await scope.db.query<{ seq: number }>(
    `INSERT INTO imported_features (seq, organization_id, features)
     SELECT t.seq, t.organization_id, substring($3::bytea FROM ((u.i - 1) * $4 + 1)::int FOR $4::int)
     FROM unnest($2::bigint[]) WITH ORDINALITY AS u(seq, i) JOIN LATERAL (SELECT seq, organization_id FROM transactions t
       WHERE t.seq = u.seq AND t.organization_id = $1 AND t.source = 'import' ${BY_KEY}) t ON true
     ON CONFLICT (seq) DO NOTHING
     RETURNING seq`,
    [scope.organizationId, batch.seqs, all, width],
  );
  return stored.length;
}

/** A transaction with its stored features, as an organization's training reads it. */
export interface FeaturedRow {
  seq: number;
  time_ms: number;
  label: 0 | 1 | null;
  label_known_ms: number | null;
  /** Whether it came in by a history import rather than scored. */
  imported: boolean;
  /** Empty when the page was read without them. */
  features: Uint8Array;
}

const NO_FEATURES = new Uint8Array(0);

/**
 * A page of the organization's transactions older than `to` that have features, scored or imported
 * alike, oldest first after `after` ([time, seq]): what its training learns from. Without
 * `features` (a plan that counts them), the features are left in the database.
 */
export async function featuredPage(
  scope: OrganizationScope,
  o: { to: number; after: [number, number] | undefined; features?: boolean },
): Promise<FeaturedRow[]> {
  const params: unknown[] = [scope.organizationId, o.to, REPLAY_PAGE_ROWS];
  if (o.after) params.push(o.after[0], o.after[1]);
  const features = o.features !== false;
  const [row] = await scope.db.query<{ page: string | null }>(
    `SELECT json_agg(json_build_array(seq, time_ms, label, label_known_ms, source = 'import', ${features ? "encode(features, 'base64')" : 'NULL'})
                     ORDER BY time_ms, seq)::text AS page
     FROM (SELECT t.seq, t.time_ms, t.label, t.label_known_ms, t.source${features ? ', coalesce(t.features, f.features) AS features' : ''}
           FROM transactions t LEFT JOIN LATERAL (SELECT f.seq, f.features FROM imported_features f WHERE f.seq = t.seq ${BY_KEY}) f ON true
           WHERE t.organization_id = $1 AND t.time_ms < $2 AND (t.features IS NOT NULL OR f.seq IS NOT NULL)
                 ${o.after ? 'AND t.time_ms >= $4 AND (t.time_ms > $4 OR t.seq > $5)' : ''}
           ORDER BY t.time_ms, t.seq LIMIT $3) AS page_rows`,
    params,
  );
  if (!row?.page) return [];
  return (JSON.parse(row.page) as [number, number, 0 | 1 | null, number | null, boolean, string | null][]).map((t) => ({
    seq: Number(t[0]),
    time_ms: t[1],
    label: t[2],
    label_known_ms: t[3],
    imported: t[4],
    features: t[5] === null ? NO_FEATURES : Buffer.from(t[5], 'base64'),
  }));
}

/** An imported transaction with its stored features, as a challenger's backtest reads it. */
export interface BacktestRow {
  seq: number;
  time_ms: number;
  amount: number;
  customer_id: string;
  /** 1 when a fraud was known by `knownBy`; else 0 (legitimate, or never reported). */
  label: 0 | 1;
  features: Uint8Array;
}

/**
 * A page of the organization's imported transactions older than `to` whose stored features are
 * `width` bytes (the loaded model's layout), newest first before `before` ([time, seq]): what a
 * challenger's backtest over the imported span scores (app/decisions/challenger-report.ts). Scored
 * transactions are left out: the live shadow report covers them.
 */
export async function backtestPage(
  scope: OrganizationScope,
  o: { to: number; knownBy: number; width: number; rows: number; before: [number, number] | undefined },
): Promise<BacktestRow[]> {
  const params: unknown[] = [scope.organizationId, o.to, o.rows, o.knownBy, o.width];
  if (o.before) params.push(o.before[0], o.before[1]);
  const [row] = await scope.db.query<{ page: string | null }>(
    `SELECT json_agg(json_build_array(seq, time_ms, amount, customer_id, label, encode(features, 'base64')) ORDER BY time_ms DESC, seq DESC)::text AS page
     FROM (SELECT t.seq, t.time_ms, t.amount, t.customer_id, CASE WHEN t.label = 1 AND t.label_known_ms <= $4 THEN 1 ELSE 0 END AS label, f.features
           FROM transactions t JOIN LATERAL (SELECT f.features FROM imported_features f WHERE f.seq = t.seq ${BY_KEY}) f ON true
           WHERE t.organization_id = $1 AND t.source = 'import' AND t.time_ms < $2 AND octet_length(f.features) = $5
                 ${o.before ? 'AND t.time_ms <= $6 AND (t.time_ms < $6 OR t.seq < $7)' : ''}
           ORDER BY t.time_ms DESC, t.seq DESC LIMIT $3) AS page_rows`,
    params,
  );
  if (!row?.page) return [];
  return (JSON.parse(row.page) as [number, number, number, string, 0 | 1, string][]).map((t) => ({
    seq: Number(t[0]),
    time_ms: t[1],
    amount: t[2],
    customer_id: t[3],
    label: t[4],
    features: Buffer.from(t[5], 'base64'),
  }));
}
