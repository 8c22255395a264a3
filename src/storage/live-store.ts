// An organization's live data in the database: its recorded transactions with the decisions that
// were answered, their outcomes and every change of them. Everything that reads live data goes
// through `organizationData(db, id)`, whose every statement is bound to that one organization: a
// route holds an `OrganizationData` only after deciding who the caller is, and cannot ask it for
// another organization's rows (test/storage/live-store.test.ts holds every method to that).
//
// Speed: inserts send whole columns as arrays through UNNEST; history loads read pages of rows as
// one JSON array each (on PGlite about three times as fast as a plain SELECT, whose per-value
// decoding dominates); listings read the (organization, …, time, seq) indexes from the newest end.
// Response bodies are stored raw-deflated (level 1: ≈ 15 µs for a 4.7 KB body, a tenth of its
// size): on the embedded database, which runs on the thread that answers requests, sending and
// storing the text cost about a third more per scored transaction.

import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { WINDOW_HORIZON_MS, type EntityTotals } from '../domain/history.ts';
import { type HistoryTransaction } from '../domain/transaction.ts';
import type { Db, Queryable } from './db.ts';
import { StorageError } from './errors.ts';
import type { Ring } from '../domain/rings.ts';
import type { EarlierTransaction } from '../domain/transaction.ts';
import { FEED_SENDER, feedSnapshot, lockOutcomes, notifyFeed, type FeedPosition, type FeedSnapshot } from './live-feed.ts';

/** The NOTIFY channel on which a stored ring analysis tells every process (src/live/ring-windows.ts). */
export const RINGS_CHANNEL = 'ring_windows';

/** What every stored transaction has, as the engine's history names it. Times are epoch ms. */
type TransactionFields = Required<Pick<HistoryTransaction, 'time' | 'amount' | 'customer_id' | 'merchant_id' | 'location' | 'payment_type'>> & { transaction_id: string };

/** A transaction to store. */
export interface NewTransaction extends TransactionFields {
  source: 'scored' | 'import';
  import_job_id?: string | null;
  /** The decision answered (scored transactions): the fields listings filter on. */
  decision?: StoredDecision | null;
  /** The exact response body (scored transactions): replayed as it is, and read for the record. */
  response?: string | null;
  /** The features it was scored with, every channel's in the model's order (drift on live traffic). */
  features?: Float32Array | null;
  /** An imported label and when it became known. */
  label?: 0 | 1 | null;
  label_known_ms?: number | null;
  outcome_source?: string | null;
  outcome_reported_by?: string | null;
}

/** What listings and reports filter and count on, of a scored transaction's decision. */
export interface StoredDecision {
  risk_score: number;
  risk_band: string;
  decision: string;
  mode: string;
}

/** One stored transaction as read back. */
export interface TransactionRow {
  seq: number;
  transaction_id: string;
  time_ms: number;
  amount: number;
  customer_id: string;
  merchant_id: string;
  location: string;
  payment_type: string;
  source: 'scored' | 'import';
  /** The response body answered (scored transactions). */
  response: string | null;
  label: 0 | 1 | null;
  label_known_ms: number | null;
  outcome_source: string | null;
  outcome_reported_by: string | null;
}

/** What the history needs of a stored transaction, in time order. */
export interface HistoryRow extends TransactionFields {
  label: 0 | 1 | null;
  label_known_ms: number | null;
}

export interface OutcomeChangeRow {
  transaction_seq: number;
  from_label: 0 | 1 | null;
  to_label: 0 | 1;
  source: string;
  reported_at_ms: number;
  reported_by: string;
}

/** An outcome to set: `label` known from `reported_at_ms`. */
export interface OutcomeInput {
  transaction_id: string;
  label: 0 | 1;
  source: string;
  reported_at_ms: number;
  reported_by: string;
}

export type OutcomeResult =
  | { transaction_id: string; status: 'applied'; changed: boolean; seq: number; label: 0 | 1; known_ms: number }
  | { transaction_id: string; status: 'not_found' }
  | { transaction_id: string; status: 'invalid'; message: string };

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
  /** `newest` first (the default) or `oldest` first (a review queue works from the oldest). */
  order?: 'newest' | 'oldest' | undefined;
}

