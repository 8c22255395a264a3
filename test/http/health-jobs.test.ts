// /api/health says which jobs this process is running, by kind: a rings job held open by its
// handler shows as `rings: 1` while it runs and is gone once it ends, so an operator (and
// bench:rings) can see when an analysis is under way.

import t from 'tap';
import { createJob } from '../../src/storage/job-queue.ts';
import { start } from '../support/server.ts';

t.test('jobs this process runs, by kind, in /api/health', async (t) => {
  const running = await start();
  t.teardown(() => running.close());
  const { app, service } = running;
  const health = async () => (await app.inject({ url: '/api/health' })).json().jobs_running as Record<string, number>;
  t.same(await health(), {}, 'idle: none');

  // A rings job whose handler waits until released (the real handler would read a window).
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const began = new Promise<void>((resolve) => (started = resolve));
  service.jobs!.register('rings', {
    stage: 'analysing',
    failure: (m) => m,
    async run() {
      started();
      await released;
      return { held: true };
    },
  });
  await createJob(service.db, { kind: 'rings', params: { organization_id: 'none', window_start: 0 }, dataset_id: null, mode: null });
  await service.jobs!.poll();
  await began;
  t.same(await health(), { rings: 1 }, 'one rings job running');
  release();
  for (let i = 0; i < 100 && Object.keys(await health()).length; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  t.same(await health(), {}, 'none once it ended');
});
