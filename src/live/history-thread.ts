// A large history built from its rows on a thread of its own (history-thread-worker.ts), so that the
// event loop answering scores does not: on PostgreSQL a second thread (history-reader-worker.ts)
// reads the rows, on a connection of its own in the load's shared snapshot (`rows`), and hands
// their pages straight to the building thread, so that decoding and building overlap; on the
// embedded database this thread reads the pages and hands them over. Building a million
// transactions' history takes seconds of CPU, which here run beside the requests instead of between
// them. The thread builds exactly what a load on this thread builds (the same History calls, in the
// same order) and hands the finished history back without a copy: its arrays' buffers are
// transferred and the object graph rebuilt around them (domain/history/snapshot.ts's parts).
// Pages travel as history-pages.ts says (transferred, a few ahead at most). Both threads run at
// the lowest CPU priority: on a busy machine the requests (of every organization, and the
// database's own work) come first, and the load takes what they leave. The building thread starts
// the reading one: on Linux a thread starts at its starter's priority, so the reading thread's own
// start (tens of milliseconds of CPU before its first line can lower it) already runs at the lowest.

import { Worker } from 'node:worker_threads';
import type { History } from '../domain/history/history.ts';
import type { EntityTotals } from '../domain/history/horizon.ts';
import type { TransactionColumns, UseColumns } from '../domain/history/records.ts';
import { historyFromParts, type HistoryParts } from '../domain/history/snapshot.ts';
import type { LoadedLabel } from '../storage/history-load.ts';
import type { SharedSnapshot } from '../storage/db.ts';
import { PagesAhead } from './history-pages.ts';
import { requestsAtWork } from './requests-at-work.ts';

/** What the building thread is sent, in order. */
export type ToThread =
  | { kind: 'start'; labelDelay: number; floor: number; expected: number }
  /** What its reading thread (history-reader-worker.ts, started now if it was not at the start) is
   *  to read, once the load's snapshot is shared. */
  | { kind: 'read'; start: ReaderStart }
  | { kind: 'uses'; page: UseColumns }
  | { kind: 'transactions'; page: TransactionColumns }
  | { kind: 'labels'; rows: LoadedLabel[] }
  | { kind: 'finish'; totals?: EntityTotals[] };

/** What it answers: a page taken, the reader's rows all taken, the history built, or why it could not be. */
export type FromThread =
  | { kind: 'took'; buffers?: ArrayBuffer[] }
  /** `heldMs`: how long its reading thread held back for requests. */
  | { kind: 'read'; heldMs: number }
  | { kind: 'built'; parts: HistoryParts }
  | { kind: 'failed'; message: string };

/** What the reading thread is sent (by the building one), once the load's snapshot is shared. */
export interface ReaderStart {
  snapshot: SharedSnapshot;
  organizationId: string;
  floor: number;
}

/** What the reading thread sends the building one, in order (it is answered `took` per page). */
export type FromReader =
  | { kind: 'uses'; page: UseColumns }
  | { kind: 'transactions'; page: TransactionColumns }
  | { kind: 'labels'; rows: LoadedLabel[] }
  | { kind: 'totals'; totals: EntityTotals[] }
  | { kind: 'end'; heldMs: number }
  | { kind: 'failed'; message: string };

/** Both threads make their short-lived objects (pages, messages, the driver's buffers) in a young
 *  generation kept small: left to V8's default it grows to tens of megabytes a thread, which a
 *  load's peak of resident memory carried for nothing (their collections are as fast either way). */
const SMALL_YOUNG = { maxYoungGenerationSizeMb: 4 };

const workerFile = (name: string) => new URL(`./${name}${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);
const LOW_PRIORITY = workerFile('low-priority-worker');
const WORKER = workerFile('history-thread-worker').href;
const READER = workerFile('history-reader-worker').href;

/** What the building thread is started with: how to start its reading thread. */
export interface BuilderData {
  entry: string;
  /** Start the reading thread at once (otherwise when sent `read`). */
  reading: boolean;
  reader: { lowPriority: string; entry: string; resourceLimits: typeof SMALL_YOUNG; atWork: SharedArrayBuffer };
}

export class HistoryThread {
  private readonly worker: Worker;
  private readonly pages: PagesAhead;
  private failure: Error | undefined;
  /** Resolved when the building thread has taken all its reading thread read (`rows`). */
  private read: (() => void) | undefined;
  private readonly built: Promise<History>;
  /** Ends the load with `e` (either thread failed). */
  private fail: (e: Error) => void = () => {};

  private readonly labelDelay: number;
  /** How long the reading thread held its reads back while the process's requests were answered
   *  (live/requests-at-work.ts), once `rows` has resolved. */
  heldMs = 0;

  /** Starts the building thread, and with `reading` (PostgreSQL: `rows` will follow) its reading
   *  thread too: a thread takes a tenth of a second to start, which a load spends counting its rows
   *  meanwhile (`start`). */
  constructor(labelDelay: number, reading = false) {
    this.labelDelay = labelDelay;
    const workerData: BuilderData = {
      entry: WORKER,
      reading,
      reader: { lowPriority: LOW_PRIORITY.href, entry: READER, resourceLimits: SMALL_YOUNG, atWork: requestsAtWork.buffer },
    };
    this.worker = new Worker(LOW_PRIORITY, { workerData, resourceLimits: SMALL_YOUNG });
    // A load that stops early (its read failed) never keeps the process alive.
    this.worker.unref();
    this.pages = new PagesAhead((m, transfer) => this.send(m as ToThread, transfer));
    this.built = new Promise<History>((resolve, reject) => {
      const fail = (this.fail = (e: Error) => {
        this.failure ??= e;
        this.pages.stop(e);
        this.read?.();
        reject(e);
      });
      this.worker.on('message', (m: FromThread) => {
        if (m.kind === 'took') this.pages.took();
        else if (m.kind === 'read') {
          this.heldMs = m.heldMs;
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
  }

  /** The history to build: from `floor`, `expected` transactions. */
  start(floor: number, expected: number): void {
    this.send({ kind: 'start', labelDelay: this.labelDelay, floor, expected });
  }

  private send(message: ToThread, transfer: ArrayBuffer[] = []): void {
    if (this.failure) throw this.failure;
    this.worker.postMessage(message, transfer);
  }

  /** Has a reading thread read everything a load reads (the first uses, the transactions, the
   *  labels and the totals) on a connection of its own in the load's shared database snapshot
   *  (storage/history-load.ts `readRows`) and hand it to the building thread: this thread only
   *  waits, then calls `finish` without totals. */
  async rows(snapshot: SharedSnapshot, organizationId: string, floor: number): Promise<void> {
    const read = new Promise<void>((r) => (this.read = r));
    if (this.failure) throw this.failure;
    this.send({ kind: 'read', start: { snapshot, organizationId, floor } });
    await read;
    if (this.failure) throw this.failure;
  }

  uses(page: UseColumns): Promise<void> {
    return this.pages.page('uses', page);
  }

  transactions(page: TransactionColumns): Promise<void> {
    return this.pages.page('transactions', page);
  }

  labels(rows: LoadedLabel[]): Promise<void> {
    return this.pages.send({ kind: 'labels', rows }, []);
  }

  /** The history, once the thread has finished it (with the totals its reader read, when none are
   *  given); the thread then ends. */
  async finish(totals?: EntityTotals[]): Promise<History> {
    this.send({ kind: 'finish', totals });
    try {
      return await this.built;
    } finally {
      this.close();
    }
  }

  /** Ends the threads (a load that stopped early): the reading thread ends with the building one. */
  close(): void {
    void this.worker.terminate();
  }
}
