// Reading an organization's recorded transactions back, as the decision log shows them: one
// transaction with its answered response, the listing with its filters and cursor, and what one
// import job stored. Every statement reads the scope's organization only (organization-scope.ts).
//
// Speed: listings read the (organization, …, time, seq) indexes from the newest end (or the oldest).
// Response bodies are stored raw-deflated (transaction-insert.ts) and inflated here.

import { inflateRawSync } from 'node:zlib';
import type { TransactionRow } from './live-rows.ts';
import type { OrganizationScope } from './organization-scope.ts';
import { loggedColumns, RESPONSE_NEEDED, type LoggedDecision } from './decision-inputs.ts';
import type { FieldValue } from '../domain/fields.ts';

export interface ListFilters {
  decision?: string | undefined;
  risk_band?: string | undefined;
  outcome?: 'fraud' | 'legit' | 'none' | undefined;
  customer_id?: string | undefined;
  merchant_id?: string | undefined;
  /** Epoch ms, inclusive. */
  from?: number | undefined;
  /** Epoch ms, exclusive. */
  to?: number | undefined;
  /** Transactions this rule matched (applied or not, shadow included). */
  rule_id?: string | undefined;
  /** `newest` first (the default) or `oldest` first (a review queue works from the oldest). */
  order?: 'newest' | 'oldest' | undefined;
  /** Transactions that carried every one of these key values (`name=value`, domain/fields.ts keyEntry). */
  field_keys?: readonly string[] | undefined;
}

const ROW_COLUMNS =
  'seq, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, source, response, label, label_known_ms, outcome_source, outcome_reported_by, challengers, fields';

/** A row as the database sends it: the response still deflated. */
type StoredRow = Omit<TransactionRow, 'response'> & { response: Uint8Array | null };

function inflate(bytes: Uint8Array): string {
  return inflateRawSync(bytes).toString('utf8');
}

function readRow(row: StoredRow): TransactionRow {
  return { ...row, response: row.response ? inflate(row.response) : null };
}

export async function getTransaction(scope: OrganizationScope, transactionId: string): Promise<TransactionRow | undefined> {
  const [row] = await scope.db.query<StoredRow>(`SELECT ${ROW_COLUMNS} FROM transactions WHERE organization_id = $1 AND transaction_id = $2`, [
    scope.organizationId,
    transactionId,
  ]);
  return row && readRow(row);
}

/** The exact response body answered for a scored transaction (undefined for an unknown id or an
 *  imported one). */
export async function responseBody(scope: OrganizationScope, transactionId: string): Promise<string | undefined> {
  const [row] = await scope.db.query<{ response: Uint8Array | null }>('SELECT response FROM transactions WHERE organization_id = $1 AND transaction_id = $2', [
    scope.organizationId,
    transactionId,
  ]);
  return row?.response ? inflate(row.response) : undefined;
}

/** Newest first (time, then the order recorded), or oldest first, after the transaction
 *  `startingAfter` when given; `limit + 1` rows are read to tell whether there are more.
 *  Undefined when `startingAfter` is not one of the organization's transactions. */
export async function listTransactions(
  scope: OrganizationScope,
  filters: ListFilters,
  limit: number,
  startingAfter?: string,
): Promise<{ rows: TransactionRow[]; hasMore: boolean } | undefined> {
  const oldest = filters.order === 'oldest';
  const params: unknown[] = [scope.organizationId];
  const where = ['organization_id = $1'];
  const add = (clause: (p: string) => string, value: unknown) => {
    params.push(value);
    where.push(clause(`$${params.length}`));
  };
  if (filters.decision !== undefined) add((p) => `decision = ${p}`, filters.decision);
  if (filters.risk_band !== undefined) add((p) => `risk_band = ${p}`, filters.risk_band);
  if (filters.outcome === 'none') where.push('label IS NULL');
  else if (filters.outcome !== undefined) add((p) => `label = ${p}`, filters.outcome === 'fraud' ? 1 : 0);
  if (filters.customer_id !== undefined) add((p) => `customer_id = ${p}`, filters.customer_id);
  if (filters.merchant_id !== undefined) add((p) => `merchant_id = ${p}`, filters.merchant_id);
  // Both conditions, so the planner can read the index of transactions a rule matched or failed on.
  if (filters.rule_id !== undefined) add((p) => `(rule_ids IS NOT NULL OR rule_errors IS NOT NULL) AND rule_ids @> ARRAY[${p}::text]`, filters.rule_id);
  // Both conditions, so the planner can read the index of key values.
  if (filters.field_keys?.length) add((p) => `field_keys IS NOT NULL AND field_keys @> ${p}::text[]`, filters.field_keys);
  if (filters.from !== undefined) add((p) => `time_ms >= ${p}`, filters.from);
  if (filters.to !== undefined) add((p) => `time_ms < ${p}`, filters.to);
  if (startingAfter !== undefined) {
    const [cursor] = await scope.db.query<{ time_ms: number; seq: number }>(
      'SELECT time_ms, seq FROM transactions WHERE organization_id = $1 AND transaction_id = $2',
      [scope.organizationId, startingAfter],
    );
    if (!cursor) return undefined;
    params.push(cursor.time_ms, cursor.seq);
    where.push(`(time_ms, seq) ${oldest ? '>' : '<'} ($${params.length - 1}, $${params.length})`);
  }
  params.push(limit + 1);
  const rows = await scope.db.query<StoredRow>(
    `SELECT ${ROW_COLUMNS} FROM transactions WHERE ${where.join(' AND ')} ORDER BY ${oldest ? 'time_ms, seq' : 'time_ms DESC, seq DESC'} LIMIT $${params.length}`,
    params,
  );
  const hasMore = rows.length > limit;
  return { rows: (hasMore ? rows.slice(0, limit) : rows).map(readRow), hasMore };
}

