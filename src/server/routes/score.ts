// `POST /api/risk/score`: one transaction in, the full score response out (src/scoring/scorer.ts).
// Rate limited per client IP with a fixed window in memory (@fastify/rate-limit), 429 with
// `Retry-After` and `detail.retry_after_seconds`. Without a model it answers 503 with the reason.

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Service } from '../../service/service.ts';
import { ApiError } from '../errors.ts';
import { ErrorResponse, ScoreRequest, ScoreResponse } from '../schemas.ts';
import { requireModel } from './public.ts';
import type { ScoreInput, ScoreResult } from '../../scoring/scorer.ts';

/** One score with the service's model, or 503 `model_unavailable` (shared by both surfaces). */
export function scoreOne(service: Service, input: ScoreInput, scorer = service.scorer): ScoreResult {
  requireModel(service);
  if (!scorer) throw new ApiError(503, 'model_unavailable', 'No model is loaded.', 'Restart the server with a complete model folder.');
  return scorer.score(input);
}

export function scoreRoutes(app: FastifyInstance, service: Service): void {
  app.withTypeProvider<ZodTypeProvider>().post('/api/risk/score', {
    config: { rateLimit: { max: service.config.SCORE_RATE_PER_MINUTE, timeWindow: 60_000 } },
    // The response schema documents the answer; the scorer's typed result is serialised directly
    // rather than re-validated by zod on every request (that cost a fifth of the server's time).
    serializerCompiler: () => (data) => JSON.stringify(data),
    schema: {
      tags: ['scoring'],
      summary: 'Score one transaction',
      description: 'Calibrated risk score, band, decision, channel scores and attribution, exact SHAP reasons, entity history, graph evidence and a related ring. Rate limited per client IP.',
      body: ScoreRequest,
      response: { 200: ScoreResponse, 422: ErrorResponse, 429: ErrorResponse, 503: ErrorResponse },
    },
  }, async (request) => scoreOne(service, request.body));
}
