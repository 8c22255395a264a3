// The live feed: every change to live data (a recorded transaction, an outcome change, a list item's
// stay, a rule's state) in one order that every server process reads the same way
// (src/live/tail.ts), so what one process records reaches the others' memory. Each row carries the
// `xid` of the database transaction that wrote it and a `seq` (migrations/011_feed_order.sql); a
// changed item or rule renews both, so the feed carries its current state. Writers take no lock
// between them, so transactions commit out of xid order: a read (one statement, one snapshot) takes
// every committed row past the position, moves it to the snapshot's xmax, and keeps the
// transactions it saw running below it as *pending*, read whole once a later snapshot sees them
// end. Outcome writers alone take one advisory lock (`lockOutcomes`), so outcomes apply in the order
// they were made. A NOTIFY on FEED_CHANNEL wakes the other processes' tails. Why nothing is lost or
// read twice: docs/operating.md (several processes). This is the one reader of live data that
// spans organizations: replication, not a surface; each change carries its organization.

import { randomBytes } from 'node:crypto';
import type { TransactionEntities } from '../domain/transaction.ts';
import type { Queryable } from './db.ts';
import type { OrganizationScope } from './organization-scope.ts';
import type { HistoryRow } from './live-rows.ts';
import { LIVE_VERSION, parseRuleState, RULE_STATE_JSON, type RuleState } from './rule-state.ts';
import type { ItemStay } from '../domain/rules/lists.ts';
import type { FieldState } from '../domain/fields.ts';
import type { InboxState } from '../domain/cases.ts';

export const FEED_CHANNEL = 'live_feed';

/** This process, as its notifications name it. */
export const FEED_SENDER = randomBytes(9).toString('base64url');

/** An arbitrary constant shared by every process of this service: the outcome writers' lock key. */
export const OUTCOME_LOCK_KEY = 7_340_215_008;

/** The SQL expression that queues the feed's NOTIFY (parameter `$n` is FEED_SENDER): its payload
 *  names the sender and the writing transaction (`sender:xid`); a tail reads on any other sender's
 *  notification, since its next read sees every committed change. */
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
  return parseSnapshot(row!.snapshot);
}

/** Where a reader that starts now begins: at the oldest transaction still running, with nothing
 *  pending. What committed before it is in what the reader loads from the database afterwards. */
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

/** A list item's stay as last written (added, or ended). */
export interface FeedListItem {
  kind: 'list_item';
  xid: number;
  seq: number;
  organization_id: string;
  stay: ItemStay;
}

/** A rule's state as last written. */
export interface FeedRule {
  kind: 'rule';
  xid: number;
  seq: number;
  organization_id: string;
  rule: RuleState;
}

/** A declared field's state as last written (declared, or retired). */
export interface FeedField {
  kind: 'field';
  xid: number;
  seq: number;
  organization_id: string;
  field: FieldState;
}

/** An inbox's routing as last written (made, changed, or deleted). */
export interface FeedInbox {
  kind: 'inbox';
  xid: number;
  seq: number;
  organization_id: string;
  inbox: InboxState;
}

/** A customer erased from the organization (storage/data-protection.ts): every process builds the
 *  organization's history again from what is left. */
export interface FeedErasure {
  kind: 'erasure';
  xid: number;
  seq: number;
  organization_id: string;
}

export type FeedChange = FeedTransaction | FeedOutcome | FeedListItem | FeedRule | FeedField | FeedInbox | FeedErasure;

/**
 * Where a reader is: it has read every change before `position` except those of the `pending`
 * transactions, which were still running when the position passed them; of each it has read the
 * changes up to the seq it maps to (0: none yet). A pending transaction is dropped once a read sees
 * it ended (its changes all read, or none: rolled back), so `pending` holds only transactions the
 * last snapshot saw running: never more than the server's connections and prepared transactions.
 */
export interface FeedCursor {
  position: FeedPosition;
  pending: ReadonlyMap<number, number>;
}

/** What one read found, in the order to apply it, and the cursor to continue from once applied. */
export interface FeedRead {
  changes: FeedChange[];
  next: FeedCursor;
  /** The read's snapshot. */
  snapshot: FeedSnapshot;
  /** A page was full: read again (at once) for the rest. */
  more: boolean;
}

