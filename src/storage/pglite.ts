// The embedded back end: PGlite (PostgreSQL in WASM) keeping its files in one directory, for a
// single process that needs no database server. PGlite runs on a worker thread of its own
// (pglite-thread.ts), so its statements use the second core instead of the thread that answers
// requests; this file is the main thread's side, speaking that thread's messages. PGlite has one
// connection and runs one statement at a time; a transaction holds that connection from BEGIN to
// COMMIT, and every query outside waits for it, so concurrent callers can never interleave inside
// a transaction.
//
// Results are normalised as db.ts promises: PGlite already returns float8 as number, timestamptz as
// Date and jsonb parsed; int8 is parsed to a number by the thread (PGlite's own parser returns a
// BigInt past 2^53, which postgres.js cannot match).

import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { type Backend, BACKGROUND_WAIT_MS, type Db, type ScriptQueryable } from './db.ts';
import { StorageError, messageOf, unavailableSqlState } from './errors.ts';
import type { PgliteArtifacts, Reply, Request, ThreadData } from './pglite-thread.ts';
import { probe } from './probe.ts';
import { assertOutsideTransaction, insideTransaction } from './transaction-scope.ts';

/** The template a new data directory starts as a copy of: a migrated data directory, closed,
 *  written by `npm ci` beside the compiled server (scripts/db-template.mjs, pglite-template.ts).
 *  initdb in WebAssembly and the migrations are slow; the copy is plain file writes. Without a
 *  template (a checkout not installed yet) a new directory is made by initdb; migrations newer than
 *  the template are applied on opening. */
export const TEMPLATE_DIR = fileURLToPath(new URL('../../dist/pglite-template', import.meta.url));

/**
 * PostgreSQL's memory inside the WASM heap, which never shrinks and counts in the server's resident
 * memory. PGlite keeps PostgreSQL's defaults (a 128 MB buffer pool, shared memory sized for 100
 * connections). The service reads the history once at start and keeps it in its own memory,
 * and writes small appends, so a 4 MB pool holds the hot index pages (the operating system's page
 * cache still serves re-reads), and one embedded session needs a handful of connection slots, not
 * a hundred.
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
        throw new StorageError(
          'database_unavailable',
          `the embedded database in ${dir} is in use by process ${owner}; stop that process first, or share one database through DATABASE_URL`,
        );
      }
      unlinkSync(file);
    }
  }
}

/** Node's options without module loaders (`--import`, `--require`, `--loader`, either form). The
 *  thread's module needs none: it is JavaScript in the build, and TypeScript whose types Node strips
 *  itself from the sources; a loader a developer runs the service under (tsx, say), inherited by
 *  the thread, would add half a second to each thread's start. */
export function withoutLoaders(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const flag = /^--(import|require|loader|experimental-loader)(=|$)/.exec(arg);
    if (!flag) out.push(arg);
    else if (flag[2] === '') i++;
  }
  return out;
}

/** The database's thread: started without the main thread's module loaders when it has any and
 *  its other options suit a thread (Node refuses V8's and the process's own options there, such as
 *  `npm start`'s heap settings), else with the options Node gives a thread by default. */
function startThread(file: URL, data: ThreadData): Worker {
  const execArgv = withoutLoaders(process.execArgv);
  if (execArgv.length !== process.execArgv.length) {
    try {
      return new Worker(file, { workerData: data, execArgv });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ERR_WORKER_INVALID_EXEC_ARGV') throw err;
    }
  }
  return new Worker(file, { workerData: data });
}

/** PGlite's WebAssembly modules and file bundle, read and compiled once per process (≈ 70 ms,
 *  synchronously, so that a database's thread still starts before its opener's next synchronous
 *  work) and handed to each database's thread: a module is shared between threads, not compiled
 *  again, where each thread would otherwise read and compile them as it opens. */
let artifacts: PgliteArtifacts | undefined;
function pgliteArtifacts(): PgliteArtifacts {
  if (!artifacts) {
    const dist = new URL('./', import.meta.resolve('@electric-sql/pglite'));
    artifacts = {
      pgliteWasmModule: new WebAssembly.Module(readFileSync(new URL('pglite.wasm', dist))),
      initdbWasmModule: new WebAssembly.Module(readFileSync(new URL('initdb.wasm', dist))),
      fsBundle: new Uint8Array(readFileSync(new URL('pglite.data', dist))),
    };
  }
  return artifacts;
}

