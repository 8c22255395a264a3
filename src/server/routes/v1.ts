// The customer surface: `POST /api/v1/risk/score` with `Authorization: Bearer <API key>`. Same body,
// engine and response as the dashboard's `POST /api/risk/score`; the key is looked up on every
// request (a rotation or revocation anywhere takes effect at once), its use is counted, and the rate
// limit is per key (SCORE_RATE_PER_MINUTE). A missing, malformed, unknown, rotated-out or revoked key
// is 401 `invalid_api_key`; the key never appears in a log line or an error.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { LiveApiKey } from '../../storage/accounts-store.ts';
import type { Service } from '../../service/service.ts';
import { requireAccounts } from '../caller.ts';
import { ApiError } from '../errors.ts';
import { ErrorResponse, ScoreRequest, ScoreResponse } from '../schemas.ts';
import { scoreOne } from './score.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The API key a `/api/v1` request authenticated with. */
    apiKey?: LiveApiKey;
  }
}

function bearer(request: FastifyRequest): string | undefined {
  const h = request.headers.authorization;
  const m = typeof h === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(h) : null;
  return m?.[1];
}

export function v1Routes(app: FastifyInstance, service: Service): void {
  app.withTypeProvider<ZodTypeProvider>().post('/api/v1/risk/score', {
    config: {
      rateLimit: {
        max: service.config.SCORE_RATE_PER_MINUTE,
        timeWindow: 60_000,
        // After authentication, so the window is the key's (CONTRACT.md: per key on /api/v1).
        hook: 'preHandler',
        keyGenerator: (request: FastifyRequest) => `key:${request.apiKey?.id ?? request.ip}`,
      },
    },
    serializerCompiler: () => (data) => JSON.stringify(data),
    onRequest: async (request) => {
      const accounts = requireAccounts(service);
      const secret = bearer(request);
      if (!secret) throw new ApiError(401, 'invalid_api_key', 'This endpoint needs an API key.', 'Send the header Authorization: Bearer <API key>; an organization owner creates keys with POST /api/organizations/{id}/api-keys.');
      const key = await accounts.authenticateKey(secret);
      if (!key) throw new ApiError(401, 'invalid_api_key', 'The API key is not valid: unknown, rotated out or revoked.', 'Use a current key of your organization, or ask an owner to create one.');
      request.apiKey = key;
    },
    schema: {
      tags: ['scoring'],
      summary: 'Score one transaction with an API key',
      description: 'Same body and response as POST /api/risk/score. Authorization: Bearer <API key> (sk_test_… or sk_live_…). The use is recorded against the key; rate limited per key.',
      security: [{ apiKey: [] }],
      body: ScoreRequest,
      response: { 200: ScoreResponse, 401: ErrorResponse, 422: ErrorResponse, 429: ErrorResponse, 503: ErrorResponse },
    },
  }, async (request) => {
    const key = request.apiKey!;
    // The organization's active custom model, if it has one; else the built-in model.
    const custom = key.active_model_id ? await service.scorerForModel(key.active_model_id) : undefined;
    const result = scoreOne(service, request.body, custom?.scorer ?? service.scorer);
    if (custom?.note) result.notes.push(custom.note);
    service.accounts!.recordUse(key.id);
    return result;
  });
}
