// The job use cases: queue the scoring of a dataset, read a job the caller may see, list an
// organization's jobs or a user's own, page a finished job's result and stream its download. A job
// is answered as the contract's `Job` (job-view.ts). A job of an organization counts against its
// daily quota (job-quota.ts). A dataset whose mapping maps an organization's own fields is scored
// only for an organization that declares them (field-mapping.ts): the job checks their cells as an
// import would, and reads them no further. Until a job has succeeded its result is refused
// `job_not_finished` (saying where it is); a failed job's `error` carries the reason. History
// imports (history-imports.ts) are jobs too, read and listed here; they store rows rather than make
// them, so their result is `not_found`, pointing at the job's `summary`.

import type { Readable } from 'node:stream';
import type { Config } from '../../config.ts';
import { csvStream, readPage } from '../../jobs/results.ts';
import { getDataset, type DatasetRecord } from '../../storage/datasets.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import { createJob, createOrganizationJob, getJob, listJobs, type JobRecord, type ScoreMode } from '../../storage/job-queue.ts';
import { liveDataset, type DatasetStore } from './datasets.ts';
import { AppError } from '../errors.ts';
import { quotaExceeded, utcDayStart } from './job-quota.ts';
import { memberOrganization, visibleTo, type Owned } from '../access/ownership.ts';
import { jobView } from './job-view.ts';
import { refuseFieldsWithoutOrganization, requireDeclaredFields } from './field-mapping.ts';
import type { Job, JobList, JobResultPage } from '../../contract/jobs.ts';

/** What the job use cases need: the database, and this process's job runner (undefined without a
 *  model), to wake on a new job and to find a result's files. */
export interface JobDeps extends DatasetStore {
  db: Db;
  config: Pick<Config, 'UPLOAD_RETENTION_HOURS' | 'MAX_JOBS_PER_ORG_PER_DAY'>;
  jobs: { poll(): Promise<void>; resultPath(jobId: string): string } | undefined;
}

/** A dataset that can be scored: live, visible to the caller, and validating. */
export async function scorableDataset(deps: DatasetStore, id: string, userId: string | undefined): Promise<DatasetRecord> {
  const d = await liveDataset(deps, id, userId);
  if (!d.validation.valid)
    throw new AppError(
      'validation_failed',
      `Dataset ${d.id} does not validate yet.`,
      `Fix it with POST /api/datasets/${d.id}/validate and a column mapping, then queue it again.`,
      { validation: d.validation },
    );
  return d;
}

/** Queues the scoring of `dataset` for `ownership` (see scorableDataset): counted against the
 *  organization's quota when it has one (`job_quota_exceeded` past it). Wakes the runner. */
export async function queueScoringJob(
  deps: JobDeps,
  dataset: DatasetRecord,
  mode: ScoreMode,
  ownership: Owned & { organization?: { name: string } },
): Promise<Job> {
  let job: JobRecord | undefined;
  if (ownership.organization_id)
    await requireDeclaredFields(deps.db, { id: ownership.organization_id, name: ownership.organization?.name ?? 'the organization' }, dataset, 'the scoring');
  else refuseFieldsWithoutOrganization(dataset);
  if (ownership.organization_id) {
    const quota = deps.config.MAX_JOBS_PER_ORG_PER_DAY;
    job = await createOrganizationJob(
      deps.db,
      { dataset_id: dataset.id, mode, owner_user_id: ownership.owner_user_id!, organization_id: ownership.organization_id },
      quota,
      utcDayStart(),
    );
    if (!job) throw quotaExceeded(ownership.organization?.name ?? 'This organization', quota);
  } else job = await createJob(deps.db, { dataset_id: dataset.id, mode, owner_user_id: ownership.owner_user_id });
  void deps.jobs?.poll();
  return jobView(job);
}

/** A job the caller may see (ownership.ts), or `not_found`. */
async function visibleJob(deps: Pick<JobDeps, 'db'>, id: string, userId: string | undefined): Promise<JobRecord> {
  const job = await getJob(deps.db, id);
  if (!job || !(await visibleTo(deps.db, userId, job))) throw new AppError('not_found', `No job ${id}.`, 'Queue one with POST /api/datasets/score.');
  return job;
}

