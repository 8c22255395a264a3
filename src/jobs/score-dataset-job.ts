// The handler of `score` jobs: a validated upload scored in a worker thread (worker-pool.ts,
// batch-score.ts) into its result files, with progress in four stages mapped onto one fraction:
// parsing 0–10 %, features 10–40 %, scoring 40–95 %, writing 95–100 %. A dataset whose mapping
// maps the organization's own fields has their cells checked first, as a history import checks
// them (datasets/mapped-fields.ts): a cell that cannot be its field's value fails the job naming the
// row and the column, so a file that scores also imports. The scores read no field.

import { mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { MessageChannel } from 'node:worker_threads';
import { fieldEntries, type ColumnMapping } from '../datasets/column-names.ts';
import { CellRefused, checkCells, mappedFields, undeclaredFields } from '../datasets/mapped-fields.ts';
import type { Db } from '../storage/db.ts';
import { getDataset, type DatasetFiles } from '../storage/datasets.ts';
import { organizationData } from '../storage/organization-data.ts';
import { resultPath, resultsDir } from './results.ts';
import { JobRefused, type JobHandler } from './runner.ts';
import type { WorkerPool } from './worker-pool.ts';

const SPANS: Record<string, [number, number]> = { parsing: [0, 0.1], features: [0.1, 0.4], scoring: [0.4, 0.95], writing: [0.95, 1] };

/** Checks the cells of the fields `mapping` maps against the declarations of the job's
 *  organization; JobRefused saying what is wrong. Nothing to do when it maps none. */
async function checkMappedFields(db: Db, organizationId: string | null, path: string, mapping: ColumnMapping, headers: readonly string[]): Promise<void> {
  const entries = fieldEntries(mapping);
  if (entries.length === 0) return;
  const names = entries.map(([name]) => `fields.${name}`).join(', ');
  if (organizationId === null)
    throw new JobRefused(
      `the dataset's mapping maps ${names}, fields an organization declares, and this job belongs to no organization; nothing was scored. Queue it with the organization's organization_id, or remove them from the mapping.`,
    );
  const declared = (await organizationData(db, organizationId).fields.all()).map((f) => ({ name: f.name, type: f.type, key: f.key, retired: false }));
  const missing = undeclaredFields(mapping, declared);
  if (missing.length)
    throw new JobRefused(
      `the mapping maps ${missing.map(([name, header]) => `column "${header}" onto fields.${name}`).join(', ')}, which the organization does not declare now (retired since the job was queued, or mapped since without being declared); nothing was scored. Declare ${missing.length > 1 ? 'them' : 'it'}, or remove ${missing.length > 1 ? 'them' : 'it'} from the dataset's mapping, and queue the scoring again.`,
    );
  try {
    await checkCells(path, mapping, mappedFields(mapping, declared, headers));
  } catch (e) {
    if (e instanceof CellRefused) throw new JobRefused(e.describe('nothing was scored', 'score that'));
    throw e;
  }
}

export function scoreDatasetHandler(o: { db: Db; datasets: DatasetFiles; pool: WorkerPool; dataDir: string }): JobHandler {
  mkdirSync(resultsDir(o.dataDir), { recursive: true });
  return {
    stage: 'parsing',
    failure: (message) => `scoring failed: ${message.slice(0, 300)}`,
    async run(job, { progress }) {
      const dataset = job.dataset_id === null ? undefined : await getDataset(o.db, job.dataset_id);
      if (!dataset || dataset.removed) throw new JobRefused(`the dataset was ${dataset?.removed ?? 'not found'} before the job ran`);
      await checkMappedFields(o.db, job.organization_id, o.datasets.path(dataset.stored_name), dataset.mapping, dataset.validation.columns_found);
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
