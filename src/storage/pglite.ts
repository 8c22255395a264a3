// The embedded back end: PGlite (PostgreSQL in WASM) keeping its files in one directory, for a
// single process that needs no database server. PGlite has one connection and runs one statement
// at a time; its own `transaction` holds that connection from BEGIN to COMMIT, and every query
// outside waits for it, so concurrent callers can never interleave inside a transaction.
//
// Results are normalised as db.ts promises: PGlite already returns float8 as number, timestamptz as
// Date and jsonb parsed; int8 is parsed to a number here (PGlite's own parser returns a BigInt past
// 2^53, which postgres.js cannot match).

import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { PGlite, types, type Transaction } from '@electric-sql/pglite';
import type { Backend, ScriptQueryable } from './db.ts';
import { StorageError, messageOf } from './errors.ts';
import { probe } from './probe.ts';
import { assertOutsideTransaction, insideTransaction } from './transaction-scope.ts';

/**
 * PostgreSQL's memory inside the WASM heap, which never shrinks and counts in the server's resident
 * memory. PGlite keeps PostgreSQL's defaults (a 128 MB buffer pool, shared memory sized for 100
 * connections). The service reads the history once at start and keeps it in its own memory,
 * and writes small appends, so a 4 MB pool holds the hot index pages (the operating system's page
 * cache still serves re-reads), and one embedded session needs a handful of connection slots, not
 * a hundred. Measured on the example history: 29 MB of the WASM heap touched with a 16 MB pool,
 * 13 MB with these.
 */
const MEMORY_SETTINGS = ['shared_buffers=4MB', 'max_connections=3', 'wal_buffers=64kB'];

/**
 * Data directories open in this process. Two PGlite instances on one directory would each believe
 * they own it and corrupt it, so a second open fails instead. Across processes, a lock file beside
 * the directory (`<dir>.lock`, holding the owner's pid) does the same: a second process (another
 * server, `npm run model:create`) is refused while the owner lives; a lock left by a process that
 * died (a crash, SIGKILL) is taken over.
 */
const openDirs = new Set<string>();

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the directory's lock for this process; returns its release. */
function lockDir(dir: string): () => void {
  const file = `${dir}.lock`;
  const mine = String(process.pid);
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(file, mine, { flag: 'wx' });
      return () => {
        try {
          if (readFileSync(file, 'utf8') === mine) unlinkSync(file);
        } catch {
          // Already gone: nothing to release.
        }
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw e;
      const owner = Number(readFileSync(file, 'utf8'));
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) {
        throw new StorageError('database_unavailable', `the embedded database in ${dir} is in use by process ${owner}; stop that process first, or share one database through DATABASE_URL`);
      }
      unlinkSync(file);
    }
  }
}

export async function openPglite(dir: string): Promise<Backend> {
  const key = resolve(dir);
  if (openDirs.has(key)) {
    throw new StorageError('database_unavailable', `the embedded database in ${dir} is already open in this process`);
  }
  let unlock: () => void;
  try {
    await mkdir(dir, { recursive: true });
    unlock = lockDir(key);
  } catch (err) {
    throw err instanceof StorageError ? err : new StorageError('database_unavailable', `cannot open the embedded database in ${dir}: ${messageOf(err)}`);
  }
  openDirs.add(key);
  let pg: PGlite;
  try {
    pg = await PGlite.create(dir, {
      parsers: { [types.INT8]: (value: string) => Number(value) },
      startParams: [...PGlite.defaultStartParams, ...MEMORY_SETTINGS.flatMap((setting) => ['-c', setting])],
    });
  } catch (err) {
    openDirs.delete(key);
    unlock();
    throw new StorageError('database_unavailable', `cannot open the embedded database in ${dir}: ${messageOf(err)}`);
  }
  return new PgliteDb(pg, () => {
    openDirs.delete(key);
    unlock();
  });
}

/** Turns whatever PGlite threw into a StorageError. */
function toStorageError(err: unknown, closed: boolean): StorageError {
  if (err instanceof StorageError) return err;
  if (closed) return new StorageError('database_unavailable', 'the embedded database is closed');
  const sqlState = typeof (err as { code?: unknown })?.code === 'string' ? (err as { code: string }).code : undefined;
  return new StorageError('query_failed', messageOf(err), sqlState);
}

class PgliteDb implements Backend {
  readonly kind = 'pglite' as const;
  readonly #pg: PGlite;
  #closed = false;
  /** Transactions begun and not yet ended: ping answers true without queueing behind them. */
  #activeTransactions = 0;

  readonly #release: () => void;

  constructor(pg: PGlite, release: () => void) {
    this.#pg = pg;
    this.#release = release;
  }

  #checkOpen(what: string): void {
    if (this.#closed) throw new StorageError('database_unavailable', 'the embedded database is closed');
    assertOutsideTransaction(this, what);
  }

  async query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]> {
    this.#checkOpen('query');
    try {
      return (await this.#pg.query<T>(text, params)).rows;
    } catch (err) {
      throw toStorageError(err, this.#closed);
    }
  }

  async transaction<R>(fn: (tx: ScriptQueryable) => Promise<R>): Promise<R> {
    this.#checkOpen('transaction');
    this.#activeTransactions++;
    // An error thrown by fn (the caller's own, or a StorageError from one of its queries) reaches
    // the caller unchanged; anything else came from BEGIN, COMMIT or ROLLBACK.
    let fnFailure: { error: unknown } | undefined;
    try {
      return await this.#pg.transaction((tx) =>
        insideTransaction(this, async () => {
          try {
            return await fn(this.#handle(tx));
          } catch (error) {
            fnFailure = { error };
            throw error;
          }
        }),
      );
    } catch (err) {
      if (fnFailure && err === fnFailure.error) throw err;
      throw toStorageError(err, this.#closed);
    } finally {
      this.#activeTransactions--;
    }
  }

  #handle(tx: Transaction): ScriptQueryable {
    const closed = () => this.#closed;
    const handle: ScriptQueryable = {
      async query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]> {
        try {
          return (await tx.query<T>(text, params)).rows;
        } catch (err) {
          throw toStorageError(err, closed());
        }
      },
      async exec(script: string): Promise<void> {
        try {
          await tx.exec(script);
        } catch (err) {
          throw toStorageError(err, closed());
        }
      },
    };
    return handle;
  }

  async listen(channel: string, onNotify: (payload: string) => void, onListening: () => void): Promise<() => Promise<void>> {
    this.#checkOpen('listen');
    try {
      const unlisten = await this.#pg.listen(channel, (payload) => onNotify(payload));
      onListening();
      return async () => {
        if (!this.#closed) await unlisten().catch(() => {});
      };
    } catch (err) {
      throw toStorageError(err, this.#closed);
    }
  }

  async ping(): Promise<boolean> {
    if (this.#closed || this.#pg.closed) return false;
    // A long transaction (seeding the history) holds the only connection: the database is alive.
    if (this.#activeTransactions > 0) return true;
    return probe(() => this.#pg.query('select 1'));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.#pg.close();
    } catch (err) {
      throw new StorageError('database_unavailable', `closing the embedded database failed: ${messageOf(err)}`);
    } finally {
      this.#release();
    }
  }
}
