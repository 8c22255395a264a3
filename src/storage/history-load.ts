// Loading what a process keeps of an organization's history (src/live/tenants.ts) from the
// database, in one snapshot (with its rules and list items, when asked): transactions only from a
// floor on, everything before it as the per-entity totals and first uses the database keeps, so
// what is read does not grow with the history stored before the floor.
//
// Speed: rows are read in pages of one JSON array each (on PGlite much faster than a plain
// SELECT, whose per-value decoding dominates).

import { WINDOW_HORIZON_MS, type EntityTotals } from '../domain/history/horizon.ts';
import type { HistoryTransaction, TransactionEntities } from '../domain/transaction.ts';
import type { Queryable } from './db.ts';
import { feedSnapshot, type FeedSnapshot } from './live-feed.ts';
import type { HistoryRow } from './live-rows.ts';
import type { OrganizationScope } from './organization-scope.ts';
import { currentStays } from './lists-store.ts';
import { liveRuleStates } from './rules-store.ts';
import type { RuleState } from './rule-state.ts';
import type { ItemStay } from '../domain/rules/lists.ts';

/** What a process keeps of an organization's history, as `loadHistory` hands it over, in this order. */
export interface HistoryLoader {
  /** Transactions before `floor` come only as totals; `expected` of them from the floor on. */
  start(floor: number, expected: number): void;
  uses(rows: { customer_id: HistoryTransaction['customer_id']; kind: 'merchant' | 'channel' | 'location'; key: string; first: number }[]): void;
  transactions(rows: HistoryRow[]): void;
  /** Outcomes known from the floor on, of transactions before it. */
  labels(rows: (TransactionEntities & { label: 0 | 1; known: number })[]): void;
  finish(totals: EntityTotals[]): void;
}

/** What a process keeps of an organization's rules and lists, handed over in the same snapshot. */
export interface PolicyLoader {
  rules(states: RuleState[]): void;
  stays(stays: ItemStay[]): void;
}

/** Rows per page when loading a history (one JSON value per page). */
const LOAD_PAGE_ROWS = 5_000;
/** Rows per page of first uses and totals. */
const ENTITY_PAGE_ROWS = 20_000;

const USE_KINDS = { m: 'merchant', h: 'channel', l: 'location' } as const;
const TOTAL_KINDS = { c: 'customer', m: 'merchant', h: 'channel' } as const;

/**
 * Reads what a process keeps of the organization's history (src/live/tenants.ts), all in one
 * snapshot: the floor is `WINDOW_HORIZON_MS` before the newest of `now` and the newest stored
 * transaction; every customer's first uses; the transactions from the floor on, in time order
 * (time, then the order recorded), a page at a time; the outcomes known from the floor on of
 * transactions before it; and every entity's all-time totals. Returns the floor and the snapshot
 * (which database transactions' changes it saw: src/storage/live-feed.ts). What is read does not grow with the history
 * stored before the floor, only with the entities and the floor's window.
 */