/** Opens (or makes) the embedded database in `dir`; a new one starts as a copy of `template`
 *  (null: made by initdb). When a new one cannot start from the template (there is none, or it
 *  cannot be opened), it is made by initdb and `log` is given a warning line with the reason. */
export async function openPglite(dir: string, template: string | null = TEMPLATE_DIR, o: { log?: (line: string) => void } = {}): Promise<Backend> {
  const key = resolve(dir);
  if (openDirs.has(key)) {
    throw new StorageError('database_unavailable', `the embedded database in ${dir} is already open in this process`);
  }
  let unlock: () => void;
  try {
    // Synchronous up to the thread's start, so that the thread starts opening PGlite before the
    // caller's next synchronous work (the service builds its sandbox meanwhile).
    mkdirSync(dir, { recursive: true });
    unlock = lockDir(key);
  } catch (err) {
    throw err instanceof StorageError ? err : new StorageError('database_unavailable', `cannot open the embedded database in ${dir}: ${messageOf(err)}`);
  }
  openDirs.add(key);
  const release = () => {
    openDirs.delete(key);
    unlock();
  };
  try {
    const { thread, templateNotUsed } = await PgliteThread.start({
      ...pgliteArtifacts(),
      dir,
      startParams: [...PGlite.defaultStartParams, ...MEMORY_SETTINGS.flatMap((setting) => ['-c', setting])],
      template,
    });
    if (templateNotUsed !== undefined) {
      o.log?.(
        `warning: the new embedded database in ${dir} was made by initdb, not copied from the template: ${templateNotUsed}; it opens more slowly so, and runs every migration itself (npm ci writes the template)`,
      );
    }
    return new PgliteDb(thread, release);
  } catch (err) {
    release();
    throw new StorageError('database_unavailable', `cannot open the embedded database in ${dir}: ${messageOf(err)}`);
  }
}

/** A request before the thread's end numbers it: each kind of request without its `id`. */
type WithoutId<R> = R extends unknown ? Omit<R, 'id'> : never;
type Call = WithoutId<Request>;

/** The main thread's end of the database's thread: numbered requests, each settled by its reply. */
class PgliteThread {
  readonly #worker: Worker;
  #nextId = 1;
  readonly #waiting = new Map<number, { resolve: (value: unknown) => void; reject: (err: StorageError) => void }>();
  /** Per channel: its listeners, and the thread's LISTEN they all wait for. */
  readonly #listeners = new Map<string, { listeners: Set<(payload: string) => void>; listening: Promise<unknown> }>();
  /** Why the thread is gone, once it is: every request after that fails with it. */
  #gone: string | undefined;

  private constructor(worker: Worker) {
    this.#worker = worker;
  }

