// An organization's data protection in the database (migrations/028_data_protection.sql): its
// retention period and the sweep that deletes what is older, a customer's records gathered for an
// export, a customer's records erased, and the audit of each. Bound to the organization by its scope
// (organization-data.ts) like every statement on live data; the two claims that span organizations
// (which erasure to run next, which organization's retention to sweep) come first and hand over
// the organization they found. What each step deletes and what stays: docs/operating.md, "Data
// protection".

import { DEFAULT_RETENTION_DAYS } from '../contract/data-protection.ts';
import { entryHash, type TimelineEntry } from '../domain/case-timeline.ts';
import type { Queryable } from './db.ts';
import type { ItemRow } from './lists-store.ts';
import { appendTimeline } from './cases-store.ts';
import { dropSnapshot, lockSnapshot } from './history-snapshots.ts';
import { FEED_SENDER, notifyFeed } from './live-feed.ts';
import type { OrganizationScope } from './organization-scope.ts';

export type DataProtectionAction = 'retention_changed' | 'retention_swept' | 'customer_exported' | 'erasure_requested' | 'erasure_done';

export interface AuditRow {
  id: number;
  at_ms: number;
  by: string;
  action: DataProtectionAction;
  detail: Record<string, unknown>;
}

export interface ErasureRow {
  id: string;
  customer_hash: string;
  keep_lists: string[];
  status: 'pending' | 'done';
  requested_by: string;
  requested_at_ms: number;
  done_at_ms: number | null;
  counts: ErasureCounts | null;
  kept: KeptItem[] | null;
}

/** What an erasure deleted (or, for case entries, rewrote without the customer). */
export interface ErasureCounts {
  transactions: number;
  outcome_changes: number;
  list_items: number;
  cases: number;
  case_transactions: number;
  case_entries_redacted: number;
  audit_entries_redacted: number;
  webhook_events: number;
  rings: number;
  totals: number;
  uses: number;
}

/** A list value the owner exempted from an erasure. */
export interface KeptItem {
  list: string;
  reason: string | null;
}

/** What a retention sweep deleted. */
export interface SweepCounts {
  transactions: number;
  outcome_changes: number;
  case_transactions: number;
  webhook_events: number;
  ring_windows: number;
}

async function audit(tx: Queryable, scope: OrganizationScope, at: number, by: string, action: DataProtectionAction, detail: object): Promise<void> {
  await tx.query('INSERT INTO data_protection_audit (organization_id, at_ms, by, action, detail) VALUES ($1, $2, $3, $4, $5::text::jsonb)', [
    scope.organizationId,
    at,
    by,
    action,
    JSON.stringify(detail),
  ]);
}

/** The organization's retention period in days. */
export async function retentionDays(scope: OrganizationScope): Promise<number> {
  const [row] = await scope.db.query<{ days: number }>('SELECT retention_days AS days FROM organizations WHERE id = $1', [scope.organizationId]);
  return row?.days ?? DEFAULT_RETENTION_DAYS;
}

/** Sets the retention period, audited (with the previous one) in the same transaction. */
export async function setRetentionDays(scope: OrganizationScope, days: number, by: string, at: number): Promise<void> {
  await scope.db.transaction(async (tx) => {
    const [before] = await tx.query<{ days: number }>('SELECT retention_days AS days FROM organizations WHERE id = $1 FOR UPDATE', [scope.organizationId]);
    await tx.query('UPDATE organizations SET retention_days = $2 WHERE id = $1', [scope.organizationId, days]);
    await audit(tx, scope, at, by, 'retention_changed', { days, previous_days: before?.days ?? DEFAULT_RETENTION_DAYS });
  });
}

/** A page of the audit, newest first, after `startingAfter` (an id) when given, of one `action`
 *  when given. */
