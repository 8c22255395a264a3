// The server back end: PostgreSQL through postgres.js, for deployments where several service
// processes share one database. Queries go through `sql.unsafe(text, params)`, which sends the `$n`
// parameters separately from the text (never interpolated), so the same SQL strings work here and on
// PGlite. The pool is small (five connections): the service's queries are short and PGlite's single
// connection is the baseline it is designed for. Results are normalised as db.ts promises (int8 as
// a number, a string json parameter taken as JSON text). A failure to connect or log in is
// `database_unavailable`, a statement the server rejects `query_failed`; messages name the host,
// port and database but never the URL or the password.
// Faults: every statement waits at most until its request's deadline (deadline.ts) and is then
// cancelled; a server that stops answering without closing its connections (a partition, a failover)
// is found when a cancelled statement does not settle and a new connection cannot reach it either,
// and the pool is replaced. docs/operating.md, "When the database fails", says what clients see.

import postgres from 'postgres';
import type { Backend, DatabaseAddress, Db, ScriptQueryable } from './db.ts';
import { StorageError, messageOf, redactor, unavailableSqlState } from './errors.ts';
import { deadlinePassed, remainingMs, unbounded } from './deadline.ts';
import { probe } from './probe.ts';
import { copyChunks, copyStatement, readCopy, writeCopy } from './copy-binary.ts';
import { assertOutsideTransaction, insideTransaction } from './transaction-scope.ts';

const POOL_SIZE = 5;
const CONNECT_TIMEOUT_S = 5;
/** TCP keepalive from this idle time on (seconds): a connection whose peer vanished is found and
 *  closed, and the pool opens another. */
const KEEP_ALIVE_S = 10;
/** How long a statement that missed its deadline may take to settle once cancelled before its
 *  connections are suspected, and how long the check of a new connection then waits. */
const CANCEL_GRACE_MS = 1000;
const PROBE_S = 2;
/** Added to the statement timeout for work outside a request: the server cancels a slow
 *  statement first; this catches one whose server stopped answering. */
const BACKGROUND_GRACE_S = 5;
/** Between attempts to listen on a replaced pool. */
const RELISTEN_MS = 500;
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
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'SASL_SIGNATURE_MISMATCH',
  'AUTH_TYPE_NOT_IMPLEMENTED',
  'MESSAGE_NOT_SUPPORTED',
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ENOENT',
  'EACCES',
]);

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

  const options: postgres.Options<Record<string, postgres.PostgresType>> = {
    max: POOL_SIZE,
    connect_timeout: CONNECT_TIMEOUT_S,
    backoff: reconnectDelay,
    keep_alive: KEEP_ALIVE_S,
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
  };
  let first: postgres.Sql;
  try {
    first = postgres(url, options);
  } catch (err) {
    throw new StorageError('database_unavailable', `cannot use ${target}: ${redact(messageOf(err))}`);
  }

  const db = new PostgresDb(first, () => postgres(url, options), {
    url,
    statementTimeoutMs: Math.round(statementTimeoutSeconds * 1000),
    target,
    redact,
    backgroundSeconds: statementTimeoutSeconds + BACKGROUND_GRACE_S,
    reachable: () => reachable(url),
  });
  try {
    await db.query('select 1');
  } catch (err) {
    const e = db.toStorageError(err);
    await db.close();
    throw e.code === 'database_unavailable' ? e : new StorageError('database_unavailable', e.message, e.sqlState);
  }
  return db;
}

/** Whether a new connection to the server logs in and answers `select 1` within PROBE_S. */
async function reachable(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, connect_timeout: PROBE_S, fetch_types: false, onnotice: () => {} });
  try {
    return await probe(() => sql.unsafe('select 1'), PROBE_S * 1000);
  } finally {
    void sql.end({ timeout: 0 }).catch(() => {});
  }
}

interface PoolSettings {
  /** For another thread's connections (`address`; never in a message). */
  url: string;
  statementTimeoutMs: number;
  /** Names the server in messages (host, port and database; never the URL). */
  target: string;
  redact: (message: string) => string;
  /** The longest a statement sent outside any request's deadline may take (jobs, the live feed). */
  backgroundSeconds: number;
  /** Whether a new connection reaches the server now (the check before a pool is replaced). */
  reachable: () => Promise<boolean>;
}

interface Listener {
  channel: string;
  onNotify: (payload: string) => void;
  onListening: () => void;
  unlisten?: () => Promise<void>;
  stopped: boolean;
}

/** A statement as postgres.js keeps it once sent: the backend it went to and its text (internal,
 *  untyped). */
type Sent = postgres.PendingQuery<postgres.Row[]> & { state?: { pid?: number | null }; string?: string };

class PostgresDb implements Backend {
  readonly kind = 'postgres' as const;
  #sql: postgres.Sql;
  readonly #newPool: () => postgres.Sql;
  readonly #settings: PoolSettings;
  readonly #listeners = new Set<Listener>();
  #closed = false;
  #checking = false;

  constructor(sql: postgres.Sql, newPool: () => postgres.Sql, settings: PoolSettings) {
    this.#sql = sql;
    this.#newPool = newPool;
    this.#settings = settings;
  }

