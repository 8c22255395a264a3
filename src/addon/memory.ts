// Keeping the server's resident memory close to what it holds live. Loading the history builds and
// drops millions of short-lived objects; V8 keeps the pages they occupied (partly empty, not
// compacted) and glibc keeps freed native memory in its arenas, so a freshly started server would
// sit well above what it holds live. `settleMemory` runs one full, compacting garbage collection
// and then trims the C allocator, once when start-up is done, once after the public sandbox is built
// on first use (src/app/sandbox.ts), and once after each organization's history is loaded (its
// pages are garbage then; the history itself is typed arrays, so the collection is short); never on
// an ordinary request.
// `holdAllocatorThresholds`, called first thing, stops glibc from raising its trim threshold after
// each large free, which would otherwise keep freed memory resident (docs/operating.md, memory).
// The rest of the tuning is in Node's options, in package.json's `start` script (docs in README):
// a 4 MB young-generation semi-space, old-generation growth of 20 % between full collections, and
// one V8 helper thread (each helper keeps its own malloc arena).

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

/** `settleMemory` now and once more a second later (after a history's load): the memory behind the
 *  array buffers a load drops is freed by V8 after the collection, on a helper thread, so the first
 *  trim can come before it is (1 MB per 100,000 held stayed resident). */
export function settleAfterLoad(): void {
  settleMemory();
  setTimeout(settleMemory, 1_000).unref();
}