/** How many of an entity's latest transactions its page summarises, and how many counterparties. */
export const ENTITY_RECENT = 5_000;
const ENTITY_COUNTERPARTIES = 20;

export interface EntitySummary {
  totals: { transactions: number; amount_sum: number; last_ms: number; labels: number; frauds: number };
  recent: { transactions: number; first_ms: number | null; reviewed: number; blocked: number };
  counterparties: { id: string; transactions: number; amount_sum: number; labelled: number; fraud: number; last_ms: number }[];
}

/** Per week of a performance report: scored volume and decisions, and the labelled scores. */
export interface WeekAggregate {
  week: number;
  transactions: number;
  reviews: number;
  blocks: number;
  quantiles: number[] | null;
  labelled: number;
  fraud: number;
}

/** Rows per INSERT statement: large enough to amortise a round trip, small enough that PGlite's
 *  WebAssembly heap (which never shrinks) does not grow for the statement. */
const CHUNK_ROWS = 2_500;
/** Rows per page when loading a history (one JSON value of ≈ 0.6 MB). */
const LOAD_PAGE_ROWS = 5_000;
/** Rows per page of first uses and totals. */
const ENTITY_PAGE_ROWS = 20_000;

const USE_KINDS = { m: 'merchant', h: 'channel', l: 'location' } as const;
const TOTAL_KINDS = { c: 'customer', m: 'merchant', h: 'channel' } as const;

/** Reads an organization's rows of an entity table (customer_uses, entity_totals) in pages of
 *  JSON arrays of `columns`, in the order of `keys` (the primary key after the organization). */
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

/** What a process keeps of an organization's history, as `loadHistory` hands it over, in this order. */
export interface HistoryLoader {
  /** Transactions before `floor` come only as totals. */
  start(floor: number): void;
  uses(rows: { customer_id: string; kind: 'merchant' | 'channel' | 'location'; key: string; first: number }[]): void;
  transactions(rows: HistoryRow[]): void;
  /** Outcomes known from the floor on, of transactions before it. */
  labels(rows: { customer_id: string; merchant_id: string; location: string; payment_type: string; label: 0 | 1; known: number }[]): void;
  finish(totals: EntityTotals[]): void;
}


/** Inserts rows given as whole columns (UNNEST), each with its organization; an id the
 *  organization already has is skipped. The response arrives as base64 text: both drivers send a
 *  text array the same way (postgres.js sends an array of byte buffers as one bytea). */
const INSERT_ROWS = `INSERT INTO transactions (organization_id, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, source, import_job_id,
                                   risk_score, risk_band, decision, mode, response, label, label_known_ms, outcome_source, outcome_reported_by, features)
  SELECT u.o, u.id, u.t, u.a, u.c, u.m, u.l, u.p, u.s, u.j, u.rs, u.rb, u.d, u.mo, decode(u.re, 'base64'), u.lb, u.lk, u.os, u.ob, decode(u.f, 'base64')
  FROM unnest($1::text[], $2::text[], $3::float8[], $4::float8[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[],
              $11::float8[], $12::text[], $13::text[], $14::text[], $15::text[], $16::int2[], $17::float8[], $18::text[], $19::text[], $20::text[])
       AS u(o, id, t, a, c, m, l, p, s, j, rs, rb, d, mo, re, lb, lk, os, ob, f)
  ON CONFLICT (organization_id, transaction_id) DO NOTHING
  RETURNING organization_id, transaction_id, seq, xid::text`;

function insertParams(organizations: readonly string[], chunk: readonly NewTransaction[]): unknown[] {
  return [
    organizations,
    chunk.map((r) => r.transaction_id),
    chunk.map((r) => r.time),
    chunk.map((r) => r.amount),
    chunk.map((r) => r.customer_id),
    chunk.map((r) => r.merchant_id),
    chunk.map((r) => r.location),
    chunk.map((r) => r.payment_type),
    chunk.map((r) => r.source),
    chunk.map((r) => r.import_job_id ?? null),
    chunk.map((r) => r.decision?.risk_score ?? null),
    chunk.map((r) => r.decision?.risk_band ?? null),
    chunk.map((r) => r.decision?.decision ?? null),
    chunk.map((r) => r.decision?.mode ?? null),
    chunk.map((r) => (r.response ? deflateRawSync(r.response, { level: 1 }).toString('base64') : null)),
    chunk.map((r) => r.label ?? null),
    chunk.map((r) => (r.label === 0 || r.label === 1 ? r.label_known_ms! : null)),
    chunk.map((r) => r.outcome_source ?? null),
    chunk.map((r) => r.outcome_reported_by ?? null),
    chunk.map((r) => (r.features ? Buffer.from(r.features.buffer, r.features.byteOffset, r.features.byteLength).toString('base64') : null)),
  ];
}

