// The thread history-thread.ts starts for one load: it builds the history from the pages its
// reading thread sends (PostgreSQL: `rows`, history-reader-worker.ts, which this thread starts, so
// that the reader starts at this thread's lowest CPU priority) or it is sent, with the calls a load
// on the main thread makes (tenant.ts's loader), and hands the finished history back as its parts,
// its arrays' buffers transferred (no copy). It runs at the lowest CPU priority
// (low-priority-worker.ts starts it).

import { isMarkedAsUntransferable, MessageChannel, type MessagePort, parentPort, Worker, workerData } from 'node:worker_threads';
import type { History } from '../domain/history/history.ts';
import type { EntityTotals } from '../domain/history/horizon.ts';
import type { TransactionColumns, UseColumns } from '../domain/history/records.ts';
import type { LoadedLabel } from '../storage/history-load.ts';
import { buffersOf } from './history-pages.ts';
import type { BuilderData, FromReader, FromThread, ToThread } from './history-thread.ts';

const port = parentPort!;
let history: History | undefined;

function reply(m: FromThread, transfer: ArrayBuffer[] = []): void {
  port.postMessage(m, transfer);
}

/** The totals the reading thread sent (PostgreSQL), for `finish`. */
let totalsRead: EntityTotals[] | undefined;

const failed = (e: unknown) => reply({ kind: 'failed', message: e instanceof Error ? e.message : String(e) });

/** Takes a page into the history; returns its buffers, to be sent back whole. */
function take(h: History, m: { kind: 'uses'; page: UseColumns } | { kind: 'transactions'; page: TransactionColumns }): ArrayBuffer[] {
  if (m.kind === 'uses') h.loadUseColumns(m.page);
  else h.addColumns(m.page);
  return buffersOf(m.page);
}

function loadLabels(h: History, rows: LoadedLabel[]): void {
  for (const r of rows) h.loadLabel(r, r.label, r.known);
}

/** Takes the reading thread's pages as they come, each answered with its buffers. Attached once
 *  the history is started (a port keeps what arrives until it is listened to). */
function listen(reader: MessagePort, h: History): void {
  reader.on('message', (r: FromReader) => {
    try {
      if (r.kind === 'uses' || r.kind === 'transactions') {
        const buffers = take(h, r);
        reader.postMessage({ kind: 'took', buffers }, buffers);
      } else if (r.kind === 'labels') loadLabels(h, r.rows);
      else if (r.kind === 'totals') totalsRead = r.totals;
      else if (r.kind === 'end') {
        reader.close();
        stopReader();
        reply({ kind: 'read', heldMs: r.heldMs });
      } else failed(new Error(r.message));
    } catch (e) {
      failed(e);
    }
  });
}

/** The reading thread's port, until the history is started. */
let readerPort: MessagePort | undefined;

/** The reading thread, while it reads; whether one was started. */
let readerThread: Worker | undefined;
let readerStarted = false;

/** Starts the reading thread, its pages sent to a port of this thread (`listen`). */
function startReader(): void {
  const { reader: how } = workerData as BuilderData;
  readerStarted = true;
  const { port1, port2 } = new MessageChannel();
  const thread = (readerThread = new Worker(new URL(how.lowPriority), {
    workerData: { entry: how.entry, port: port1, atWork: how.atWork },
    transferList: [port1],
    resourceLimits: how.resourceLimits,
  }));
  thread.on('error', (e) => failed(new Error(`reading the history's rows on their thread failed: ${e.message}`)));
  thread.on('exit', (code) => {
    if (readerThread === thread) failed(new Error(`the thread reading the history's rows ended (exit code ${code}) before they were read`));
  });
  if (history) listen(port2, history);
  else readerPort = port2;
}

function stopReader(): void {
  const thread = readerThread;
  readerThread = undefined;
  void thread?.terminate();
}

// The reading thread started first, so that its start and this thread's reading of the history's
// modules (tens of milliseconds each) overlap.
if ((workerData as BuilderData).reading) startReader();
const { historyParts } = await import('../domain/history/snapshot.ts');
const { keptHistory } = await import('./kept-history.ts');

port.on('message', (m: ToThread) => {
  try {
    if (m.kind === 'start') {
      history = keptHistory(m.labelDelay);
      history.reserve(m.expected);
      history.loadFrom(m.floor);
      if (readerPort) listen(readerPort, history);
      readerPort = undefined;
      return;
    }
    if (m.kind === 'read') {
      if (!readerStarted) startReader();
      // Gone already: its failure was sent.
      readerThread?.postMessage(m.start);
      return;
    }
    const h = history!;
    switch (m.kind) {
      case 'uses':
      case 'transactions': {
        const buffers = take(h, m);
        reply({ kind: 'took', buffers }, buffers);
        return;
      }
      case 'labels':
        loadLabels(h, m.rows);
        break;
      case 'finish': {
        const totals = m.totals ?? totalsRead;
        if (!totals) throw new Error('finish without totals, none having been read');
        totalsRead = undefined;
        h.finishLoad(totals);
        const parts = historyParts(h);
        // Node's pooled small Buffers cannot be transferred: those few are copied.
        const transfer = parts.buffers.filter((b): b is ArrayBuffer => b instanceof ArrayBuffer && !isMarkedAsUntransferable(b));
        history = undefined;
        reply({ kind: 'built', parts }, transfer);
        return;
      }
    }
    reply({ kind: 'took' });
  } catch (e) {
    failed(e);
  }
});
