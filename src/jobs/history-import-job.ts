// The handler of `history_import` jobs: its source from the job's params (the built-in example, or
// a validated upload with a timestamp column), checked, and stored chunk by chunk into the
// organization's history (history-import.ts), with its progress reported as it goes; then the
// imported transactions' features as of each one's own time (imported-features.ts, stage
// `features`), so the organization can learn from them at once. The fields an
// upload's mapping maps are read as the organization declares them when the job runs: one retired
// since the import was queued (or mapped since) fails the job before anything is read.

import { fieldEntries, type ColumnMapping } from '../datasets/column-names.ts';
import { mappedFields, undeclaredFields, type MappedField } from '../datasets/mapped-fields.ts';
import type { HistoryImportSummary } from '../contract/jobs.ts';
import type { Db } from '../storage/db.ts';
import { getDataset, type DatasetFiles } from '../storage/datasets.ts';
import { organizationData } from '../storage/organization-data.ts';
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
import { computeImportedFeatures } from './imported-features.ts';
import { JobRefused, JobStopped, type JobHandler } from './runner.ts';
import type { ModelBundle } from '../model/bundle-types.ts';

export interface HistoryImportDeps {
  db: Db;
  datasets: DatasetFiles;
  /** An imported label is known this long after its transaction. */
  labelDelay: number;
  /** The model whose features imported transactions get (the built-in one's channels, as every
   *  scored transaction's); none: the import stores rows only. */
  model: ModelBundle | undefined;
  /** The built-in example's rows for an example import (the sandbox's: nothing simulated again). */
  example: () => Promise<ExampleRecords>;
  /** Before an import stores anything: what this process has scored but not written yet is
   *  written (the decision log), so the import skips those ids rather than taking them. */
  beforeImport: () => Promise<void>;
  /** After an import stored rows into an organization's history: its copy in memory, which must
   *  be built in time order, is built again (resolves once it is in place). */
  imported: (organizationId: string) => Promise<void>;
  /** Before an import stores rows: no rebuild of the organization's copy in memory until it ends
   *  (`imported` asks for one); returns the release. */
  importing: (organizationId: string) => () => void;
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
        if (params.data.source === 'example') source = exampleSource(await o.example(), at, stamp);
        else {
          const dataset = await getDataset(o.db, params.data.dataset_id);
          if (!dataset || dataset.removed)
            throw new ImportRefused(`the dataset was ${dataset?.removed ?? 'not found'} before the import ran; upload the file again and import that`);
          const fields = await declaredFields(o.db, job.organization_id, dataset.mapping, dataset.validation.columns_found);
          source = datasetSource(o.datasets.path(dataset.stored_name), dataset.mapping, dataset.validation.columns.transaction_id !== null, at, stamp, fields);
        }
        const organizationId = job.organization_id;
        await o.beforeImport();
        let rebuilt: Promise<void> | undefined;
        const release = o.importing(organizationId);
        let summary: HistoryImportSummary;
        try {
          summary = await runHistoryImport({
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
            onStored: () => {
              // Awaited below once the import succeeded; a failed one leaves it to finish alone.
              rebuilt = o.imported(organizationId);
            },
          });
        } finally {
          release();
        }
        // Once the job has stored its rows, this process's scores see them.
        await rebuilt;
        if (!o.model) return summary;
        progress.stage = 'features';
        progress.fraction = 0;
        await progress.write();
        await computeImportedFeatures(o.db, organizationId, o.model, {
          progress: (f) => {
            progress.fraction = f;
            return progress.write();
          },
          stopped,
          // Its rows, for the progress: counting the organization's rows without features would
          // hold the embedded database's one connection for a quarter of a second at 250,000.
          expected: summary.imported,
        });
        if (stopped()) throw new ImportStopped();
        // A replay that ran to its end left no imported transaction without features: every one of
        // this job's rows has them, whichever attempt stored them (the count the summary has).
        return { ...summary, featured: summary.imported };
      } catch (e) {
        // Handed back to the queue: whoever claims it next finishes it.
        if (e instanceof ImportStopped) throw new JobStopped();
        if (e instanceof ImportRefused) throw new JobRefused(e.message);
        throw e;
      }
    },
  };
}

/** The mapping's fields as the organization declares them now; ImportRefused naming those it does
 *  not declare. */
async function declaredFields(db: Db, organizationId: string, mapping: ColumnMapping, headers: readonly string[]): Promise<MappedField[]> {
  if (fieldEntries(mapping).length === 0) return [];
  const declared = (await organizationData(db, organizationId).fields.all()).map((f) => ({ name: f.name, type: f.type, key: f.key, retired: false }));
  const missing = undeclaredFields(mapping, declared);
  if (missing.length) {
    throw new ImportRefused(
      `the mapping maps ${missing.map(([name, header]) => `column "${header}" onto fields.${name}`).join(', ')}, which the organization does not declare now (retired since the import was queued, or mapped since without being declared); nothing was imported. Declare ${missing.length > 1 ? 'them' : 'it'} again, or remove ${missing.length > 1 ? 'them' : 'it'} from the dataset's mapping, and queue the import again.`,
    );
  }
  return mappedFields(mapping, declared, headers);
}