interface FeedRow {
  part: number | null;
  xid: string;
  seq: number;
  snapshot: string;
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
  /** 'item', 'rule' or 'field' for those kinds, with their state as JSON text; for a transaction,
   *  its key values as a JSON array (or null). */
  other: 'item' | 'rule' | 'field' | 'inbox' | 'erasure' | null;
  payload: string | null;
}

// The columns of a change, from a transactions row `t` (and, for an outcome, its outcome_changes
// row `c`).
const TRANSACTION_COLUMNS = `t.xid, t.seq, false AS outcome, t.organization_id, t.transaction_id, t.time_ms, t.amount, t.customer_id, t.merchant_id, t.location, t.payment_type, t.source,
  t.label, t.label_known_ms AS known_ms, NULL::int2 AS from_label, NULL::float8 AS from_known_ms, NULL::text AS other, to_json(t.field_keys)::text AS payload`;
const OUTCOME_COLUMNS = `c.xid, c.seq, true, c.organization_id, t.transaction_id, NULL::float8, NULL::float8, t.customer_id, t.merchant_id, t.location, t.payment_type, NULL::text,
  c.to_label, c.reported_at_ms, c.from_label, c.from_known_ms, NULL::text, NULL::text`;
// A list item's stay (`i`) and a rule's state (`r`, its live version `lv`), the other columns empty.
const EMPTY = `NULL::text, NULL::float8, NULL::float8, NULL::text, NULL::text, NULL::text, NULL::text, NULL::text, NULL::int2, NULL::float8, NULL::int2, NULL::float8`;
const ITEM_COLUMNS = `i.xid, i.seq, NULL::bool, i.organization_id, ${EMPTY}, 'item', json_build_array(i.id, i.list_id, i.value, i.added_at_ms, i.expires_at_ms, i.removed_at_ms)::text`;
const RULE_COLUMNS = `r.xid, r.seq, NULL::bool, r.organization_id, ${EMPTY}, 'rule', ${RULE_STATE_JSON}`;
const FIELD_COLUMNS = `f.xid, f.seq, NULL::bool, f.organization_id, ${EMPTY}, 'field', json_build_array(f.name, f.type, f.key, f.retired_at_ms IS NOT NULL)::text`;
/** An inbox's routing as JSON text, from an inboxes row `x` (the feed and a load read it alike). */
export const INBOX_STATE_JSON = (x: string) =>
  `json_build_array(${x}.id, ${x}.name, ${x}.group_by, ${x}.route, ${x}.position, ${x}.on_block, ${x}.sla_hours, ${x}.deleted_at_ms IS NOT NULL,
     coalesce((SELECT json_object_agg(l.name, l.id) FROM lists l WHERE l.id = ANY(${x}.route_list_ids)), '{}'::json),
     ${x}.auto_assign_cap IS NOT NULL AND cardinality(${x}.members) > 0)::text`;

const INBOX_COLUMNS = `x.xid, x.seq, NULL::bool, x.organization_id, ${EMPTY}, 'inbox', ${INBOX_STATE_JSON('x')}`;
// A done erasure (`e`): only its organization matters.
const ERASURE_COLUMNS = `e.xid, e.seq, NULL::bool, e.organization_id, ${EMPTY}, 'erasure', NULL::text`;
// The transaction of an outcome change, by primary key, in a lateral subquery the planner cannot
// turn into a scan of the whole table (as a plain join or a large limit may while its statistics
// are young).
const OUTCOME_TRANSACTION = `CROSS JOIN LATERAL (SELECT * FROM transactions t WHERE t.seq = c.transaction_seq OFFSET 0) AS t`;

