// The database, as the rest of the service sees it: one small interface over two back ends that
// speak one SQL dialect (PostgreSQL's, with `$1` parameters). Without DATABASE_URL the service
// keeps its data in an embedded PGlite (PostgreSQL compiled to WASM) under DATA_DIR, so one process
// needs nothing else; with DATABASE_URL it uses a PostgreSQL server through postgres.js, so several
// processes can share one database (the URL may end in `?search_path=name` to keep the service's
// tables in a schema of their own). Opening (open.ts) applies the migrations, so callers always
// see the current schema.
//
// Both back ends return the same JS values for the same SQL: int2/int4/int8 (so count(*)) and
// float4/float8 as numbers (int8 beyond 2^53 loses precision: cast to text if that matters),
// numeric as a string (exact; cast to float8 for a number), timestamptz as Date, json/jsonb parsed,
// arrays as arrays, NULL as null. Parameters: JS numbers, strings, booleans, Dates, arrays and null
// (undefined is sent as null). For a json/jsonb parameter, an object or array is serialised with
// JSON.stringify, and a string is taken as JSON text already.
//
// Inside `transaction(fn)`, use only the `tx` handle: calling the Db itself from inside its own
// transaction throws (on PGlite it would otherwise wait for the transaction forever).

export interface Queryable {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
}

export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Runs fn inside BEGIN/COMMIT (ROLLBACK on throw) on one connection. */
  transaction<R>(fn: (tx: Queryable) => Promise<R>): Promise<R>;
  /** Cheap liveness check for /api/health: resolves true/false, never throws. */
  ping(): Promise<boolean>;
  /**
   * Calls `onNotify` with the payload of each NOTIFY on `channel`, and `onListening` whenever listening (re)starts:
   * after a dropped connection is re-established, notifications sent meanwhile were lost, so a
   * caller catches up there. Resolves to a function that stops listening.
   */
  listen(channel: string, onNotify: (payload: string) => void, onListening: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** A transaction handle that can also run a multi-statement script (migrations need it). */
export interface ScriptQueryable extends Queryable {
  exec(script: string): Promise<void>;
}

/** What each back end implements: a Db whose transactions can run scripts. Internal to storage. */
export interface Backend extends Db {
  transaction<R>(fn: (tx: ScriptQueryable) => Promise<R>): Promise<R>;
}
