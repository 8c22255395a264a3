// The handler of `history_import` jobs: its source from the job's params (the built-in example, or
// a validated upload with a timestamp column), checked, and stored chunk by chunk into the
// organization's history (history-import.ts), with its progress reported as it goes.

import type { Db } from '../storage/db.ts';
import { getDataset, type DatasetFiles } from '../storage/datasets.ts';
import {
  datasetSource,
  exampleSource,
  ImportParams,
  ImportRefused,
  ImportStopped,
  runHistoryImport,
  type ExampleRecords,
  type ImportSource,
} from './history-import.ts';
import { JobRefused, JobStopped, type JobHandler } from './runner.ts';

export interface HistoryImportDeps {
  db: Db;
  datasets: DatasetFiles;
  /** An imported label is known this long after its transaction. */
  labelDelay: number;
  /** The built-in example's rows for an example import (the sandbox's: nothing simulated again). */
  example: () => ExampleRecords;
  /** Before an import stores anything: what this process has scored but not written yet is
   *  written (the decision log), so the import skips those ids rather than taking them. */
  beforeImport: () => Promise<void>;
  /** After an import stored rows into an organization's history: its copy in memory, which must
   *  be built in time order, is dropped, so the next request loads it again. */
  imported: (organizationId: string) => void;
}

export function historyImportHandler(o: HistoryImportDeps): JobHandler {
  return {
    stage: 'checking',
    failure: () => 'the import failed on our side; rows stored so far are kept and an import queued again skips them',
    async run(job, { progress, stopped }) {
      try {
        const params = ImportParams.safeParse(job.params);
        if (!params.success || !job.organization_id) throw new ImportRefused('the job does not say what to import or where; queue the import again');
        // The moment the import began, the same on every attempt: the example ends there, and no
        // uploaded row may be later.
        const at = (job.started_at ?? new Date()).getTime();
        const stamp = { jobId: job.id, labelDelay: o.labelDelay };
        let source: ImportSource;
        if (params.data.source === 'example') source = exampleSource(o.example(), at, stamp);
        else {
          const dataset = await getDataset(o.db, params.data.dataset_id);
          if (!dataset || dataset.removed)
            throw new ImportRefused(`the dataset was ${dataset?.removed ?? 'not found'} before the import ran; upload the file again and import that`);
          source = datasetSource(o.datasets.path(dataset.stored_name), dataset.mapping, dataset.validation.columns.transaction_id !== null, at, stamp);
        }
        const organizationId = job.organization_id;
        await o.beforeImport();
        return await runHistoryImport({
          db: o.db,
          organizationId,
          jobId: job.id,
          source,
          progress: (s, f) => {
            progress.stage = s;
            progress.fraction = f;
            return progress.write();
          },
          stopped,
          onStored: () => o.imported(organizationId),
        });
      } catch (e) {
        // Handed back to the queue: whoever claims it next finishes it.
        if (e instanceof ImportStopped) throw new JobStopped();
        if (e instanceof ImportRefused) throw new JobRefused(e.message);
        throw e;
      }
    },
  };
}
