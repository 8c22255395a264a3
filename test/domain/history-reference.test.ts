// The columnar history against the history it replaced (kept under test/support/reference-history):
// on random histories, in time order, with late arrivals, loaded from a floor with the rest as
// totals, and with outcomes changed after the fact (of transactions held and of ones held only in
// totals), every question a score can ask gets the same answer from both, bit for bit: every
// feature of every probe, every window, mean and spread, label count, neighbour count, first use,
// pair, compromised time and prior count. An outcome change one refuses, the other refuses too.
// And the built-in model's training data gets the same features from both, so `npm run train`
// writes the same boosters.
// Evidence lists differ by design past the horizon: the reference kept every transaction of an
// entity in memory, the columnar history drops them with the series (a score reads those from the
// database); within the horizon they are the same.

import t from 'tap';
import { DEFAULT_LABEL_DELAY_MS, History } from '../../src/domain/history/history.ts';
import { WINDOW_HORIZON_MS } from '../../src/domain/history/horizon.ts';
import { Rng } from '../../src/domain/rng.ts';
import { History as ReferenceHistory } from '../support/reference-history/history.ts';
import {
  answers,
  CHANNELS,
  CUSTOMERS,
  DAY,
  differences,
  generate,
  HOUR,
  loadInto,
  MERCHANTS,
  MINUTE,
  probes,
  sameNumbers,
} from '../support/history-fixtures.ts';
import { extractBatch } from '../../src/domain/features/extract.ts';
import { simulate } from '../../src/domain/simulate.ts';
import { CHANNELS as CHANNEL_NAMES } from '../../src/domain/channels.ts';

type Either = History | ReferenceHistory;
const QUERY_OFFSETS = [0, 1, MINUTE, HOUR, 2 * DAY];

/** The answers of a reference history, through the same questions. */
const ask = (h: Either, q: number, p: ReturnType<typeof probes>, records = true) => answers(h as History, q, p, { records });

/** Both histories' answers at a few times after `newest`: the questions whose answers differ. The
 *  evidence lists of `ours` are those of `theirs` up to the horizon: the same newest ones, every one
 *  within the horizon, and nothing theirs does not list. */
function compare(ours: History, theirs: ReferenceHistory, newest: number, p: ReturnType<typeof probes>): string[] {
  const out: string[] = [];
  for (const offset of QUERY_OFFSETS)
    out.push(...differences(ask(ours, newest + offset, p, false), ask(theirs, newest + offset, p, false)).map((d) => `+${offset} ms: ${d}`));
  const keys = { customer: CUSTOMERS, merchant: MERCHANTS, channel: CHANNELS } as const;
  for (const role of ['customer', 'merchant', 'channel'] as const) {
    for (const key of keys[role]) {
      for (const before of [newest + 1, newest - HOUR]) {
        const a = ours.recent(role, key, before, 12).map((r) => JSON.stringify(r));
        const b = theirs.recent(role, key, before, 12).map((r) => JSON.stringify(r));
        const within = theirs.recent(role, key, before, 12).filter((r) => r.time > newest - WINDOW_HORIZON_MS).length;
        if (a.length < within || a.some((r, i) => r !== b[i])) out.push(`recent ${role} ${key} before ${before}: ours ${a.join(' ')}, theirs ${b.join(' ')}`);
      }
    }
  }
  return out.slice(0, 5);
}

for (const seed of [1, 2, 3, 4]) {
  t.test(`seed ${seed}: in time order and with late arrivals, the same answers`, async (t) => {
    const rng = new Rng(seed);
    const rows = generate(rng, 2500);
    const p = probes(rng, 40);
    const inOrder = [new History().withRecords(), new ReferenceHistory().withRecords()] as const;
    for (const tx of rows) for (const h of inOrder) h.add(tx);
    const newest = rows[rows.length - 1]!.time;
    t.same(compare(inOrder[0], inOrder[1], newest, p), [], 'in time order');

    // Arrival displaced by up to 10 positions, as commits from several processes come.
    const arrival = rows
      .map((tx, i) => ({ tx, key: i + rng.uniform() * 10 }))
      .sort((x, y) => x.key - y.key)
      .map((x) => x.tx);
    const late = [new History().withRecords(), new ReferenceHistory().withRecords()] as const;
    for (const tx of arrival) for (const h of late) h.add(tx);
    t.same(compare(late[0], late[1], newest, p), [], 'with late arrivals');
  });

  t.test(`seed ${seed}: loaded from a floor, as transactions and outcomes arrive, the same answers`, async (t) => {
    const rng = new Rng(100 + seed);
    const all = generate(rng, 2200);
    const stored = all.slice(0, 1800);
    const later = all.slice(1800);
    const newest = stored[stored.length - 1]!.time;
    const floor = newest - WINDOW_HORIZON_MS;
    const p = probes(rng, 40);
    const ours = new History();
    const theirs = new ReferenceHistory();
    const ourIds = loadInto(ours, stored, floor);
    const theirIds = loadInto(theirs, stored, floor);
    t.same(compare(ours, theirs, newest, p), [], 'loaded');

    const current = new Map(stored.map((tx) => [tx.transaction_id, { ...tx }]));
    let refused = 0;
    let changed = 0;
    for (const tx of later) {
      ourIds.set(tx.transaction_id, ours.add(tx));
      theirIds.set(tx.transaction_id, theirs.add(tx));
      current.set(tx.transaction_id, { ...tx });
      if (rng.uniform() >= 0.3) continue;
      // An outcome reported now for an earlier transaction, held or in totals only.
      const target = stored[rng.below(stored.length)]!;
      const old = current.get(target.transaction_id)!;
      const label: 0 | 1 = rng.uniform() < 0.5 ? 1 : 0;
      if (old.label === label) continue;
      const outcome = (h: Either, ids: Map<string, number>): string => {
        const k = ids.get(target.transaction_id);
        try {
          if (k !== undefined) h.setOutcome(k, label, tx.time);
          else h.relabel(old, old.label, old.label === undefined ? Number.NaN : (old.labelKnownAt ?? old.time + DEFAULT_LABEL_DELAY_MS), label, tx.time);
          return 'applied';
        } catch (e) {
          return (e as Error).name;
        }
      };
      const a = outcome(ours, ourIds);
      const b = outcome(theirs, theirIds);
      t.equal(a, b, `the outcome of ${target.transaction_id}: both ${b}`);
      if (a === 'applied') {
        changed++;
        current.set(target.transaction_id, { ...old, label, labelKnownAt: tx.time });
      } else refused++;
    }
    t.ok(changed > 20, `${changed} outcomes changed, ${refused} refused by both`);
    t.same(compare(ours, theirs, later[later.length - 1]!.time, p), [], 'after every arrival and outcome');
  });
}

t.test("the built-in model's training data: every feature of every row, as training extracts them", async (t) => {
  // extractBatch over the simulated example (what `npm run train` featurises), with each history.
  const rows = simulate();
  const ours = extractBatch(rows, new History(DEFAULT_LABEL_DELAY_MS)).features;
  const theirs = extractBatch(rows, new ReferenceHistory(DEFAULT_LABEL_DELAY_MS) as unknown as History).features;
  for (const channel of CHANNEL_NAMES) t.ok(sameNumbers(ours[channel], theirs[channel]), `${channel}: ${ours[channel].length} values, bit for bit`);
});
