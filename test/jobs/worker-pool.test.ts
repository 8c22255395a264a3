// The worker threads find a weekly window's fraud rings (the rings job's analysis, off the event
// loop that answers requests): the same rings, in the same order with the same ids, as the
// detector gives on the main thread, so a window's result does not depend on where it ran. The
// window goes to the thread as the database's text (labels and the times they were known included).

import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import { detectWindow, DEFAULT_RINGS } from '../../src/domain/rings.ts';
import { simulate } from '../../src/domain/simulate.ts';
import { WorkerPool } from '../../src/jobs/worker-pool.ts';
import { JOB_THREAD_NICENESS } from '../../src/jobs/score-worker.ts';
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

t.test(
  'job threads run at a lower scheduling priority than the event loop (Linux)',
  { skip: process.platform === 'linux' ? false : 'thread priorities are read from /proc' },
  async (t) => {
    const pool = new WorkerPool('models/builtin', 1);
    t.teardown(() => pool.destroy());
    await pool.rings({ rows: encodeWindow([]), start: 0, options: { window: WEEK }, seed: 1 });
    // Field 19 of /proc/<pid>/task/<tid>/stat is the thread's nice value (after the command in parentheses).
    const nice = (tid: string) => Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]);
    const main = nice(String(process.pid));
    const threads = readdirSync('/proc/self/task').map(nice);
    t.ok(threads.includes(Math.min(19, main + JOB_THREAD_NICENESS)), `a job thread at nice ${main + JOB_THREAD_NICENESS} (threads: ${threads.join(', ')})`);
    t.equal(nice(String(process.pid)), main, 'the event loop keeps its priority');
  },
);
