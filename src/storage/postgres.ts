// The server back end: PostgreSQL through postgres.js, for deployments where several service
// processes share one database. Queries go through `sql.unsafe(text, params)`, which sends the `$n`
// parameters separately from the text (never interpolated), so the same SQL strings work here and on
// PGlite. The pool is small (five connections): the service's queries are short and PGlite's single
// connection is the baseline it is designed for. Results are normalised as db.ts promises (int8 as
// a number, a string json parameter taken as JSON text). A failure to connect or log in is
// `database_unavailable`, a statement the server rejects `query_failed`; messages name the host,
// port and database but never the URL or the password.

import postgres from 'postgres';
import type { Backend, ScriptQueryable } from './db.ts';
import { StorageError, messageOf, redactor } from './errors.ts';
import { probe } from './probe.ts';
import { assertOutsideTransaction, insideTransaction } from './transaction-scope.ts';

const POOL_SIZE = 5;
const CONNECT_TIMEOUT_S = 10;
/**
 * How long a connection waits before it tries to connect again after a failed attempt, in seconds,
 * by attempts so far. A query that needs a connection waits for that attempt, and postgres.js's
 * default grows the wait to 20 s (3^n / 100), so during a database restart requests would hang for
 * up to 20 s, and the first ones after it would wait as long. Capped at half a second, a request
 * during an outage fails within about that (503 `database_unavailable`), and the pool is back
 * within it once the server is.
 */
const reconnectDelay = (attempts: number): number => Math.min(0.05 * 2 ** attempts, 0.5);
/**
 * postgres.js sends a query without parameters by the simple protocol, which accepts several
 * statements; PGlite's `query` (like every query with parameters) takes exactly one. `query` always
 * uses the extended protocol so that both back ends accept the same text; scripts go through `exec`.
 * Each text is prepared once per connection and run by name afterwards: without that, postgres.js
 * sends a query with parameters in two round trips (describe, then execute) and the server parses
 * and plans it every time, a large part of a small group commit's cost. Every text here is a
 * constant or one of a few filter combinations, with values only in parameters, so the connections'
 * statement caches stay small.
 */
// (`simple` is a real option of `unsafe`, missing from postgres.js's type declarations.)
const ONE_STATEMENT = { simple: false, prepare: true } as unknown as postgres.UnsafeQueryOptions;

/** OIDs of the types whose parsing or serialising is changed here. */
const INT8 = 20;
const JSON_OID = 114;
const JSONB = 3802;

/** Error codes of postgres.js and of Node's sockets that mean the server cannot be reached. */
const UNREACHABLE = new Set([
  'CONNECT_TIMEOUT', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED',
  'SASL_SIGNATURE_MISMATCH', 'AUTH_TYPE_NOT_IMPLEMENTED', 'MESSAGE_NOT_SUPPORTED',
  'ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH',
  'EPIPE', 'ENOENT', 'EACCES',
]);

/** SQLSTATEs that mean the server is there but will not serve us (not a problem with a statement). */
function unavailableSqlState(state: string): boolean {
  return (
    state.startsWith('08') || // connection exception
    state.startsWith('28') || // invalid authorisation (bad password, no such role)
    state === '3D000' || // database does not exist
    state === '53300' || // too many connections
    state.startsWith('57P') // admin shutdown, crash shutdown, cannot connect now
  );
}

/** The statement time limit when the caller names none. */
export const DEFAULT_STATEMENT_TIMEOUT_S = 60;

export async function openPostgres(url: string, statementTimeoutSeconds = DEFAULT_STATEMENT_TIMEOUT_S): Promise<Backend> {
  let target = 'PostgreSQL';
  let password: string | undefined;
  try {
    const parsed = new URL(url);
    password = parsed.password;
    target = `PostgreSQL at ${parsed.hostname || 'localhost'}:${parsed.port || '5432'}/${decodeURIComponent(parsed.pathname.slice(1))}`;
  } catch {
    throw new StorageError('database_unavailable', 'DATABASE_URL is not a valid PostgreSQL URL (postgres://user:password@host:port/database)');
  }
  const redact = redactor([url, password, password && decodeURIComponent(password), password && encodeURIComponent(password)]);

  let sql: postgres.Sql;
  try {
    sql = postgres(url, {
      max: POOL_SIZE,
      connect_timeout: CONNECT_TIMEOUT_S,
      backoff: reconnectDelay,
      onnotice: () => {},
      // Every session of the pool: a statement running (or waiting for a lock) longer than this is
      // cancelled by the server (SQLSTATE 57014), so a stuck query fails instead of holding its
      // request and its connection for ever.
      connection: { statement_timeout: Math.round(statementTimeoutSeconds * 1000) },
      transform: { undefined: null },
      types: {
        int8: { to: INT8, from: [INT8], serialize: (x: unknown) => String(x), parse: (x: string) => Number(x) },
        json: {
          to: JSON_OID,
          from: [JSON_OID, JSONB],
          serialize: (x: unknown) => (typeof x === 'string' ? x : JSON.stringify(x)),
          parse: (x: string) => JSON.parse(x),
        },
      },
    });
  } catch (err) {
    throw new StorageError('database_unavailable', `cannot use ${target}: ${redact(messageOf(err))}`);
  }

  const db = new PostgresDb(sql, target, redact);
  try {
    await sql.unsafe('select 1');
  } catch (err) {
    await sql.end({ timeout: 0 }).catch(() => {});
    const e = db.toStorageError(err);
    throw e.code === 'database_unavailable' ? e : new StorageError('database_unavailable', e.message, e.sqlState);
  }
  return db;
}