function checkFinite(rows: readonly NewTransaction[]): void {
  for (const r of rows) {
    if (!Number.isFinite(r.time) || !Number.isFinite(r.amount)) {
      throw new StorageError('query_failed', `transaction ${r.transaction_id} has a time or amount that is not a finite number`);
    }
  }
}

/** Scored transactions of several organizations, each as its key's organization decided. */
export interface GroupRow {
  organizationId: string;
  row: NewTransaction;
}

/**
 * The decision log's group commit: stores the scored transactions of several organizations with
 * one statement per chunk, each its own database transaction (one round trip, commit included,
 * the feed's NOTIFY queued in a CTE). Several groups may be written at once: the feed's order needs
 * no lock (src/storage/live-feed.ts). Returns, per organization, the ids stored with their feed
 * positions; an id the organization already had is left out. A write only: every row carries the
 * organization its API key belongs to, and nothing is read back but what was inserted.
 */
export async function recordGroup(db: Db, group: readonly GroupRow[]): Promise<Map<string, Map<string, FeedPosition>>> {
  const stored = new Map<string, Map<string, FeedPosition>>();
  for (const g of group) if (!stored.has(g.organizationId)) stored.set(g.organizationId, new Map());
  checkFinite(group.map((g) => g.row));
  // In key order, as the totals' upserts lock theirs: two groups inserting the same ids (a retry
  // sent to two processes) wait for each other rather than deadlock.
  const ordered = [...group].sort((a, b) => compare(a.organizationId, b.organizationId) || compare(a.row.transaction_id, b.row.transaction_id));
  for (let start = 0; start < ordered.length; start += CHUNK_ROWS) {
    const chunk = ordered.slice(start, start + CHUNK_ROWS);
    const params = insertParams(chunk.map((g) => g.organizationId), chunk.map((g) => g.row));
    params.push(FEED_SENDER);
    const sender = params.length;
    const insert = () =>
      db.query<{ organization_id: string; transaction_id: string; seq: number; xid: string }>(
        `WITH notify AS MATERIALIZED (SELECT ${notifyFeed(sender)})
         ${INSERT_ROWS.replace('FROM unnest(', 'FROM notify, unnest(')}`,
        params,
      );
    const inserted = await retryConflicts(insert);
    for (const r of inserted) stored.get(r.organization_id)!.set(r.transaction_id, { seq: r.seq, xid: Number(r.xid) });
  }
  return stored;
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Runs a statement that is a database transaction of its own again when PostgreSQL chose it as a
 *  deadlock's or a serialization conflict's victim (it rolled back whole), up to three times. The
 *  key order above makes this rare; a writer outside this code (a manual UPDATE) can still cause it. */
async function retryConflicts<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (e) {
      const state = e instanceof StorageError ? e.sqlState : undefined;
      if (attempt >= 3 || (state !== '40P01' && state !== '40001')) throw e;
    }
  }
}

const ROW_COLUMNS = 'seq, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, source, response, label, label_known_ms, outcome_source, outcome_reported_by';

/** A row as the database sends it: the response still deflated. */
type StoredRow = Omit<TransactionRow, 'response'> & { response: Uint8Array | null };

function inflate(bytes: Uint8Array): string {
  return inflateRawSync(bytes).toString('utf8');
}

function readRow(row: StoredRow): TransactionRow {
  return { ...row, response: row.response ? inflate(row.response) : null };
}

export function organizationData(db: Db, organizationId: string): OrganizationData {
  return new OrganizationData(db, organizationId);
}

export class OrganizationData {
  constructor(
    private readonly db: Db,
    readonly organizationId: string,
  ) {}

