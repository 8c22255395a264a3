// The thread sandbox.ts starts to build the public sandbox (sandbox-build.ts): it builds or reads
// the kept build, and hands the history back as its parts, its arrays' buffers transferred (no
// copy), with the rings and the figures the rows gave.

import { constants, setPriority } from 'node:os';
import { isMarkedAsUntransferable, parentPort, workerData } from 'node:worker_threads';
import { historyParts } from '../domain/history/snapshot.ts';
import { buildSandbox, type BuildRequest } from './sandbox-build.ts';

// This thread only: the requests being answered meanwhile come first.
setPriority(constants.priority.PRIORITY_LOW);

try {
  const { history, rings, facts } = buildSandbox(workerData as BuildRequest);
  const parts = historyParts(history);
  // Node's pooled small Buffers cannot be transferred: those few are copied.
  const transfer = parts.buffers.filter((b): b is ArrayBuffer => b instanceof ArrayBuffer && !isMarkedAsUntransferable(b));
  parentPort!.postMessage({ ok: true, parts, rings, facts }, transfer);
} catch (e) {
  parentPort!.postMessage({ ok: false, message: e instanceof Error ? e.message : String(e) });
}
