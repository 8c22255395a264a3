// Backfilling an organization's history (`POST /api/organizations/{id}/history-imports`): a member
// queues a job that stores a validated upload's rows, or (a `test` organization only) the built-in
// example, into the organization's history (app/datasets/history-imports.ts decides). Refused before
// anything is queued, with the reason and what to do: a non-member (404), the example for a live
// organization (403), a dataset of another organization (403), one that does not validate or has
// no timestamp column (422), an expired one (410). The job is answered 202 like a scoring job and
// read, listed and counted against the daily quota like one.

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { App } from '../../app/app.ts';
import { ErrorResponse } from '../../contract/errors.ts';
import { Job } from '../../contract/jobs.ts';
import { requireUser } from '../caller.ts';
import { OrgParams } from '../records.ts';

// Exactly one of the two, as two shapes, so the reference says what is enforced.
const ImportBody = z.union([
  z.object({ dataset_id: z.string().min(1).max(100).describe('A validated upload with a timestamp column, of this organization or your own') }).strict(),
  z.object({ example: z.literal(true).describe('The built-in example dataset (test organizations only)') }).strict(),
]);

export function historyImportRoutes(server: FastifyInstance, app: Pick<App, 'config' | 'sessions' | 'organizations' | 'models' | 'historyImports'>): void {
  server.withTypeProvider<ZodTypeProvider>().post(
    '/api/organizations/:id/history-imports',
    {
      schema: {
        tags: ['decisions'],
        summary: 'Import labelled history into an organization (a job); returns the job',
        description: `Signed in, a member (session and X-CSRF-Token). Body \`{"dataset_id": "…"}\` (a validated upload of this organization or your own, with a timestamp column) or \`{"example": true}\` (the built-in example, test organizations only, shifted so its newest transaction is when the import begins). 202 with the job (GET /api/jobs/{id}; \`kind\` \`history_import\`, stage \`checking\` then \`importing\`); when it has succeeded its \`summary\` is \`{ imported, skipped_existing, labelled, fraud, first_time, last_time }\`. Labels are known from each row's time plus the model's label delay. Transaction ids the organization already has are skipped; a row without a time or dated after the import began fails the job with nothing stored. Counts against the organization's ${app.config.MAX_JOBS_PER_ORG_PER_DAY} jobs per UTC day.`,
        params: OrgParams,
        body: ImportBody,
        response: {
          202: Job,
          401: ErrorResponse,
          403: ErrorResponse,
          404: ErrorResponse,
          410: ErrorResponse,
          422: ErrorResponse,
          429: ErrorResponse,
          503: ErrorResponse,
        },
      },
    },
    async (request, reply) => {
      const { user } = requireUser(request, app.sessions);
      const org = await app.organizations.member(request.params.id, user.id);
      // Jobs run only where a model is loaded (the runner is made with it).
      app.models.bundle();
      return reply.code(202).send(await app.historyImports.queue(org, user.id, request.body));
    },
  );
}