export async function dataProtectionAudit(
  scope: OrganizationScope,
  limit: number,
  o: { startingAfter?: number | undefined; action?: DataProtectionAction } = {},
): Promise<{ rows: AuditRow[]; hasMore: boolean }> {
  const rows = await scope.db.query<AuditRow & { id: string | number }>(
    `SELECT id, at_ms, by, action, detail FROM data_protection_audit
     WHERE organization_id = $1 AND ($2::bigint IS NULL OR id < $2::bigint) AND ($3::text IS NULL OR action = $3) ORDER BY id DESC LIMIT $4`,
    [scope.organizationId, o.startingAfter ?? null, o.action ?? null, limit + 1],
  );
  return { rows: rows.slice(0, limit).map((r) => ({ ...r, id: Number(r.id) })), hasMore: rows.length > limit };
}

/** Records that a customer's data was exported (the customer by its keyed hash only). */
export async function auditExport(scope: OrganizationScope, customerHash: string, by: string, at: number, counts: object): Promise<void> {
  await audit(scope.db, scope, at, by, 'customer_exported', { customer_hash: customerHash, counts });
}

// ---------------------------------------------------------------------------------------------
// A customer's records, for an export.

/** A list entry naming the customer, with its list's name and kind. */
export interface CustomerListItem extends Omit<ItemRow, 'removed_by'> {
  list: string;
  kind: string;
}

/** The list items whose value is the customer's id (lists of customer ids, and of free text). */
export async function customerListItems(scope: OrganizationScope, customerId: string): Promise<CustomerListItem[]> {
  return scope.db.query<CustomerListItem>(
    `SELECT l.name AS list, l.kind, i.value, i.added_at_ms, i.added_by, i.reason, i.expires_at_ms, i.removed_at_ms
     FROM list_items i JOIN lists l ON l.id = i.list_id
     WHERE i.organization_id = $1 AND l.organization_id = $1 AND l.kind IN ('customer_id', 'text') AND i.value = $2
     ORDER BY i.added_at_ms, i.id`,
    [scope.organizationId, customerId],
  );
}

/** The ids of the cases about the customer, and of the cases holding one of its transactions. */
export async function customerCaseIds(scope: OrganizationScope, customerId: string): Promise<string[]> {
  const rows = await scope.db.query<{ id: string }>(
    `SELECT id FROM cases WHERE organization_id = $1 AND entity_kind = 'customer' AND entity_key = $2
     UNION
     SELECT d.case_id FROM case_decisions d JOIN transactions t ON t.organization_id = $1 AND t.transaction_id = d.transaction_id
     WHERE d.organization_id = $1 AND t.customer_id = $2
     ORDER BY 1`,
    [scope.organizationId, customerId],
  );
  return rows.map((r) => r.id);
}

export interface CustomerWebhookEvent {
  id: string;
  type: string;
  created_at: Date;
  payload: unknown;
}

/** The webhook events whose payload names the customer (as a JSON string anywhere in it). */
export async function customerWebhookEvents(scope: OrganizationScope, customerId: string): Promise<CustomerWebhookEvent[]> {
  return scope.db.query<CustomerWebhookEvent>(
    `SELECT id, type, created_at, payload FROM webhook_events
     WHERE organization_id = $1 AND strpos(payload::text, to_json($2::text)::text) > 0 ORDER BY created_at, id`,
    [scope.organizationId, customerId],
  );
}

export interface CustomerTotals {
  transactions: number;
  amount_sum: number;
  last_ms: number;
  labels: number;
  frauds: number;
  first_fraud_known_ms: number | null;
}

/** The customer's all-time totals and first uses, as the history keeps them. */
export async function customerAggregates(
  scope: OrganizationScope,
  customerId: string,
): Promise<{ totals: CustomerTotals | null; uses: { kind: string; key: string; first_ms: number }[] }> {
  const [totals] = await scope.db.query<CustomerTotals>(
    `SELECT transactions::float8 AS transactions, amount_sum, last_ms, labels::float8 AS labels, frauds::float8 AS frauds, first_fraud_known_ms
     FROM entity_totals WHERE organization_id = $1 AND kind = 'c' AND key = $2`,
    [scope.organizationId, customerId],
  );
  const uses = await scope.db.query<{ kind: string; key: string; first_ms: number }>(
    'SELECT kind, key, first_ms FROM customer_uses WHERE organization_id = $1 AND customer_id = $2 ORDER BY kind, key',
    [scope.organizationId, customerId],
  );
  return { totals: totals ?? null, uses };
}

// ---------------------------------------------------------------------------------------------
// Erasures.

