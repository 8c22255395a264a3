// The features an organization's added trees leave out (src/training/feature-drift.ts): a count
// that grows with the organization's age is left out with its stability index, a feature whose
// distribution stays put is kept, a feature that goes missing more often is caught by its missing
// bin, the largest shift comes first, and the line is the conventional 0.25.

import t from 'tap';
import { movedFeatures } from '../../src/training/feature-drift.ts';
import { PSI_MAJOR as MOVED_PSI } from '../../src/model/drift-limits.ts';
import { Rng } from '../../src/domain/rng.ts';

t.test('features whose distribution moved between two periods', async (t) => {
  const rng = new Rng(3);
  const n = 4000;
  // Rows 0..1999 are the earlier period, 2000..3999 the later one.
  const stable = Float64Array.from({ length: n }, () => rng.normal());
  const growing = Float64Array.from({ length: n }, (_, i) => Math.floor(i / 40) + rng.below(5)); // a lifetime count
  const slightly = Float64Array.from({ length: n }, (_, i) => rng.normal() + (i >= 2000 ? 0.1 : 0));
  const missing = Float64Array.from({ length: n }, (_, i) => (rng.uniform() < (i >= 2000 ? 0.5 : 0.05) ? Number.NaN : rng.normal()));
  const columns = [stable, growing, slightly, missing];
  const names = ['stable', 'growing', 'slightly', 'missing'];
  const before = Array.from({ length: 2000 }, (_, i) => i);
  const after = Array.from({ length: 2000 }, (_, i) => 2000 + i);
  const moved = movedFeatures(names, (j, rows) => Float64Array.from(rows, (i) => columns[j]![i]!), before, after);
  t.same(
    moved.map((m) => m.feature),
    ['growing', 'missing'],
    'the growing count and the one that goes missing, the largest shift first',
  );
  t.ok(
    moved.every((m) => m.psi > MOVED_PSI),
    `each above the line: ${moved.map((m) => `${m.feature} ${m.psi.toFixed(2)}`).join(', ')}`,
  );
  t.equal(MOVED_PSI, 0.25);
  const same = movedFeatures(names, (j, rows) => Float64Array.from(rows, (i) => columns[j]![i]!), before, before);
  t.same(same, [], 'a period against itself: nothing moved');
  const looser = movedFeatures(names, (j, rows) => Float64Array.from(rows, (i) => columns[j]![i]!), before, after, 0.001);
  t.ok(
    looser.some((m) => m.feature === 'slightly'),
    'a small shift is measured too, below the line',
  );
});
