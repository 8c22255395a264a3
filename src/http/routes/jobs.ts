// Scoring jobs over HTTP: queue one for a dataset (`POST /api/datasets/score`, 202 with the job),
// read its progress, page its result, download it as CSV. The use cases are
// app/datasets/scoring-jobs.ts's and answer with the contract's job; here the request is read and
// their answer sent. Until a job has succeeded, its result and download answer 409
// `job_not_finished` (saying where it is); a failed job's `error` carries the reason. Progress and
// stage come from the work itself (jobs/runner.ts), never from a timer. The download is named after
// the uploaded file (paysim.csv → paysim.scored.csv).
// History imports (routes/history-imports.ts) are jobs too, read and listed here with `kind`
// `history_import`; they store rows rather than make them, so their result and download answer 404
// `not_found` pointing at the job's `summary`.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { MODE_NAMES } from '../../model/bundle-types.ts';
import type { App } from '../../app/app.ts';
import { ErrorResponse } from '../../contract/errors.ts';
import { Job, JobList, JobResultObject } from '../../contract/jobs.ts';
import { requireUser } from '../caller.ts';
import { newOwnership } from '../ownership.ts';
import { deadline } from '../deadlines.ts';

const JobParams = z.object({ id: z.string().min(1).max(100) });

/** `Content-Disposition` for a download (RFC 6266): the name in ASCII for clients that read only
 *  `filename` (other characters as `_`), and, when that is not the name, exactly, UTF-8
 *  percent-encoded, as `filename*`. */
export function attachment(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  if (ascii === name) return `attachment; filename="${name}"`;
  const exact = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${exact}`;
}

export function jobRoutes(server: FastifyInstance, app: Pick<App, 'config' | 'sessions' | 'organizations' | 'models' | 'scoringJobs'>): void {
  const r = server.withTypeProvider<ZodTypeProvider>();

  /** The caller the use cases decide visibility for: signed in, or a guest. */
  const caller = (request: FastifyRequest) => request.signedIn?.user.id;

  r.post(
    '/api/datasets/score',
    {
      schema: {
        tags: ['datasets'],
        summary: 'Queue scoring of an uploaded dataset; returns the job',
        description: `With \`organization_id\` (signed in, a member) the job belongs to the organization and counts against its quota of ${app.config.MAX_JOBS_PER_ORG_PER_DAY} jobs per UTC day (429 \`job_quota_exceeded\` past it). Without it, a job of an organization's dataset belongs to that organization too.`,
        body: z
          .object({
            dataset_id: z.string().min(1).max(100),
            mode: z.enum(MODE_NAMES).default('balanced'),
            organization_id: z.string().min(1).max(100).optional(),
          })
          .strict(),
        response: { 202: Job, 401: ErrorResponse, 404: ErrorResponse, 410: ErrorResponse, 422: ErrorResponse, 429: ErrorResponse, 503: ErrorResponse },
      },
    },
    async (request, reply) => {
      app.models.bundle();
      const d = await app.scoringJobs.scorable(request.body.dataset_id, caller(request));
      // Without an organization named, a job of an organization's dataset belongs to it too.
      const ownership = await newOwnership(app, request, request.body.organization_id ?? d.organization_id ?? undefined);
      return reply.code(202).send(await app.scoringJobs.queue(d, request.body.mode, ownership));
    },
  );

  r.get(
    '/api/jobs/:id',
    { schema: { tags: ['datasets'], summary: 'Job progress', params: JobParams, response: { 200: Job, 404: ErrorResponse } } },
    async (request) => app.scoringJobs.one(request.params.id, caller(request)),
  );

  r.get(
    '/api/jobs',
    {
      schema: {
        tags: ['datasets'],
        summary: "An organization's jobs, or my own",
        description:
          'Signed in. With `organization_id`, the jobs of that organization (members only; 404 otherwise); without it, my jobs outside any organization. Newest first, at most 500.',
        querystring: z.object({ organization_id: z.string().min(1).max(100).optional() }),
        response: { 200: JobList, 401: ErrorResponse, 404: ErrorResponse, 503: ErrorResponse },
      },
    },
    async (request) => {
      const { user } = requireUser(request, app.sessions);
      return app.scoringJobs.of(user.id, request.query.organization_id);
    },
  );

  r.get(
    '/api/jobs/:id/result',
    {
      schema: {
        tags: ['datasets'],
        summary: 'Finished result, rows in pages',
        params: JobParams,
        querystring: z.object({ page: z.coerce.number().int().min(1).default(1), page_size: z.coerce.number().int().min(1).max(1000).default(100) }),
        response: { 200: JobResultObject, 404: ErrorResponse, 409: ErrorResponse },
      },
    },
    async (request) => app.scoringJobs.page(request.params.id, caller(request), request.query.page, request.query.page_size),
  );

  r.get(
    '/api/jobs/:id/download',
    {
      config: {
        ...deadline('transfer'),
        documentedResponses: {
          200: {
            description:
              "The job's scored rows as CSV: row, transaction_id, amount, customer_id, merchant_id, risk_score, risk_band, decision, path, score_<channel> for each channel, reason_1… and label. A value a spreadsheet would run as a formula is prefixed with an apostrophe. Plain RFC 4180 (CRLF line ends): the header is the first line and nothing but rows follows. A drift warning is in the job (GET /api/jobs/{id}, summary.drift), never in the file.",
            headers: {
              'content-disposition': {
                schema: { type: 'string' },
                description: `attachment; filename="<upload name>.scored.csv", and for a name beyond ASCII also filename*=UTF-8''<the name, percent-encoded>.scored.csv`,
              },
            },
            content: { 'text/csv': { schema: { type: 'string' } } },
          },
        },
      },
      schema: {
        tags: ['datasets'],
        summary: 'Scored rows as CSV (formula-like values escaped)',
        params: JobParams,
        response: { 404: ErrorResponse, 409: ErrorResponse },
      },
    },
    async (request, reply) => {
      const { filename, csv } = await app.scoringJobs.download(request.params.id, caller(request));
      reply.header('content-type', 'text/csv; charset=utf-8');
      reply.header('content-disposition', attachment(filename));
      return reply.send(csv as never);
    },
  );
}