const ERASURE = `id, customer_hash, keep_lists, status, requested_by, requested_at_ms, done_at_ms, counts, kept`;

/** Records an erasure request (pending, with the customer's id until it runs), audited. */
export async function requestErasure(
  scope: OrganizationScope,
  e: { id: string; customerId: string; customerHash: string; keepLists: readonly string[]; by: string; at: number },
): Promise<ErasureRow> {
  return scope.db.transaction(async (tx) => {
    const [row] = await tx.query<ErasureRow>(
      `INSERT INTO erasures (id, organization_id, customer_id, customer_hash, keep_lists, status, requested_by, requested_at_ms)
       VALUES ($1, $2, $3, $4, $5::text[], 'pending', $6, $7) RETURNING ${ERASURE}`,
      [e.id, scope.organizationId, e.customerId, e.customerHash, e.keepLists, e.by, e.at],
    );
    await audit(tx, scope, e.at, e.by, 'erasure_requested', { erasure_id: e.id, customer_hash: e.customerHash, keep_lists: e.keepLists });
    return row!;
  });
}

/** The organization's erasures, newest first. */
export async function listErasures(
  scope: OrganizationScope,
  limit: number,
  startingAfter?: string,
): Promise<{ rows: ErasureRow[]; hasMore: boolean } | undefined> {
  let cursor: { at: number; id: string } | undefined;
  if (startingAfter !== undefined) {
    const [c] = await scope.db.query<{ at: number }>('SELECT requested_at_ms AS at FROM erasures WHERE organization_id = $1 AND id = $2', [
      scope.organizationId,
      startingAfter,
    ]);
    if (!c) return undefined;
    cursor = { at: c.at, id: startingAfter };
  }
  const rows = await scope.db.query<ErasureRow>(
    `SELECT ${ERASURE} FROM erasures WHERE organization_id = $1
       AND ($2::float8 IS NULL OR (requested_at_ms, id) < ($2::float8, $3::text))
     ORDER BY requested_at_ms DESC, id DESC LIMIT $4`,
    [scope.organizationId, cursor?.at ?? null, cursor?.id ?? '', limit + 1],
  );
  return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
}

/** Claims the oldest pending erasure of any organization (or one whose claim is older than
 *  `staleMs`: its process stopped), for this process to run. */
export async function claimErasure(db: Queryable, at: number, staleMs: number): Promise<{ id: string; organization_id: string } | undefined> {
  const [row] = await db.query<{ id: string; organization_id: string }>(
    `UPDATE erasures SET claimed_at_ms = $1 WHERE id = (
       SELECT id FROM erasures WHERE status = 'pending' AND (claimed_at_ms IS NULL OR claimed_at_ms < $1::float8 - $2::float8)
       ORDER BY requested_at_ms LIMIT 1 FOR UPDATE SKIP LOCKED)
     RETURNING id, organization_id`,
    [at, staleMs],
  );
  return row;
}

/** The mark an erased customer's id is replaced with where a record is kept (a case's timeline). */
const ERASED_MARK = '[erased customer]';

/** A JSON value with every string that holds the customer's id as a whole word (or is it) rewritten
 *  with ERASED_MARK. */
function redactor(customerId: string): (value: unknown) => unknown {
  const word = new RegExp(`(?<![\\w-])${customerId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w-])`, 'g');
  const redact = (value: unknown): unknown => {
    if (typeof value === 'string') return value.replace(word, ERASED_MARK);
    if (Array.isArray(value)) return value.map(redact);
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v)]));
    return value;
  };
  return redact;
}

/** Rewrites the timeline entries of the organization's cases that name the customer, and the hash
 *  chain after them, so that the chain stays whole; appends an entry saying so. How many entries. */