  /** Stores transactions in one database transaction (`into`, when given: the caller's), in the
   *  live feed's order; a transaction id the organization already has is left as it is. Returns
   *  the ids that were stored, each with its feed position. */
  async insert(rows: readonly NewTransaction[], into: Queryable | undefined = undefined): Promise<Map<string, number>> {
    const stored = new Map<string, number>();
    if (rows.length === 0) return stored;
    checkFinite(rows);
    const write = async (tx: Queryable) => {
      await tx.query(`SELECT ${notifyFeed(1)}`, [FEED_SENDER]);
      for (let start = 0; start < rows.length; start += CHUNK_ROWS) {
        const chunk = rows.slice(start, start + CHUNK_ROWS);
        for (const row of await tx.query<{ transaction_id: string; seq: number }>(INSERT_ROWS, insertParams(chunk.map(() => this.organizationId), chunk))) stored.set(row.transaction_id, row.seq);
      }
    };
    if (into) await write(into);
    else await this.db.transaction(write);
    return stored;
  }

  /**
   * Reads what a process keeps of the organization's history (src/live/tenants.ts), all in one
   * snapshot: the floor is `WINDOW_HORIZON_MS` before the newest of `now` and the newest stored
   * transaction; every customer's first uses; the transactions from the floor on, in time order
   * (time, then the order recorded), a page at a time; the outcomes known from the floor on of
   * transactions before it; and every entity's all-time totals. Returns the floor and the snapshot
   * (which database transactions' changes it saw: src/storage/live-feed.ts). What is read does not grow with the history
   * stored before the floor, only with the entities and the floor's window.
   */
  async loadHistory(now: number, into: HistoryLoader): Promise<{ floor: number; seen: FeedSnapshot }> {
    const org = this.organizationId;
    return this.db.transaction(async (tx) => {
      await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      const seen = await feedSnapshot(tx);
      const [newest] = await tx.query<{ newest: number | null }>('SELECT max(time_ms) AS newest FROM transactions WHERE organization_id = $1', [org]);
      const floor = Math.max(now, newest?.newest ?? -Infinity) - WINDOW_HORIZON_MS;
      into.start(floor);
      await pages<[string, 'm' | 'h' | 'l', string, number]>(tx, 'customer_uses', 'customer_id, kind, key', 'customer_id, kind, key, first_ms', org, (rows) => {
        into.uses(rows.map(([customer_id, kind, key, first]) => ({ customer_id, kind: USE_KINDS[kind], key, first })));
      });
      await this.historyPages(tx, floor, (rows) => into.transactions(rows));
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
      return { floor, seen };
    });
  }

  /** The stored transactions from `from` on in time order (time, then the order recorded), a page
   *  at a time, so that a caller keeping them in another form (the engine's history) never holds
   *  them all as objects. */
  private async historyPages(tx: Queryable, from: number, onPage: (rows: HistoryRow[]) => void): Promise<void> {
    let after: [number, number] | undefined;
    type Tuple = [number, string, number, number, string, string, string, string, 0 | 1 | null, number | null];
    for (;;) {
      const [row] = await tx.query<{ page: string | null }>(
        `SELECT json_agg(json_build_array(seq, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, label, label_known_ms)
                         ORDER BY time_ms, seq)::text AS page
         FROM (SELECT * FROM transactions WHERE organization_id = $1 AND time_ms >= $3 ${after ? 'AND (time_ms, seq) > ($4, $5)' : ''}
               ORDER BY time_ms, seq LIMIT $2) AS page_rows`,
        after ? [this.organizationId, LOAD_PAGE_ROWS, from, after[0], after[1]] : [this.organizationId, LOAD_PAGE_ROWS, from],
      );
      if (!row?.page) break;
      const tuples = JSON.parse(row.page) as Tuple[];
      onPage(tuples.map((t) => ({ transaction_id: t[1], time: t[2], amount: t[3], customer_id: t[4], merchant_id: t[5], location: t[6], payment_type: t[7], label: t[8], label_known_ms: t[9] })));
      if (tuples.length < LOAD_PAGE_ROWS) break;
      const last = tuples[tuples.length - 1]!;
      after = [last[2], last[0]];
    }
  }

