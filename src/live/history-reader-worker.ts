// The thread that reads a large history's rows (PostgreSQL) for the thread that builds it
// (history-thread-worker.ts), started by history-thread.ts for one load: on a connection of its own
// in the load's shared database snapshot, it takes the binary COPYs' rows into pages of columns
// (storage/history-load.ts `readRows`) and hands them over as they fill, so that decoding the
// rows and building the history run side by side, each on a thread of its own, at the lowest
// CPU priority (low-priority-worker.ts starts it): requests come first.

import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { readRows } from '../storage/history-load.ts';
import { PagesAhead } from './history-pages.ts';
import type { FromReader, ReaderStart } from './history-thread.ts';

// Started before the load's snapshot is shared; sent it once it is (ReaderStart).
const { port } = workerData as { port: MessagePort };
const post = (m: FromReader, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);
const pages = new PagesAhead((m, transfer) => post(m as FromReader, transfer));
port.on('message', () => pages.took());

function read({ snapshot, organizationId, floor }: ReaderStart): void {
  readRows(snapshot, organizationId, floor, {
    uses: (page) => pages.page('uses', page),
    transactions: (page) => pages.page('transactions', page),
    labels: (rows) => post({ kind: 'labels', rows }),
    totals: (totals) => post({ kind: 'totals', totals }),
  }).then(
    () => post({ kind: 'end' }),
    (e: unknown) => post({ kind: 'failed', message: e instanceof Error ? e.message : String(e) }),
  );
}

parentPort!.once('message', read);