// One statement, so one snapshot, which it returns in its last row (part NULL). Part 0: the pending
// transactions' changes after the seq read of each, an (xid, seq) index lookup per transaction
// that has ended (the rows of one still running, an import's chunk say, are not even looked at);
// part 1: the committed changes after the position (an index walk from it). Each part stops at $3
// rows per table; rows of transactions still running are invisible to the snapshot, so neither
// part waits for them.
const READ_FEED = `
  WITH snap AS MATERIALIZED (SELECT pg_current_snapshot() AS snapshot),
       p AS MATERIALIZED (SELECT * FROM unnest($4::text[]::xid8[], $5::bigint[]) AS p(xid, seq)
                          WHERE pg_visible_in_snapshot(p.xid, (SELECT snapshot FROM snap)))
  SELECT *, (SELECT snapshot FROM snap)::text AS snapshot FROM (
    (SELECT 0 AS part, ${TRANSACTION_COLUMNS}
     FROM p CROSS JOIN LATERAL (SELECT * FROM transactions t WHERE t.xid = p.xid AND t.seq > p.seq AND NOT (t.xid = ANY($6::text[]::xid8[])) ORDER BY t.seq LIMIT $3) AS t
     ORDER BY t.xid, t.seq LIMIT $3)
    UNION ALL
    (SELECT 0, ${OUTCOME_COLUMNS}
     FROM p CROSS JOIN LATERAL (SELECT * FROM outcome_changes c WHERE c.xid = p.xid AND c.seq > p.seq ORDER BY c.seq LIMIT $3) AS c ${OUTCOME_TRANSACTION}
     ORDER BY c.xid, c.seq LIMIT $3)
    UNION ALL
    (SELECT 0, ${ITEM_COLUMNS}
     FROM p CROSS JOIN LATERAL (SELECT * FROM list_items i WHERE i.xid = p.xid AND i.seq > p.seq ORDER BY i.seq LIMIT $3) AS i
     ORDER BY i.xid, i.seq LIMIT $3)
    UNION ALL
    (SELECT 0, ${RULE_COLUMNS}
     FROM p CROSS JOIN LATERAL (SELECT * FROM rules r WHERE r.xid = p.xid AND r.seq > p.seq ORDER BY r.seq LIMIT $3) AS r ${LIVE_VERSION}
     ORDER BY r.xid, r.seq LIMIT $3)
    UNION ALL
    (SELECT 0, ${FIELD_COLUMNS}
     FROM p CROSS JOIN LATERAL (SELECT * FROM custom_fields f WHERE f.xid = p.xid AND f.seq > p.seq ORDER BY f.seq LIMIT $3) AS f
     ORDER BY f.xid, f.seq LIMIT $3)
    UNION ALL
    (SELECT 0, ${INBOX_COLUMNS}
     FROM p CROSS JOIN LATERAL (SELECT * FROM inboxes x WHERE x.xid = p.xid AND x.seq > p.seq ORDER BY x.seq LIMIT $3) AS x
     ORDER BY x.xid, x.seq LIMIT $3)
    UNION ALL
    (SELECT 0, ${ERASURE_COLUMNS}
     FROM p CROSS JOIN LATERAL (SELECT * FROM erasures e WHERE e.xid = p.xid AND e.seq > p.seq AND e.status = 'done' ORDER BY e.seq LIMIT $3) AS e
     ORDER BY e.xid, e.seq LIMIT $3)
    UNION ALL
    (SELECT 1, ${TRANSACTION_COLUMNS}
     FROM transactions t WHERE (t.xid, t.seq) > ($1::text::xid8, $2::bigint) AND NOT (t.xid = ANY($6::text[]::xid8[])) ORDER BY t.xid, t.seq LIMIT $3)
    UNION ALL
    (SELECT 1, ${OUTCOME_COLUMNS}
     FROM outcome_changes c ${OUTCOME_TRANSACTION}
     WHERE (c.xid, c.seq) > ($1::text::xid8, $2::bigint) ORDER BY c.xid, c.seq LIMIT $3)
    UNION ALL
    (SELECT 1, ${ITEM_COLUMNS}
     FROM list_items i WHERE (i.xid, i.seq) > ($1::text::xid8, $2::bigint) ORDER BY i.xid, i.seq LIMIT $3)
    UNION ALL
    (SELECT 1, ${RULE_COLUMNS}
     FROM rules r ${LIVE_VERSION} WHERE (r.xid, r.seq) > ($1::text::xid8, $2::bigint) ORDER BY r.xid, r.seq LIMIT $3)
    UNION ALL
    (SELECT 1, ${FIELD_COLUMNS}
     FROM custom_fields f WHERE (f.xid, f.seq) > ($1::text::xid8, $2::bigint) ORDER BY f.xid, f.seq LIMIT $3)
    UNION ALL
    (SELECT 1, ${INBOX_COLUMNS}
     FROM inboxes x WHERE (x.xid, x.seq) > ($1::text::xid8, $2::bigint) ORDER BY x.xid, x.seq LIMIT $3)
    UNION ALL
    (SELECT 1, ${ERASURE_COLUMNS}
     FROM erasures e WHERE (e.xid, e.seq) > ($1::text::xid8, $2::bigint) AND e.status = 'done' ORDER BY e.xid, e.seq LIMIT $3)
    UNION ALL
    (SELECT NULL, NULL::xid8, NULL::bigint, NULL::bool, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
  ) AS feed ORDER BY part, xid, seq`;

