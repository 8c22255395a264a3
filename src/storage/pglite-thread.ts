// The embedded database's own thread. PGlite runs PostgreSQL compiled to WebAssembly on the thread
// that calls it; on the thread that answers requests, every group commit of the decision log would
// stop every request for its duration. Here it runs beside it, on a worker thread the main thread
// talks to by messages (pglite.ts), so a 2-core server answers and stores at the same time.
// Statements are prepared once by their text and run by name afterwards (as postgres.js does):
// by name a statement is one call into the WebAssembly module with its plan kept, where PGlite's
// `query` parses, describes and plans it every time. The message protocol is this file's and
// pglite.ts's alone; a database transaction (`begin` … `end`) holds PGlite's only connection, and
// statements sent meanwhile outside it wait, as they would in one thread.

import { cpSync, existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, parse, protocol, types, type PGliteOptions, type Transaction } from '@electric-sql/pglite';
import { collectGarbage } from '../addon/collect.ts';
import { messageOf } from './errors.ts';

export type Request =
  | { id: number; op: 'query'; text: string; params?: unknown[]; tx?: number }
  | { id: number; op: 'exec'; script: string; tx: number }
  /** The rows of `select` in binary COPY format, in one piece (PGlite's COPY writes to a device
   *  file, not a stream): moved to the main thread, not copied. */
  | { id: number; op: 'copyOut'; select: string; tx: number }
  | { id: number; op: 'begin' }
  | { id: number; op: 'end'; tx: number; commit: boolean }
  | { id: number; op: 'listen'; channel: string }
  | { id: number; op: 'unlisten'; channel: string }
  | { id: number; op: 'close' };

export type Reply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; message: string; sqlState?: string }
  /** A NOTIFY on a listened channel. */
  | { channel: string; payload: string }
  /** Sent once, when PGlite is open or could not be opened; with why a new directory was made by
   *  initdb rather than copied from the template, when it was. */
  | { opened: true; templateNotUsed?: string }
  | { opened: false; message: string };

/** What PGlite loads from its package, prepared once by the main thread (pglite.ts). */
export interface PgliteArtifacts {
  pgliteWasmModule: WebAssembly.Module;
  initdbWasmModule: WebAssembly.Module;
  fsBundle: Uint8Array;
}

export interface ThreadData extends PgliteArtifacts {
  dir: string;
  startParams: string[];
  /** The directory a new data directory starts as a copy of (TEMPLATE_DIR, pglite.ts); none: initdb. */
  template: string | null;
}

/** Thrown inside PGlite's transaction callback to roll it back. */
const ROLLBACK = Symbol('rollback');

interface OpenTransaction {
  tx: Transaction;
  end(commit: boolean, replyId: number): void;
}

/** Statements kept prepared; past this many, the least recently run is closed. */
const MAX_PREPARED = 256;
/** PostgreSQL's refusal to run a kept statement whose result columns changed (DDL since). */
const RESULT_TYPE_CHANGED = 'cached plan must not change result type';

const { serialize } = protocol;
const BYTEA = types.BYTEA;

/** The statements prepared on PGlite's connection, by text. Every method runs while its caller
 *  holds PGlite's query lock (`runExclusive`), as PGlite's own `query` does. */
class Statements {
  readonly #pg: PGlite;
  /** In order of last use: the first is the next to close. */
  readonly #byText = new Map<string, { name: string; paramTypes: number[] }>();
  #next = 1;

  constructor(pg: PGlite) {
    this.#pg = pg;
  }

  async run(text: string, params: readonly unknown[] = []): Promise<unknown[]> {
    try {
      return await this.#run(text, params);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.includes(RESULT_TYPE_CHANGED)) throw err;
      await this.#close(text);
      return this.#run(text, params);
    }
  }

  async #run(text: string, params: readonly unknown[]): Promise<unknown[]> {
    const pg = this.#pg;
    const statement = await this.#prepared(text);
    const values = params.map((value, i) => {
      if (value === null || value === undefined) return null;
      const type = statement.paramTypes[i]!;
      // Bytes for a bytea parameter go as they are (binary format) rather than as hex text.
      if (type === BYTEA && value instanceof Uint8Array) return value;
      const serializer = pg.serializers[type];
      return serializer ? serializer(value) : String(value);
    });
    const { messages } = await pg.execProtocol(
      concat(serialize.bind({ statement: statement.name, values }), serialize.describe({ type: 'P' }), serialize.execute({}), serialize.sync()),
    );
    return parse.parseResults(messages, pg.parsers)[0]?.rows ?? [];
  }

  async #prepared(text: string): Promise<{ name: string; paramTypes: number[] }> {
    const kept = this.#byText.get(text);
    if (kept) {
      this.#byText.delete(text);
      this.#byText.set(text, kept);
      return kept;
    }
    const name = `s${this.#next++}`;
    const { messages } = await this.#pg.execProtocol(concat(serialize.parse({ name, text }), serialize.describe({ type: 'S', name }), serialize.sync()));
    const statement = { name, paramTypes: parse.parseDescribeStatementResults(messages) };
    this.#byText.set(text, statement);
    if (this.#byText.size > MAX_PREPARED) await this.#close(this.#byText.keys().next().value!);
    return statement;
  }

  async #close(text: string): Promise<void> {
    const statement = this.#byText.get(text);
    if (!statement) return;
    this.#byText.delete(text);
    await this.#pg.execProtocol(concat(serialize.close({ type: 'S', name: statement.name }), serialize.sync()));
  }
}

function concat(...parts: Uint8Array[]): Uint8Array {
  return Buffer.concat(parts);
}

