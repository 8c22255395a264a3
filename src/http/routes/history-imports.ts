// Backfilling an organization's history (`POST /api/organizations/{id}/history-imports`): a member
// queues a job that stores a validated upload's rows, or (a `test` organization only) the built-in
// example, into the organization's history, so that its velocity and graph features have context
// from its first scored transaction. Everything that can be told from the request is refused here,
// with the reason and what to do: a non-member (404), the example for a live organization (403), a
// dataset of another organization (403), one that does not validate or has no timestamp column
// (422), an expired one (410). What needs every row read (a row without a time, or dated after the
// import began) fails the job before anything is stored (jobs/history-import.ts). The job is
// answered 202 like a scoring job and read, listed and counted against the daily quota like one.

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { createOrganizationJob } from '../../storage/job-queue.ts';
import type { ImportParams } from '../../jobs/history-import.ts';
import type { Service } from '../../app/service.ts';
import { requireUser } from '../caller.ts';
import { ApiError } from '../errors.ts';
import { memberOrganization } from '../ownership.ts';
import { quotaExceeded, utcDayStart } from '../quota.ts';
import { ErrorResponse } from '../schemas.ts';
import { liveDataset } from './datasets.ts';
import { describeJob, Job } from './jobs.ts';
import { OrgParams } from './organizations.ts';
import { requireModel } from '../guards.ts';

// Exactly one of the two, as two shapes, so the reference says what is enforced.
const ImportBody = z.union([
  z.object({ dataset_id: z.string().min(1).max(100).describe('A validated upload with a timestamp column, of this organization or your own') }).strict(),
  z.object({ example: z.literal(true).describe('The built-in example dataset (test organizations only)') }).strict(),
]);

export function historyImportRoutes(app: FastifyInstance, service: Service): void {
  app.withTypeProvider<ZodTypeProvider>().post('/api/organizations/:id/history-imports', {
    schema: {
      tags: ['decisions'],
      summary: "Import labelled history into an organization (a job); returns the job",
      description:
        `Signed in, a member (session and X-CSRF-Token). Body \`{"dataset_id": "…"}\` (a validated upload of this organization or your own, with a timestamp column) or \`{"example": true}\` (the built-in example, test organizations only, shifted so its newest transaction is when the import begins). 202 with the job (GET /api/jobs/{id}; \`kind\` \`history_import\`, stage \`checking\` then \`importing\`); when it has succeeded its \`summary\` is \`{ imported, skipped_existing, labelled, fraud, first_time, last_time }\`. Labels are known from each row's time plus the model's label delay. Transaction ids the organization already has are skipped; a row without a time or dated after the import began fails the job with nothing stored. Counts against the organization's ${service.config.MAX_JOBS_PER_ORG_PER_DAY} jobs per UTC day.`,
      params: OrgParams,
      body: ImportBody,
      response: { 202: Job, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 410: ErrorResponse, 422: ErrorResponse, 429: ErrorResponse, 503: ErrorResponse },
    },
  }, async (request, reply) => {
    const { user } = requireUser(request, service);
    const org = await memberOrganization(service, request.params.id, user.id);
    // Jobs run only where a model is loaded (the runner is made with it).
    requireModel(service);
    let params: ImportParams;
    let datasetId: string | null = null;
    if ('example' in request.body) {
      if (org.stage !== 'test') {
        throw new ApiError(403, 'forbidden', `${org.name} is a live organization: the built-in example is simulated data and would mix into its real history.`, 'Import your own labelled upload with {"dataset_id": "…"}, or create a test organization (POST /api/organizations with "stage": "test") to try the example.', { stage: org.stage });
      }
      params = { source: 'example' };
    } else {
      const d = await liveDataset(service, request.body.dataset_id, request);
      const ours = d.organization_id === org.id || (d.organization_id === null && d.owner_user_id === user.id);
      if (!ours) {
        throw new ApiError(403, 'forbidden', `Dataset ${d.id} belongs to ${d.organization_id ? 'another organization' : 'no one signed in'}, not to ${org.name} or you.`, `Upload the file for this organization (POST /api/datasets/upload?organization_id=${org.id}) and import that.`);
      }
      if (!d.validation.valid) {
        throw new ApiError(422, 'validation_failed', `Dataset ${d.id} does not validate.`, `Fix it with POST /api/datasets/${d.id}/validate and a column mapping, then import it again.`, { validation: d.validation });
      }
      if (d.validation.columns.timestamp === null) {
        throw new ApiError(422, 'validation_failed', `Dataset ${d.id} has no timestamp column: without times its rows cannot be placed in the organization's timeline.`, `Map the column that holds each transaction's time with POST /api/datasets/${d.id}/validate and {"mapping": {"timestamp": "<your header>"}}, or add a timestamp column (ISO 8601 or epoch seconds) and upload again.`, { fields: [{ path: 'body.dataset_id', message: 'no timestamp column' }] });
      }
      params = { source: 'dataset', dataset_id: d.id };
      datasetId = d.id;
    }
    const quota = service.config.MAX_JOBS_PER_ORG_PER_DAY;
    const job = await createOrganizationJob(service.db, { kind: 'history_import', params, dataset_id: datasetId, mode: null, owner_user_id: user.id, organization_id: org.id }, quota, utcDayStart());
    if (!job) throw quotaExceeded(org.name, quota);
    void service.jobs?.poll();
    return reply.code(202).send(describeJob(job));
  });
}