// One organization's transactions and outcome changes that a database snapshot (`$2`, as text) did
// not see, in feed order: from the snapshot's xmin on, an index walk of the recent rows. They come
// as one JSON array of arrays (`CHANGE_FIELDS` each): there may be a hundred thousand, and on PGlite
// one JSON text parses many times faster than as many rows.
const CHANGE_FIELDS = [
  'xid',
  'seq',
  'outcome',
  'transaction_id',
  'time_ms',
  'amount',
  'customer_id',
  'merchant_id',
  'location',
  'payment_type',
  'source',
  'label',
  'known_ms',
  'from_label',
  'from_known_ms',
  'other',
  'payload',
] as const;
const CHANGES_SINCE = `
  SELECT json_agg(json_build_array(xid::text, ${CHANGE_FIELDS.slice(1).join(', ')}) ORDER BY xid, seq)::text AS page FROM (
    (SELECT ${TRANSACTION_COLUMNS} FROM transactions t
     WHERE t.xid >= pg_snapshot_xmin($2::pg_snapshot) AND t.organization_id = $1 AND NOT pg_visible_in_snapshot(t.xid, $2::pg_snapshot)
     ORDER BY t.xid, t.seq LIMIT $3)
    UNION ALL
    (SELECT ${OUTCOME_COLUMNS} FROM outcome_changes c ${OUTCOME_TRANSACTION}
     WHERE c.xid >= pg_snapshot_xmin($2::pg_snapshot) AND c.organization_id = $1 AND NOT pg_visible_in_snapshot(c.xid, $2::pg_snapshot)
     ORDER BY c.xid, c.seq LIMIT $3)
  ) AS changes`;

/** `pg_current_snapshot()::text` of a snapshot. */
export function snapshotText(s: FeedSnapshot): string {
  return `${s.xmin}:${s.xmax}:${[...s.running].sort((a, b) => a - b).join(',')}`;
}

/**
 * The organization's recorded transactions and outcome changes that `seen` did not see and the
 * snapshot of `tx` does, in feed order, up to `limit` of each kind (more: read in a fresh load
 * instead): what a history built in `seen` lacks (src/storage/history-snapshots.ts).
 */
export async function changesSince(tx: Queryable, scope: OrganizationScope, seen: FeedSnapshot, limit: number): Promise<(FeedTransaction | FeedOutcome)[]> {
  const [row] = await tx.query<{ page: string | null }>(CHANGES_SINCE, [scope.organizationId, snapshotText(seen), limit]);
  const organization_id = scope.organizationId;
  return ((row?.page ? JSON.parse(row.page) : []) as unknown[][]).map((values) => {
    const r = { organization_id, part: 1, snapshot: '', other: null, payload: null } as Record<string, unknown>;
    CHANGE_FIELDS.forEach((f, i) => {
      r[f] = values[i];
    });
    return change(r as unknown as FeedRow) as FeedTransaction | FeedOutcome;
  });
}

/** Parses `pg_current_snapshot()::text`: `xmin:xmax:xip,...`. */
export function parseSnapshot(text: string): FeedSnapshot {
  const [xmin, xmax, running] = text.split(':');
  return { xmin: Number(xmin), xmax: Number(xmax), running: new Set(running ? running.split(',').map(Number) : []) };
}

/**
 * Reads, in one snapshot, the changes after `cursor` that have committed: first those of the
 * pending transactions that have ended (older, so applied first), then those past the position,
 * up to `limit` of each. Apply `changes` in order, then continue from `next`; while `more`, read
 * again. The recorded transactions of the database transactions in `applied` are left out: the
 * reader has applied them already (a process's own scores, handed over as they commit).
 */
