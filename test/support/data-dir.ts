// A test server's new data directory, holding the public sandbox's build as a restarted server
// would have kept it, so that each test server does not simulate a quarter of a million
// transactions and build their history again (test/app/sandbox.test.ts tests the building and the
// keeping themselves). The build is kept once for every test process in .tap/sandbox-data/ by the
// sandbox's own build (here on this thread: the callers are synchronous), which reads it back, or
// builds it afresh when the code or settings that made it changed; files are written under names of their own and renamed into place, so processes
// preparing it at once never read half a file.

import { copyFileSync, linkSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildSandbox, factsKey, factsOf, keepFacts, readFacts } from '../../src/app/sandbox-build.ts';
import { simulate } from '../../src/domain/simulate.ts';
import { loadModelFolder } from '../../src/model/bundle.ts';
import { isProblem } from '../../src/model/bundle-types.ts';
import { tempDir } from './temp.ts';

const PREPARED = join(import.meta.dirname, '..', '..', '.tap', 'sandbox-data');
let prepared = false;

/** The kept build, read (or made) once in this process. */
function prepare(): void {
  if (prepared) return;
  const model = loadModelFolder('models/builtin');
  if (isProblem(model)) throw new Error(model.message);
  const labelDelay = model.file.training.label_delay_ms;
  const key = factsKey(labelDelay);
  const facts = readFacts(PREPARED, key) ?? factsOf(simulate(), key);
  keepFacts(PREPARED, buildSandbox({ labelDelay, dir: PREPARED, facts }).facts);
  prepared = true;
}

/** A new data directory (removed when this process exits) with the sandbox's kept build. */
export function dataDir(prefix: string): string {
  prepare();
  const dir = tempDir(prefix);
  const from = join(PREPARED, 'sandbox');
  mkdirSync(join(dir, 'sandbox'));
  for (const f of ['example.json', 'built.json']) copyFileSync(join(from, f), join(dir, 'sandbox', f));
  // Read only: a server replaces its files by renaming, never writes into them.
  linkSync(join(from, 'history.bin'), join(dir, 'sandbox', 'history.bin'));
  return dir;
}