async function main(): Promise<void> {
  const port = parentPort!;
  const { dir, startParams, template, pgliteWasmModule, initdbWasmModule, fsBundle } = workerData as ThreadData;
  let pg: PGlite;
  let templateNotUsed: string | undefined;
  try {
    ({ pg, templateNotUsed } = await open(dir, template, {
      // int8 as a number: both back ends return the same values (db.ts). bytea from its hex text
      // in one native call (PGlite's own parser reads it a character at a time: 18 MB/s).
      parsers: { [types.INT8]: (value: string) => Number(value), [types.BYTEA]: (value: string) => Buffer.from(value.slice(2), 'hex') },
      startParams,
      pgliteWasmModule,
      initdbWasmModule,
      fsBundle: new Blob([fsBundle as Uint8Array<ArrayBuffer>]),
    }));
  } catch (err) {
    port.postMessage({ opened: false, message: messageOf(err) } satisfies Reply);
    return;
  }
  // Opening leaves hundreds of MB of garbage (initdb's module on a new directory) that this
  // thread's heap would otherwise keep until some later collection.
  collectGarbage();
  const statements = new Statements(pg);
  const transactions = new Map<number, OpenTransaction>();
  const unlisteners = new Map<string, () => Promise<void>>();
  let nextTransaction = 1;

  const ok = (id: number, value: unknown) => port.postMessage({ id, ok: true, value } satisfies Reply);
  const fail = (id: number, err: unknown) => {
    const sqlState = typeof (err as { code?: unknown })?.code === 'string' ? (err as { code: string }).code : undefined;
    port.postMessage({ id, ok: false, message: messageOf(err), sqlState } satisfies Reply);
  };
  const run = (id: number, work: () => Promise<unknown>) => {
    work().then(
      (value) => ok(id, value),
      (err) => fail(id, err),
    );
  };
  const inTransaction = (n: number): Transaction => {
    const open = transactions.get(n);
    if (!open) throw new Error('the database transaction has already ended');
    return open.tx;
  };

  const begin = (id: number) => {
    const n = nextTransaction++;
    let endId: number | undefined;
    pg.transaction(
      (tx) =>
        new Promise<void>((resolve, reject) => {
          transactions.set(n, {
            tx,
            end(commit, replyId) {
              endId = replyId;
              transactions.delete(n);
              if (commit) resolve();
              else reject(ROLLBACK);
            },
          });
          ok(id, n);
        }),
    ).then(
      () => ok(endId!, null),
      (err) => {
        transactions.delete(n);
        if (endId === undefined) fail(id, err);
        else if (err === ROLLBACK) ok(endId, null);
        else fail(endId, err);
      },
    );
  };

  port.on('message', (m: Request) => {
    switch (m.op) {
      case 'query':
        if (m.tx === undefined) {
          // Outside a transaction: waits for any transaction to end, as PGlite's `query` does.
          return run(m.id, () => pg._runExclusiveTransaction(() => pg.runExclusive(() => statements.run(m.text, m.params))));
        }
        return run(m.id, async () => {
          inTransaction(m.tx!);
          return pg.runExclusive(() => statements.run(m.text, m.params));
        });
      case 'exec':
        return run(m.id, async () => {
          await inTransaction(m.tx).exec(m.script);
          return null;
        });
      case 'copyOut': {
        const copied = async () => (await inTransaction(m.tx).query(`COPY (${m.select}) TO '/dev/blob' WITH (FORMAT binary)`)).blob?.arrayBuffer();
        copied().then(
          (bytes = new ArrayBuffer(0)) => port.postMessage({ id: m.id, ok: true, value: new Uint8Array(bytes) } satisfies Reply, [bytes]),
          (err) => fail(m.id, err),
        );
        return;
      }
      case 'begin':
        return begin(m.id);
      case 'end': {
        const open = transactions.get(m.tx);
        if (open) open.end(m.commit, m.id);
        else fail(m.id, new Error('the database transaction has already ended'));
        return;
      }
      case 'listen':
        return run(m.id, async () => {
          if (!unlisteners.has(m.channel)) {
            unlisteners.set(m.channel, await pg.listen(m.channel, (payload) => port.postMessage({ channel: m.channel, payload } satisfies Reply)));
          }
          return null;
        });
      case 'unlisten':
        return run(m.id, async () => {
          const unlisten = unlisteners.get(m.channel);
          unlisteners.delete(m.channel);
          await unlisten?.();
          return null;
        });
      case 'close':
        // The reply goes first: nothing is sent once the port is closed, and the thread then ends.
        pg.close()
          .then(
            () => ok(m.id, null),
            (err) => fail(m.id, err),
          )
          .finally(() => port.close());
        return;
    }
  });
  port.postMessage({ opened: true, ...(templateNotUsed === undefined ? {} : { templateNotUsed }) } satisfies Reply);
}

/** Opens the data directory; a new one starts as a copy of the template when there is one
 *  (TEMPLATE_DIR, pglite.ts), and is made by initdb when there is none or the copy cannot be opened:
 *  then with the reason, which the main thread logs (an install without its template, or with a
 *  damaged one, makes every new directory slowly, and would otherwise do so silently). */
async function open(dir: string, template: string | null, options: PGliteOptions): Promise<{ pg: PGlite; templateNotUsed?: string }> {
  if (template === null || existsSync(join(dir, 'PG_VERSION'))) return { pg: await PGlite.create(dir, options) };
  if (!existsSync(join(template, 'PG_VERSION')))
    return { pg: await PGlite.create(dir, options), templateNotUsed: `there is no template in ${template} (npm ci writes it)` };
  let why: string;
  try {
    cpSync(template, dir, { recursive: true });
    return { pg: await PGlite.create(dir, options) };
  } catch (err) {
    why = `the template in ${template} cannot be opened (${messageOf(err)})`;
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
  }
  return { pg: await PGlite.create(dir, options), templateNotUsed: why };
}

void main();
