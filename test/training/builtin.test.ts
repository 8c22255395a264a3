// The committed built-in model is exactly what `npm run train` makes from this code: re-running the
// command reproduces every file byte for byte (so a change to training or features code must come
// with the regenerated model).

import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

t.test('npm run train reproduces models/builtin', async (t) => {
  const out = join(mkdtempSync(join(tmpdir(), 'builtin-')), 'model');
  const r = spawnSync(process.execPath, ['--import=tsx', 'src/training/cli.ts', '--out', out], { encoding: 'utf8' });
  t.equal(r.status, 0, r.stderr);
  const committed = readdirSync('models/builtin').sort();
  t.same(readdirSync(out).sort(), committed, 'same files');
  for (const f of committed) {
    t.ok(readFileSync(join(out, f)).equals(readFileSync(join('models/builtin', f))), `${f} is byte-identical (else run \`npm run train\`)`);
  }
});
