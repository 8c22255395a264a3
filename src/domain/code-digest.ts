// What code a kept artefact was made by: a digest of one folder's code as it runs (the TypeScript
// sources, or the JavaScript compiled from them), so that a history snapshot or the sandbox's kept
// build is read only by the code that wrote it, and made afresh after any change to it.

import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** SHA-256 (hex) over the names and contents of `dir`'s .ts or .js files (not its subfolders), in
 *  name order; throws when none of them starts with `expect` (the code is not where it should be). */
export function codeDigest(dir: string, expect: string): string {
  const code = readdirSync(dir)
    .filter((f) => /\.(ts|js)$/.test(f) && !f.endsWith('.d.ts'))
    .sort();
  if (!code.some((f) => f.startsWith(expect))) throw new Error(`no ${expect} code in ${dir}`);
  const hash = createHash('sha256');
  for (const f of code) hash.update(`${f}\n`).update(readFileSync(join(dir, f)));
  return hash.digest('hex');
}