async function redactTimelines(tx: Queryable, scope: OrganizationScope, customerId: string, erasureId: string, at: number): Promise<number> {
  const org = scope.organizationId;
  const touched = await tx.query<{ case_id: string }>('SELECT DISTINCT case_id FROM case_timeline WHERE organization_id = $1 AND strpos(detail, $2) > 0', [
    org,
    customerId,
  ]);
  const redact = redactor(customerId);
  let rewritten = 0;
  for (const { case_id } of touched) {
    const entries = await tx.query<TimelineEntry & { at_ms: number | string }>(
      'SELECT n, at_ms, actor, kind, detail, prev_hash, hash FROM case_timeline WHERE organization_id = $1 AND case_id = $2 ORDER BY n',
      [org, case_id],
    );
    let prev = '';
    let changed = false;
    for (const e of entries) {
      let detail = e.detail;
      if (detail.includes(customerId)) {
        const parsed = JSON.parse(detail) as unknown;
        const next = JSON.stringify(redact(parsed));
        if (next !== detail) {
          detail = next;
          changed = true;
          rewritten++;
        }
      }
      const hash = entryHash(prev, { n: e.n, at_ms: Number(e.at_ms), actor: e.actor, kind: e.kind, detail });
      if (detail !== e.detail || hash !== e.hash || prev !== e.prev_hash) {
        await tx.query('UPDATE case_timeline SET detail = $3, prev_hash = $4, hash = $5 WHERE case_id = $1 AND n = $2', [case_id, e.n, detail, prev, hash]);
      }
      prev = hash;
    }
    if (changed) await appendTimeline(scope, case_id, { at, actor: 'system', kind: 'customer_erased', detail: { erasure_id: erasureId } }, tx);
  }
  return rewritten;
}

/** What a customer's transactions added to one entity's totals (`kind` m, h or f). */
interface Part {
  kind: string;
  key: string;
  n: number;
  s: number;
  sq: number;
  l: number;
  f: number;
  last_ms: number;
  first_fraud: number | null;
}

/** Totals' keys taken out per transaction: each locks its rows for a few milliseconds, in the
 *  order every writer of totals takes them, so a recorded score never waits long behind one. */
const TOTALS_PER_TRANSACTION = 20;

/** Deletes the customer's transactions; what they added to each merchant's, channel's and key
 *  value's totals. */
async function deleteTransactions(tx: Queryable, scope: OrganizationScope, customerId: string): Promise<{ transactions: number; parts: Part[] }> {
  const [row] = await tx.query<{ transactions: number; parts: string }>(
    `WITH gone AS (
       DELETE FROM transactions WHERE organization_id = $1 AND customer_id = $2
       RETURNING merchant_id, payment_type, location, field_keys, amount, time_ms, label, label_known_ms),
     part AS (
       SELECT kind, key, count(*)::int AS n, sum(amount) AS s, sum(amount * amount) AS sq, count(label)::int AS l, coalesce(sum(label), 0)::int AS f,
              max(time_ms) AS last_ms, min(label_known_ms) FILTER (WHERE label = 1) AS first_fraud
       FROM (SELECT 'm' AS kind, merchant_id AS key, amount, time_ms, label, label_known_ms FROM gone
             UNION ALL SELECT 'h', payment_type || ':' || location, amount, time_ms, label, label_known_ms FROM gone
             UNION ALL SELECT 'f', unnest(field_keys), amount, time_ms, NULL::int2, NULL::float8 FROM gone WHERE field_keys IS NOT NULL) AS r
       GROUP BY kind, key)
     SELECT (SELECT count(*) FROM gone)::int AS transactions,
            (SELECT coalesce(json_agg(part ORDER BY kind, key), '[]'::json) FROM part)::text AS parts`,
    [scope.organizationId, customerId],
  );
  return { transactions: row!.transactions, parts: JSON.parse(row!.parts) as Part[] };
}

/** Takes `parts` out of the organization's totals (the customer's rows already deleted). Where the
 *  customer's were an entity's newest, or its first fraud, those are read again from the rest;
 *  totals left empty are deleted. */
