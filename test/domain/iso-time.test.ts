// Times in score responses are written by isoTime: the same text as Date.prototype.toISOString for
// every millisecond it is given, across more days than its cache holds, and the same error for a
// time Date rejects.

import t from 'tap';
import { isoTime } from '../../src/domain/iso-time.ts';

t.test('writes exactly what toISOString writes', async (t) => {
  let state = 7;
  const next = () => (state = (state * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  const edges = [
    0,
    -1,
    1,
    86_399_999,
    86_400_000,
    -62_167_219_200_000,
    253_402_300_799_999,
    Date.UTC(2024, 1, 29, 23, 59, 59, 999),
    Date.UTC(1969, 11, 31, 23, 59, 59, 1),
  ];
  let mismatches = 0;
  // 20,000 times over ±300 years: far more days than the cache keeps, so it refills too.
  const times = [...edges, ...Array.from({ length: 20_000 }, () => Math.round((next() - 0.5) * 2 * 9.5e12))];
  for (const ms of times) if (isoTime(ms) !== new Date(ms).toISOString()) mismatches++;
  t.equal(mismatches, 0);
  t.equal(isoTime(Date.UTC(2026, 10, 26, 3, 4, 5, 6)), '2026-11-26T03:04:05.006Z');
});

t.test('outside years 0000–9999 and for fractions it is still toISOString', async (t) => {
  t.equal(isoTime(253_402_300_800_000), new Date(253_402_300_800_000).toISOString());
  t.equal(isoTime(-62_167_219_200_001), new Date(-62_167_219_200_001).toISOString());
  t.equal(isoTime(1.5), new Date(1.5).toISOString());
  t.throws(() => isoTime(Number.NaN), RangeError);
});