export async function readFeed(db: Queryable, cursor: FeedCursor, limit: number, applied: Iterable<number> = []): Promise<FeedRead> {
  const pendingXids = [...cursor.pending.keys()];
  const rows = await db.query<FeedRow>(READ_FEED, [
    String(cursor.position.xid),
    cursor.position.seq,
    limit,
    pendingXids.map(String),
    pendingXids.map((x) => cursor.pending.get(x)!),
    Array.from(applied, String),
  ]);
  const snapshot = parseSnapshot(rows[rows.length - 1]!.snapshot);
  const older = rows
    .filter((r) => r.part === 0)
    .slice(0, limit)
    .map(change);
  const newer = rows
    .filter((r) => r.part === 1)
    .slice(0, limit)
    .map(change);
  const pending = new Map(cursor.pending);
  let more = false;
  for (const c of older) pending.set(c.xid, c.seq);
  if (older.length < limit) {
    // Every change of a pending transaction that has ended is in `older`: it is done.
    for (const xid of cursor.pending.keys()) if (seenBy(snapshot, xid)) pending.delete(xid);
  } else {
    more = true;
  }
  let position = cursor.position;
  if (newer.length < limit) {
    // Every committed change past the position has been read: below the snapshot's xmax the rest
    // belongs to transactions still running, above it to transactions that had no id yet.
    const end = { xid: snapshot.xmax, seq: 0 };
    if (before(position, end)) position = end;
  } else {
    const last = newer[newer.length - 1]!;
    position = { xid: last.xid, seq: last.seq };
    more = true;
  }
  // The running transactions the position now passes are remembered, to be read when they end.
  for (const xid of snapshot.running) if (xid >= cursor.position.xid && xid < position.xid && !pending.has(xid)) pending.set(xid, 0);
  return { changes: [...older, ...newer], next: { position, pending }, snapshot, more };
}

/** An inbox's routing read back from INBOX_STATE_JSON. */
export function parseInboxState(json: string): InboxState {
  const [id, name, group_by, route, position, on_block, sla_hours, deleted, route_lists, auto_assign] = JSON.parse(json) as [
    string,
    string,
    string,
    string | null,
    number,
    boolean,
    number,
    boolean,
    Record<string, string>,
    boolean,
  ];
  return { id, name, group_by, route, route_lists, position, on_block, sla_hours, auto_assign, deleted };
}

function change(r: FeedRow): FeedChange {
  const xid = Number(r.xid);
  if (r.other === 'item') {
    const [id, list_id, value, added_at_ms, expires_at_ms, removed_at_ms] = JSON.parse(r.payload!) as [
      number,
      string,
      string,
      number,
      number | null,
      number | null,
    ];
    return { kind: 'list_item', xid, seq: r.seq, organization_id: r.organization_id, stay: { id, list_id, value, added_at_ms, expires_at_ms, removed_at_ms } };
  }
  if (r.other === 'erasure') return { kind: 'erasure', xid, seq: r.seq, organization_id: r.organization_id };
  if (r.other === 'rule') return { kind: 'rule', xid, seq: r.seq, organization_id: r.organization_id, rule: parseRuleState(r.payload!) };
  if (r.other === 'inbox') return { kind: 'inbox', xid, seq: r.seq, organization_id: r.organization_id, inbox: parseInboxState(r.payload!) };
  if (r.other === 'field') {
    const [name, type, key, retired] = JSON.parse(r.payload!) as [string, FieldState['type'], boolean, boolean];
    return { kind: 'field', xid, seq: r.seq, organization_id: r.organization_id, field: { name, type, key, retired } };
  }
  return r.outcome
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
        keys: r.payload === null || r.payload === undefined ? null : (JSON.parse(r.payload) as string[]),
      };
}

/** The writing transaction's id, with the live feed's NOTIFY queued for its commit: what a write of
 *  rules, lists or fields answers, so its caller can wait until this process has applied it
 *  (LiveTail.reach). */
export async function feedXid(tx: Queryable): Promise<number> {
  const [row] = await tx.query<{ xid: string }>(`SELECT pg_current_xact_id()::text AS xid, ${notifyFeed(1)}`, [FEED_SENDER]);
  return Number(row!.xid);
}