export async function loadHistory(scope: OrganizationScope, now: number, into: HistoryLoader, policy: PolicyLoader | undefined): Promise<{ floor: number; seen: FeedSnapshot }> {
  const org = scope.organizationId;
  return scope.db.transaction(async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    const seen = await feedSnapshot(tx);
    const [newest] = await tx.query<{ newest: number | null }>('SELECT max(time_ms) AS newest FROM transactions WHERE organization_id = $1', [org]);
    const floor = Math.max(now, newest?.newest ?? -Infinity) - WINDOW_HORIZON_MS;
    const [held] = await tx.query<{ n: number }>('SELECT count(*)::float8 AS n FROM transactions WHERE organization_id = $1 AND time_ms >= $2', [org, floor]);
    into.start(floor, held?.n ?? 0);
    await pages<[string, 'm' | 'h' | 'l', string, number]>(tx, 'customer_uses', 'customer_id, kind, key', 'customer_id, kind, key, first_ms', org, (rows) => {
      into.uses(rows.map(([customer_id, kind, key, first]) => ({ customer_id, kind: USE_KINDS[kind], key, first })));
    });
    await historyPages(tx, org, floor, (rows) => into.transactions(rows));
    const [labels] = await tx.query<{ page: string | null }>(
      `SELECT json_agg(json_build_array(customer_id, merchant_id, location, payment_type, label, label_known_ms))::text AS page
       FROM transactions WHERE organization_id = $1 AND label IS NOT NULL AND label_known_ms >= $2 AND time_ms < $2`,
      [org, floor],
    );
    type Label = [string, string, string, string, 0 | 1, number];
    into.labels(((labels?.page ? JSON.parse(labels.page) : []) as Label[]).map(([customer_id, merchant_id, location, payment_type, label, known]) => ({ customer_id, merchant_id, location, payment_type, label, known })));
    const totals: EntityTotals[] = [];
    type Total = [keyof typeof TOTAL_KINDS, string, number, number, number, number, number, number, number | null];
    await pages<Total>(tx, 'entity_totals', 'kind, key', 'kind, key, transactions, amount_sum, amount_squares, last_ms, labels, frauds, first_fraud_known_ms', org, (rows) => {
      for (const [kind, key, transactions, amountSum, amountSquares, last, labels, frauds, firstFraudKnown] of rows) {
        totals.push({ kind: TOTAL_KINDS[kind], key, transactions, amountSum, amountSquares, last, labels, frauds, firstFraudKnown });
      }
    });
    into.finish(totals);
    if (policy) {
      policy.rules(await liveRuleStates(tx, scope));
      await currentStays(tx, scope, (stays) => policy.stays(stays));
    }
    return { floor, seen };
  });
}

/** The stored transactions of `organizationId` (loadHistory's scope) from `from` on in time order
 *  (time, then the order recorded), a page at a time, so that a caller keeping them in another form
 *  (the engine's history) never holds them all as objects. */
async function historyPages(tx: Queryable, organizationId: string, from: number, onPage: (rows: HistoryRow[]) => void): Promise<void> {
  let after: [number, number] | undefined;
  type Tuple = [number, string, number, number, string, string, string, string, 0 | 1 | null, number | null];
  for (;;) {
    const [row] = await tx.query<{ page: string | null }>(
      `SELECT json_agg(json_build_array(seq, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, label, label_known_ms)
                       ORDER BY time_ms, seq)::text AS page
       FROM (SELECT * FROM transactions WHERE organization_id = $1 AND time_ms >= $3 ${after ? 'AND (time_ms, seq) > ($4, $5)' : ''}
             ORDER BY time_ms, seq LIMIT $2) AS page_rows`,
      after ? [organizationId, LOAD_PAGE_ROWS, from, after[0], after[1]] : [organizationId, LOAD_PAGE_ROWS, from],
    );
    if (!row?.page) break;
    const tuples = JSON.parse(row.page) as Tuple[];
    onPage(tuples.map((t) => ({ transaction_id: t[1], time: t[2], amount: t[3], customer_id: t[4], merchant_id: t[5], location: t[6], payment_type: t[7], label: t[8], label_known_ms: t[9] })));
    if (tuples.length < LOAD_PAGE_ROWS) break;
    const last = tuples[tuples.length - 1]!;
    after = [last[2], last[0]];
  }
}

/** Reads an organization's rows (loadHistory's scope) of an entity table (customer_uses,
 *  entity_totals) in pages of JSON arrays of `columns`, in the order of `keys` (the primary key
 *  after the organization). */
async function pages<Row extends unknown[]>(tx: Queryable, table: string, keys: string, columns: string, organizationId: string, onPage: (rows: Row[]) => void): Promise<void> {
  const width = keys.split(',').length;
  let after: unknown[] | undefined;
  for (;;) {
    const cursor = after ? `AND (${keys}) > (${after.map((_, i) => `$${i + 3}`).join(', ')})` : '';
    const [row] = await tx.query<{ page: string | null }>(
      `SELECT json_agg(json_build_array(${columns}) ORDER BY ${keys})::text AS page
       FROM (SELECT * FROM ${table} WHERE organization_id = $1 ${cursor} ORDER BY ${keys} LIMIT $2) AS page_rows`,
      [organizationId, ENTITY_PAGE_ROWS, ...(after ?? [])],
    );
    if (!row?.page) return;
    const rows = JSON.parse(row.page) as Row[];
    onPage(rows);
    if (rows.length < ENTITY_PAGE_ROWS) return;
    after = rows[rows.length - 1]!.slice(0, width);
  }
}