/** A job the caller may see, as answered; `not_found` otherwise. */
export async function readJob(deps: Pick<JobDeps, 'db'>, id: string, userId: string | undefined): Promise<Job> {
  return jobView(await visibleJob(deps, id, userId));
}

/** A scoring job the caller may see that has succeeded: a history import or a backtest has no result to read
 *  (`not_found`), and any other job is `job_not_finished` until it has succeeded. */
async function finishedJob(deps: Pick<JobDeps, 'db'>, id: string, userId: string | undefined): Promise<JobRecord> {
  const job = await visibleJob(deps, id, userId);
  if (job.kind === 'history_import') {
    throw new AppError(
      'not_found',
      `Job ${id} is a history import: it stores rows into the organization's history and has no scored rows to page or download.`,
      `Read what it imported in the summary of GET /api/jobs/${id}, and the rows with GET /api/organizations/${job.organization_id ?? '{id}'}/transactions.`,
      { kind: job.kind },
    );
  }
  if (job.kind === 'backtest') {
    throw new AppError(
      'not_found',
      `Job ${id} is a backtest: its report is the summary, with no scored rows to page or download.`,
      `Read the report in the summary of GET /api/jobs/${id}.`,
      { kind: job.kind },
    );
  }
  if (job.status !== 'succeeded') {
    throw new AppError(
      'job_not_finished',
      `Job ${id} is ${job.status}${job.status === 'running' ? ` (${job.stage}, ${Math.round(job.progress * 100)} %)` : ''}${job.error ? `: ${job.error}` : ''}.`,
      job.status === 'failed' ? 'Fix what the error says and queue a new job.' : 'Poll GET /api/jobs/{id} until status is succeeded.',
      { status: job.status },
    );
  }
  return job;
}

/** The jobs of organization `organizationId` (its members only: `not_found` otherwise), or without
 *  it the user's own jobs outside any organization; newest first, at most 500. */
export async function jobsOf(deps: Pick<JobDeps, 'db'>, userId: string, organizationId: string | undefined): Promise<JobList> {
  if (organizationId) await memberOrganization(deps.db, organizationId, userId);
  return { jobs: (await listJobs(deps.db, organizationId ? { organizationId } : { userId })).map((j) => jobView(j)) };
}

/** One page of a finished job's scored rows, with its summary and metrics. */
export async function jobPage(deps: JobDeps, id: string, userId: string | undefined, page: number, pageSize: number): Promise<JobResultPage> {
  const job = await finishedJob(deps, id, userId);
  const { rows, total } = await readPage(deps.jobs!.resultPath(job.id), page, pageSize);
  const summary = job.result as { metrics?: unknown } | null;
  return {
    job_id: job.id,
    mode: job.mode,
    rows,
    page,
    page_size: pageSize,
    total_rows: total,
    total_pages: Math.ceil(total / pageSize),
    summary,
    metrics: summary?.metrics ?? null,
  };
}

/** The download's file name: the upload's, with `.scored.csv` for `.csv` (paysim.csv →
 *  paysim.scored.csv); the job id when the dataset row is gone. Upload names keep only letters,
 *  digits, dots, dashes, underscores and spaces (datasets.ts displayName); the route writes the
 *  header's ASCII and UTF-8 forms. */
async function downloadName(db: Queryable, job: JobRecord): Promise<string> {
  const d = job.dataset_id ? await getDataset(db, job.dataset_id) : undefined;
  const stem = d?.original_name.replace(/\.csv$/i, '');
  return stem ? `${stem}.scored.csv` : `${job.id}.csv`;
}

/** A finished job's scored rows as CSV (jobs/results.ts), streamed, under the upload's name. Its
 *  drift warning stays in the job's summary: the file is plain CSV. */
export async function jobDownload(deps: JobDeps, id: string, userId: string | undefined): Promise<{ filename: string; csv: Readable }> {
  const job = await finishedJob(deps, id, userId);
  const filename = await downloadName(deps.db, job);
  return { filename, csv: csvStream(deps.jobs!.resultPath(job.id)) };
}
