// The handler of `rings` jobs: one organization's weekly window (queued when due by
// live/ring-windows.ts) read from the database, analysed for fraud rings in a worker thread (Louvain
// over a week's graph takes long enough to hold up every request if it ran on the event loop), and
// the result stored; storing it tells every process.

import { WEEK, windowSeed, type RingsJobParams } from '../live/ring-windows.ts';
import type { Db } from '../storage/db.ts';
import { organizationData } from '../storage/organization-data.ts';
import type { JobHandler } from './runner.ts';
import type { WorkerPool } from './worker-pool.ts';

export function ringsHandler(db: Db, pool: WorkerPool, labelDelay: number): JobHandler {
  return {
    stage: 'analysing',
    failure: (message) => `ring analysis failed: ${message.slice(0, 300)}`,
    async run(job) {
      const params = job.params as RingsJobParams | null;
      if (!params?.organization_id || !Number.isFinite(params.window_start)) throw new Error('the job does not name an organization and a window');
      const rings = organizationData(db, params.organization_id).rings;
      const start = params.window_start;
      // Read in slices, handed to the worker as text and decoded there (rings-store.ts).
      const window = await rings.window(start, start + WEEK);
      const found = await pool.rings({ rows: window.rows, start, options: { labelDelay, window: WEEK }, seed: windowSeed(start) });
      await rings.store(start, found);
      return { window_start: new Date(start).toISOString(), transactions: window.count, flagged: found.length };
    },
  };
}
