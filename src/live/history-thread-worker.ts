// The thread history-thread.ts starts for one load: it builds the history from the pages it reads
// itself (PostgreSQL: `rows`) or is sent, with the calls a load on the main thread makes
// (tenant.ts's loader), and hands the finished history back as its parts, its arrays' buffers
// transferred (no copy).

import { constants, setPriority } from 'node:os';
import { isMarkedAsUntransferable, parentPort } from 'node:worker_threads';
import type { History } from '../domain/history/history.ts';
import { keptHistory } from './kept-history.ts';
import { historyParts } from '../domain/history/snapshot.ts';
import type { FromThread, ToThread } from './history-thread.ts';
import { readRows } from '../storage/history-load.ts';

// This thread only (on Linux a thread has a priority of its own): requests before the build.
setPriority(constants.priority.PRIORITY_LOW);

const port = parentPort!;
let history: History | undefined;

function reply(m: FromThread, transfer: ArrayBuffer[] = []): void {
  port.postMessage(m, transfer);
}

/** A page's buffers, once the history has copied what it keeps of them. */
function buffersOf(page: object): ArrayBuffer[] {
  const found = new Set<ArrayBuffer>();
  const walk = (v: unknown): void => {
    if (ArrayBuffer.isView(v)) {
      if (v.buffer instanceof ArrayBuffer && !isMarkedAsUntransferable(v.buffer)) found.add(v.buffer);
    } else if (v !== null && typeof v === 'object' && !Array.isArray(v)) for (const x of Object.values(v)) walk(x);
  };
  walk(page);
  return [...found];
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
      case 'rows':
        // Read here page by page, each page's columns taken by the history as they come.
        readRows(m.snapshot, m.organizationId, m.floor, { uses: (page) => h.loadUseColumns(page), transactions: (page) => h.addColumns(page) }).then(
          () => reply({ kind: 'read' }),
          (e: unknown) => reply({ kind: 'failed', message: e instanceof Error ? e.message : String(e) }),
        );
        return;
      case 'uses':
      case 'transactions': {
        if (m.kind === 'uses') h.loadUseColumns(m.page);
        else h.addColumns(m.page);
        // The page's buffers go back whole: this thread allocates too little for its collector to
        // run often, so buffers left here would pile up (external memory) until it did.
        const buffers = buffersOf(m.page);
        reply({ kind: 'took', buffers }, buffers);
        return;
      }
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
