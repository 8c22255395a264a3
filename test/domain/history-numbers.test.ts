// The history's compact number columns: every value read back is the very double written, in the
// narrow form while every value fits (whole milliseconds within seven weeks of the origin, whole
// cents), and after a value that does not fit (a fraction, too far, negative, -0, too large) the
// whole column is Float64 with every earlier value kept, including ones rewritten in place; and the
// entity numbers in two bytes until one reaches 65,536.

import t from 'tap';
import { IndexColumn, NumberColumn } from '../../src/domain/history/numbers.ts';
import { Rng } from '../../src/domain/rng.ts';

const DAY = 86_400_000;
const T0 = 1_750_000_000_000;

/** Writes the values into a column and reads every one back. */
function roundTrip(c: NumberColumn, values: number[]): number[] {
  values.forEach((v, k) => {
    c.set(k, v);
  });
  return values.map((_, k) => c.get(k));
}

const same = (a: number[], b: number[]) => a.length === b.length && a.every((x, i) => Object.is(x, b[i]));

t.test('times: whole milliseconds around the first stay narrow and exact', async (t) => {
  const rng = new Rng(1);
  const values = Array.from({ length: 5_000 }, () => T0 - 6 * DAY + Math.floor(rng.uniform() * 48 * DAY));
  values[0] = T0;
  values[17] = Number.NaN;
  const c = new NumberColumn(values.length, 1, { below: 7 * DAY });
  t.ok(same(roundTrip(c, values), values), 'every value back');
  t.ok(c.isNarrow, 'in four bytes each');
  t.equal(c.byteLength, 4 * values.length);
});

t.test('a value that does not fit widens the column, keeping every value', async (t) => {
  for (const [why, odd] of [
    ['a fraction of a millisecond', T0 + 0.5],
    ['seven weeks past the origin', T0 + 50 * DAY],
    ['before the origin', T0 - 8 * DAY],
  ] as const) {
    const c = new NumberColumn(100, 1, { below: 7 * DAY });
    const values = Array.from({ length: 100 }, (_, k) => T0 + k * 1000);
    roundTrip(c, values);
    c.set(40, T0 + 123); // rewritten in place while narrow
    values[40] = T0 + 123;
    c.set(60, odd);
    values[60] = odd;
    t.notOk(c.isNarrow, `${why}: wide`);
    t.ok(
      same(
        values.map((_, k) => c.get(k)),
        values,
      ),
      `${why}: every value kept`,
    );
  }
});

t.test('amounts: whole cents stay narrow and exact; anything else widens', async (t) => {
  const rng = new Rng(2);
  const cents = Array.from({ length: 5_000 }, () => Math.round(rng.uniform() * 1e7) / 100);
  const c = new NumberColumn(cents.length, 100, 0);
  t.ok(same(roundTrip(c, cents), cents), 'every amount back, bit for bit');
  t.ok(c.isNarrow);
  for (const odd of [0.001, -5, -0, 5e7, 1 / 3]) {
    const d = new NumberColumn(3, 100, 0);
    const values = [12.34, odd, 7.5];
    t.ok(same(roundTrip(d, values), values), `${odd} kept exactly`);
    t.notOk(d.isNarrow, `${Object.is(odd, -0) ? '-0' : odd}: wide`);
  }
});

t.test('a column anchored to another takes its origin; resize keeps the values', async (t) => {
  const times = new NumberColumn(10, 1, { below: 7 * DAY });
  times.set(0, T0);
  const known = new NumberColumn(10, 1, times);
  // Known a day before the first time and five weeks after: both within the times' origin.
  known.set(0, T0 - DAY);
  known.set(1, T0 + 35 * DAY);
  known.set(2, Number.NaN);
  t.ok(known.isNarrow, 'narrow from the times origin');
  known.resize(20, 3);
  t.equal(known.capacity, 20);
  t.ok(
    same(
      [0, 1, 2].map((k) => known.get(k)),
      [T0 - DAY, T0 + 35 * DAY, Number.NaN],
    ),
    'kept through a resize',
  );
  t.ok(same([...known.float64(0, 2)], [T0 - DAY, T0 + 35 * DAY]), 'read as Float64');
});

t.test('index columns: two bytes while every number is below 65,536, four from the first that is not', async (t) => {
  const c = new IndexColumn(10);
  [0, 7, 65_535, 12].forEach((v, k) => {
    c.set(k, v);
  });
  t.ok(c.isNarrow, 'narrow');
  t.equal(c.byteLength, 20);
  c.set(4, 65_536);
  t.notOk(c.isNarrow, 'wide from 65,536');
  t.same(
    [0, 1, 2, 3, 4].map((k) => c.get(k)),
    [0, 7, 65_535, 12, 65_536],
    'every number kept',
  );
  t.same([...c.int32(1, 4)], [7, 65_535, 12], 'read as Int32');
  c.resize(20, 5);
  t.equal(c.get(4), 65_536, 'kept through a resize');
});
