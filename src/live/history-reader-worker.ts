// The thread that reads a large history's rows (PostgreSQL) for the thread that builds it
// (history-thread-worker.ts), started by history-thread.ts for one load: on a connection of its own
// in the load's shared database snapshot, it takes the binary COPYs' rows into pages of columns
// (storage/history-load.ts `readRows`) and hands them over as they fill, so that decoding the
// rows and building the history run side by side, each on a thread of its own, at the lowest
// CPU priority (low-priority-worker.ts starts it): requests come first. The database's side of
// the COPY runs at the database's priority, not this thread's: so before each piece it reads, this
// thread also waits (a bounded time) while the process is answering a request
// (requests-at-work.ts), and the COPY waits with it.

import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { readRows } from '../storage/history-load.ts';
import { PagesAhead } from './history-pages.ts';
import { holdWhileAtWork } from './requests-at-work.ts';
import type { FromReader, ReaderStart } from './history-thread.ts';

// Started before the load's snapshot is shared; sent it once it is (ReaderStart).
const { port, atWork } = workerData as { port: MessagePort; atWork: SharedArrayBuffer };
const post = (m: FromReader, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);
const pages = new PagesAhead((m, transfer) => post(m as FromReader, transfer));
port.on('message', () => pages.took());

/** The longest the read waits, between two of its pieces, for the process's requests to be answered:
 *  a process never idle still loads. */
const HOLD_MS = 20;

/** How long the read was held back for requests, in all (ms). */
let heldMs = 0;

function read({ snapshot, organizationId, floor }: ReaderStart): void {
  readRows(snapshot, organizationId, floor, {
    uses: (page) => pages.page('uses', page),
    transactions: (page) => pages.page('transactions', page),
    labels: (rows) => post({ kind: 'labels', rows }),
    totals: (totals) => post({ kind: 'totals', totals }),
    hold: () => void (heldMs += holdWhileAtWork(atWork, HOLD_MS)),
  }).then(
    () => post({ kind: 'end', heldMs: Math.round(heldMs) }),
    (e: unknown) => post({ kind: 'failed', message: e instanceof Error ? e.message : String(e) }),
  );
}

parentPort!.once('message', read);
