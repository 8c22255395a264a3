// The handler of `rings` jobs: one organization's weekly window analysed for fraud rings and the
// result stored (queued when due by live/ring-windows.ts, which also does the analysis).

import type { Db } from '../storage/db.ts';
import { runRingsJob, type RingsJobParams } from '../live/ring-windows.ts';
import type { JobHandler } from './runner.ts';

export function ringsHandler(db: Db, labelDelay: number): JobHandler {
  return {
    stage: 'analysing',
    failure: (message) => `ring analysis failed: ${message.slice(0, 300)}`,
    async run(job) {
      const params = job.params as RingsJobParams | null;
      if (!params?.organization_id || !Number.isFinite(params.window_start)) throw new Error('the job does not name an organization and a window');
      return runRingsJob(db, params, labelDelay);
    },
  };
}
