// Backfilling an organization's history: a member queues a job that stores a validated upload's
// rows, or (a `test` organization only) the built-in example, into the organization's history, so
// that its velocity and graph features have context from its first scored transaction. Everything
// that can be told from the request is refused here, with the reason and what to do: the example
// for a live organization (`forbidden`), a dataset of another organization (`forbidden`), one that
// does not validate or has no timestamp column (`validation_failed`), one whose mapping maps a field
// the organization has not declared (`validation_failed`, field-mapping.ts), an expired one
// (`gone`). What needs every row read (a row without a time, or dated after the import began, a
// mapped field's cell that cannot be its value) fails the job before anything is stored
// (jobs/history-import.ts). The job counts against the daily quota like a scoring job
// (job-quota.ts).

import type { ImportParams } from '../../jobs/history-import.ts';
import type { OrganizationRow } from '../../storage/accounts-store.ts';
import type { DatasetRecord } from '../../storage/datasets.ts';
import { createOrganizationJob } from '../../storage/job-queue.ts';
import type { Job } from '../../contract/jobs.ts';
import { liveDataset } from './datasets.ts';
import { requireDeclaredFields } from './field-mapping.ts';
import { jobView } from './job-view.ts';
import { AppError } from '../errors.ts';
import { quotaExceeded, utcDayStart } from './job-quota.ts';
import type { JobDeps } from './scoring-jobs.ts';

/** What to import: an upload, or the built-in example. */
export type ImportSource = { dataset_id: string } | { example: true };

/** The example, for a `test` organization only: it is simulated data. */
function exampleFor(org: OrganizationRow): ImportParams {
  if (org.stage !== 'test') {
    throw new AppError(
      'forbidden',
      `${org.name} is a live organization: the built-in example is simulated data and would mix into its real history.`,
      'Import your own labelled upload with {"dataset_id": "…"}, or create a test organization (POST /api/organizations with "stage": "test") to try the example.',
      { stage: org.stage },
    );
  }
  return { source: 'example' };
}

/** An upload of the organization's or the user's own that validates and has times. */
async function importableDataset(deps: JobDeps, org: OrganizationRow, userId: string, id: string): Promise<DatasetRecord> {
  const d = await liveDataset(deps, id, userId);
  const ours = d.organization_id === org.id || (d.organization_id === null && d.owner_user_id === userId);
  if (!ours) {
    throw new AppError(
      'forbidden',
      `Dataset ${d.id} belongs to ${d.organization_id ? 'another organization' : 'no one signed in'}, not to ${org.name} or you.`,
      `Upload the file for this organization (POST /api/datasets/upload?organization_id=${org.id}) and import that.`,
    );
  }
  if (!d.validation.valid) {
    throw new AppError(
      'validation_failed',
      `Dataset ${d.id} does not validate.`,
      `Fix it with POST /api/datasets/${d.id}/validate and a column mapping, then import it again.`,
      { validation: d.validation },
    );
  }
  if (d.validation.columns.timestamp === null) {
    throw new AppError(
      'validation_failed',
      `Dataset ${d.id} has no timestamp column: without times its rows cannot be placed in the organization's timeline.`,
      `Map the column that holds each transaction's time with POST /api/datasets/${d.id}/validate and {"mapping": {"timestamp": "<your header>"}}, or add a timestamp column (ISO 8601 or epoch seconds) and upload again.`,
      { fields: [{ path: 'body.dataset_id', message: 'no timestamp column' }] },
    );
  }
  return d;
}

/** Queues a history import into `org`, which user `userId` has been checked to belong to; wakes
 *  the runner. `job_quota_exceeded` past the organization's daily quota. */
export async function queueHistoryImport(deps: JobDeps, org: OrganizationRow, userId: string, source: ImportSource): Promise<Job> {
  let params: ImportParams;
  let datasetId: string | null = null;
  if ('example' in source) params = exampleFor(org);
  else {
    const d = await importableDataset(deps, org, userId, source.dataset_id);
    await requireDeclaredFields(deps.db, org, d, 'the import');
    params = { source: 'dataset', dataset_id: d.id };
    datasetId = d.id;
  }
  const quota = deps.config.MAX_JOBS_PER_ORG_PER_DAY;
  const job = await createOrganizationJob(
    deps.db,
    { kind: 'history_import', params, dataset_id: datasetId, mode: null, owner_user_id: userId, organization_id: org.id },
    quota,
    utcDayStart(),
  );
  if (!job) throw quotaExceeded(org.name, quota);
  void deps.jobs?.poll();
  return jobView(job);
}
