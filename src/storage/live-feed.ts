// The live feed: every change to live data (a recorded transaction, an outcome change) in one order
// that every server process reads the same way (src/live/tail.ts), so what one process records
// reaches the others' memory.
//
// Order: each row carries `xid`, the id of the database transaction that wrote it, and `seq`, its
// number from one sequence (migrations/011_feed_order.sql); the feed's order is (xid, seq). A reader
// reads only below the watermark, the oldest transaction id still running anywhere
// (`pg_snapshot_xmin`): every transaction below it has committed or rolled back, so no row can
// appear later before a position the reader has passed. Writers take no lock, and commits made side
// by side share one WAL flush. The cost: a change becomes readable once every transaction that
// began writing before it has ended, so a long transaction delays the feed for its length (imports
// commit a chunk at a time for that reason).
//
// Outcome changes are the one kind whose order between writers matters (a later outcome of a
// transaction replaces an earlier one): their writers take one advisory lock before they write
// anything (`lockOutcomes`), so they draw their transaction ids, and commit, one after the other.
//
// Every writer queues a NOTIFY on FEED_CHANNEL, which PostgreSQL delivers to every listener when
// (and only if) the transaction commits: it wakes the other processes' tails at once. Its payload
// names this process (FEED_SENDER), so a tail can leave its own process's commits to the code that
// made them (which hands them over directly), and the writing transaction, so a tail knows how far
// its reads must get.
//
// This is the one reader of live data that spans organizations: it is replication, not a surface.
// Each change carries its organization, and the tail hands it to that organization's history only.

import { randomBytes } from 'node:crypto';
import type { TransactionEntities } from '../domain/transaction.ts';
import type { Db, Queryable } from './db.ts';
import type { HistoryRow } from './live-rows.ts';

export const FEED_CHANNEL = 'live_feed';

/** This process, as its notifications name it. */
export const FEED_SENDER = randomBytes(9).toString('base64url');

/** An arbitrary constant shared by every process of this service: the outcome writers' lock key. */
export const OUTCOME_LOCK_KEY = 7_340_215_008;

/** The SQL expression that queues the feed's NOTIFY (parameter `$n` is FEED_SENDER): its payload
 *  names the sender and the writing transaction (`sender:xid`), so that a reader knows how far the
 *  feed must go to include it. */
export const notifyFeed = (n: number): string => `pg_notify('${FEED_CHANNEL}', $${n} || ':' || pg_current_xact_id()::text)`;

/** A NOTIFY's payload, read back. */
export function notification(payload: string): { sender: string; xid: number } {
  const at = payload.lastIndexOf(':');
  return { sender: payload.slice(0, at), xid: Number(payload.slice(at + 1)) };
}

/** Takes the outcome writers' lock for the rest of the database transaction `tx`. Call it first,
 *  before the transaction writes anything (which gives it its transaction id). */
export async function lockOutcomes(tx: Queryable): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1::bigint)', [OUTCOME_LOCK_KEY]);
}

/** A place in the feed: everything before it, in (xid, seq) order. */
export interface FeedPosition {
  xid: number;
  seq: number;
}

export function before(a: FeedPosition, b: FeedPosition): boolean {
  return a.xid < b.xid || (a.xid === b.xid && a.seq < b.seq);
}

/** What one database snapshot saw: the transactions below `xmin` and those below `xmax` not in
 *  `running`. */
export interface FeedSnapshot {
  xmin: number;
  xmax: number;
  running: ReadonlySet<number>;
}

/** Whether the changes of database transaction `xid` were visible to the snapshot. */
export function seenBy(snapshot: FeedSnapshot, xid: number): boolean {
  return xid < snapshot.xmin || (xid < snapshot.xmax && !snapshot.running.has(xid));
}

/** The snapshot of the database transaction `tx` (its first statement in REPEATABLE READ). */
export async function feedSnapshot(tx: Queryable): Promise<FeedSnapshot> {
  const [row] = await tx.query<{ snapshot: string }>('SELECT pg_current_snapshot()::text AS snapshot');
  const [xmin, xmax, running] = row!.snapshot.split(':');
  return { xmin: Number(xmin), xmax: Number(xmax), running: new Set(running ? running.split(',').map(Number) : []) };
}

/** Where a reader that starts now begins: at the watermark. What committed before it is in what
 *  the reader loads from the database afterwards. */
export async function feedStart(db: Queryable): Promise<FeedPosition> {
  const [row] = await db.query<{ xmin: string }>('SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin');
  return { xid: Number(row!.xmin), seq: 0 };
}

/** A transaction recorded in an organization's history, as the history reads it. */
export interface FeedTransaction extends HistoryRow {
  kind: 'transaction';
  xid: number;
  seq: number;
  organization_id: string;
  source: 'scored' | 'import';
}