  /** Up to `limit` of an entity's transactions before `before`, newest first: the evidence a
   *  loaded history no longer holds. A channel is its payment type and location. */
  async earlier(role: 'customer' | 'merchant' | 'channel', entity: { customer_id: string; merchant_id: string; payment_type: string; location: string }, before: number, limit: number): Promise<EarlierTransaction[]> {
    const [where, params] =
      role === 'customer'
        ? ['customer_id = $2', [entity.customer_id]]
        : role === 'merchant'
          ? ['merchant_id = $2', [entity.merchant_id]]
          : ['payment_type = $2 AND location = $5', [entity.payment_type]];
    const args = [this.organizationId, ...params, before, limit];
    if (role === 'channel') args.push(entity.location);
    return this.db.query<EarlierTransaction>(
      `SELECT transaction_id, time_ms AS time, amount, customer_id, merchant_id, label, label_known_ms FROM transactions
       WHERE organization_id = $1 AND ${where} AND time_ms < $3 ORDER BY time_ms DESC, seq DESC LIMIT $4`,
      args,
    );
  }

  /**
   * A customer or merchant of the organization: its all-time totals (kept by the database, so
   * reading them costs the same however long its history), and, over its latest
   * ENTITY_RECENT transactions, how many were reviewed and blocked and the counterparties it dealt
   * with most (the merchants of a customer, the customers of a merchant). Undefined when the
   * organization has no transaction of it.
   */
  async entity(role: 'customer' | 'merchant', id: string): Promise<EntitySummary | undefined> {
    const [own, other, kind] = role === 'customer' ? ['customer_id', 'merchant_id', 'c'] : ['merchant_id', 'customer_id', 'm'];
    const [totals] = await this.db.query<{ transactions: number; amount_sum: number; last_ms: number; labels: number; frauds: number }>(
      'SELECT transactions::float8 AS transactions, amount_sum, last_ms, labels::float8 AS labels, frauds::float8 AS frauds FROM entity_totals WHERE organization_id = $1 AND kind = $2 AND key = $3',
      [this.organizationId, kind, id],
    );
    if (!totals) return undefined;
    // Its latest transactions are read once, for both the counts and the counterparties.
    type Counterparty = EntitySummary['counterparties'][number];
    const [row] = await this.db.query<{ recent: EntitySummary['recent']; counterparties: Counterparty[] }>(
      `WITH r AS MATERIALIZED (SELECT ${other} AS other, time_ms, amount, label, decision FROM transactions WHERE organization_id = $1 AND ${own} = $2 ORDER BY time_ms DESC, seq DESC LIMIT $3)
       SELECT (SELECT json_build_object('transactions', count(*), 'first_ms', min(time_ms), 'reviewed', count(*) FILTER (WHERE decision = 'review'), 'blocked', count(*) FILTER (WHERE decision = 'block')) FROM r) AS recent,
              (SELECT coalesce(json_agg(c ORDER BY c.transactions DESC, c.last_ms DESC, c.id), '[]') FROM (
                 SELECT other AS id, count(*) AS transactions, sum(amount) AS amount_sum, count(label) AS labelled, coalesce(sum(label), 0) AS fraud, max(time_ms) AS last_ms
                 FROM r GROUP BY other ORDER BY count(*) DESC, max(time_ms) DESC, other LIMIT $4) AS c) AS counterparties`,
      [this.organizationId, id, ENTITY_RECENT, ENTITY_COUNTERPARTIES],
    );
    return { totals, recent: row!.recent, counterparties: row!.counterparties };
  }

  async get(transactionId: string): Promise<TransactionRow | undefined> {
    const [row] = await this.db.query<StoredRow>(`SELECT ${ROW_COLUMNS} FROM transactions WHERE organization_id = $1 AND transaction_id = $2`, [this.organizationId, transactionId]);
    return row && readRow(row);
  }

  /** The exact response body answered for a scored transaction (undefined for an unknown id or an
   *  imported one). */
  async response(transactionId: string): Promise<string | undefined> {
    const [row] = await this.db.query<{ response: Uint8Array | null }>('SELECT response FROM transactions WHERE organization_id = $1 AND transaction_id = $2', [this.organizationId, transactionId]);
    return row?.response ? inflate(row.response) : undefined;
  }