/** What one import job stored: rows, of them labelled and fraud, and their time range (ms). */
export async function importedBy(
  scope: OrganizationScope,
  jobId: string,
): Promise<{ imported: number; labelled: number; fraud: number; featured: number; first: number | null; last: number | null }> {
  const [row] = await scope.db.query<{ imported: number; labelled: number; fraud: number; featured: number; first: number | null; last: number | null }>(
    `SELECT count(*)::int AS imported, count(t.label)::int AS labelled, coalesce(sum(t.label), 0)::int AS fraud, count(f.seq)::int AS featured,
            min(t.time_ms) AS first, max(t.time_ms) AS last
     FROM transactions t LEFT JOIN imported_features f ON f.seq = t.seq WHERE t.organization_id = $1 AND t.import_job_id = $2`,
    [scope.organizationId, jobId],
  );
  return row!;
}

/** A scored transaction as rules read it back (decision-inputs.ts); undefined for an unknown id. */
export async function loggedDecision(scope: OrganizationScope, transactionId: string): Promise<LoggedDecision | undefined> {
  const [row] = await scope.db.query<Omit<LoggedDecision, 'response'> & { response: Uint8Array | null }>(
    `SELECT ${loggedColumns(true, true)} FROM transactions t WHERE t.organization_id = $1 AND t.transaction_id = $2 AND t.source = 'scored'`,
    [scope.organizationId, transactionId],
  );
  return row && { ...row, response: row.response ? inflate(row.response) : null };
}

/** Logged decisions per page of a backtest (one JSON value per page). */
export const LOGGED_PAGE_ROWS = 5_000;

/**
 * A page of the organization's scored transactions in [from, to) in time order (time, then the
 * order recorded) after `after`, read through the organization's time index as one JSON array per
 * page (PGlite decodes one value far faster than thousands of rows); the features and the fields
 * sent only when asked (a rule reads them).
 */
export async function loggedPage(
  scope: OrganizationScope,
  o: { from: number; to: number; after: [number, number] | undefined; withFeatures: boolean; withFields?: boolean },
): Promise<LoggedDecision[]> {
  const params: unknown[] = [scope.organizationId, o.from, o.to, LOGGED_PAGE_ROWS];
  if (o.after) params.push(o.after[0], o.after[1]);
  const [row] = await scope.db.query<{ page: string | null }>(
    `SELECT json_agg(json_build_array(seq, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, mode, risk_score, risk_band, decision,
                                      model_decision, rule_action, model_id, encode(inputs, 'base64'), ${o.withFeatures ? "encode(features, 'base64')" : 'NULL'},
                                      CASE WHEN ${RESPONSE_NEEDED(o.withFields === true)} THEN encode(response, 'base64') END, label, label_known_ms, ${o.withFields ? 'fields' : 'NULL'}) ORDER BY time_ms, seq)::text AS page
     FROM (SELECT * FROM transactions WHERE organization_id = $1 AND source = 'scored' AND time_ms >= $2 AND time_ms < $3 ${o.after ? 'AND time_ms >= $5 AND (time_ms > $5 OR seq > $6)' : ''}
           ORDER BY time_ms, seq LIMIT $4) AS page_rows`,
    params,
  );
  if (!row?.page) return [];
  type Tuple = [
    number,
    string,
    number,
    number,
    string,
    string,
    string,
    string,
    string,
    number,
    string,
    string,
    string | null,
    string | null,
    string | null,
    string | null,
    string | null,
    string | null,
    0 | 1 | null,
    number | null,
    Record<string, FieldValue> | null,
  ];
  const bytes = (b64: string | null) => (b64 === null ? null : Buffer.from(b64, 'base64'));
  return (JSON.parse(row.page) as Tuple[]).map((t) => ({
    seq: t[0],
    transaction_id: t[1],
    time_ms: t[2],
    amount: t[3],
    customer_id: t[4],
    merchant_id: t[5],
    location: t[6],
    payment_type: t[7],
    mode: t[8],
    risk_score: t[9],
    risk_band: t[10],
    decision: t[11],
    model_decision: t[12],
    rule_action: t[13],
    model_id: t[14],
    inputs: bytes(t[15]),
    features: bytes(t[16]),
    response: t[17] === null ? null : inflate(bytes(t[17])!),
    label: t[18],
    label_known_ms: t[19],
    fields: t[20],
  }));
}

/** How many scored transactions the organization has in [from, to) (a backtest's progress). */
export async function countLogged(scope: OrganizationScope, from: number, to: number): Promise<number> {
  const [row] = await scope.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM transactions WHERE organization_id = $1 AND source = 'scored' AND time_ms >= $2 AND time_ms < $3`,
    [scope.organizationId, from, to],
  );
  return row!.n;
}