/** A change of a recorded transaction's outcome: `label` known from `known_ms` on, replacing
 *  `from_label` known from `from_known_ms` (both null when it had none); with the transaction's
 *  entities, for a process that holds it only in totals. */
export interface FeedOutcome extends TransactionEntities {
  kind: 'outcome';
  xid: number;
  seq: number;
  organization_id: string;
  transaction_id: string;
  label: 0 | 1;
  known_ms: number;
  from_label: 0 | 1 | null;
  from_known_ms: number | null;
}

export type FeedChange = FeedTransaction | FeedOutcome;

interface FeedRow {
  xid: string;
  seq: number;
  watermark: string;
  outcome: boolean | null;
  organization_id: string;
  transaction_id: string;
  time_ms: number | null;
  amount: number | null;
  customer_id: string | null;
  merchant_id: string | null;
  location: string | null;
  payment_type: string | null;
  source: 'scored' | 'import' | null;
  label: 0 | 1 | null;
  known_ms: number | null;
  from_label: 0 | 1 | null;
  from_known_ms: number | null;
}

/**
 * Up to `limit` changes after `after`, in feed order and below the watermark, read in one statement
 * (one snapshot); `through` is the position up to which the caller has now seen every change that
 * will ever exist.
 */
export async function readFeed(db: Db, after: FeedPosition, limit: number): Promise<{ changes: FeedChange[]; through: FeedPosition }> {
  // Both halves walk an (xid, seq) index from `after` and stop at `limit`; the transaction of an
  // outcome change is looked up by primary key, in a lateral subquery the planner cannot turn into
  // a scan of the whole table (as a plain join or a large limit may while its statistics are young).
  // The watermark's row comes last (outcome NULL) when fewer than `limit` changes are below it.
  const rows = await db.query<FeedRow>(
    `WITH w AS MATERIALIZED (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin)
     SELECT *, (SELECT xmin FROM w)::text AS watermark FROM (
       (SELECT xid, seq, false AS outcome, organization_id, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, source,
               label, label_known_ms AS known_ms, NULL::int2 AS from_label, NULL::float8 AS from_known_ms
        FROM transactions WHERE (xid, seq) > ($1::text::xid8, $2::bigint) AND xid < (SELECT xmin FROM w) ORDER BY xid, seq LIMIT $3)
       UNION ALL
       (SELECT c.xid, c.seq, true, c.organization_id, t.transaction_id, NULL::float8, NULL::float8, t.customer_id, t.merchant_id, t.location, t.payment_type, NULL::text,
               c.to_label, c.reported_at_ms, c.from_label, c.from_known_ms
        FROM outcome_changes c CROSS JOIN LATERAL (SELECT * FROM transactions t WHERE t.seq = c.transaction_seq OFFSET 0) AS t
        WHERE (c.xid, c.seq) > ($1::text::xid8, $2::bigint) AND c.xid < (SELECT xmin FROM w) ORDER BY c.xid, c.seq LIMIT $3)
       UNION ALL
       (SELECT NULL::xid8, NULL::bigint, NULL::bool, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
     ) AS feed ORDER BY xid, seq LIMIT $3 + 1`,
    [String(after.xid), after.seq, limit],
  );
  const changes: FeedChange[] = [];
  let through = after;
  for (const r of rows) {
    if (r.outcome === null) {
      // Every change below the watermark has been read: the next read starts there.
      const watermark: FeedPosition = { xid: Number(r.watermark), seq: 0 };
      if (before(through, watermark)) through = watermark;
      break;
    }
    const xid = Number(r.xid);
    through = { xid, seq: r.seq };
    changes.push(
      r.outcome
        ? {
            kind: 'outcome',
            xid,
            seq: r.seq,
            organization_id: r.organization_id,
            transaction_id: r.transaction_id,
            customer_id: r.customer_id!,
            merchant_id: r.merchant_id!,
            location: r.location!,
            payment_type: r.payment_type!,
            label: r.label!,
            known_ms: r.known_ms!,
            from_label: r.from_label,
            from_known_ms: r.from_known_ms,
          }
        : {
            kind: 'transaction',
            xid,
            seq: r.seq,
            organization_id: r.organization_id,
            transaction_id: r.transaction_id,
            time: r.time_ms!,
            amount: r.amount!,
            customer_id: r.customer_id!,
            merchant_id: r.merchant_id!,
            location: r.location!,
            payment_type: r.payment_type!,
            source: r.source!,
            label: r.label,
            label_known_ms: r.known_ms,
          },
    );
    if (changes.length === limit) break;
  }
  return { changes, through };
}