  /** Newest first (time, then the order recorded), or oldest first, after the transaction
   *  `startingAfter` when given; `limit + 1` rows are read to tell whether there are more.
   *  Undefined when `startingAfter` is not one of the organization's transactions. */
  async list(filters: ListFilters, limit: number, startingAfter?: string): Promise<{ rows: TransactionRow[]; hasMore: boolean } | undefined> {
    const oldest = filters.order === 'oldest';
    const params: unknown[] = [this.organizationId];
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
    if (filters.from !== undefined) add((p) => `time_ms >= ${p}`, filters.from);
    if (filters.to !== undefined) add((p) => `time_ms < ${p}`, filters.to);
    if (startingAfter !== undefined) {
      const [cursor] = await this.db.query<{ time_ms: number; seq: number }>('SELECT time_ms, seq FROM transactions WHERE organization_id = $1 AND transaction_id = $2', [this.organizationId, startingAfter]);
      if (!cursor) return undefined;
      params.push(cursor.time_ms, cursor.seq);
      where.push(`(time_ms, seq) ${oldest ? '>' : '<'} ($${params.length - 1}, $${params.length})`);
    }
    params.push(limit + 1);
    const rows = await this.db.query<StoredRow>(
      `SELECT ${ROW_COLUMNS} FROM transactions WHERE ${where.join(' AND ')} ORDER BY ${oldest ? 'time_ms, seq' : 'time_ms DESC, seq DESC'} LIMIT $${params.length}`,
      params,
    );
    const hasMore = rows.length > limit;
    return { rows: (hasMore ? rows.slice(0, limit) : rows).map(readRow), hasMore };
  }

  /** Every outcome change of these transactions (by seq), oldest first. */
  async outcomeChanges(seqs: readonly number[]): Promise<Map<number, OutcomeChangeRow[]>> {
    const out = new Map<number, OutcomeChangeRow[]>();
    if (seqs.length === 0) return out;
    const rows = await this.db.query<OutcomeChangeRow>(
      `SELECT transaction_seq, from_label, to_label, source, reported_at_ms, reported_by FROM outcome_changes
       WHERE organization_id = $1 AND transaction_seq = ANY($2::bigint[]) ORDER BY transaction_seq, id`,
      [this.organizationId, seqs],
    );
    for (const r of rows) {
      const list = out.get(r.transaction_seq);
      if (list) list.push(r);
      else out.set(r.transaction_seq, [r]);
    }
    return out;
  }