async function subtractParts(tx: Queryable, scope: OrganizationScope, parts: readonly Part[]): Promise<void> {
  const rest = `FROM transactions t WHERE t.organization_id = $1 AND`;
  const others = (what: string, extra = '') => `CASE e.kind
      WHEN 'm' THEN (SELECT ${what} ${rest} t.merchant_id = e.key${extra})
      WHEN 'h' THEN (SELECT ${what} ${rest} t.payment_type = split_part(e.key, ':', 1)
                       AND t.location = substr(e.key, length(split_part(e.key, ':', 1)) + 2)${extra})
      ELSE (SELECT ${what} ${rest} t.field_keys IS NOT NULL AND t.field_keys @> ARRAY[e.key]${extra}) END`;
  const [row] = await tx.query<{ emptied: string }>(
    // `kind` as the column's own type (char(1)): compared as text, the primary key could not be used
    // and each key's lookup read every total of the organization, its rows locked meanwhile.
    `WITH part AS (
       SELECT * FROM json_to_recordset($2::text::json)
         AS p(kind char(1), key text, n int, s float8, sq float8, l int, f int, last_ms float8, first_fraud float8)),
     -- Locked in the order every writer of totals takes them (migrations/011_feed_order.sql), so that
     -- this and a recorded score wait for each other instead of deadlocking.
     locked AS (
       SELECT e.kind, e.key FROM entity_totals e JOIN part p ON e.kind = p.kind AND e.key = p.key
       WHERE e.organization_id = $1 ORDER BY e.organization_id, e.kind, e.key FOR UPDATE OF e),
     upd AS (
       UPDATE entity_totals e SET
         transactions = e.transactions - p.n, amount_sum = e.amount_sum - p.s, amount_squares = e.amount_squares - p.sq,
         labels = e.labels - p.l, frauds = e.frauds - p.f,
         last_ms = CASE WHEN p.last_ms < e.last_ms THEN e.last_ms ELSE coalesce(${others('max(t.time_ms)')}, e.last_ms) END,
         first_fraud_known_ms = CASE WHEN p.first_fraud IS NULL OR p.first_fraud > e.first_fraud_known_ms THEN e.first_fraud_known_ms
                                     ELSE ${others('min(t.label_known_ms)', ' AND t.label = 1')} END
       FROM part p JOIN locked l ON l.kind = p.kind AND l.key = p.key
       WHERE e.organization_id = $1 AND e.kind = p.kind AND e.key = p.key
       RETURNING e.kind, e.key, e.transactions)
     SELECT (SELECT coalesce(json_agg(json_build_array(kind, key)), '[]'::json) FROM upd WHERE transactions <= 0)::text AS emptied`,
    [scope.organizationId, JSON.stringify(parts)],
  );
  const emptied = JSON.parse(row!.emptied) as [string, string][];
  if (emptied.length)
    await tx.query(`DELETE FROM entity_totals WHERE organization_id = $1 AND (kind, key) IN (SELECT * FROM unnest($2::char(1)[], $3::text[]))`, [
      scope.organizationId,
      emptied.map((e) => e[0]),
      emptied.map((e) => e[1]),
    ]);
}

/**
 * Erases the customer of a claimed erasure from the organization. One transaction deletes its
 * transactions with their features, decisions and outcome changes; its totals and first uses; list
 * values naming it, except in the lists `keep_lists` names; the cases about it, and its
 * transactions in other cases (whose timelines are rewritten without its id); the webhook events
 * naming it with their deliveries; the rings naming it; the organization's stored history
 * snapshot; and forgets its id. Then what its transactions added to the totals of its merchants,
 * channels and key values is taken out a few keys per transaction (those rows are the ones every
 * recorded score updates: none waits long), and last the erasure is `done` and the live feed
 * carries it to every process. A process that stops part way leaves it pending without the id:
 * the next claim goes on from the totals. Undefined when it is not pending (run already).
 */
