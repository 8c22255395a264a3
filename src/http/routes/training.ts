// `POST /api/training/jobs`: training through the API is not built, but the request is checked for
// real, in the order a user would fix things (app/datasets/training-jobs.ts), and only then answered
// 501 `not_implemented` with what would have run and the command that runs it. From a dataset, or
// from an organization's own scored and imported transactions (no dataset_id): signed in; a member
// of the organization named (404), one of its owners (403); then the dataset's checks (404, 410,
// 400 `too_many_rows`, 422) or the organization's data (422 `not_enough_data`); the daily job quota (429).

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { App } from '../../app/app.ts';
import { ErrorResponse } from '../../contract/errors.ts';
import { requireUser } from '../caller.ts';
import { ApiError } from '../errors.ts';
import { storedText } from '../../contract/stored-text.ts';

const TrainingRequest = z
  .object({
    dataset_id: z.string().min(1).max(100).optional().describe('Train from this uploaded dataset; leave it out to train from the organization named'),
    organization_id: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe('Train for an organization you own; without dataset_id, from its own scored and imported transactions and their outcomes'),
    recalibrate: z
      .boolean()
      .optional()
      .describe("Without dataset_id: keep the built-in boosters and refit only the calibration on the organization's outcomes"),
    name: storedText('name', 200).optional().describe('Name of the model it would make'),
  })
  .strict();

export function trainingRoutes(server: FastifyInstance, app: Pick<App, 'sessions' | 'training'>): void {
  server.withTypeProvider<ZodTypeProvider>().post(
    '/api/training/jobs',
    {
      schema: {
        tags: ['training'],
        summary: 'Check a training request (always answers 501 after the checks)',
        description:
          "Runs every check a training job would need, then answers 501 `not_implemented` saying what would have run (`detail.would_run`) and the command that runs it: `npm run train -- --data FILE.csv` for a dataset, `npm run train -- --organization ORG_ID [--recalibrate]` for an organization's own data.",
        body: TrainingRequest,
        response: {
          400: ErrorResponse,
          401: ErrorResponse,
          403: ErrorResponse,
          404: ErrorResponse,
          410: ErrorResponse,
          422: ErrorResponse,
          429: ErrorResponse,
          501: ErrorResponse,
          503: ErrorResponse,
        },
      },
    },
    async (request) => {
      const { user } = requireUser(request, app.sessions);
      const plan = await app.training.plan(user.id, request.body);
      throw new ApiError(
        'not_implemented',
        'Training through the API is not built yet; every check passed.',
        plan.source === 'organization'
          ? `Train from the command line where the server runs: ${plan.command} (it stores the model as one of the organization's custom models, which an owner can then make a challenger).`
          : 'Train from the command line: npm run train -- --data FILE.csv --out models/NAME, then serve it with MODEL_DIR.',
        { would_run: plan },
      );
    },
  );
}
