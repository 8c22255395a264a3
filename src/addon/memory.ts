// Keeping the server's resident memory close to what it holds live. Loading the history builds and
// drops millions of short-lived objects; V8 keeps the pages they occupied (partly empty, not
// compacted) and glibc keeps freed native memory in its arenas, so a freshly started server would
// sit well above what it holds live. `settleMemory` runs one full, compacting garbage collection
// and then trims the C allocator, once when start-up is done and once after the public sandbox is
// built on first use (src/app/sandbox.ts); never while organizations are being answered. After a
// history's load (`settleAfterLoad`) and when a worker thread exits (`trimSoon`) only the allocator
// is trimmed, a few times over the following minute: a forced full collection stops the thread for
// tens of milliseconds (more with a larger heap), while what a load drops is small buffers that the
// young generation's collections free anyway, and V8's own collections take care of the rest.
// `holdAllocatorThresholds`, called first thing, stops glibc from raising its trim threshold after
// each large free, which would otherwise keep freed memory resident (docs/operating.md, memory).
// The rest of the tuning is in Node's options, in package.json's `start` script (docs in README):
// a 4 MB young-generation semi-space, the old generation allowed to double between full
// collections, and one V8 helper thread (each helper keeps its own malloc arena).

import { fixAllocatorThresholds, releaseFreeMemory } from './addon.ts';
import { collectGarbage } from './collect.ts';

/** Fixed allocator thresholds for the life of the process (see above). */
export function holdAllocatorThresholds(): void {
  fixAllocatorThresholds();
}

/** A full compacting collection, then the allocator's free pages back to the system. */
export function settleMemory(): void {
  collectGarbage();
  releaseFreeMemory();
}

/** The allocator trimmed now and 1, 10 and 60 s later (after a history's load): what the load drops
 *  is freed as V8 collects it, not all at once. A trim with little to give back costs well under a
 *  millisecond. */
export function settleAfterLoad(): void {
  releaseFreeMemory();
  for (const ms of [1_000, 10_000, 60_000]) setTimeout(releaseFreeMemory, ms).unref();
}

/** The allocator trimmed a second from now (a worker thread has exited: its arenas hold what it
 *  freed, hundreds of megabytes after a ring analysis, until a trim). */
export function trimSoon(): void {
  setTimeout(releaseFreeMemory, 1_000).unref();
}
