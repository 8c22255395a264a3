// A job's progress writes land in the order they were made, even when the database answers an
// earlier one later (two pooled connections): a reader never sees progress go back. A write says
// the job was taken over only when it found the job no longer this worker's, never when it failed.

import t from 'tap';
import { ProgressWriter } from '../../src/jobs/runner.ts';
import type { Db } from '../../src/storage/db.ts';

t.test('a slow earlier write never lands after a later one', async (t) => {
  const landed: number[] = [];
  let inFlight = 0;
  let most = 0;
  let calls = 0;
  const db = {
    async query(_sql: string, params: unknown[]) {
      inFlight++;
      most = Math.max(most, inFlight);
      const fraction = params[3] as number;
      // The first write (a heartbeat, say) is answered last if let through together.
      await new Promise((r) => setTimeout(r, calls++ === 0 ? 60 : 1));
      landed.push(fraction);
      inFlight--;
      return [{ id: 'job_1' }];
    },
  } as unknown as Db;
  const progress = new ProgressWriter(db, 'job_1', 'worker-1', 'importing');
  progress.fraction = 0.1;
  const heartbeat = progress.write();
  await new Promise((r) => setTimeout(r, 5)); // the heartbeat's statement is out
  progress.fraction = 0.2;
  const report = progress.write();
  t.equal(await report, true, 'the report says the job is still this worker’s');
  await heartbeat;
  t.same(landed, [0.1, 0.2], 'written in order: the later value lands last');
  t.equal(most, 1, 'one statement at a time');
});

t.test('a failed write does not say the job was taken over, and later writes still go out', async (t) => {
  const landed: number[] = [];
  let calls = 0;
  const db = {
    async query(_sql: string, params: unknown[]) {
      if (calls++ === 0) throw new Error('connection lost');
      landed.push(params[3] as number);
      return [{ id: 'job_1' }];
    },
  } as unknown as Db;
  const progress = new ProgressWriter(db, 'job_1', 'worker-1', 'importing');
  progress.fraction = 0.3;
  // The database did not answer: whose the job is, is not known, so the work goes on.
  t.equal(await progress.write(), true);
  progress.fraction = 0.4;
  t.equal(await progress.write(), true);
  t.same(landed, [0.4]);
});

t.test('a write that finds the job no longer this worker’s answers false', async (t) => {
  const db = { query: async () => [] } as unknown as Db;
  const progress = new ProgressWriter(db, 'job_1', 'worker-1', 'importing');
  t.equal(await progress.write(), false, 'taken over (or ended): the work stops');
});
