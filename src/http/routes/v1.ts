// `POST /api/v1/risk/score` on the customer surface (`Authorization: Bearer <API key>`, checked once
// for every /api/v1 route by the surface's hook, app.ts): HTTP in and out of the score-and-record
// use case (src/app/score-and-record.ts), which reads and records the key's organization's history
// and owns idempotency. A retry is answered with the stored body and `Idempotent-Replayed: true`; a
// different transaction under a used id is 409 `duplicate_transaction`. The rate limit is per key.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { KeySurface } from '../../app/app.ts';
import { Stopwatch } from '../../domain/stopwatch.ts';
import { ErrorResponse } from '../../contract/errors.ts';
import { ScoreRequest, ScoreResponse } from '../../contract/score.ts';
import { scoreBodyLimit } from '../schemas.ts';
import { deadline } from '../deadlines.ts';

/** The rate limit of the key surface: SCORE_RATE_PER_MINUTE per key, counted after authentication. */
function keyRateLimit(app: KeySurface) {
  return {
    max: app.config.SCORE_RATE_PER_MINUTE,
    timeWindow: 60_000,
    hook: 'preHandler' as const,
    keyGenerator: (request: FastifyRequest) => `key:${request.apiKey?.id ?? request.ip}`,
  };
}

/** Bodies are sent as the JSON text that was stored: Fastify sends a string with a JSON content type
 *  as it is, so a replay is byte for byte the first answer. */
const JSON_TYPE = 'application/json; charset=utf-8';

/** Where a recorded score's server time went, as the standard Server-Timing header (milliseconds;
 *  browsers' developer tools and the HTTP benchmark read it): the key's check, the body's parsing
 *  and validation, then the use case's phases, and the total from the key's check to the commit.
 *  What happens after the answer is handed to Fastify (sending, the request log) is not in it. */
function serverTiming(request: FastifyRequest, handling: number, useCase: Stopwatch): string {
  const auth = request.authenticated;
  const route = new Stopwatch(auth?.from ?? handling);
  route.lap('auth', auth?.to ?? handling);
  route.lap('validate', handling);
  return [...route.laps, ...useCase.laps, { name: 'total', ms: route.elapsed() }].map((l) => `${l.name};dur=${l.ms.toFixed(3)}`).join(', ');
}

export function v1Routes(server: FastifyInstance, app: KeySurface): void {
  server.withTypeProvider<ZodTypeProvider>().post(
    '/api/v1/risk/score',
    {
      config: { rateLimit: keyRateLimit(app), ...deadline('score') },
      bodyLimit: scoreBodyLimit(app.config.MAX_JSON_BODY_BYTES),
      schema: {
        tags: ['scoring'],
        summary: "Score one transaction against the organization's history, and record it",
        description:
          "Same body and response as POST /api/risk/score, but read from the key's organization's own history, into which the transaction is recorded with its decision (GET /api/v1/transactions/{transaction_id}). transaction_id is unique within the organization: a retry with the same amount, customer_id and merchant_id gets the stored response again with the header Idempotent-Replayed: true; other values are 409 duplicate_transaction. Authorization: Bearer <API key> (sk_test_… or sk_live_…). The use is recorded against the key; rate limited per key. A new answer carries a Server-Timing header with where its server time went (auth, validate, prepare, score, serialize, commit, total; milliseconds).",
        security: [{ apiKey: [] }],
        body: ScoreRequest,
        response: { 200: ScoreResponse, 401: ErrorResponse, 409: ErrorResponse, 422: ErrorResponse, 429: ErrorResponse, 503: ErrorResponse },
      },
    },
    async (request, reply) => {
      const handling = performance.now();
      const answer = await app.scoring.scoreAndRecord(request.apiKey!, request.body);
      if (answer.replayed) reply.header('idempotent-replayed', 'true');
      if (answer.timing) reply.header('server-timing', serverTiming(request, handling, answer.timing));
      return reply.type(JSON_TYPE).send(answer.body as never);
    },
  );
}
