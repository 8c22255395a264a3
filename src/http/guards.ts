// The customer surface's API key check: one onRequest hook for every /api/v1 route, installed on
// that surface's plugin by app.ts. Sessions and CSRF are caller.ts's; a missing model is the
// application's 503 (app/app.ts, `models`).

import type { FastifyRequest } from 'fastify';
import type { AuthenticatedKey, Keys } from '../app/app.ts';
import { ApiError } from './errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The API key a `/api/v1` request authenticated with. */
    apiKey?: AuthenticatedKey;
    /** When its authentication began and ended (performance.now()), for Server-Timing. */
    authenticated?: { from: number; to: number };
  }
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
export function keyAuthentication(keys: Keys) {
  return async (request: FastifyRequest): Promise<void> => {
    const from = performance.now();
    const secret = bearer(request);
    if (!secret)
      throw new ApiError(
        'invalid_api_key',
        'This endpoint needs an API key.',
        'Send the header Authorization: Bearer <API key>; an organization owner creates keys with POST /api/organizations/{id}/api-keys.',
      );
    const key = await keys.authenticate(secret);
    if (!key)
      throw new ApiError(
        'invalid_api_key',
        'The API key is not valid: unknown, rotated out or revoked.',
        'Use a current key of your organization, or ask an owner to create one.',
      );
    request.apiKey = key;
    request.authenticated = { from, to: performance.now() };
  };
}
