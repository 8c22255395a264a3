// Ring detection on the simulator: seeded (same groups every run), flags the simulated rings and
// little else, and never uses labels that were not yet known when a window closed.

import t from 'tap';
import { detectRings } from '../../src/domain/rings.ts';
import { simulate } from '../../src/domain/simulate.ts';

const rows = simulate({ seed: 17, customers: 800, merchants: 160, days: 84, rings: 3 });
const until = rows[rows.length - 1]!.time;
const rings = detectRings(rows, until);

t.test('deterministic', async (t) => {
  t.same(detectRings(rows, until), rings);
});

t.test('finds the simulated rings, with few false groups', async (t) => {
  const isRing = (r: (typeof rings)[number]) => r.customers.filter((c) => c.startsWith('R')).length > r.customers.length / 2;
  const truePositives = rings.filter(isRing).length;
  const precision = rings.length ? truePositives / rings.length : 0;
  const found = new Set(rings.filter(isRing).map((r) => r.customers.find((c) => c.startsWith('R'))!.split('C')[0]));
  t.ok(rings.length > 0, `${rings.length} groups flagged`);
  t.ok(precision >= 0.8, `precision ${precision.toFixed(2)}`);
  t.ok(found.size >= 2, `${found.size} of 3 simulated rings found`);
  for (const r of rings.filter(isRing)) t.ok(r.fraud_rate >= 0.5 && r.channels.length >= 1);
});

t.test('labels not yet known at a time are not used for results published by then', async (t) => {
  const delay = 7 * 86_400_000;
  const at = rows[0]!.time + 50 * 86_400_000;
  const published = detectRings(rows, at);
  t.ok(published.length > 0 && published.every((r) => r.published_at <= at && r.published_at === r.window_end + delay));
  // Labels of payments younger than the delay at `at` were not known then: flipping them all to
  // fraud must not change what had been published.
  const flipped = rows.map((r) => (r.time >= at - delay ? { ...r, label: 1 as const } : r));
  t.same(detectRings(flipped, at), published);
  // ...whereas results published later do see them.
  t.not(JSON.stringify(detectRings(flipped, until)), JSON.stringify(rings));
});
