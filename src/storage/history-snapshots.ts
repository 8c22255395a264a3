// The snapshot the database keeps of each organization's history as a process holds it (migrations
// 014 and 030): its bytes (src/domain/history/snapshot.ts) in pieces, with the database snapshot it
// was built in, so a load reads those and the changes made since (history-load.ts) instead of
// building the history from every row. Written by the process that built it, after the load, off
// the request path (its pieces as bytes, binary COPY on PostgreSQL, a slice at a time, from where
// they were put aside: snapshot-spill.ts); replaced whole, and never by one built in an older
// database snapshot than the stored one's. The pieces are staged first under a generation of their
// own, without the organization's snapshot lock (on the embedded database a piece a background
// statement, so that no request waits behind the whole write), and the row is then swapped to that
// generation in a short transaction.

import { randomInt } from 'node:crypto';
import type { Db, Queryable } from './db.ts';
import { parseSnapshot, snapshotText, type FeedSnapshot } from './live-feed.ts';
import type { OrganizationScope } from './organization-scope.ts';
import { readAhead } from './read-ahead.ts';
import type { SnapshotPieces } from './snapshot-spill.ts';

/** What describes a stored snapshot. */
export interface SnapshotMeta {
  /** The history code that wrote it (HISTORY_FORMAT): another reads it not. */
  format: string;
  labelDelay: number;
  /** The history holds every transaction from here on, the rest as totals. */
  floor: number;
  /** The database snapshot it was built in. */
  seen: FeedSnapshot;
  transactions: number;
  bytes: number;
  pieces: number;
  writtenAt: number;
}

interface MetaRow {
  format: string;
  label_delay_ms: number;
  floor_ms: number;
  seen: string;
  transactions: number;
  bytes: number;
  pieces: number;
  written_at_ms: number;
}

/** Whether a customer of the organization (`$1`) was erased since a database snapshot (`seen`): a
 *  history built in it may hold that customer. */
const ERASED_SINCE = (seen: string) =>
  `EXISTS (SELECT 1 FROM erasures e WHERE e.organization_id = $1 AND e.status = 'done' AND NOT pg_visible_in_snapshot(e.xid, ${seen}))`;

/** Holds the organization's stored snapshot until the transaction ends: its writers (and an
 *  erasure, which deletes it) go one at a time. */