  background(): Db {
    return this;
  }

  address(): DatabaseAddress {
    return { url: this.#settings.url, statementTimeoutMs: this.#settings.statementTimeoutMs };
  }

  /** Turns whatever postgres.js threw into a StorageError with a redacted message. */
  toStorageError(err: unknown): StorageError {
    if (err instanceof StorageError) return err;
    const { target, redact } = this.#settings;
    if (this.#closed) return new StorageError('database_unavailable', `the connection to ${target} is closed`);
    const code = (err as { code?: unknown })?.code;
    const message = redact(messageOf(err));
    if (err instanceof postgres.PostgresError) {
      const state = String(err.code);
      if (state === '57014')
        return new StorageError('query_timeout', `${target} cancelled a statement that ran past the statement time limit: ${message}`, state);
      if (unavailableSqlState(state)) return new StorageError('database_unavailable', `${target} is unavailable: ${message}`, state);
      return new StorageError('query_failed', message, state);
    }
    if (typeof code === 'string' && UNREACHABLE.has(code)) {
      return new StorageError('database_unavailable', `cannot reach ${target}: ${message}`);
    }
    return new StorageError('query_failed', message);
  }

  #checkOpen(what: string): void {
    if (this.#closed) throw new StorageError('database_unavailable', `the connection to ${this.#settings.target} is closed`);
    assertOutsideTransaction(this, what);
  }

  /**
   * Waits for database work until the request's deadline (deadline.ts), or the background limit
   * outside a request. Past it the caller gets `database_unavailable` at once and `missed` is told
   * (to cancel what it can); work that then does not settle within CANCEL_GRACE_MS means the server
   * stopped answering on these connections (`#stalled`). Outside a request, `start` may call
   * `working(true)` to stop the clock while its own statements, each bounded, run, and
   * `working(false)` to start a full limit again (a transaction: getting a connection, BEGIN and
   * COMMIT are bounded, a load of millions of rows between them is not); a request's deadline is
   * never stopped.
   */
  async #bounded<T>(start: (working: (yes: boolean) => void) => PromiseLike<T>, missed: () => void): Promise<T> {
    const request = remainingMs();
    const left = request ?? this.#settings.backgroundSeconds * 1000;
    if (left <= 0) throw deadlinePassed(this.#settings.target);
    let timer: NodeJS.Timeout | undefined;
    let reject: (e: unknown) => void = () => {};
    const passed = new Promise<never>((_, r) => {
      reject = r;
    });
    let work: Promise<T> | undefined;
    const arm = (ms: number) => {
      timer = setTimeout(() => {
        missed();
        if (work) this.#watch(work);
        reject(deadlinePassed(this.#settings.target));
      }, ms);
    };
    arm(left);
    work = Promise.resolve(
      start((yes) => {
        if (request !== undefined) return;
        clearTimeout(timer);
        if (!yes) arm(this.#settings.backgroundSeconds * 1000);
      }),
    );
    try {
      return await Promise.race([work, passed]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A statement, bounded; past its deadline it is cancelled. */
  async #statement<T>(send: () => Sent): Promise<T> {
    let sent: Sent | undefined;
    try {
      return await this.#bounded(
        () => (sent = send()) as unknown as PromiseLike<T>,
        () => sent && this.#cancel(sent),
      );
    } catch (err) {
      throw this.toStorageError(err);
    }
  }

  /** A transaction's `copyOut`: `failed` is told when it fails (the transaction then rolls back). */
  async *#copyOut(tx: postgres.TransactionSql, select: string, failed: () => void): AsyncGenerator<Uint8Array> {
    try {
      yield* readCopy(await tx.unsafe(`COPY (${select}) TO STDOUT (FORMAT binary)`).readable());
    } catch (err) {
      failed();
      throw this.toStorageError(err);
    }
  }

  #cancel(sent: Sent): void {
    const pid = sent.state?.pid;
    if (!sent.state) {
      // Still waiting for a connection: postgres.js drops it from its queue, nothing is sent.
      sent.cancel();
    } else if (pid) {
      // On a connection: the server cancels it, asked through another connection (postgres.js's own
      // cancel rejects a promise nobody can catch when the server cannot be reached). Only while
      // that backend still runs this text: a cancel that arrives after it finished would otherwise
      // cancel the connection's next statement, another request's. Sent as it is, with no deadline
      // of its own: it settles when the server answers or the pool is replaced.
      this.#sql
        .unsafe("select pg_cancel_backend(pid) from pg_stat_activity where pid = $1 and state = 'active' and query <> '' and starts_with($2, query)", [
          pid,
          sent.string ?? '',
        ])
        .catch(() => {});
    }
  }

  /** Suspects the pool's connections if `work`, past its deadline, does not settle soon. */
  #watch(work: Promise<unknown>): void {
    let settled = false;
    const done = () => {
      settled = true;
    };
    work.then(done, done);
    setTimeout(() => {
      // The check and a new pool's listeners belong to no request.
      if (!settled) void unbounded(() => this.#stalled());
    }, CANCEL_GRACE_MS).unref();
  }

  /** A statement outlived its cancel: if no new connection reaches the server either, every
   *  connection of the pool is presumed dead (a partition, a failover, a server that stopped
   *  answering without closing them) and the pool is replaced; what ran on the old one fails. */
  async #stalled(): Promise<void> {
    if (this.#checking || this.#closed) return;
    this.#checking = true;
    try {
      if (await this.#settings.reachable()) return;
      if (this.#closed) return;
      const old = this.#sql;
      this.#sql = this.#newPool();
      void old.end({ timeout: 0 }).catch(() => {});
      for (const l of this.#listeners) void this.#listenOn(l);
    } finally {
      this.#checking = false;
    }
  }

  async query<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
    this.#checkOpen('query');
    return [...(await this.#statement<Iterable<T>>(() => this.#sql.unsafe(text, params as postgres.ParameterOrJSON<never>[], ONE_STATEMENT)))];
  }

  async transaction<R>(fn: (tx: ScriptQueryable) => Promise<R>): Promise<R> {
    this.#checkOpen('transaction');
    let fnFailure: { error: unknown } | undefined;
    // Waiting for a connection, BEGIN and COMMIT are bounded by the deadline too; a transaction
    // whose connection comes only after its deadline rolls back before it does anything.
    // Outside a request, only its start and end are (#bounded's `working`).
    let late = false;
    try {
      const result = await this.#bounded(
        (working) =>
          this.#sql.begin((tx) =>
            insideTransaction(this, async () => {
              if (late) throw deadlinePassed(this.#settings.target);
              working(true);
              // PostgreSQL answers COMMIT of a transaction in which a statement failed with a silent
              // ROLLBACK; PGlite throws. Failing here too makes both back ends agree.
              let statementFailed = false;
              const run = async <T>(send: () => Sent): Promise<T> => {
                try {
                  return await this.#statement<T>(send);
                } catch (err) {
                  statementFailed = true;
                  throw err;
                }
              };
              const handle: ScriptQueryable = {
                query: async <T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> => [
                  ...(await run<Iterable<T>>(() => tx.unsafe(text, params as postgres.ParameterOrJSON<never>[], ONE_STATEMENT))),
                ],
                exec: async (script: string): Promise<void> => {
                  await run(() => tx.unsafe(script));
                },
                copyIn: async (table, columns, rows, o) => {
                  try {
                    await writeCopy(await tx.unsafe(copyStatement(table, columns)).writable(), copyChunks(columns, rows), o?.bytesPerSecond);
                  } catch (err) {
                    statementFailed = true;
                    throw this.toStorageError(err);
                  }
                },
                copyOut: (select) => this.#copyOut(tx, select, () => (statementFailed = true)),
                shareSnapshot: async () => {
                  const [row] = await run<{ id: string }[]>(() => tx.unsafe('SELECT pg_export_snapshot() AS id'));
                  return { ...this.address(), id: row!.id };
                },
              };
              let value: R;
              try {
                value = await fn(handle);
              } catch (error) {
                fnFailure = { error };
                throw error;
              } finally {
                working(false);
              }
              if (statementFailed) {
                throw new StorageError('query_failed', 'the transaction was rolled back because a statement in it failed');
              }
              return value;
            }),
          ),
        () => (late = true),
      );
      return result as R;
    } catch (err) {
      if (fnFailure && err === fnFailure.error) throw err;
      throw this.toStorageError(err);
    }
  }

  /** Listens on the current pool; after a pool is replaced, on the new one (retried until it works). */
  async #listenOn(l: Listener): Promise<void> {
    for (let attempt = 0; !l.stopped && !this.#closed; attempt++) {
      const sql = this.#sql;
      try {
        // postgres.js listens on a connection of its own, outside the pool, and listens again after
        // reconnecting (calling onListening each time).
        const { unlisten } = await sql.listen(
          l.channel,
          (payload) => l.onNotify(payload),
          () => l.onListening(),
        );
        if (sql !== this.#sql || l.stopped) {
          await unlisten().catch(() => {});
          continue;
        }
        l.unlisten = unlisten;
        return;
      } catch (err) {
        if (attempt === 0 && l.unlisten === undefined) throw this.toStorageError(err);
        await new Promise((resolve) => setTimeout(resolve, RELISTEN_MS));
      }
    }
  }

  async listen(channel: string, onNotify: (payload: string) => void, onListening: () => void): Promise<() => Promise<void>> {
    this.#checkOpen('listen');
    const l: Listener = { channel, onNotify, onListening, stopped: false };
    await unbounded(() => this.#listenOn(l));
    this.#listeners.add(l);
    return async () => {
      l.stopped = true;
      this.#listeners.delete(l);
      if (!this.#closed) await l.unlisten?.().catch(() => {});
    };
  }

  async ping(): Promise<boolean> {
    if (this.#closed) return false;
    return probe(() => this.#statement(() => this.#sql.unsafe('select 1')));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#sql.end({ timeout: 5 }).catch(() => {});
  }
}
