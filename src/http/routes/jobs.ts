// Scoring jobs over HTTP: queue one for a dataset (`POST /api/datasets/score`, 202 with the job),
// read its progress, page its result, download it as CSV. Until a job has succeeded, its result and
// download answer 409 `job_not_finished` (saying where it is); a failed job's `error` carries the
// reason. Progress and stage come from the work itself (jobs/runner.ts), never from a timer. The
// download is named after the uploaded file (paysim.csv → paysim.scored.csv).
// History imports (routes/history-imports.ts) are jobs too, read and listed here with `kind`
// `history_import`; they store rows rather than make them, so their result and download answer 404
// `not_found` pointing at the job's `summary`.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { createJob, createOrganizationJob, getJob, listJobs, type JobRecord } from '../../storage/job-queue.ts';
import { csvStream, readPage } from '../../jobs/results.ts';
import { getDataset } from '../../storage/datasets.ts';
import type { Queryable } from '../../storage/db.ts';
import { MODE_NAMES } from '../../model/model.ts';
import type { Service } from '../../app/service.ts';
import { ApiError } from '../errors.ts';
import { ErrorResponse } from '../schemas.ts';
import { liveDataset } from './datasets.ts';
import { requireModel } from '../guards.ts';
import { requireUser } from '../caller.ts';
import { memberOrganization, newOwnership, visibleTo } from '../ownership.ts';
import { quotaExceeded, utcDayStart } from '../quota.ts';

const JobParams = z.object({ id: z.string().min(1).max(100) });
export const Job = z.object({
  id: z.string(),
  kind: z.enum(['score', 'history_import', 'rings']).describe('`score`: a dataset scored (POST /api/datasets/score); `history_import`: rows stored into an organization\'s history; `rings`: the service\'s own analysis of a weekly window, which belongs to no user and is never listed'),
  status: z.enum(['queued', 'running', 'succeeded', 'failed']),
  stage: z.string(),
  progress: z.number(),
  elapsed_seconds: z.number(),
  error: z.string().optional(),
  dataset_id: z.string().nullable().describe('The dataset scored or imported; null for an import of the built-in example'),
  source: z.enum(['dataset', 'example']).optional().describe('What a history import stores'),
  organization_id: z.string().nullable(),
  mode: z.enum(MODE_NAMES).nullable().describe('Scoring jobs only'),
  created_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  summary: z.record(z.string(), z.unknown()).nullable(),
});
const Anything = z.record(z.string(), z.unknown());

export function describeJob(j: JobRecord, now = Date.now()) {
  const start = j.started_at?.getTime();
  const end = j.finished_at?.getTime() ?? now;
  const source = j.kind === 'history_import' ? (j.params as { source?: 'dataset' | 'example' } | null)?.source : undefined;
  return {
    id: j.id,
    kind: j.kind,
    status: j.status,
    stage: j.stage,
    progress: j.progress,
    elapsed_seconds: start === undefined ? 0 : Math.round((end - start) / 100) / 10,
    ...(j.error ? { error: j.error } : {}),
    dataset_id: j.dataset_id,
    ...(source ? { source } : {}),
    organization_id: j.organization_id,
    mode: j.mode,
    created_at: j.created_at.toISOString(),
    started_at: j.started_at?.toISOString() ?? null,
    finished_at: j.finished_at?.toISOString() ?? null,
    summary: (j.result as Record<string, unknown> | null) ?? null,
  };
}

/** The download's file name: the upload's, with `.scored.csv` for `.csv` (paysim.csv →
 *  paysim.scored.csv); the job id when the dataset row is gone. Upload names keep only word
 *  characters, dots, dashes and spaces (datasets.ts), so the name is safe in a quoted header. */
async function downloadName(db: Queryable, job: JobRecord): Promise<string> {
  const d = job.dataset_id ? await getDataset(db, job.dataset_id) : undefined;
  const stem = d?.original_name.replace(/\.csv$/i, '');
  return stem ? `${stem}.scored.csv` : `${job.id}.csv`;
}