export async function lockSnapshot(tx: Queryable, organizationId: string): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('history_snapshot:' || $1, 0))`, [organizationId]);
}

/** Deletes the organization's stored snapshot and every piece of it (a write's staged ones too,
 *  which then stores nothing), under `lockSnapshot`. */
export async function dropSnapshot(tx: Queryable, organizationId: string): Promise<void> {
  await tx.query('DELETE FROM history_snapshots WHERE organization_id = $1', [organizationId]);
  await tx.query('DELETE FROM history_snapshot_pieces WHERE organization_id = $1', [organizationId]);
}

/** The organization's stored snapshot, if it has one. */
export async function snapshotMeta(tx: Queryable, scope: OrganizationScope): Promise<SnapshotMeta | undefined> {
  const [r] = await tx.query<MetaRow>(
    `SELECT format, label_delay_ms, floor_ms, seen::text AS seen, transactions::float8 AS transactions, bytes::float8 AS bytes, pieces, written_at_ms
     FROM history_snapshots s WHERE organization_id = $1 AND NOT ${ERASED_SINCE('s.seen')}`,
    [scope.organizationId],
  );
  if (!r) return undefined;
  return {
    format: r.format,
    labelDelay: r.label_delay_ms,
    floor: r.floor_ms,
    seen: parseSnapshot(r.seen),
    transactions: r.transactions,
    bytes: r.bytes,
    pieces: r.pieces,
    writtenAt: r.written_at_ms,
  };
}

/** The same snapshot (stored once, by one writer: history-snapshots are replaced, never changed). */
export function sameSnapshot(a: SnapshotMeta, b: SnapshotMeta): boolean {
  return a.writtenAt === b.writtenAt && snapshotText(a.seen) === snapshotText(b.seen) && a.pieces === b.pieces && a.bytes === b.bytes;
}

/** The stored snapshot's pieces in order, each read by a statement of its own (on the embedded
 *  database others' statements run between them), the next asked for before this one is handed
 *  over; undefined when the snapshot was replaced meanwhile. */
export async function snapshotPieces(scope: OrganizationScope, meta: SnapshotMeta): Promise<Uint8Array[] | undefined> {
  const db = scope.db;
  const piece = (i: number) =>
    db.query<{ bytes: Uint8Array }>(
      `SELECT p.bytes FROM history_snapshot_pieces p JOIN history_snapshots s USING (organization_id, generation)
       WHERE p.organization_id = $1 AND p.piece = $2 AND s.written_at_ms = $3 AND s.seen::text = $4`,
      [scope.organizationId, i, meta.writtenAt, snapshotText(meta.seen)],
    );
  const out: Uint8Array[] = [];
  let replaced = false;
  await readAhead(
    piece(0),
    ([row]) => (row && out.length + 1 < meta.pieces ? piece(out.length + 1) : undefined),
    ([row]) => {
      if (row) out.push(row.bytes);
      else replaced = true;
    },
  );
  return replaced ? undefined : out;
}

const PIECE_COLUMNS = [
  { name: 'organization_id', type: 'text' },
  { name: 'generation', type: 'int4' },
  { name: 'piece', type: 'int4' },
  { name: 'bytes', type: 'bytea' },
] as const;

/** How fast a snapshot's pieces are sent to PostgreSQL: every byte of them is written to its log,
 *  which every commit waits for; sent at full speed (hundreds of megabytes for millions of
 *  transactions) they hold the commits of scores behind them for seconds. Beyond the first 16 MB, a
 *  snapshot of 1 M held (≈ 95 MB) takes about 5 s at this pace; nothing waits for it. */
const SNAPSHOT_WRITE_BYTES_PER_SECOND = 16 * 1024 * 1024;

/** The generations this process is staging now: on the embedded database (one process) every
 *  other one no row names is a write's that its process's end cut short. */
const staging = new Set<number>();

/** Stores a snapshot of the organization's history in place of the one stored, unless that one was
 *  built in a later database snapshot (another process's, newer), or a customer was erased since
 *  this one's, or its staged pieces were deleted meanwhile (an erasure); true when stored. */
export async function writeSnapshot(scope: OrganizationScope, meta: Omit<SnapshotMeta, 'bytes' | 'pieces'>, pieces: SnapshotPieces): Promise<boolean> {
  const org = scope.organizationId;
  const { count, bytes } = pieces;
  // Two writers of one organization drawing the same generation: the second's staging fails on the
  // pieces' key and it stores nothing.
  const generation = randomInt(1, 2 ** 31 - 1);
  staging.add(generation);
  let swap: { stored: boolean; replaced?: number };
  try {
    await stagePieces(scope.db, org, generation, pieces);
    swap = await swapIn(scope, meta, generation, count, bytes);
  } catch (e) {
    // Nothing names these pieces: given back if the database still answers.
    await scope.db
      .background()
      .query('DELETE FROM history_snapshot_pieces WHERE organization_id = $1 AND generation = $2', [org, generation])
      .catch(() => {});
    throw e;
  } finally {
    staging.delete(generation);
  }
  // The pieces no row names any more, deleted on their own after the swap: the replaced snapshot's,
  // or these when they were not stored. On the embedded database (one process) also those of a
  // write its process's end cut short; on PostgreSQL a staging write is a transaction, which stores
  // nothing when cut short, and another process may be staging one now.
  const unnamed = swap.stored ? (swap.replaced !== undefined ? [swap.replaced] : []) : [generation];
  const background = scope.db.background();
  if (scope.db.kind === 'pglite') {
    await background.query(
      `DELETE FROM history_snapshot_pieces p WHERE p.organization_id = $1 AND NOT (p.generation = ANY($2::int[]))
       AND p.generation IS DISTINCT FROM (SELECT s.generation FROM history_snapshots s WHERE s.organization_id = $1)`,
      [org, [...staging]],
    );
  } else if (unnamed.length > 0) {
    await background.query('DELETE FROM history_snapshot_pieces WHERE organization_id = $1 AND generation = ANY($2::int[])', [org, unnamed]);
  }
  return swap.stored;
}

/** Names the staged generation in the organization's row, under its snapshot lock, unless a newer
 *  one is stored, a customer was erased since `meta.seen`, or the staged pieces are not all there
 *  (an erasure deleted them); `replaced`: the generation it replaced. */
function swapIn(
  scope: OrganizationScope,
  meta: Omit<SnapshotMeta, 'bytes' | 'pieces'>,
  generation: number,
  count: number,
  bytes: number,
): Promise<{ stored: boolean; replaced?: number }> {
  const org = scope.organizationId;
  return scope.db.transaction(async (tx): Promise<{ stored: boolean; replaced?: number }> => {
    // One writer per organization at a time; the stored one is compared under the lock.
    await lockSnapshot(tx, org);
    const [current] = await tx.query<{ xmax: string; generation: number }>(
      'SELECT pg_snapshot_xmax(seen)::text AS xmax, generation FROM history_snapshots WHERE organization_id = $1',
      [org],
    );
    if (current && Number(current.xmax) > meta.seen.xmax) return { stored: false };
    // A history built before a customer's erasure holds the customer: never stored.
    const [erased] = await tx.query<{ erased: boolean }>(`SELECT ${ERASED_SINCE('$2::pg_snapshot')} AS erased`, [org, snapshotText(meta.seen)]);
    if (erased!.erased) return { stored: false };
    const [staged] = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM history_snapshot_pieces WHERE organization_id = $1 AND generation = $2', [
      org,
      generation,
    ]);
    if (staged!.n !== count) return { stored: false };
    await tx.query('DELETE FROM history_snapshots WHERE organization_id = $1', [org]);
    await tx.query(
      `INSERT INTO history_snapshots (organization_id, format, label_delay_ms, floor_ms, seen, transactions, bytes, pieces, written_at_ms, generation)
       VALUES ($1, $2, $3, $4, $5::pg_snapshot, $6, $7, $8, $9, $10)`,
      [org, meta.format, meta.labelDelay, meta.floor, snapshotText(meta.seen), meta.transactions, bytes, count, meta.writtenAt, generation],
    );
    return { stored: true, replaced: current?.generation };
  });
}

/** Writes the pieces under `generation`: on PostgreSQL by one paced binary COPY in a transaction of
 *  its own (its connection is its own; cut short, it stores none); on the embedded database, whose
 *  only connection every request's statement waits for, a piece a background transaction. */
async function stagePieces(db: Db, org: string, generation: number, pieces: SnapshotPieces): Promise<void> {
  let i = 0;
  const rows = (async function* () {
    for await (const piece of pieces.pieces()) yield [org, generation, i++, piece];
  })();
  if (db.kind === 'postgres') {
    await db.transaction((tx) => tx.copyIn('history_snapshot_pieces', PIECE_COLUMNS, rows, { bytesPerSecond: SNAPSHOT_WRITE_BYTES_PER_SECOND }));
    return;
  }
  const background = db.background();
  for await (const row of rows) await background.transaction((tx) => tx.copyIn('history_snapshot_pieces', PIECE_COLUMNS, [row]));
}
