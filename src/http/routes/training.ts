// `POST /api/training/jobs`: training through the API is not built, but the request is checked for
// real, in the order a user would fix things, and only then answered 501 `not_implemented` with
// what would have run. Checks: signed in; a member of the organization named (404 otherwise); the
// dataset visible to the caller and not expired (404 / 410); it validates; at most
// MAX_TRAINING_ROWS rows (400 `too_many_rows`); a label column with both classes (422
// `validation_failed`, counted by reading the file); the organization's daily job quota (429).

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { readRows } from '../../datasets/csv.ts';
import { countOrganizationJobsSince } from '../../storage/job-queue.ts';
import { isProblem } from '../../model/model.ts';
import type { Service } from '../../app/service.ts';
import { requireUser } from '../caller.ts';
import { ApiError } from '../errors.ts';
import { memberOrganization } from '../ownership.ts';
import { quotaExceeded, utcDayStart } from '../quota.ts';
import { ErrorResponse } from '../schemas.ts';
import { liveDataset } from './datasets.ts';

const TrainingRequest = z
  .object({
    dataset_id: z.string().min(1).max(100),
    organization_id: z.string().min(1).max(100).optional().describe('Train for an organization you belong to'),
    name: z.string().trim().min(1).max(200).optional().describe('Name of the model it would make'),
  })
  .strict();

export function trainingRoutes(app: FastifyInstance, service: Service): void {
  app.withTypeProvider<ZodTypeProvider>().post('/api/training/jobs', {
    schema: {
      tags: ['training'],
      summary: 'Check a training request (always answers 501 after the checks)',
      description: 'Runs every check a training job would need, then answers 501 `not_implemented` saying what would have run. Train from the command line with `npm run train -- --data FILE.csv`.',
      body: TrainingRequest,
      response: { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 410: ErrorResponse, 422: ErrorResponse, 429: ErrorResponse, 501: ErrorResponse, 503: ErrorResponse },
    },
  }, async (request) => {
    const { user } = requireUser(request, service);
    const body = request.body;
    const org = body.organization_id ? await memberOrganization(service, body.organization_id, user.id) : undefined;
    const d = await liveDataset(service, body.dataset_id, request);
    if (!d.validation.valid) throw new ApiError(422, 'validation_failed', `Dataset ${d.id} does not validate yet.`, `Fix it with POST /api/datasets/${d.id}/validate and a column mapping first.`, { validation: d.validation });
    const max = service.config.MAX_TRAINING_ROWS;
    if (d.rows > max) throw new ApiError(400, 'too_many_rows', `Dataset ${d.id} has ${d.rows} rows; training takes at most ${max}.`, `Upload at most ${max} rows (the most recent ones), or raise MAX_TRAINING_ROWS on the server.`);
    if (!d.has_labels) throw new ApiError(422, 'validation_failed', `Dataset ${d.id} has no label column.`, 'Add a label column (1 fraud, 0 legitimate) or map one with POST /api/datasets/{id}/validate.', { fields: [{ path: 'label', message: 'missing' }] });
    let fraud = 0;
    let legit = 0;
    for await (const row of readRows(service.datasets.path(d.stored_name), d.mapping)) {
      if (row.label === 1) fraud++;
      else if (row.label === 0) legit++;
    }
    if (fraud === 0 || legit === 0) {
      throw new ApiError(422, 'validation_failed', `Dataset ${d.id} has ${fraud} fraud and ${legit} legitimate labels; training needs both classes.`, 'Include labelled examples of both classes (1 fraud, 0 legitimate).', { fields: [{ path: 'label', message: 'needs both 0 and 1' }] });
    }
    if (org) {
      const quota = service.config.MAX_JOBS_PER_ORG_PER_DAY;
      if ((await countOrganizationJobsSince(service.db, org.id, utcDayStart())) >= quota) throw quotaExceeded(org.name, quota);
    }
    const base = isProblem(service.model) ? null : service.model.file.id;
    throw new ApiError(501, 'not_implemented', 'Training through the API is not built yet; every check passed.', 'Train from the command line: npm run train -- --data FILE.csv --out models/NAME, then serve it with MODEL_DIR.', {
      would_run: {
        dataset_id: d.id,
        organization_id: org?.id ?? null,
        name: body.name ?? null,
        rows: d.rows,
        fraud_labels: fraud,
        legitimate_labels: legit,
        features_like: base,
        steps: ['point-in-time features in four channels', 'one interaction-constrained LightGBM booster split into four channel boosters', 'stacking and Platt calibration on the validation split', 'thresholds per mode', 'evaluation on the test split'],
      },
    });
  });
}
