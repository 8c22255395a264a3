// The worker threads find a weekly window's fraud rings (the rings job's analysis, off the event
// loop that answers requests): the same rings, in the same order with the same ids, as the
// detector gives on the main thread, so a window's result does not depend on where it ran. The
// window goes to the thread as the database's text (labels and the times they were known included).

import t from 'tap';
import { isMainThread } from 'node:worker_threads';
import { detectWindow, DEFAULT_RINGS } from '../../src/domain/rings.ts';
import { simulate } from '../../src/domain/simulate.ts';
import { WorkerPool } from '../../src/jobs/worker-pool.ts';
import { encodeWindow } from '../../src/storage/rings-store.ts';

const WEEK = 7 * 86_400_000;

t.test('a window analysed in a worker thread: the same rings as on the main thread', async (t) => {
  const rows = simulate({ seed: 5, customers: 800, merchants: 160, days: 35, rings: 2 });
  const pool = new WorkerPool('models/builtin', 1);
  t.teardown(() => pool.destroy());
  const first = rows[0]!.time;
  let found = 0;
  for (let start = first; start + WEEK <= rows.at(-1)!.time; start += WEEK) {
    const inWindow = rows.filter((r) => r.time >= start && r.time < start + WEEK);
    const options = { labelDelay: DEFAULT_RINGS.labelDelay, window: WEEK };
    const here = detectWindow(inWindow, start, options, 17);
    const there = await pool.rings({ rows: encodeWindow(inWindow), start, options, seed: 17 });
    t.same(there, here, `window from ${new Date(start).toISOString().slice(0, 10)}: ${here.length} rings`);
    found += here.length;
  }
  t.ok(found > 0, `the simulated rings were found (${found})`);
  t.ok(isMainThread && pool.threads >= 1, 'the analysis ran in a worker thread of the pool');
});