  /**
   * Sets outcomes in one database transaction, in the order given (a later one for the same
   * transaction wins). An id the organization does not have is `not_found`; a `reported_at` before
   * the transaction is `invalid`; either leaves everything as it was. Setting the outcome a
   * transaction already has changes nothing (its first report stands). Each change is kept in
   * `outcome_changes`. `xid`: the database transaction that wrote the changes (none when nothing
   * changed), for a caller that waits until its live tail has applied them.
   */
  async applyOutcomes(inputs: readonly OutcomeInput[]): Promise<{ results: OutcomeResult[]; xid: number | undefined }> {
    return this.db.transaction(async (tx) => {
      await lockOutcomes(tx);
      const ids = [...new Set(inputs.map((i) => i.transaction_id))];
      const found = await tx.query<{ seq: number; transaction_id: string; time_ms: number; label: 0 | 1 | null; label_known_ms: number | null }>(
        'SELECT seq, transaction_id, time_ms, label, label_known_ms FROM transactions WHERE organization_id = $1 AND transaction_id = ANY($2::text[]) FOR UPDATE',
        [this.organizationId, ids],
      );
      const current = new Map(found.map((r) => [r.transaction_id, { ...r }]));
      const results: OutcomeResult[] = [];
      const changes: (OutcomeChangeRow & { transaction_id: string; from_known_ms: number | null })[] = [];
      for (const input of inputs) {
        const row = current.get(input.transaction_id);
        if (!row) {
          results.push({ transaction_id: input.transaction_id, status: 'not_found' });
          continue;
        }
        if (input.reported_at_ms < row.time_ms) {
          results.push({ transaction_id: input.transaction_id, status: 'invalid', message: `reported_at ${new Date(input.reported_at_ms).toISOString()} is before the transaction (${new Date(row.time_ms).toISOString()}).` });
          continue;
        }
        if (row.label === input.label) {
          results.push({ transaction_id: input.transaction_id, status: 'applied', changed: false, seq: row.seq, label: row.label, known_ms: row.label_known_ms! });
          continue;
        }
        changes.push({ transaction_id: row.transaction_id, transaction_seq: row.seq, from_label: row.label, from_known_ms: row.label_known_ms, to_label: input.label, source: input.source, reported_at_ms: input.reported_at_ms, reported_by: input.reported_by });
        row.label = input.label;
        row.label_known_ms = input.reported_at_ms;
        results.push({ transaction_id: input.transaction_id, status: 'applied', changed: true, seq: row.seq, label: input.label, known_ms: input.reported_at_ms });
      }
      if (changes.length > 0) {
        await tx.query(
          `INSERT INTO outcome_changes (organization_id, transaction_seq, from_label, to_label, source, reported_at_ms, reported_by, from_known_ms)
           SELECT $1, * FROM unnest($2::bigint[], $3::int2[], $4::int2[], $5::text[], $6::float8[], $7::text[], $8::float8[])`,
          [this.organizationId, changes.map((c) => c.transaction_seq), changes.map((c) => c.from_label), changes.map((c) => c.to_label), changes.map((c) => c.source), changes.map((c) => c.reported_at_ms), changes.map((c) => c.reported_by), changes.map((c) => c.from_known_ms)],
        );
        // The last change of each transaction is its current outcome.
        const last = new Map(changes.map((c) => [c.transaction_seq, c]));
        const final = [...last.values()];
        await tx.query(
          `UPDATE transactions AS t SET label = u.label, label_known_ms = u.known, outcome_source = u.source, outcome_reported_by = u.reported_by
           FROM unnest($2::bigint[], $3::int2[], $4::float8[], $5::text[], $6::text[]) AS u(seq, label, known, source, reported_by)
           WHERE t.organization_id = $1 AND t.seq = u.seq`,
          [this.organizationId, final.map((c) => c.transaction_seq), final.map((c) => c.to_label), final.map((c) => c.reported_at_ms), final.map((c) => c.source), final.map((c) => c.reported_by)],
        );
        const [row] = await tx.query<{ xid: string }>(`SELECT pg_current_xact_id()::text AS xid, ${notifyFeed(1)}`, [FEED_SENDER]);
        return { results, xid: Number(row!.xid) };
      }
      return { results, xid: undefined };
    });
  }

  /** What one import job stored: rows, of them labelled and fraud, and their time range (ms). */
  async importedBy(jobId: string): Promise<{ imported: number; labelled: number; fraud: number; first: number | null; last: number | null }> {
    const [row] = await this.db.query<{ imported: number; labelled: number; fraud: number; first: number | null; last: number | null }>(
      `SELECT count(*)::int AS imported, count(label)::int AS labelled, coalesce(sum(label), 0)::int AS fraud, min(time_ms) AS first, max(time_ms) AS last
       FROM transactions WHERE organization_id = $1 AND import_job_id = $2`,
      [this.organizationId, jobId],
    );
    return row!;
  }

  /** The transactions in [from, to), in time order, with their current outcomes: a ring window's. */
  async windowTransactions(from: number, to: number): Promise<HistoryTransaction[]> {
    const rows = await this.db.query<{ time_ms: number; amount: number; customer_id: string; merchant_id: string; location: string; payment_type: string; label: 0 | 1 | null; label_known_ms: number | null }>(
      `SELECT time_ms, amount, customer_id, merchant_id, location, payment_type, label, label_known_ms FROM transactions
       WHERE organization_id = $1 AND time_ms >= $2 AND time_ms < $3 ORDER BY time_ms, seq`,
      [this.organizationId, from, to],
    );
    return rows.map((r) => ({
      time: r.time_ms,
      amount: r.amount,
      customer_id: r.customer_id,
      merchant_id: r.merchant_id,
      location: r.location,
      payment_type: r.payment_type,
      ...(r.label === null ? {} : { label: r.label, labelKnownAt: r.label_known_ms! }),
    }));
  }

