// The thread history-thread.ts starts for one load: it builds the history from the pages it is sent,
// with the calls a load on the main thread makes (tenant.ts's loader), and hands the finished
// history back as its parts, its arrays' buffers transferred (no copy).

import { constants, setPriority } from 'node:os';
import { isMarkedAsUntransferable, parentPort } from 'node:worker_threads';
import type { History } from '../domain/history/history.ts';
import { keptHistory } from './kept-history.ts';
import { historyParts } from '../domain/history/snapshot.ts';
import type { FromThread, ToThread } from './history-thread.ts';

// This thread only (on Linux a thread has a priority of its own): requests before the build.
setPriority(constants.priority.PRIORITY_LOW);

const port = parentPort!;
let history: History | undefined;

function reply(m: FromThread, transfer: ArrayBuffer[] = []): void {
  port.postMessage(m, transfer);
}

port.on('message', (m: ToThread) => {
  try {
    if (m.kind === 'start') {
      history = keptHistory(m.labelDelay);
      history.reserve(m.expected);
      history.loadFrom(m.floor);
      return;
    }
    const h = history!;
    switch (m.kind) {
      case 'uses':
        h.loadUseColumns(m.page);
        break;
      case 'transactions':
        h.addColumns(m.page);
        break;
      case 'labels':
        for (const r of m.rows) h.loadLabel(r, r.label, r.known);
        break;
      case 'finish': {
        h.finishLoad(m.totals);
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
    reply({ kind: 'failed', message: e instanceof Error ? e.message : String(e) });
  }
});
