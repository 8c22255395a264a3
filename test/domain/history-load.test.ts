// A history loaded from a floor: the live service keeps an organization's last 31 days as
// transactions and everything before as per-entity totals (all-time counts, sums, first uses, label
// counts). Loaded that way, a history answers every question a score can ask at or after its
// newest transaction as the whole history does (features, series, label windows, first uses, the
// customer–merchant graph and its compromised neighbours), up to the rounding of sums added in
// another order; and keeps doing so as transactions arrive and outcomes change, of transactions it
// holds and of ones it holds only in totals. An outcome change the totals cannot follow is refused
// with a HorizonError, changing nothing.

import t from 'tap';
import { DEFAULT_LABEL_DELAY_MS, History } from '../../src/domain/history/history.ts';
import { HorizonError, WINDOW_HORIZON_MS } from '../../src/domain/history/horizon.ts';
import { Rng } from '../../src/domain/rng.ts';
import { answers, DAY, generate, HOUR, loadInto, MINUTE, probes, type Tx } from '../support/history-fixtures.ts';

/** A history loaded from `floor` with what the database keeps of `rows` (history-fixtures.ts). */
function load(rows: readonly Tx[], floor: number): { history: History; ids: Map<string, number> } {
  const history = new History();
  return { history, ids: loadInto(history, rows, floor) };
}

/** Every number within a relative 1e-9 of the other (NaN equal to NaN); everything else equal. */
function close(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') {
    return a === b || (Number.isNaN(a) && Number.isNaN(b)) || Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
  }
  if (a instanceof Map && b instanceof Map) return close([...a.entries()], [...b.entries()]);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => close(x, b[i]));
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a);
    return close(ka, Object.keys(b)) && ka.every((k) => close((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return a === b;
}

function differences(whole: Map<string, unknown>, loaded: Map<string, unknown>): string[] {
  const out: string[] = [];
  for (const [question, x] of whole) {
    const y = loaded.get(question);
    if (!close(x, y)) out.push(`${question}: whole ${JSON.stringify(x)}, loaded ${JSON.stringify(y)}`);
  }
  return out.slice(0, 5);
}

const QUERY_OFFSETS = [0, 1, MINUTE, HOUR, 2 * DAY, 8 * DAY];

for (const seed of [1, 2, 3]) {
  t.test(`loaded from a floor, seed ${seed}: answers as the whole history, as transactions and outcomes arrive`, async (t) => {
    const rng = new Rng(seed);
    const all = generate(rng, 1700);
    const stored = all.slice(0, 1400);
    const later = all.slice(1400);
    const newest = stored[stored.length - 1]!.time;
    const floor = newest - WINDOW_HORIZON_MS;
    t.ok(stored[0]!.time < floor - 20 * DAY, 'the stored history reaches well before the floor');
    const ask = probes(rng, 60);

    const whole = new History().withRecords();
    const wholeIds = new Map<string, number>();
    for (const tx of stored) wholeIds.set(tx.transaction_id, whole.add(tx));
    const loaded = load(stored, floor);
    t.ok(
      loaded.history.transactions.length < stored.length / 2,
      `the loaded history keeps ${loaded.history.transactions.length} of ${stored.length} transactions`,
    );
    for (const offset of QUERY_OFFSETS) {
      const q = newest + offset;
      t.same(differences(answers(whole, q, ask, { records: false }), answers(loaded.history, q, ask, { records: false })), [], `at newest + ${offset} ms`);
    }

    // Then more transactions, and outcomes set on transactions both held and held only in totals.
    const current = new Map(stored.map((tx) => [tx.transaction_id, { ...tx }]));
    let state = loaded;
    let refused = 0;
    let relabelled = 0;
    for (const tx of later) {
      whole.add(tx);
      state.ids.set(tx.transaction_id, state.history.add(tx));
      current.set(tx.transaction_id, { ...tx });
      if (rng.uniform() < 0.3) {
        const target = stored[rng.below(stored.length)]!;
        const old = current.get(target.transaction_id)!;
        const label: 0 | 1 = rng.uniform() < 0.5 ? 1 : 0;
        if (old.label === label) continue;
        const knownAt = tx.time;
        whole.setOutcome(wholeIds.get(target.transaction_id)!, label, knownAt);
        const k = state.ids.get(target.transaction_id);
        try {
          if (k !== undefined) state.history.setOutcome(k, label, knownAt);
          else {
            const fromKnown = old.label === undefined ? Number.NaN : (old.labelKnownAt ?? old.time + DEFAULT_LABEL_DELAY_MS);
            state.history.relabel(old, old.label, fromKnown, label, knownAt);
            relabelled++;
          }
        } catch (e) {
          t.type(e, HorizonError, 'only a HorizonError');
          refused++;
          // The tenant's answer: load afresh from what is stored now.
          old.label = label;
          old.labelKnownAt = knownAt;
          const rows = [...current.values()];
          state = load(rows, floor);
          continue;
        }
        old.label = label;
        old.labelKnownAt = knownAt;
      }
    }
    t.ok(relabelled > 10, `${relabelled} outcomes set on transactions held only in totals (${refused} refused and loaded afresh)`);
    const last = later[later.length - 1]!.time;
    for (const offset of QUERY_OFFSETS) {
      const q = last + offset;
      t.same(
        differences(answers(whole, q, ask, { records: false }), answers(state.history, q, ask, { records: false })),
        [],
        `afterwards, at newest + ${offset} ms`,
      );
    }
  });
}

t.test('a withdrawn fraud that may have been the earliest of several held in totals is refused, changing nothing', async (t) => {
  const day = (n: number) => 1_700_000_000_000 + n * DAY;
  const rows: Tx[] = [1, 2, 3].map((n) => ({
    transaction_id: `t${n}`,
    time: day(n),
    amount: 10,
    customer_id: 'c',
    merchant_id: 'm',
    location: 'L',
    payment_type: 'p',
    label: 1,
    labelKnownAt: day(n) + HOUR,
  }));
  rows.push({ transaction_id: 't4', time: day(60), amount: 10, customer_id: 'c', merchant_id: 'm', location: 'L', payment_type: 'p' });
  const { history } = load(rows, day(60) - WINDOW_HORIZON_MS);
  t.equal(history.customerKnownFrauds('c', day(61)), 3);
  t.throws(() => history.relabel(rows[0]!, 1, day(1) + HOUR, 0, day(61)), HorizonError);
  t.equal(history.customerKnownFrauds('c', day(61)), 3, 'unchanged');
  t.equal(history.merchantLabelSeries('m').window(-Infinity, day(62)).count, 3, 'unchanged');
  // A later one of them can be withdrawn: the earliest stays.
  history.relabel(rows[2]!, 1, day(3) + HOUR, 0, day(61));
  t.equal(history.customerKnownFrauds('c', day(62)), 2);
  t.same(history.merchantLabelSeries('m').window(-Infinity, day(62)), { count: 3, sum: 2 });
  t.equal(history.customerCompromisedAt('c'), day(1) + HOUR);
});
