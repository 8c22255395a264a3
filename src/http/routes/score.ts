// `POST /api/risk/score`: what-if scoring against the public sandbox (src/app/sandbox.ts): the
// built-in example history as of its newest transaction, so the same request always gets the same
// answer. It reads no organization's data and records nothing; `notes` says so. Rate limited per
// client IP with a fixed window in memory (@fastify/rate-limit), 429 with `Retry-After` and
// `detail.retry_after_seconds`. Without a model it answers 503 with the reason.

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { App } from '../../app/app.ts';
import { ErrorResponse } from '../../contract/errors.ts';
import { ScoreRequest, ScoreResponse } from '../../contract/score.ts';
import { scoreBodyLimit } from '../schemas.ts';
import { deadline } from '../deadlines.ts';

export function scoreRoutes(server: FastifyInstance, app: Pick<App, 'config' | 'sandbox'>): void {
  server.withTypeProvider<ZodTypeProvider>().post(
    '/api/risk/score',
    {
      // No database deadline: the sandbox is read from memory, never from the database.
      config: { rateLimit: { max: app.config.SCORE_RATE_PER_MINUTE, timeWindow: 60_000 }, ...deadline('none') },
      bodyLimit: scoreBodyLimit(app.config.MAX_JSON_BODY_BYTES),
      // The response schema documents the answer; the scorer's typed result is serialised directly
      // rather than re-validated by zod on every request (too slow for the hot path).
      serializerCompiler: () => (data) => JSON.stringify(data),
      schema: {
        tags: ['scoring'],
        summary: 'Score one transaction against the public sandbox (what-if; nothing recorded)',
        description:
          "Calibrated risk score, band, decision, channel scores and attribution, exact SHAP reasons, entity history, graph evidence and a related ring, all read from the public sandbox: the built-in example history as of its newest transaction. Nothing is recorded and no organization's data is read; the same request always gets the same answer. Rate limited per client IP.",
        body: ScoreRequest,
        response: { 200: ScoreResponse, 422: ErrorResponse, 429: ErrorResponse, 503: ErrorResponse },
      },
    },
    async (request) => app.sandbox.score(request.body),
  );
}
