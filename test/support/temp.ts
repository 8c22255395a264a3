// Temporary directories for tests (and the benchmarks' servers), removed when the process exits. A
// server test's data directory holds a whole embedded database and its uploads and results, so
// directories left behind would fill the system's temporary folder run after run.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

process.on('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A new empty directory under the system's temporary folder, gone when this process exits. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
