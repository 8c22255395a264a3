// The snapshot the database keeps of each organization's history as a process holds it (migration
// 014): its bytes (src/domain/history/snapshot.ts) in pieces, with the database snapshot it was
// built in, so a load reads those and the changes made since (history-load.ts) instead of building
// the history from every row. Written by the process that built it, after the load, off the
// request path (its pieces as bytes, binary COPY on PostgreSQL, a slice at a time, from where they
// were put aside: snapshot-spill.ts); replaced whole,
// and never by one built in an older database snapshot than the stored one's.

import type { Queryable } from './db.ts';
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

/** Deletes the organization's stored snapshot (its pieces with it), under `lockSnapshot`. */
export async function dropSnapshot(tx: Queryable, organizationId: string): Promise<void> {
  await tx.query('DELETE FROM history_snapshots WHERE organization_id = $1', [organizationId]);
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
      `SELECT p.bytes FROM history_snapshot_pieces p JOIN history_snapshots s USING (organization_id)
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
  { name: 'piece', type: 'int4' },
  { name: 'bytes', type: 'bytea' },
] as const;

/** How fast a snapshot's pieces are sent: every byte of them is written to PostgreSQL's log, which
 *  every commit waits for; sent at full speed (hundreds of megabytes for millions of transactions)
 *  they hold the commits of scores behind them for seconds. Beyond the first 16 MB, a snapshot of
 *  1 M held (≈ 95 MB) takes about 5 s at this pace; nothing waits for it. */
const SNAPSHOT_WRITE_BYTES_PER_SECOND = 16 * 1024 * 1024;

/** Stores a snapshot of the organization's history in place of the one stored, unless that one was
 *  built in a later database snapshot (another process's, newer); true when stored. */
export async function writeSnapshot(scope: OrganizationScope, meta: Omit<SnapshotMeta, 'bytes' | 'pieces'>, pieces: SnapshotPieces): Promise<boolean> {
  const org = scope.organizationId;
  const { count, bytes } = pieces;
  const rows = (async function* () {
    let i = 0;
    for await (const piece of pieces.pieces()) yield [org, i++, piece];
  })();
  return scope.db.transaction(async (tx) => {
    // One writer per organization at a time; the stored one is compared under the lock.
    await lockSnapshot(tx, org);
    const [stored] = await tx.query<{ xmax: string }>('SELECT pg_snapshot_xmax(seen)::text AS xmax FROM history_snapshots WHERE organization_id = $1', [org]);
    if (stored && Number(stored.xmax) > meta.seen.xmax) return false;
    // A history built before a customer's erasure holds the customer: never stored.
    const [erased] = await tx.query<{ erased: boolean }>(`SELECT ${ERASED_SINCE('$2::pg_snapshot')} AS erased`, [org, snapshotText(meta.seen)]);
    if (erased!.erased) return false;
    await dropSnapshot(tx, org);
    await tx.query(
      `INSERT INTO history_snapshots (organization_id, format, label_delay_ms, floor_ms, seen, transactions, bytes, pieces, written_at_ms)
       VALUES ($1, $2, $3, $4, $5::pg_snapshot, $6, $7, $8, $9)`,
      [org, meta.format, meta.labelDelay, meta.floor, snapshotText(meta.seen), meta.transactions, bytes, count, meta.writtenAt],
    );
    await tx.copyIn('history_snapshot_pieces', PIECE_COLUMNS, rows, { bytesPerSecond: SNAPSHOT_WRITE_BYTES_PER_SECOND });
    return true;
  });
}
