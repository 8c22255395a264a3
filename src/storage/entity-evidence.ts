// What the database tells about one entity of an organization (a customer, a merchant, a channel)
// beyond what a loaded history holds: its earlier transactions, the evidence a score cites from
// before the loaded history's floor, and the summary of its page (all-time totals the database
// keeps, its latest transactions' decisions and counterparties). Every statement reads the scope's
// organization only (organization-scope.ts).

import type { EarlierTransaction, TransactionEntities } from '../domain/transaction.ts';
import type { OrganizationScope } from './organization-scope.ts';

/** How many of an entity's latest transactions its page summarises, and how many counterparties. */
export const ENTITY_RECENT = 5_000;
const ENTITY_COUNTERPARTIES = 20;

export interface EntitySummary {
  totals: { transactions: number; amount_sum: number; last_ms: number; labels: number; frauds: number };
  recent: { transactions: number; first_ms: number | null; reviewed: number; blocked: number };
  counterparties: { id: string; transactions: number; amount_sum: number; labelled: number; fraud: number; last_ms: number }[];
}

/** Up to `limit` of an entity's transactions before `before`, newest first: the evidence a
 *  loaded history no longer holds. A channel is its payment type and location. */
export async function earlierTransactions(
  scope: OrganizationScope,
  role: 'customer' | 'merchant' | 'channel',
  entity: TransactionEntities,
  before: number,
  limit: number,
): Promise<EarlierTransaction[]> {
  const [where, params] =
    role === 'customer'
      ? ['customer_id = $2', [entity.customer_id]]
      : role === 'merchant'
        ? ['merchant_id = $2', [entity.merchant_id]]
        : ['payment_type = $2 AND location = $5', [entity.payment_type]];
  const args = [scope.organizationId, ...params, before, limit];
  if (role === 'channel') args.push(entity.location);
  return scope.db.query<EarlierTransaction>(
    `SELECT transaction_id, time_ms AS time, amount, customer_id, merchant_id, label, label_known_ms FROM transactions
     WHERE organization_id = $1 AND ${where} AND time_ms < $3 ORDER BY time_ms DESC, seq DESC LIMIT $4`,
    args,
  );
}

/**
 * A customer, merchant or key field's value (`name=value`) of the organization: its all-time
 * totals (kept by the database, so
 * reading them costs the same however long its history), and, over its latest
 * ENTITY_RECENT transactions, how many were reviewed and blocked and the counterparties it dealt
 * with most (the merchants of a customer, the customers of a merchant or a value). Undefined when the
 * organization has no transaction of it.
 */
export async function entitySummary(scope: OrganizationScope, role: 'customer' | 'merchant' | 'key', id: string): Promise<EntitySummary | undefined> {
  // A key field's value (`name=value`): the transactions that carried it, and the customers who paid with it.
  const [own, other, kind] =
    role === 'customer'
      ? ['customer_id = $2', 'merchant_id', 'c']
      : role === 'merchant'
        ? ['merchant_id = $2', 'customer_id', 'm']
        : ['field_keys IS NOT NULL AND field_keys @> ARRAY[$2]', 'customer_id', 'f'];
  const [totals] = await scope.db.query<{ transactions: number; amount_sum: number; last_ms: number; labels: number; frauds: number }>(
    'SELECT transactions::float8 AS transactions, amount_sum, last_ms, labels::float8 AS labels, frauds::float8 AS frauds FROM entity_totals WHERE organization_id = $1 AND kind = $2 AND key = $3',
    [scope.organizationId, kind, id],
  );
  if (!totals) return undefined;
  // Its latest transactions are read once, for both the counts and the counterparties.
  type Counterparty = EntitySummary['counterparties'][number];
  const [row] = await scope.db.query<{ recent: EntitySummary['recent']; counterparties: Counterparty[] }>(
    `WITH r AS MATERIALIZED (SELECT ${other} AS other, time_ms, amount, label, decision FROM transactions WHERE organization_id = $1 AND ${own} ORDER BY time_ms DESC, seq DESC LIMIT $3)
     SELECT (SELECT json_build_object('transactions', count(*), 'first_ms', min(time_ms), 'reviewed', count(*) FILTER (WHERE decision = 'review'), 'blocked', count(*) FILTER (WHERE decision = 'block')) FROM r) AS recent,
            (SELECT coalesce(json_agg(c ORDER BY c.transactions DESC, c.last_ms DESC, c.id), '[]') FROM (
               SELECT other AS id, count(*) AS transactions, sum(amount) AS amount_sum, count(label) AS labelled, coalesce(sum(label), 0) AS fraud, max(time_ms) AS last_ms
               FROM r GROUP BY other ORDER BY count(*) DESC, max(time_ms) DESC, other LIMIT $4) AS c) AS counterparties`,
    [scope.organizationId, id, ENTITY_RECENT, ENTITY_COUNTERPARTIES],
  );
  return { totals, recent: row!.recent, counterparties: row!.counterparties };
}
