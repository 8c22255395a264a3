// A history written as a snapshot and read back is the same history: on random histories (in time
// order, with late arrivals, loaded from a floor with the rest as totals, with outcomes changed
// after the fact), every question a score can ask gets the same answer from the copy as from the
// original, bit for bit, however the bytes are cut into pieces; and the copy goes on as the original
// does: the same arrivals, late ones and outcome changes leave both answering the same. Bytes that
// are not a snapshot are refused with a reason.

import t from 'tap';
import { DEFAULT_LABEL_DELAY_MS, History } from '../../src/domain/history/history.ts';
import { WINDOW_HORIZON_MS } from '../../src/domain/history/horizon.ts';
import { historyBytes, historyFromBytes, HISTORY_FORMAT } from '../../src/domain/history/snapshot.ts';
import { Rng } from '../../src/domain/rng.ts';
import { answers, DAY, differences, generate, HOUR, loadInto, MINUTE, probes, type Tx } from '../support/history-fixtures.ts';

const OFFSETS = [0, 1, MINUTE, HOUR, 2 * DAY];

function compare(a: History, b: History, newest: number, p: ReturnType<typeof probes>): string[] {
  const out: string[] = [];
  for (const offset of OFFSETS) out.push(...differences(answers(a, newest + offset, p), answers(b, newest + offset, p)).map((d) => `+${offset} ms: ${d}`));
  return out.slice(0, 5);
}

/** The snapshot's bytes cut again at random places (as a store may page them). */
function recut(rng: Rng, pieces: Uint8Array[]): Uint8Array[] {
  const all = Buffer.concat(pieces);
  const out: Uint8Array[] = [];
  for (let at = 0; at < all.length; ) {
    const n = 1 + rng.below(Math.max(1, all.length >> 3));
    out.push(new Uint8Array(all.subarray(at, at + n)));
    at += n;
  }
  return out;
}

/** A copy through a snapshot, from copied bytes (as the store keeps them). */
const copyOf = (rng: Rng, h: History) => historyFromBytes(recut(rng, historyBytes(h)));

/** The same arrivals (displaced by up to 10 positions) and outcome changes into both. */
function goOn(rng: Rng, histories: History[], rows: Tx[], ids: Map<string, number>[]): void {
  const arrival = rows
    .map((tx, i) => ({ tx, key: i + rng.uniform() * 10 }))
    .sort((x, y) => x.key - y.key)
    .map((x) => x.tx);
  for (const tx of arrival) {
    histories.forEach((h, i) => {
      ids[i]!.set(tx.transaction_id, h.add(tx));
    });
    if (rng.uniform() < 0.2) {
      const [id, k] = [...ids[0]!][rng.below(ids[0]!.size)]!;
      const label: 0 | 1 = rng.uniform() < 0.5 ? 1 : 0;
      histories.forEach((h, i) => {
        h.setOutcome(ids[i]!.get(id) ?? k, label, tx.time);
      });
    }
  }
}

for (const seed of [1, 2, 3]) {
  t.test(`seed ${seed}: a history in time order and with late arrivals, written and read back`, async (t) => {
    const rng = new Rng(seed);
    const rows = generate(rng, 2000);
    const p = probes(rng, 40);
    const h = new History().withRecords();
    h.transactions.indexIds();
    for (const tx of rows.slice(0, 1500)) h.add(tx);
    const copy = copyOf(rng, h);
    const newest = rows[1499]!.time;
    t.same(compare(copy, h, newest, p), [], 'the same answers');
    t.equal(copy.size, h.size);
    t.same(copy.byteLength, h.byteLength, 'the same arrays');
    t.equal(copy.transactions.find(rows[7]!.transaction_id), h.transactions.find(rows[7]!.transaction_id), 'ids found by the copy');

    const ids = [new Map<string, number>(), new Map<string, number>()];
    for (const tx of rows.slice(0, 1500)) for (const m of ids) m.set(tx.transaction_id, h.transactions.find(tx.transaction_id));
    goOn(new Rng(seed + 50), [h], rows.slice(1500), [ids[0]!]);
    goOn(new Rng(seed + 50), [copy], rows.slice(1500), [ids[1]!]);
    t.same(compare(copy, h, rows[rows.length - 1]!.time, p), [], 'the same after the same arrivals and outcomes');
  });

  t.test(`seed ${seed}: a history loaded from a floor, written and read back`, async (t) => {
    const rng = new Rng(100 + seed);
    const all = generate(rng, 2200);
    const stored = all.slice(0, 1800);
    const newest = stored[stored.length - 1]!.time;
    const p = probes(rng, 40);
    const h = new History();
    const ids = loadInto(h, stored, newest - WINDOW_HORIZON_MS);
    const copy = copyOf(rng, h);
    t.same(compare(copy, h, newest, p), [], 'the same answers');
    t.equal(copy.heldFrom, h.heldFrom, 'the same floor');
    // Outcomes of transactions held only in totals, on both.
    for (const tx of stored.slice(0, 50)) {
      if (ids.has(tx.transaction_id) || tx.label === undefined) continue;
      const known = tx.labelKnownAt ?? tx.time + DEFAULT_LABEL_DELAY_MS;
      const results = [h, copy].map((x) => {
        try {
          x.relabel(tx, tx.label, known, tx.label === 1 ? 0 : 1, newest);
          return 'applied';
        } catch (e) {
          return (e as Error).name;
        }
      });
      t.equal(results[1], results[0], `the outcome of ${tx.transaction_id} (${results[0]})`);
    }
    goOn(new Rng(seed + 60), [h], all.slice(1800), [new Map(ids)]);
    goOn(new Rng(seed + 60), [copy], all.slice(1800), [new Map(ids)]);
    t.same(compare(copy, h, all[all.length - 1]!.time, p), [], 'the same after arrivals and outcomes');
  });
}

t.test("a snapshot holds the history's bytes and nothing else: the same history twice, the same bytes", async (t) => {
  // Between the two builds, the process's pool of small Buffers and its freed memory are filled
  // with other bytes: a history whose strings sat in a pooled slab, or in memory not cleared,
  // would carry them into its snapshot (another organization's, in a server).
  const rows = generate(new Rng(9), 1500);
  const build = () => {
    const h = new History().withRecords();
    h.transactions.indexIds();
    for (const tx of rows) h.add(tx);
    return Buffer.concat(historyBytes(h));
  };
  const first = build();
  for (let i = 0; i < 64; i++) Buffer.allocUnsafe(1 + (i % 8) * 512).fill(0xab);
  for (let i = 0; i < 16; i++) Buffer.allocUnsafeSlow(1 << 16).fill(0xcd);
  const second = build();
  t.ok(first.equals(second), 'byte for byte');
});

t.test('an empty history, and bytes that are not a snapshot', async (t) => {
  const h = new History(3 * DAY).withRecords();
  const copy = historyFromBytes(historyBytes(h));
  t.equal(copy.size, 0);
  t.equal(copy.labelDelay, 3 * DAY, 'the label delay is kept');
  t.throws(() => historyFromBytes([Buffer.from('not a snapshot at all')]), /not a history snapshot/);
  const pieces = historyBytes(h);
  t.throws(() => historyFromBytes(pieces.slice(0, 1)), /ends early/, 'a snapshot cut short');
  t.match(HISTORY_FORMAT, /^h1-[0-9a-f]{16}$/, 'the format names the code');
});