export async function eraseCustomer(scope: OrganizationScope, erasureId: string, at: number): Promise<ErasureRow | undefined> {
  const org = scope.organizationId;
  const deleted = await scope.db.transaction(async (tx) => {
    const [pending] = await tx.query<{ customer_id: string | null; keep_lists: string[]; customer_hash: string }>(
      `SELECT customer_id, keep_lists, customer_hash FROM erasures WHERE organization_id = $1 AND id = $2 AND status = 'pending' FOR UPDATE`,
      [org, erasureId],
    );
    if (!pending) return false;
    // Its rows deleted already (a process stopped part way through the totals): go on from there.
    if (pending.customer_id === null) return true;
    const customer = pending.customer_id;
    // Serialised with a snapshot's writer: one that began before this cannot store its history after.
    await lockSnapshot(tx, org);
    await tx.query(`SELECT set_config('fraud.erasure', 'on', true)`);
    const count = async (sql: string, params: unknown[]) =>
      (await tx.query<{ n: number }>(`WITH d AS (${sql} RETURNING 1) SELECT count(*)::int AS n FROM d`, params))[0]!.n;

    const uses = await count('DELETE FROM customer_uses WHERE organization_id = $1 AND customer_id = $2', [org, customer]);

    // Cases about the customer go whole; its transactions leave the others.
    const own = (
      await tx.query<{ id: string }>(`SELECT id FROM cases WHERE organization_id = $1 AND entity_kind = 'customer' AND entity_key = $2`, [org, customer])
    ).map((r) => r.id);
    if (own.length) {
      await tx.query('UPDATE cases SET merged_into = NULL WHERE organization_id = $1 AND merged_into = ANY($2::text[])', [org, own]);
      for (const table of ['case_attachments', 'case_timeline', 'case_decisions'])
        await tx.query(`DELETE FROM ${table} WHERE organization_id = $1 AND case_id = ANY($2::text[])`, [org, own]);
      await tx.query('DELETE FROM cases WHERE organization_id = $1 AND id = ANY($2::text[])', [org, own]);
    }
    const caseTransactions = await count(
      `DELETE FROM case_decisions d USING transactions t
       WHERE d.organization_id = $1 AND t.organization_id = $1 AND t.customer_id = $2 AND t.transaction_id = d.transaction_id`,
      [org, customer],
    );
    const entries = await redactTimelines(tx, scope, customer, erasureId, at);

    const events = (
      await tx.query<{ id: string }>('SELECT id FROM webhook_events WHERE organization_id = $1 AND strpos(payload::text, to_json($2::text)::text) > 0', [
        org,
        customer,
      ])
    ).map((r) => r.id);
    if (events.length) {
      await tx.query('DELETE FROM webhook_deliveries WHERE organization_id = $1 AND event_id = ANY($2::text[])', [org, events]);
      await tx.query('DELETE FROM webhook_events WHERE organization_id = $1 AND id = ANY($2::text[])', [org, events]);
    }
    // A ring naming the customer is dropped whole: without it, it may be no ring at all.
    const [rings] = await tx.query<{ n: number }>(
      `WITH hit AS (SELECT window_start, rings FROM ring_windows WHERE organization_id = $1 AND rings IS NOT NULL AND strpos(rings::text, to_json($2::text)::text) > 0),
            cut AS (SELECT h.window_start, coalesce(jsonb_agg(r) FILTER (WHERE strpos(r::text, to_json($2::text)::text) = 0), '[]'::jsonb) AS kept,
                           count(*) FILTER (WHERE strpos(r::text, to_json($2::text)::text) > 0) AS dropped
                    FROM hit h CROSS JOIN LATERAL jsonb_array_elements(h.rings) AS r GROUP BY h.window_start),
            upd AS (UPDATE ring_windows w SET rings = c.kept FROM cut c WHERE w.organization_id = $1 AND w.window_start = c.window_start RETURNING c.dropped)
       SELECT coalesce(sum(dropped), 0)::int AS n FROM upd`,
      [org, customer],
    );

    const kept = await tx.query<KeptItem>(
      `SELECT l.name AS list, i.reason FROM list_items i JOIN lists l ON l.id = i.list_id
       WHERE i.organization_id = $1 AND l.kind IN ('customer_id', 'text') AND i.value = $2 AND l.name = ANY($3::text[]) ORDER BY l.name, i.id`,
      [org, customer, pending.keep_lists],
    );
    // The lists' audit names the values added and removed: rewritten, but for the lists exempted.
    const audited = await tx.query<{ id: string; detail: string }>(
      `SELECT a.id, a.detail::text AS detail FROM policy_audit a
       WHERE a.organization_id = $1 AND strpos(a.detail::text, to_json($2::text)::text) > 0
         AND NOT (a.subject = 'list' AND a.subject_id IN (SELECT id FROM lists WHERE organization_id = $1 AND name = ANY($3::text[])))`,
      [org, customer, pending.keep_lists],
    );
    const redact = redactor(customer);
    for (const a of audited)
      await tx.query('UPDATE policy_audit SET detail = $2::text::jsonb WHERE id = $1', [a.id, JSON.stringify(redact(JSON.parse(a.detail)))]);
    const listItems = await count(
      `DELETE FROM list_items i USING lists l
       WHERE i.organization_id = $1 AND l.id = i.list_id AND l.kind IN ('customer_id', 'text') AND i.value = $2 AND NOT (l.name = ANY($3::text[]))`,
      [org, customer, pending.keep_lists],
    );

    const outcomes = await count(
      `DELETE FROM outcome_changes c USING transactions t WHERE c.organization_id = $1 AND t.organization_id = $1 AND t.customer_id = $2 AND c.transaction_seq = t.seq`,
      [org, customer],
    );
    const { transactions, parts } = await deleteTransactions(tx, scope, customer);
    const totals = parts.length + (await count(`DELETE FROM entity_totals WHERE organization_id = $1 AND kind = 'c' AND key = $2`, [org, customer]));
    await dropSnapshot(tx, org);

    const counts: ErasureCounts = {
      transactions,
      outcome_changes: outcomes,
      list_items: listItems,
      cases: own.length,
      case_transactions: caseTransactions,
      case_entries_redacted: entries,
      audit_entries_redacted: audited.length,
      webhook_events: events.length,
      rings: rings!.n,
      totals,
      uses,
    };
    await tx.query(
      `UPDATE erasures SET customer_id = NULL, counts = $3::text::jsonb, kept = $4::text::jsonb, totals_left = $5::text::jsonb
       WHERE organization_id = $1 AND id = $2`,
      [org, erasureId, JSON.stringify(counts), JSON.stringify(kept), JSON.stringify(parts)],
    );
    return true;
  });
  if (!deleted) return undefined;

  // The totals, a few keys per transaction, each committed with what is left.
  for (;;) {
    const left = await scope.db.transaction(async (tx) => {
      const [row] = await tx.query<{ totals_left: Part[] | null }>(
        `SELECT totals_left FROM erasures WHERE organization_id = $1 AND id = $2 AND status = 'pending' FOR UPDATE`,
        [org, erasureId],
      );
      if (!row) return -1;
      const parts = row.totals_left ?? [];
      if (parts.length) await subtractParts(tx, scope, parts.slice(0, TOTALS_PER_TRANSACTION));
      const rest = parts.slice(TOTALS_PER_TRANSACTION);
      await tx.query('UPDATE erasures SET totals_left = $3::text::jsonb WHERE organization_id = $1 AND id = $2', [org, erasureId, JSON.stringify(rest)]);
      return rest.length;
    });
    if (left <= 0) break;
  }

  // Done: the live feed carries it to every process.
  return scope.db.transaction(async (tx) => {
    const [row] = await tx.query<{ customer_hash: string; counts: ErasureCounts; kept: KeptItem[] }>(
      `SELECT customer_hash, counts, kept FROM erasures WHERE organization_id = $1 AND id = $2 AND status = 'pending' AND customer_id IS NULL FOR UPDATE`,
      [org, erasureId],
    );
    if (!row) return undefined;
    const [done] = await tx.query<ErasureRow>(
      `UPDATE erasures SET status = 'done', done_at_ms = $3, totals_left = NULL, xid = pg_current_xact_id(), seq = nextval('transactions_seq_seq')
       WHERE organization_id = $1 AND id = $2 RETURNING ${ERASURE}`,
      [org, erasureId, at],
    );
    await audit(tx, scope, at, 'system', 'erasure_done', {
      erasure_id: erasureId,
      customer_hash: row.customer_hash,
      counts: row.counts,
      kept: row.kept.length,
    });
    await tx.query(`SELECT ${notifyFeed(1)}`, [FEED_SENDER]);
    return done;
  });
}