export function jobRoutes(app: FastifyInstance, service: Service): void {
  const r = app.withTypeProvider<ZodTypeProvider>();

  /** A job the caller may see (ownership.ts), or 404. */
  const visibleJob = async (id: string, request: FastifyRequest) => {
    const job = await getJob(service.db, id);
    if (!job || !(await visibleTo(service, request, job))) throw new ApiError(404, 'not_found', `No job ${id}.`, 'Queue one with POST /api/datasets/score.');
    return job;
  };

  const finishedJob = async (id: string, request: FastifyRequest) => {
    const job = await visibleJob(id, request);
    if (job.kind === 'history_import') {
      throw new ApiError(404, 'not_found', `Job ${id} is a history import: it stores rows into the organization's history and has no scored rows to page or download.`, `Read what it imported in the summary of GET /api/jobs/${id}, and the rows with GET /api/organizations/${job.organization_id ?? '{id}'}/transactions.`, { kind: job.kind });
    }
    if (job.status !== 'succeeded') {
      throw new ApiError(409, 'job_not_finished', `Job ${id} is ${job.status}${job.status === 'running' ? ` (${job.stage}, ${Math.round(job.progress * 100)} %)` : ''}${job.error ? `: ${job.error}` : ''}.`, job.status === 'failed' ? 'Fix what the error says and queue a new job.' : 'Poll GET /api/jobs/{id} until status is succeeded.', { status: job.status });
    }
    return job;
  };

  r.post('/api/datasets/score', {
    schema: {
      tags: ['datasets'],
      summary: 'Queue scoring of an uploaded dataset; returns the job',
      description: `With \`organization_id\` (signed in, a member) the job belongs to the organization and counts against its quota of ${service.config.MAX_JOBS_PER_ORG_PER_DAY} jobs per UTC day (429 \`job_quota_exceeded\` past it). Without it, a job of an organization's dataset belongs to that organization too.`,
      body: z.object({ dataset_id: z.string().min(1).max(100), mode: z.enum(MODE_NAMES).default('balanced'), organization_id: z.string().min(1).max(100).optional() }).strict(),
      response: { 202: Job, 401: ErrorResponse, 404: ErrorResponse, 410: ErrorResponse, 422: ErrorResponse, 429: ErrorResponse, 503: ErrorResponse },
    },
  }, async (request, reply) => {
    requireModel(service);
    const d = await liveDataset(service, request.body.dataset_id, request);
    if (!d.validation.valid) throw new ApiError(422, 'validation_failed', `Dataset ${d.id} does not validate yet.`, `Fix it with POST /api/datasets/${d.id}/validate and a column mapping, then queue it again.`, { validation: d.validation });
    const ownership = await newOwnership(service, request, request.body.organization_id ?? d.organization_id ?? undefined);
    let job: JobRecord | undefined;
    if (ownership.organization_id) {
      const quota = service.config.MAX_JOBS_PER_ORG_PER_DAY;
      job = await createOrganizationJob(service.db, { dataset_id: d.id, mode: request.body.mode, owner_user_id: ownership.owner_user_id!, organization_id: ownership.organization_id }, quota, utcDayStart());
      if (!job) throw quotaExceeded(ownership.organization?.name ?? 'This organization', quota);
    } else job = await createJob(service.db, { dataset_id: d.id, mode: request.body.mode, owner_user_id: ownership.owner_user_id });
    void service.jobs?.poll();
    return reply.code(202).send(describeJob(job));
  });

  r.get('/api/jobs/:id', { schema: { tags: ['datasets'], summary: 'Job progress', params: JobParams, response: { 200: Job, 404: ErrorResponse } } }, async (request) =>
    describeJob(await visibleJob(request.params.id, request)),
  );

  r.get('/api/jobs', {
    schema: {
      tags: ['datasets'],
      summary: "An organization's jobs, or my own",
      description: 'Signed in. With `organization_id`, the jobs of that organization (members only; 404 otherwise); without it, my jobs outside any organization. Newest first, at most 500.',
      querystring: z.object({ organization_id: z.string().min(1).max(100).optional() }),
      response: { 200: z.object({ jobs: z.array(Job) }), 401: ErrorResponse, 404: ErrorResponse, 503: ErrorResponse },
    },
  }, async (request) => {
    const { user } = requireUser(request, service);
    const orgId = request.query.organization_id;
    if (orgId) await memberOrganization(service, orgId, user.id);
    const jobs = await listJobs(service.db, orgId ? { organizationId: orgId } : { userId: user.id });
    return { jobs: jobs.map((j) => describeJob(j)) };
  });

  r.get('/api/jobs/:id/result', {
    schema: { tags: ['datasets'], summary: 'Finished result, rows in pages', params: JobParams, querystring: z.object({ page: z.coerce.number().int().min(1).default(1), page_size: z.coerce.number().int().min(1).max(1000).default(100) }), response: { 200: Anything, 404: ErrorResponse, 409: ErrorResponse } },
  }, async (request) => {
    const job = await finishedJob(request.params.id, request);
    const { page, page_size } = request.query;
    const { rows, total } = await readPage(service.jobs!.resultPath(job.id), page, page_size);
    const summary = job.result as { metrics?: unknown } | null;
    return { job_id: job.id, mode: job.mode, rows, page, page_size, total_rows: total, total_pages: Math.ceil(total / page_size), summary, metrics: summary?.metrics ?? null };
  });

  r.get('/api/jobs/:id/download', {
    config: {
      documentedResponses: {
        200: {
          description: "The job's scored rows as CSV: row, transaction_id, amount, customer_id, merchant_id, risk_score, risk_band, decision, path, score_<channel> for each channel, reason_1… and label. A value a spreadsheet would run as a formula is prefixed with an apostrophe. When the job carries a drift warning, it comes first as a line starting with #.",
          headers: { 'content-disposition': { schema: { type: 'string' }, description: 'attachment; filename="<upload name>.scored.csv"' } },
          content: { 'text/csv': { schema: { type: 'string' } } },
        },
      },
    },
    schema: { tags: ['datasets'], summary: 'Scored rows as CSV (formula-like values escaped)', params: JobParams, response: { 404: ErrorResponse, 409: ErrorResponse } },
  }, async (request, reply) => {
    const job = await finishedJob(request.params.id, request);
    reply.header('content-type', 'text/csv; charset=utf-8');
    reply.header('content-disposition', `attachment; filename="${await downloadName(service.db, job)}"`);
    const drift = (job.result as { drift?: { warning?: string | null } | null } | null)?.drift;
    return reply.send(csvStream(service.jobs!.resultPath(job.id), drift?.warning) as never);
  });
}