class PostgresDb implements Backend {
  readonly kind = 'postgres' as const;
  readonly #sql: postgres.Sql;
  readonly #target: string;
  readonly #redact: (message: string) => string;
  #closed = false;

  constructor(sql: postgres.Sql, target: string, redact: (message: string) => string) {
    this.#sql = sql;
    this.#target = target;
    this.#redact = redact;
  }

  /** Turns whatever postgres.js threw into a StorageError with a redacted message. */
  toStorageError(err: unknown): StorageError {
    if (err instanceof StorageError) return err;
    if (this.#closed) return new StorageError('database_unavailable', `the connection to ${this.#target} is closed`);
    const code = (err as { code?: unknown })?.code;
    const message = this.#redact(messageOf(err));
    if (err instanceof postgres.PostgresError) {
      const state = String(err.code);
      if (state === '57014') return new StorageError('query_timeout', `${this.#target} cancelled a statement that ran past the statement time limit: ${message}`, state);
      if (unavailableSqlState(state)) return new StorageError('database_unavailable', `${this.#target} is unavailable: ${message}`, state);
      return new StorageError('query_failed', message, state);
    }
    if (typeof code === 'string' && UNREACHABLE.has(code)) {
      return new StorageError('database_unavailable', `cannot reach ${this.#target}: ${message}`);
    }
    return new StorageError('query_failed', message);
  }

  #checkOpen(what: string): void {
    if (this.#closed) throw new StorageError('database_unavailable', `the connection to ${this.#target} is closed`);
    assertOutsideTransaction(this, what);
  }

  async query<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
    this.#checkOpen('query');
    try {
      return [...(await this.#sql.unsafe(text, params as postgres.ParameterOrJSON<never>[], ONE_STATEMENT))] as T[];
    } catch (err) {
      throw this.toStorageError(err);
    }
  }

  async transaction<R>(fn: (tx: ScriptQueryable) => Promise<R>): Promise<R> {
    this.#checkOpen('transaction');
    let fnFailure: { error: unknown } | undefined;
    try {
      const result = await this.#sql.begin((tx) =>
        insideTransaction(this, async () => {
          // PostgreSQL answers COMMIT of a transaction in which a statement failed with a silent
          // ROLLBACK; PGlite throws. Failing here too makes both back ends agree.
          let statementFailed = false;
          const handle: ScriptQueryable = {
            query: async <T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> => {
              try {
                return [...(await tx.unsafe(text, params as postgres.ParameterOrJSON<never>[], ONE_STATEMENT))] as T[];
              } catch (err) {
                statementFailed = true;
                throw this.toStorageError(err);
              }
            },
            exec: async (script: string): Promise<void> => {
              try {
                await tx.unsafe(script);
              } catch (err) {
                statementFailed = true;
                throw this.toStorageError(err);
              }
            },
          };
          let value: R;
          try {
            value = await fn(handle);
          } catch (error) {
            fnFailure = { error };
            throw error;
          }
          if (statementFailed) {
            throw new StorageError('query_failed', 'the transaction was rolled back because a statement in it failed');
          }
          return value;
        }),
      );
      return result as R;
    } catch (err) {
      if (fnFailure && err === fnFailure.error) throw err;
      throw this.toStorageError(err);
    }
  }

  async listen(channel: string, onNotify: (payload: string) => void, onListening: () => void): Promise<() => Promise<void>> {
    this.#checkOpen('listen');
    try {
      // postgres.js listens on a connection of its own, outside the pool, and listens again after
      // reconnecting (calling onListening each time).
      const { unlisten } = await this.#sql.listen(channel, (payload) => onNotify(payload), () => onListening());
      return async () => {
        if (!this.#closed) await unlisten().catch(() => {});
      };
    } catch (err) {
      throw this.toStorageError(err);
    }
  }

  async ping(): Promise<boolean> {
    if (this.#closed) return false;
    return probe(() => this.#sql.unsafe('select 1'));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#sql.end({ timeout: 5 }).catch(() => {});
  }
}