// ---------------------------------------------------------------------------------------------
// Retention.

/** Claims the sweep of the next organization not swept for `everyMs` (any process may sweep it);
 *  its id and retention period. */
export async function claimRetentionSweep(db: Queryable, at: number, everyMs: number): Promise<{ id: string; days: number } | undefined> {
  const [row] = await db.query<{ id: string; days: number }>(
    `UPDATE organizations SET retention_swept_at_ms = $1 WHERE id = (
       SELECT id FROM organizations WHERE retention_swept_at_ms IS NULL OR retention_swept_at_ms <= $1::float8 - $2::float8
       ORDER BY retention_swept_at_ms NULLS FIRST, id LIMIT 1 FOR UPDATE SKIP LOCKED)
     RETURNING id, retention_days AS days`,
    [at, everyMs],
  );
  return row;
}

/** Deletes up to `batch` of the organization's transactions older than `cutoff` (oldest first),
 *  with their outcome changes and their places in cases; what it deleted. A transaction whose
 *  outcome became known since `cutoff` stays until that is older too: the outcome is new data
 *  about it (a late chargeback), and the features count it from when it became known. */
export async function sweepTransactions(
  scope: OrganizationScope,
  cutoff: number,
  batch: number,
): Promise<Omit<SweepCounts, 'webhook_events' | 'ring_windows'>> {
  const org = scope.organizationId;
  return scope.db.transaction(async (tx) => {
    const old = await tx.query<{ seq: string | number; transaction_id: string }>(
      `SELECT seq, transaction_id FROM transactions
       WHERE organization_id = $1 AND time_ms < $2 AND (label_known_ms IS NULL OR label_known_ms < $2) ORDER BY time_ms LIMIT $3`,
      [org, cutoff, batch],
    );
    if (old.length === 0) return { transactions: 0, outcome_changes: 0, case_transactions: 0 };
    const seqs = old.map((r) => r.seq);
    const ids = old.map((r) => r.transaction_id);
    const n = async (sql: string, params: unknown[]) =>
      (await tx.query<{ n: number }>(`WITH d AS (${sql} RETURNING 1) SELECT count(*)::int AS n FROM d`, params))[0]!.n;
    const outcome_changes = await n('DELETE FROM outcome_changes WHERE organization_id = $1 AND transaction_seq = ANY($2::bigint[])', [org, seqs]);
    const case_transactions = await n('DELETE FROM case_decisions WHERE organization_id = $1 AND transaction_id = ANY($2::text[])', [org, ids]);
    const transactions = await n('DELETE FROM transactions WHERE organization_id = $1 AND seq = ANY($2::bigint[])', [org, seqs]);
    return { transactions, outcome_changes, case_transactions };
  });
}