  /** Stores the rings found in the window starting at `start` (queued in ring_windows) and tells
   *  every process (NOTIFY on the rings channel with the organization's id). */
  async storeRings(start: number, rings: readonly Ring[]): Promise<void> {
    await this.db.query(
      `WITH stored AS (UPDATE ring_windows SET rings = $3::text::jsonb, analysed_at = now() WHERE organization_id = $1 AND window_start = $2 RETURNING 1)
       SELECT pg_notify('${RINGS_CHANNEL}', $1) FROM stored`,
      [this.organizationId, start, JSON.stringify(rings)],
    );
  }

  /** The rings of the latest `windows` analysed windows, oldest window first. */
  async storedRings(windows: number): Promise<Ring[]> {
    const rows = await this.db.query<{ rings: Ring[] }>(
      `SELECT rings FROM (SELECT window_start, rings FROM ring_windows WHERE organization_id = $1 AND rings IS NOT NULL ORDER BY window_start DESC LIMIT $2) AS latest
       ORDER BY window_start`,
      [this.organizationId, windows],
    );
    return rows.flatMap((r) => r.rings);
  }

  /** Scored transactions in [from, to) grouped into `period`-long buckets from `from`: volume,
   *  decisions, score quantiles and labels. */
  async weeklyAggregates(from: number, to: number, period: number, quantiles: readonly number[]): Promise<WeekAggregate[]> {
    return this.db.query<WeekAggregate>(
      `SELECT floor((time_ms - $2) / $4)::int AS week, count(*)::int AS transactions,
              count(*) FILTER (WHERE decision = 'review')::int AS reviews, count(*) FILTER (WHERE decision = 'block')::int AS blocks,
              percentile_cont($5::float8[]) WITHIN GROUP (ORDER BY risk_score) AS quantiles,
              count(label)::int AS labelled, coalesce(sum(label), 0)::int AS fraud
       FROM transactions WHERE organization_id = $1 AND source = 'scored' AND time_ms >= $2 AND time_ms < $3
       GROUP BY 1 ORDER BY 1`,
      [this.organizationId, from, to, period, quantiles],
    );
  }

  /** The scored transactions in [from, to) that carry their features, with their bucket: every
   *  `strides[bucket]`-th of a bucket by the order recorded (a bounded, even sample of a busy week). */
  async scoredFeatures(from: number, to: number, period: number, strides: readonly number[]): Promise<{ week: number; risk_score: number; location: string; payment_type: string; features: Uint8Array }[]> {
    return this.db.query(
      `SELECT week, risk_score, location, payment_type, features FROM (
         SELECT floor((time_ms - $2) / $4)::int AS week, seq, risk_score, location, payment_type, features FROM transactions
         WHERE organization_id = $1 AND source = 'scored' AND features IS NOT NULL AND time_ms >= $2 AND time_ms < $3) AS w
       WHERE seq % ($5::int[])[week + 1] = 0`,
      [this.organizationId, from, to, period, strides],
    );
  }

  /** Scores and outcomes of the labelled scored transactions in [from, to), with their bucket. */
  async labelledScores(from: number, to: number, period: number): Promise<{ week: number; risk_score: number; label: 0 | 1 }[]> {
    return this.db.query(
      `SELECT floor((time_ms - $2) / $4)::int AS week, risk_score, label FROM transactions
       WHERE organization_id = $1 AND source = 'scored' AND label IS NOT NULL AND time_ms >= $2 AND time_ms < $3`,
      [this.organizationId, from, to, period],
    );
  }
}

/** A service_meta value as stored (JSON), or undefined when the key is absent. */
export async function getMeta<T>(db: Queryable, key: string): Promise<T | undefined> {
  const [row] = await db.query<{ value: T }>('SELECT value FROM service_meta WHERE key = $1', [key]);
  return row ? row.value : undefined;
}

/** Stores a JSON-serialisable value under key, replacing any earlier one (undefined is stored as null). */
export async function setMeta(db: Queryable, key: string, value: unknown): Promise<void> {
  await db.query(
    `INSERT INTO service_meta (key, value) VALUES ($1, $2::text::jsonb)
     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
    [key, JSON.stringify(value ?? null)],
  );
}
