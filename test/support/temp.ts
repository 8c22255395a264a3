// Temporary directories for tests (and the benchmarks' servers), removed when the process exits. A
// server test's data directory holds a whole embedded database and its uploads and results, so
// directories left behind would fill the system's temporary folder run after run.

import { copyFileSync, existsSync, linkSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The public sandbox as built once per test run (test/support/prepare-sandbox.ts, tap's `before`). */
export const PREPARED_SANDBOX = join(import.meta.dirname, '..', '..', '.tap', 'sandbox-data');

const made: string[] = [];

process.on('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A server's new data directory, holding the public sandbox's build as a restarted server would
 *  have kept it (when prepared for this run), so that a test server does not simulate and build
 *  it again: test/app/sandbox.test.ts tests the building and the keeping themselves. */
export function dataDir(prefix: string): string {
  const dir = tempDir(prefix);
  const prepared = join(PREPARED_SANDBOX, 'sandbox');
  if (existsSync(join(prepared, 'built.json'))) {
    mkdirSync(join(dir, 'sandbox'));
    for (const f of ['example.json', 'built.json']) copyFileSync(join(prepared, f), join(dir, 'sandbox', f));
    // Read only: a server replaces its files by renaming, never writes into them.
    linkSync(join(prepared, 'history.bin'), join(dir, 'sandbox', 'history.bin'));
  }
  return dir;
}

/** A new empty directory under the system's temporary folder, gone when this process exits. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
