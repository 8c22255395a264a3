// The handler of `score` jobs: a validated upload scored in a worker thread (worker-pool.ts,
// batch-score.ts) into its result files, with progress in four stages mapped onto one fraction:
// parsing 0–10 %, features 10–40 %, scoring 40–95 %, writing 95–100 %.

import { mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { MessageChannel } from 'node:worker_threads';
import type { Queryable } from '../storage/db.ts';
import { getDataset, type DatasetFiles } from '../storage/datasets.ts';
import { resultPath, resultsDir } from './results.ts';
import { JobRefused, type JobHandler } from './runner.ts';
import type { WorkerPool } from './worker-pool.ts';

const SPANS: Record<string, [number, number]> = { parsing: [0, 0.1], features: [0.1, 0.4], scoring: [0.4, 0.95], writing: [0.95, 1] };

export function scoreDatasetHandler(o: { db: Queryable; datasets: DatasetFiles; pool: WorkerPool; dataDir: string }): JobHandler {
  mkdirSync(resultsDir(o.dataDir), { recursive: true });
  return {
    stage: 'parsing',
    failure: (message) => `scoring failed: ${message.slice(0, 300)}`,
    async run(job, { progress }) {
      const dataset = job.dataset_id === null ? undefined : await getDataset(o.db, job.dataset_id);
      if (!dataset || dataset.removed) throw new JobRefused(`the dataset was ${dataset?.removed ?? 'not found'} before the job ran`);
      const path = resultPath(o.dataDir, job.id);
      for (const f of [path, `${path}.csv`, `${path}.idx`, `${path}.features`]) await rm(f, { force: true }); // an earlier attempt's partial files
      let lastWrite = 0;
      const channel = new MessageChannel();
      channel.port1.on('message', (m: { stage: string; fraction: number }) => {
        progress.stage = m.stage;
        const span = SPANS[m.stage] ?? [0, 1];
        progress.fraction = Math.max(progress.fraction, span[0] + (span[1] - span[0]) * m.fraction);
        const now = Date.now();
        if (now - lastWrite > 200) {
          lastWrite = now;
          void progress.write();
        }
      });
      try {
        return await o.pool.score(
          { path: o.datasets.path(dataset.stored_name), mapping: dataset.mapping, mode: job.mode ?? 'balanced', resultPath: path, expectedRows: dataset.rows },
          channel.port2,
        );
      } finally {
        channel.port1.close();
      }
    },
  };
}
