// A job's feature spill (src/jobs/feature-spill.ts) when the attempt before it died with its process
// and left its file behind: the job, taken up again, makes the spill afresh and reads back exactly
// what this attempt wrote (a crash test caught the refusal once, when the kill landed mid-features).

import t from 'tap';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FeatureSpill } from '../../src/jobs/feature-spill.ts';
import { tempDir } from '../support/temp.ts';

t.test('a spill left by a dead attempt is replaced, not refused', async (t) => {
  const path = join(tempDir('spill-'), 'job.ndjson.features');
  writeFileSync(path, 'left by the attempt that died');
  const spill = new FeatureSpill(path, 3, [2]);
  const rows = [new Float64Array([1, 2, 3, 4, 5, 6])];
  spill.write(rows, [0, 1, 2], 3);
  const back = [new Float64Array(6)];
  spill.read(0, 3, back);
  t.same([...back[0]!], [1, 2, 3, 4, 5, 6], 'reads back what this attempt wrote');
  spill.remove();
  t.notOk(existsSync(path), 'and is removed at the end');
});
