// The history's persistence: the transactions the service has seen (the example dataset stored at
// first start, then every scored request) and small facts about the service (service_meta). The
// engine keeps the history in memory; this is what survives a restart.
//
// Speed: inserts send whole columns as arrays through UNNEST, CHUNK_ROWS rows per statement, all in
// one transaction; loads read pages of rows as JSON (see forEachTransactionPage). Measured for 300,000
// rows on the project's 2-core machine (test/storage/history-300k.test.ts prints the figures):
//   PGlite 0.5:          insert 2.8–4.2 s, load 1.4–2.1 s (a plain SELECT took 4.8 s to load; an
//                        INSERT ... SELECT of 300,000 generated rows alone takes 2.2 s inside PGlite)
//   PostgreSQL 15 local: insert 2.0–2.7 s, load 1.4–2.1 s

import type { Db, Queryable } from './db.ts';
import { StorageError } from './errors.ts';

export interface StoredTransaction {
  transaction_id: string;
  /** Epoch milliseconds. */
  time: number;
  amount: number;
  customer_id: string;
  merchant_id: string;
  location: string;
  payment_type: string;
  /** 1 fraud, 0 legitimate, null unknown. */
  label: 0 | 1 | null;
  /** 'example' for the seeded history, 'scored' for scored requests. */
  source: 'example' | 'scored';
}

/** Rows per INSERT statement: large enough to amortise a round trip, small enough that PGlite's
 *  WebAssembly heap (which never shrinks) does not grow for the statement (2,500: ≈ 1 MB of text). */
const CHUNK_ROWS = 2_500;

export async function countTransactions(db: Queryable): Promise<number> {
  const [row] = await db.query<{ n: number }>('SELECT count(*) AS n FROM transactions');
  return row!.n;
}

/** Bulk insert in one transaction: all rows are stored, or none. */
export async function insertTransactions(db: Db, rows: StoredTransaction[]): Promise<void> {
  if (rows.length === 0) return;
  for (const r of rows) {
    if (!Number.isFinite(r.time) || !Number.isFinite(r.amount)) {
      throw new StorageError('query_failed', `transaction ${r.transaction_id} has a time or amount that is not a finite number`);
    }
  }
  await db.transaction(async (tx) => {
    for (let start = 0; start < rows.length; start += CHUNK_ROWS) {
      const chunk = rows.slice(start, start + CHUNK_ROWS);
      await tx.query(
        `INSERT INTO transactions (transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, label, source)
         SELECT * FROM unnest($1::text[], $2::float8[], $3::float8[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int2[], $9::text[])`,
        [
          chunk.map((r) => r.transaction_id),
          chunk.map((r) => r.time),
          chunk.map((r) => r.amount),
          chunk.map((r) => r.customer_id),
          chunk.map((r) => r.merchant_id),
          chunk.map((r) => r.location),
          chunk.map((r) => r.payment_type),
          chunk.map((r) => r.label),
          chunk.map((r) => r.source),
        ],
      );
    }
  });
}

/** Rows per page when loading: bounds one JSON value (≈ 0.6 MB) on both back ends, small enough
 *  that building it does not grow PGlite's WebAssembly heap (20,000-row pages left it ≈ 12 MB larger). */
const LOAD_PAGE_ROWS = 5_000;

/** One stored row as the load query sends it: [seq, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, label, source]. */
type RowTuple = [number, string, number, number, string, string, string, string, 0 | 1 | null, 'example' | 'scored'];

/**
 * Every stored transaction ordered by time, then by insertion order. Pages of LOAD_PAGE_ROWS rows
 * follow (time_ms, seq) (keyset pagination on the index), each page one JSON array that the
 * database builds and JSON.parse reads: on PGlite this is about three times as fast as a plain
 * SELECT, whose per-value decoding dominates. Doubles come back exact (PostgreSQL writes the
 * shortest text that reads back as the same double). Pages are separate statements: on a shared
 * PostgreSQL, rows another process commits during the load may or may not be included.
 */
export async function loadTransactions(db: Queryable): Promise<StoredTransaction[]> {
  const out: StoredTransaction[] = [];
  await forEachTransactionPage(db, (page) => {
    for (const t of page) out.push(t);
  });
  return out;
}

/**
 * The same rows in the same order as `loadTransactions`, handed over a page at a time, so that a
 * caller that keeps them in another form (the engine's history) never holds them all as objects.
 */
export async function forEachTransactionPage(db: Queryable, onPage: (rows: StoredTransaction[]) => void): Promise<void> {
  let after: [number, number] | undefined;
  for (;;) {
    const [row] = await db.query<{ page: string | null }>(
      `SELECT json_agg(json_build_array(seq, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, label, source)
                       ORDER BY time_ms, seq)::text AS page
       FROM (SELECT * FROM transactions ${after ? 'WHERE (time_ms, seq) > ($2, $3)' : ''} ORDER BY time_ms, seq LIMIT $1) AS page_rows`,
      after ? [LOAD_PAGE_ROWS, after[0], after[1]] : [LOAD_PAGE_ROWS],
    );
    if (!row?.page) break;
    const tuples = JSON.parse(row.page) as RowTuple[];
    onPage(tuples.map((t) => ({ transaction_id: t[1], time: t[2], amount: t[3], customer_id: t[4], merchant_id: t[5], location: t[6], payment_type: t[7], label: t[8], source: t[9] })));
    if (tuples.length < LOAD_PAGE_ROWS) break;
    const last = tuples[tuples.length - 1]!;
    after = [last[2], last[0]];
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
