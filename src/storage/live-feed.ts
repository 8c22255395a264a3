// The live feed: every change to live data, in the order of one database sequence. A recorded
// transaction's position is its `seq`; an outcome change draws its position from the same sequence
// (migrations/008_live_feed.sql). Every server process reads the feed after the position it has
// applied (src/live/tail.ts), so what one process records reaches the others' memory in the same
// order everywhere.
//
// Ordering: a sequence hands out numbers in the order they are asked for, but transactions commit
// in any order, so a reader could see position 12 while 11 is still uncommitted and then never go
// back for it. Every writer of live data therefore takes one transaction-scoped advisory lock before
// it draws a position (`lockFeed`), and holds it until it commits: positions become visible in the
// order they were drawn, and a reader that has seen N has seen everything below N that will ever
// exist. The lock is held for one statement batch and its commit (a group of scored transactions, a
// batch of outcomes, a chunk of an import), which is what bounds the feed's write rate.
//
// `lockFeed` also queues a NOTIFY on FEED_CHANNEL, which PostgreSQL delivers to every listener when
// (and only if) the transaction commits: it wakes the other processes' tails at once. Its payload is
// this process's FEED_SENDER, so a tail can leave its own process's commits to the code that made
// them (which hands them over directly).
//
// This is the one reader of live data that spans organizations: it is replication, not a surface.
// Each change carries its organization, and the tail hands it to that organization's history only.

import { randomBytes } from 'node:crypto';
import type { Db, Queryable } from './db.ts';
import type { HistoryRow } from './live-store.ts';

export const FEED_CHANNEL = 'live_feed';

/** This process, as its notifications name it. */
export const FEED_SENDER = randomBytes(9).toString('base64url');

/** An arbitrary constant shared by every process of this service: the feed writers' lock key. */
export const FEED_LOCK_KEY = 7_340_215_008;

/** Takes the feed writers' lock for the rest of the database transaction `tx` (call it before
 *  drawing a position: before inserting transactions or outcome changes), and queues the NOTIFY
 *  that wakes the tails when it commits. */
export async function lockFeed(tx: Queryable): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock($1::bigint), pg_notify('${FEED_CHANNEL}', $2)`, [FEED_LOCK_KEY, FEED_SENDER]);
}

/** A transaction recorded in an organization's history, as the history reads it. */
export interface FeedTransaction extends HistoryRow {
  kind: 'transaction';
  seq: number;
  organization_id: string;
  source: 'scored' | 'import';
}

/** A change of a recorded transaction's outcome: `label` known from `known_ms` on, replacing
 *  `from_label` known from `from_known_ms` (both null when it had none); with the transaction's
 *  entities, for a process that holds it only in totals. */
export interface FeedOutcome {
  kind: 'outcome';
  seq: number;
  organization_id: string;
  transaction_id: string;
  customer_id: string;
  merchant_id: string;
  location: string;
  payment_type: string;
  label: 0 | 1;
  known_ms: number;
  from_label: 0 | 1 | null;
  from_known_ms: number | null;
}

export type FeedChange = FeedTransaction | FeedOutcome;

interface FeedRow {
  seq: number;
  outcome: boolean;
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

/** The newest position of the feed that is visible now. */
export async function feedHead(db: Queryable): Promise<number> {
  const [row] = await db.query<{ head: number | null }>(
    'SELECT greatest((SELECT max(seq) FROM transactions), (SELECT max(seq) FROM outcome_changes)) AS head',
  );
  return row?.head ?? 0;
}

/**
 * Up to `limit` changes after position `after`, in feed order, read in one statement (one
 * snapshot); `through` is the position up to which the caller has now seen every change.
 */
export async function readFeed(db: Db, after: number, limit: number): Promise<{ changes: FeedChange[]; through: number }> {
  // Both halves walk an index by seq from `after` and stop at `limit`; the transaction of an
  // outcome change is looked up by primary key, in a lateral subquery the planner cannot turn into
  // a scan of the whole table (as a plain join or a large limit may while its statistics are young).
  const rows = await db.query<FeedRow>(
    `SELECT * FROM (
       (SELECT seq, false AS outcome, organization_id, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, source,
               label, label_known_ms AS known_ms, NULL::int2 AS from_label, NULL::float8 AS from_known_ms
        FROM transactions WHERE seq > $1 ORDER BY seq LIMIT $2)
       UNION ALL
       (SELECT c.seq, true, c.organization_id, t.transaction_id, NULL::float8, NULL::float8, t.customer_id, t.merchant_id, t.location, t.payment_type, NULL::text,
               c.to_label, c.reported_at_ms, c.from_label, c.from_known_ms
        FROM outcome_changes c CROSS JOIN LATERAL (SELECT * FROM transactions t WHERE t.seq = c.transaction_seq OFFSET 0) AS t
        WHERE c.seq > $1 ORDER BY c.seq LIMIT $2)
     ) AS feed ORDER BY seq LIMIT $2`,
    [after, limit],
  );
  const changes: FeedChange[] = rows.map((r) =>
    r.outcome
      ? {
          kind: 'outcome',
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
  return { changes, through: rows.length ? rows[rows.length - 1]!.seq : after };
}
