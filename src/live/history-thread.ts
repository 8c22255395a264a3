// A large history built from its rows on a thread of its own (history-thread-worker.ts), so that the
// event loop answering scores does not: on PostgreSQL the thread also reads the rows, on a
// connection of its own in the load's shared snapshot (`rows`); on the embedded database this
// thread reads the pages and hands them over. Building a million
// transactions' history takes seconds of CPU, which here run beside the requests instead of between
// them. The thread builds exactly what a load on this thread builds (the same History calls, in the
// same order) and hands the finished history back without a copy: its arrays' buffers are
// transferred and the object graph rebuilt around them (domain/history/snapshot.ts's parts).
// Pages wait in the thread's queue at most PAGES_AHEAD at a time, so a read faster than the build
// never holds the whole history's rows in memory. The thread runs at the lowest CPU priority: on a
// busy machine the requests (of every organization, and the database's own work) come first, and
// the build takes what they leave.

import { isMarkedAsUntransferable, Worker } from 'node:worker_threads';
import type { History } from '../domain/history/history.ts';
import type { EntityTotals } from '../domain/history/horizon.ts';
import type { TransactionColumns, UseColumns } from '../domain/history/records.ts';
import { historyFromParts, type HistoryParts } from '../domain/history/snapshot.ts';
import type { LoadedLabel } from '../storage/history-load.ts';
import type { SharedSnapshot } from '../storage/db.ts';

/** Pages handed over and not yet taken by the thread, at most. */
const PAGES_AHEAD = 4;

/** What the thread is sent, in order. */
export type ToThread =
  | { kind: 'start'; labelDelay: number; floor: number; expected: number }
  | { kind: 'rows'; snapshot: SharedSnapshot; organizationId: string; floor: number }
  | { kind: 'uses'; page: UseColumns }
  | { kind: 'transactions'; page: TransactionColumns }
  | { kind: 'labels'; rows: LoadedLabel[] }
  | { kind: 'finish'; totals: EntityTotals[] };

/** What it answers: a page taken, the history built, or why it could not be. */
export type FromThread =
  | { kind: 'took'; buffers?: ArrayBuffer[] }
  | { kind: 'read' }
  | { kind: 'built'; parts: HistoryParts }
  | { kind: 'failed'; message: string };

const WORKER = new URL(`./history-thread-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

/** A page as it can be transferred: an array that is its buffer's whole (as a read's pages' are)
 *  goes as it is, any other is copied into a buffer of its own (a transfer takes a buffer whole). */
function portable<T extends object>(page: T): { page: T; transfer: ArrayBuffer[] } {
  const transfer = new Set<ArrayBuffer>();
  const copy = (v: unknown): unknown => {
    if (ArrayBuffer.isView(v)) {
      const b = v.buffer;
      const whole = b instanceof ArrayBuffer && v.byteOffset === 0 && v.byteLength === b.byteLength && !transfer.has(b) && !isMarkedAsUntransferable(b);
      // A copy of the bytes (a Buffer's own slice() would share them); it arrives as the same kind of
      // array (a Buffer as a Uint8Array, which is all a history reads of one).
      let own = v;
      if (!whole) {
        const bytes = new Uint8Array(v.buffer, v.byteOffset, v.byteLength).slice().buffer;
        own = Buffer.isBuffer(v) ? Buffer.from(bytes) : new (v.constructor as Uint8ArrayConstructor)(bytes);
      }
      transfer.add(own.buffer as ArrayBuffer);
      return own;
    }
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, copy(x)]));
    return v;
  };
  return { page: copy(page) as T, transfer: [...transfer] };
}

export class HistoryThread {
  private readonly worker: Worker;
  private ahead = 0;
  /** Resolved when the thread takes a page (a sender waiting for room). */
  private room: (() => void) | undefined;
  private failure: Error | undefined;
  /** Resolved when the thread has read the rows itself (`rows`). */
  private read: (() => void) | undefined;
  private readonly built: Promise<History>;

  constructor(labelDelay: number, floor: number, expected: number) {
    this.worker = new Worker(WORKER);
    // A load that stops early (its read failed) never keeps the process alive.
    this.worker.unref();
    this.built = new Promise<History>((resolve, reject) => {
      const fail = (e: Error) => {
        this.failure = e;
        this.room?.();
        this.read?.();
        reject(e);
      };
      this.worker.on('message', (m: FromThread) => {
        if (m.kind === 'took') {
          this.ahead--;
          const wake = this.room;
          this.room = undefined;
          wake?.();
        } else if (m.kind === 'read') {
          const done = this.read;
          this.read = undefined;
          done?.();
        } else if (m.kind === 'built') {
          try {
            resolve(historyFromParts(m.parts));
          } catch (e) {
            fail(e as Error);
          }
        } else fail(new Error(`building the history on its thread failed: ${m.message}`));
      });
      this.worker.on('error', fail);
      this.worker.on('exit', (code) => fail(new Error(`the history's thread ended (exit code ${code}) before the history was built`)));
    });
    // Seen by `finish`; a load that fails before never leaves a rejection unhandled.
    this.built.catch(() => {});
    this.send({ kind: 'start', labelDelay, floor, expected });
  }

  private send(message: ToThread, transfer: ArrayBuffer[] = []): void {
    if (this.failure) throw this.failure;
    this.worker.postMessage(message, transfer);
  }

  /** Hands a page over; resolves once there is room for the next. */
  private async page(message: ToThread, transfer: ArrayBuffer[]): Promise<void> {
    this.send(message, transfer);
    this.ahead++;
    while (this.ahead >= PAGES_AHEAD && !this.failure) await new Promise<void>((r) => (this.room = r));
    if (this.failure) throw this.failure;
  }

  /** Has the thread read the first uses and transactions itself, on a connection of its own in the
   *  load's shared database snapshot (storage/history-load.ts `readRows`): this thread then only
   *  waits. */
  async rows(snapshot: SharedSnapshot, organizationId: string, floor: number): Promise<void> {
    const read = new Promise<void>((r) => (this.read = r));
    this.send({ kind: 'rows', snapshot, organizationId, floor });
    await read;
    if (this.failure) throw this.failure;
  }

  uses(page: UseColumns): Promise<void> {
    const p = portable(page);
    return this.page({ kind: 'uses', page: p.page }, p.transfer);
  }

  transactions(page: TransactionColumns): Promise<void> {
    const p = portable(page);
    return this.page({ kind: 'transactions', page: p.page }, p.transfer);
  }

  labels(rows: LoadedLabel[]): Promise<void> {
    return this.page({ kind: 'labels', rows }, []);
  }

  /** The history, once the thread has finished it; the thread then ends. */
  async finish(totals: EntityTotals[]): Promise<History> {
    this.send({ kind: 'finish', totals });
    try {
      return await this.built;
    } finally {
      this.close();
    }
  }

  /** Ends the thread (a load that stopped early). */
  close(): void {
    void this.worker.terminate();
  }
}
