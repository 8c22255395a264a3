// The database, as the rest of the service sees it: one small interface over two back ends that
// speak PostgreSQL's SQL with `$1` parameters: an embedded PGlite under DATA_DIR (one process needs
// nothing else) or, with DATABASE_URL, a PostgreSQL server that several processes share.
// Both return the same JS values: integers and floats as numbers (int8 beyond 2^53 loses
// precision), numeric as a string, timestamptz as Date, json/jsonb parsed, NULL as null; a string
// json/jsonb parameter is taken as JSON text, an object or array is serialised.
// Inside `transaction(fn)`, use only the `tx` handle: calling the Db itself from inside its own
// transaction throws (on PGlite it would otherwise wait for the transaction forever).

export interface Queryable {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
}

/** The longest a background statement waits for the requests' statements to pause (db.ts
 *  `background`): under a load that never pauses, background work still goes on, a statement a
 *  second at least. */
export const BACKGROUND_WAIT_MS = 1_000;

/** What another thread needs to open connections of its own to the same PostgreSQL server. The URL
 *  carries the credentials: it is handed between threads in memory, never logged or sent
 *  elsewhere. */
export interface DatabaseAddress {
  url: string;
  /** The pool's statement time limit, kept by the other thread's connections too. */
  statementTimeoutMs: number;
}

/** What another thread needs to read in an open transaction's snapshot (shared-snapshot.ts). */
export interface SharedSnapshot extends DatabaseAddress {
  /** The snapshot's id (pg_export_snapshot). */
  id: string;
}

/** A column of a bulk write (`copyIn`): its name, and the type its values are sent as. */
export interface CopyColumn {
  name: string;
  type: 'text' | 'int4' | 'bytea';
}

/** The rows of a bulk write: in an array, or one at a time (read as they are sent). */
export type CopyRows = readonly (readonly unknown[])[] | AsyncIterable<readonly unknown[]>;

/** A database transaction's handle. */
export interface TransactionQueryable extends Queryable {
  /** Stores `rows` (values in `columns`' order; in an array, or one at a time as they are read) in
   *  `table`: on PostgreSQL as binary COPY, a bytea
   *  value's bytes sent as they are and a slice at a time with turns of the event loop between; on
   *  the embedded database as INSERTs whose bytea parameters go as bytes. `bytesPerSecond`
   *  (PostgreSQL): the most it sends a second, so that a bulk write of background work leaves the
   *  server's log writes to the commits others wait for. */
  copyIn(table: string, columns: readonly CopyColumn[], rows: CopyRows, o?: { bytesPerSecond?: number }): Promise<void>;
  /** The rows of `select` (a query with its values written in: COPY takes no parameters, see
   *  copy-binary.ts `sqlLiteral`) in binary COPY format: on PostgreSQL as they arrive; on the
   *  embedded database, whose COPY writes to a device file, in one piece once it is over. */
  copyOut(select: string): AsyncIterable<Uint8Array>;
  /** PostgreSQL only: this transaction's snapshot, for a connection of another thread to read in
   *  (shared-snapshot.ts) while this transaction stays open. */
  shareSnapshot?(): Promise<SharedSnapshot>;
}

export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Runs fn inside BEGIN/COMMIT (ROLLBACK on throw) on one connection. */
  transaction<R>(fn: (tx: TransactionQueryable) => Promise<R>): Promise<R>;
  /** Cheap liveness check for /api/health: resolves true/false, never throws. */
  ping(): Promise<boolean>;
  /**
   * Calls `onNotify` with the payload of each NOTIFY on `channel`, and `onListening` whenever listening (re)starts:
   * after a dropped connection is re-established, notifications sent meanwhile were lost, so a
   * caller catches up there. Resolves to a function that stops listening.
   */
  listen(channel: string, onNotify: (payload: string) => void, onListening: () => void): Promise<() => Promise<void>>;
  /** The same database for background work (an import's rows, its features): on the embedded
   *  database, whose one connection the requests' statements share, each of its statements and
   *  transactions starts only once no request's is waiting or running (or after BACKGROUND_WAIT_MS
   *  of waiting), one at a time, so that a request waits behind at most one of them. On
   *  PostgreSQL, whose requests have connections of their own, the database itself. */
  background(): Db;
  /** PostgreSQL only: where a thread doing background work opens connections of its own, so that
   *  its statements' encoding and decoding never run on the event loop. The embedded database's
   *  one connection is this process's: there, such a thread is handed its reads and writes. */
  address?(): DatabaseAddress;
  close(): Promise<void>;
}

/** A transaction handle that can also run a multi-statement script (migrations need it). */
export interface ScriptQueryable extends TransactionQueryable {
  exec(script: string): Promise<void>;
}

/** What each back end implements: a Db whose transactions can run scripts. Internal to storage. */
export interface Backend extends Db {
  transaction<R>(fn: (tx: ScriptQueryable) => Promise<R>): Promise<R>;
}
