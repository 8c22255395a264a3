// An entity's series keeps only what the windowed features can still reach (WINDOW_HORIZON_MS
// before the newest transaction) and answers every query a scorer can make exactly as a series
// that keeps everything; a query past the horizon fails loudly instead of answering wrongly.

import t from 'tap';
import { WINDOW_HORIZON_MS } from '../../src/domain/history/horizon.ts';
import { oneSeries } from '../support/history-fixtures.ts';

const DAY = 86_400_000;

/** A deterministic pseudo-random sequence (no Math.random in tests). */
function lcg(seed: number): () => number {
  let x = seed;
  return () => (x = (x * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
}

t.test('a compacting series answers like one that keeps everything', async (t) => {
  const next = lcg(7);
  const keptOne = oneSeries(true);
  const compactOne = oneSeries(true);
  const kept = keptOne.series;
  const compact = compactOne.series;
  let time = 1_700_000_000_000;
  let mismatches = 0;
  let checks = 0;
  for (let i = 0; i < 20_000; i++) {
    // Bursts and gaps: some entries minutes apart, some weeks (an entity idle past the horizon).
    time += next() < 0.002 ? 40 * DAY : Math.floor(next() * 30 * 60_000);
    const amount = Math.round(next() * 50_000) / 100;
    // Queries come at the newest time, before it joins (as scoring does).
    if (i % 7 === 0) {
      for (const from of [-Infinity, time - DAY, time - 7 * DAY, time - 30 * DAY]) {
        checks++;
        if (JSON.stringify(kept.window(from, time)) !== JSON.stringify(compact.window(from, time))) mismatches++;
      }
      checks += 3;
      if (JSON.stringify(kept.stats(time)) !== JSON.stringify(compact.stats(time))) mismatches++;
      if (kept.lastBefore(time) !== compact.lastBefore(time)) mismatches++;
      if (kept.countBefore(time) !== compact.countBefore(time)) mismatches++;
    }
    keptOne.add(time, amount);
    compactOne.add(time, amount, time - WINDOW_HORIZON_MS);
  }
  t.equal(mismatches, 0, `${checks} answers compared`);
  t.equal(kept.held, 20_000);
  t.ok(compact.held < 8_000, `held ${compact.held} of 20,000 entries`);
  t.throws(() => compact.window(time - 60 * DAY, time), /horizon/, 'a window reaching past the horizon throws');
  t.equal(compact.window(-Infinity, time + 1).count, 20_000, 'all-time count survives compaction');
});

t.test('an entity idle for longer than the horizon still knows its last transaction', async (t) => {
  const one = oneSeries();
  const s = one.series;
  const start = 1_700_000_000_000;
  for (let i = 0; i < 100; i++) one.add(start + i * 1000, 1, start + i * 1000 - WINDOW_HORIZON_MS);
  const later = start + 100 * DAY;
  // The next transaction, 100 days later, drops everything before it joins.
  for (let i = 0; i < 64; i++) one.add(later + i, 2, later + i - WINDOW_HORIZON_MS);
  t.equal(s.held < 100, true, 'the old entries are gone');
  t.equal(s.lastBefore(later), start + 99_000, 'the last one before the gap');
  t.same(s.window(-Infinity, later), { count: 100, sum: 100 });
  t.same(s.window(later - 30 * DAY, later + 100), { count: 64, sum: 128 });
});
