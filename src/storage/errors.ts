// Storage errors: everything the storage layer throws about the database is a StorageError with a
// stable `code`, so callers (the health route, the HTTP error handler, the CLI) can branch on the
// code and never on a driver's message or class. Messages are for operators: they say what failed
// and never carry the connection string or the password (see `redactor`), so they are safe to log
// and to return to a client.

export type StorageErrorCode =
  /** The database cannot be reached, refused the login, was shut down, or this handle is closed. */
  | 'database_unavailable'
  /** A migration file failed; nothing of that file was applied. */
  | 'migration_failed'
  /** The database rejected a statement (syntax, constraint, type, aborted transaction, ...). */
  | 'query_failed'
  /** A statement ran (or waited for a lock) past the statement time limit and was cancelled. */
  | 'query_timeout';

export class StorageError extends Error {
  override readonly name = 'StorageError';
  readonly code: StorageErrorCode;
  /** PostgreSQL's SQLSTATE (e.g. `23505` unique violation) when the server gave one. */
  readonly sqlState: string | undefined;

  constructor(code: StorageErrorCode, message: string, sqlState?: string) {
    super(message);
    this.code = code;
    this.sqlState = sqlState;
  }
}

/**
 * Returns a function that blanks out every given secret (the password, raw and URL-encoded, and the
 * whole connection string) from a message. Driver messages do not normally quote them, but a
 * message that reaches a log is checked rather than trusted.
 */
export function redactor(secrets: Array<string | undefined>): (message: string) => string {
  const needles = [...new Set(secrets.filter((s): s is string => typeof s === 'string' && s.length > 0))]
    // Longest first, so the connection string goes before the password inside it.
    .sort((a, b) => b.length - a.length);
  return (message) => {
    let out = message;
    for (const needle of needles) out = out.split(needle).join('***');
    return out;
  };
}

/** SQLSTATEs that mean the database is there but cannot serve us now, whatever the statement (not
 *  a problem with the statement): answered as `database_unavailable`, which clients retry. */
export function unavailableSqlState(state: string): boolean {
  return (
    state.startsWith('08') || // connection exception
    state.startsWith('28') || // invalid authorisation (bad password, no such role)
    state === '3D000' || // database does not exist
    state === '53100' || // disk full: writes fail until space is freed, then work again
    state === '53300' || // too many connections
    state.startsWith('57P') // admin shutdown, crash shutdown, cannot connect now
  );
}

/** Whether a failure is the database being out of reach (refused, closed, shutting down, not
 *  answering in time): not the work's fault, and it may succeed once the database is back. */
export function databaseUnavailable(err: unknown): boolean {
  return err instanceof StorageError && err.code === 'database_unavailable';
}

/** The message of anything thrown, as a string. */
export function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/** Whether the database refused a row for a value a unique index already holds (SQLSTATE 23505). */
export function isUniqueViolation(err: unknown): boolean {
  return err instanceof StorageError && err.sqlState === '23505';
}

/** Runs a database transaction again when PostgreSQL chose it as a deadlock's or a serialization
 *  conflict's victim (it rolled back whole), up to three times in all. */
export async function retryConflicts<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (e) {
      const state = e instanceof StorageError ? e.sqlState : undefined;
      if (attempt >= 3 || (state !== '40P01' && state !== '40001')) throw e;
    }
  }
}