/** Deletes up to `batch` of the organization's webhook events made before `cutoff`, with their
 *  deliveries; how many events. */
export async function sweepWebhookEvents(scope: OrganizationScope, cutoff: number, batch: number): Promise<number> {
  const org = scope.organizationId;
  return scope.db.transaction(async (tx) => {
    const ids = (
      await tx.query<{ id: string }>(
        'SELECT id FROM webhook_events WHERE organization_id = $1 AND created_at < to_timestamp($2::float8 / 1000) ORDER BY created_at LIMIT $3',
        [org, cutoff, batch],
      )
    ).map((r) => r.id);
    if (ids.length === 0) return 0;
    await tx.query('DELETE FROM webhook_deliveries WHERE organization_id = $1 AND event_id = ANY($2::text[])', [org, ids]);
    await tx.query('DELETE FROM webhook_events WHERE organization_id = $1 AND id = ANY($2::text[])', [org, ids]);
    return ids.length;
  });
}

/** Deletes the organization's ring analyses of windows that ended before `cutoff`; how many. */
export async function sweepRingWindows(scope: OrganizationScope, cutoff: number): Promise<number> {
  const rows = await scope.db.query<{ n: number }>(
    'WITH d AS (DELETE FROM ring_windows WHERE organization_id = $1 AND window_end < $2 RETURNING 1) SELECT count(*)::int AS n FROM d',
    [scope.organizationId, cutoff],
  );
  return rows[0]!.n;
}

/** Records a finished sweep. */
export async function auditSweep(scope: OrganizationScope, at: number, detail: { days: number; cutoff_ms: number; counts: SweepCounts }): Promise<void> {
  await audit(scope.db, scope, at, 'system', 'retention_swept', detail);
}
