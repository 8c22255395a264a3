// One full, compacting garbage collection of the calling thread's heap, on demand. Apart from
// memory.ts because it needs nothing native: the embedded database's thread runs one once PGlite
// is open (opening leaves initdb's or the copy's garbage) without loading the addon.

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** V8's own `gc()`, made reachable without starting Node with --expose-gc (Node's documented
 *  pattern: the flag applies to contexts created after it is set). */
function collector(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** A full compacting collection of the calling thread's heap. */
export function collectGarbage(): void {
  setFlagsFromString('--compact-on-every-full-gc');
  try {
    collector()();
  } finally {
    setFlagsFromString('--no-compact-on-every-full-gc');
  }
}