  /** Starts the thread and waits for PGlite to open in it (with why the template was not used,
   *  when a new directory could not start from it). */
  static start(data: ThreadData): Promise<{ thread: PgliteThread; templateNotUsed?: string }> {
    // The thread's module beside this one: pglite-thread.ts run from the sources, pglite-thread.js in the build.
    const file = new URL(`./pglite-thread${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);
    const worker = startThread(file, data);
    const thread = new PgliteThread(worker);
    return new Promise((resolveStart, rejectStart) => {
      let opened = false;
      worker.on('message', (m: Reply) => {
        if ('opened' in m) {
          opened = m.opened;
          if (m.opened) {
            worker.unref();
            resolveStart({ thread, ...(m.templateNotUsed === undefined ? {} : { templateNotUsed: m.templateNotUsed }) });
          } else {
            rejectStart(new Error(m.message));
          }
        } else if ('channel' in m) {
          for (const listener of thread.#listeners.get(m.channel)?.listeners ?? []) listener(m.payload);
        } else {
          thread.#settle(m);
        }
      });
      const stop = (why: string) => {
        if (!opened) rejectStart(new Error(why));
        thread.#stopped(why);
      };
      worker.on('error', (err) => stop(`the embedded database's thread failed: ${messageOf(err)}`));
      worker.on('exit', () => stop('the embedded database is closed'));
    });
  }

  get gone(): boolean {
    return this.#gone !== undefined;
  }

  call(request: Call): Promise<unknown> {
    if (this.#gone) return Promise.reject(new StorageError('database_unavailable', this.#gone));
    const id = this.#nextId++;
    // While a reply is awaited the thread keeps the process alive; an idle database does not.
    if (this.#waiting.size === 0) this.#worker.ref();
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      this.#worker.postMessage({ ...request, id });
    });
  }

  #settle(m: Extract<Reply, { id: number }>): void {
    const waiting = this.#waiting.get(m.id);
    if (!waiting) return;
    this.#waiting.delete(m.id);
    if (this.#waiting.size === 0) this.#worker.unref();
    if (m.ok) waiting.resolve(m.value);
    else waiting.reject(new StorageError(m.sqlState && unavailableSqlState(m.sqlState) ? 'database_unavailable' : 'query_failed', m.message, m.sqlState));
  }

  #stopped(why: string): void {
    this.#gone ??= why;
    for (const waiting of this.#waiting.values()) waiting.reject(new StorageError('database_unavailable', this.#gone));
    this.#waiting.clear();
  }

  /** Adds a listener of `channel` once the thread listens on it (it listens once per channel).
   *  Resolves to the listener's removal. */
  async listen(channel: string, listener: (payload: string) => void): Promise<() => Promise<void>> {
    let entry = this.#listeners.get(channel);
    if (!entry) {
      const created = { listeners: new Set<(payload: string) => void>(), listening: this.call({ op: 'listen', channel }) };
      this.#listeners.set(channel, created);
      created.listening.catch(() => {
        if (this.#listeners.get(channel) === created) this.#listeners.delete(channel);
      });
      entry = created;
    }
    await entry.listening;
    const { listeners } = entry;
    listeners.add(listener);
    return async () => {
      if (!listeners.delete(listener) || listeners.size > 0 || this.#listeners.get(channel) !== entry) return;
      this.#listeners.delete(channel);
      if (!this.#gone) await this.call({ op: 'unlisten', channel }).catch(() => {});
    };
  }

  /** Closes PGlite (its files complete on disk) and waits for the thread to end. */
  async close(): Promise<void> {
    if (this.#gone) return;
    const exited = new Promise<void>((resolveExit) => this.#worker.once('exit', () => resolveExit()));
    try {
      await this.call({ op: 'close' });
    } finally {
      // A thread that could not close cleanly is stopped: the process must not hang on it.
      const timer = setTimeout(() => void this.#worker.terminate(), 5000);
      await exited;
      clearTimeout(timer);
    }
  }
}

/** Turns whatever a call threw into a StorageError. */
function toStorageError(err: unknown, closed: boolean): StorageError {
  if (closed) return new StorageError('database_unavailable', 'the embedded database is closed');
  if (err instanceof StorageError) return err;
  return new StorageError('query_failed', messageOf(err));
}

class PgliteDb implements Backend {
  readonly kind = 'pglite' as const;
  readonly #thread: PgliteThread;
  #closed = false;
  /** Transactions begun and not yet ended: ping answers true without queueing behind them. */
  #activeTransactions = 0;
  /** Requests' statements sent and not answered, and their transactions open: background work
   *  waits while there are any (`background`). */
  #foreground = 0;
  /** Background work waiting for the requests' statements to pause. */
  readonly #idle = new Set<() => void>();
  /** The background statement or transaction last queued: the next starts after it. */
  #backgroundTail: Promise<unknown> = Promise.resolve();
  #backgroundView: Db | undefined;

  readonly #release: () => void;

  constructor(thread: PgliteThread, release: () => void) {
    this.#thread = thread;
    this.#release = release;
  }

  #checkOpen(what: string): void {
    if (this.#closed) throw new StorageError('database_unavailable', 'the embedded database is closed');
    assertOutsideTransaction(this, what);
  }

  /** A request to the thread; a failure after close() reads as the database being closed. */
  async #call(request: Call): Promise<unknown> {
    try {
      return await this.#thread.call(request);
    } catch (err) {
      throw toStorageError(err, this.#closed);
    }
  }

  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]> {
    return this.#asForeground(() => this.#query<T>(text, params));
  }

  transaction<R>(fn: (tx: ScriptQueryable) => Promise<R>): Promise<R> {
    return this.#asForeground(() => this.#transaction(fn));
  }

  background(): Db {
    this.#backgroundView ??= {
      kind: this.kind,
      query: (text, params) => this.#asBackground(() => this.#query(text, params)),
      transaction: (fn) => this.#asBackground(() => this.#transaction(fn)),
      ping: () => this.ping(),
      listen: (channel, onNotify, onListening) => this.listen(channel, onNotify, onListening),
      background: () => this.background(),
      close: () => this.close(),
    };
    return this.#backgroundView;
  }

  async #asForeground<R>(work: () => Promise<R>): Promise<R> {
    this.#foreground++;
    try {
      return await work();
    } finally {
      if (--this.#foreground === 0) for (const wake of [...this.#idle]) wake();
    }
  }

  /** Runs `work` after the background work queued before it, once the requests' statements pause:
   *  their continuations (a request's next statement) get a turn of the event loop first. */
  #asBackground<R>(work: () => Promise<R>): Promise<R> {
    const run = this.#backgroundTail.then(async () => {
      await this.#requestsPaused();
      return work();
    });
    this.#backgroundTail = run.catch(() => {});
    return run;
  }

  async #requestsPaused(): Promise<void> {
    const started = Date.now();
    for (;;) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      const left = BACKGROUND_WAIT_MS - (Date.now() - started);
      if (this.#foreground === 0 || left <= 0) return;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.#idle.delete(done);
          resolve();
        };
        const timer = setTimeout(done, left);
        this.#idle.add(done);
      });
    }
  }

  async #query<T>(text: string, params?: unknown[]): Promise<T[]> {
    this.#checkOpen('query');
    return (await this.#call({ op: 'query', text, params })) as T[];
  }

  async #transaction<R>(fn: (tx: ScriptQueryable) => Promise<R>): Promise<R> {
    this.#checkOpen('transaction');
    this.#activeTransactions++;
    try {
      const tx = (await this.#call({ op: 'begin' })) as number;
      let result: R;
      try {
        result = await insideTransaction(this, () => fn(this.#handle(tx)));
      } catch (error) {
        // The caller's own error (or a StorageError from one of its queries) reaches it unchanged.
        await this.#call({ op: 'end', tx, commit: false }).catch(() => {});
        throw error;
      }
      await this.#call({ op: 'end', tx, commit: true });
      return result;
    } finally {
      this.#activeTransactions--;
    }
  }

  #handle(tx: number): ScriptQueryable {
    const call = (request: Call) => this.#call(request);
    const query = async <T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]> => (await call({ op: 'query', text, params, tx })) as T[];
    return {
      query,
      exec: async (script: string): Promise<void> => {
        await this.#call({ op: 'exec', script, tx });
      },
      // The database's own thread sends bytea parameters as bytes (pglite-thread.ts), and this
      // thread only posts them: an INSERT a row is what a bulk write costs here.
      copyIn: async (table, columns, rows) => {
        const text = `INSERT INTO ${table} (${columns.map((c) => c.name).join(', ')}) VALUES (${columns.map((c, i) => `$${i + 1}::${c.type}`).join(', ')})`;
        for await (const row of rows) await query(text, [...row]);
      },
      // PGlite's COPY writes to a device file: its rows come in one piece, once the COPY is over.
      copyOut: (select: string) => ({
        [Symbol.asyncIterator]: async function* (this: void) {
          yield (await call({ op: 'copyOut', select, tx })) as Uint8Array;
        },
      }),
    };
  }

  async listen(channel: string, onNotify: (payload: string) => void, onListening: () => void): Promise<() => Promise<void>> {
    this.#checkOpen('listen');
    let unlisten: () => Promise<void>;
    try {
      unlisten = await this.#thread.listen(channel, onNotify);
    } catch (err) {
      throw toStorageError(err, this.#closed);
    }
    onListening();
    return async () => {
      if (!this.#closed) await unlisten();
    };
  }

  async ping(): Promise<boolean> {
    if (this.#closed || this.#thread.gone) return false;
    // A long transaction (seeding the history) holds the only connection: the database is alive.
    if (this.#activeTransactions > 0) return true;
    return probe(() => this.#call({ op: 'query', text: 'select 1' }));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.#thread.close();
    } catch (err) {
      throw new StorageError('database_unavailable', `closing the embedded database failed: ${messageOf(err)}`);
    } finally {
      this.#release();
    }
  }
}
