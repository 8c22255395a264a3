// What a route needs before it can do anything, in one place for every surface: a loaded model
// (else 503 with the reason it is missing), a scorer, and on the customer surface an API key (one
// onRequest hook for every /api/v1 route, installed on that surface's plugin in app.ts). Sessions
// and CSRF are caller.ts's.

import type { FastifyRequest } from 'fastify';
import type { Service } from '../app/service.ts';
import { available } from '../app/errors.ts';
import type { LiveApiKey } from '../storage/accounts-store.ts';
import type { ModelBundle } from '../model/bundle-types.ts';
import type { Scorer } from '../scoring/scorer.ts';
import { requireKeys } from './caller.ts';
import { ApiError } from './errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The API key a `/api/v1` request authenticated with. */
    apiKey?: LiveApiKey;
    /** When its authentication began and ended (performance.now()), for Server-Timing. */
    authenticated?: { from: number; to: number };
  }
}

/** The loaded model, or 503 with the reason it is unavailable. */
export function requireModel(service: Service): ModelBundle {
  return available(service.model);
}

/** The scorer to use, or 503 `model_unavailable` (shared by both surfaces). */
export function requireScorer(service: Service, scorer = service.scorer): Scorer {
  requireModel(service);
  if (!scorer) throw new ApiError(503, 'model_unavailable', 'No model is loaded.', 'Restart the server with a complete model folder.');
  return scorer;
}

function bearer(request: FastifyRequest): string | undefined {
  const h = request.headers.authorization;
  const m = typeof h === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(h) : null;
  return m?.[1];
}

/**
 * An onRequest hook: the request's API key, or 401 `invalid_api_key`. A request without any key is
 * refused 401 whatever the configuration (missing credentials are the caller's to fix). Keys work
 * without sign-in; only on PostgreSQL without SESSION_SECRET (keys cannot be checked) is one with a
 * key answered 503 `auth_not_configured`.
 */
export function keyAuthentication(service: Service) {
  return async (request: FastifyRequest): Promise<void> => {
    const from = performance.now();
    const secret = bearer(request);
    if (!secret) throw new ApiError(401, 'invalid_api_key', 'This endpoint needs an API key.', 'Send the header Authorization: Bearer <API key>; an organization owner creates keys with POST /api/organizations/{id}/api-keys.');
    const key = await requireKeys(service).authenticateKey(secret);
    if (!key) throw new ApiError(401, 'invalid_api_key', 'The API key is not valid: unknown, rotated out or revoked.', 'Use a current key of your organization, or ask an owner to create one.');
    request.apiKey = key;
    request.authenticated = { from, to: performance.now() };
  };
}
