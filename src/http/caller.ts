// Who is calling: on the dashboard surface (`/api/...`), a signed-in user when the request carries a
// live `service_session` cookie, a guest otherwise. Resolved once per request in an onRequest hook,
// and only when there is a cookie, so guest traffic (and scoring) never touches the database here.
//
// CSRF (docs/operating.md): a POST/PUT/PATCH/DELETE that uses a session must carry `X-CSRF-Token` equal
// to the session's token (the readable `service_csrf` cookie); otherwise 403 `csrf_failed`. A
// cookie that names no live session (unknown, ended, revoked) is ignored: the request goes on as a
// guest, and routes that need an account answer 401 `not_signed_in`.
//
// The customer surface (`/api/v1/...`) authenticates API keys instead (guards.ts).

import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { SignedIn } from '../app/access/accounts.ts';
import type { Sessions } from '../app/app.ts';
import { ApiError } from './errors.ts';

export const SESSION_COOKIE = 'service_session';
export const CSRF_COOKIE = 'service_csrf';
export const CSRF_HEADER = 'x-csrf-token';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in caller, when the request carries a live session cookie. */
    signedIn?: SignedIn;
  }
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Whether a session used with this method must carry its CSRF token (else 403). */
function csrfChecked(method: string): boolean {
  return UNSAFE.has(method);
}

/**
 * The dashboard surface's way of knowing its caller, installed in that surface's plugin (app.ts), so
 * it applies to exactly the routes registered there: an onRequest hook that resolves a session
 * cookie and checks CSRF, and an onRoute hook that documents the 403 on every unsafe method.
 */
export function installCaller(app: FastifyInstance, sessions: Sessions, errorSchema: unknown): void {
  app.addHook('onRoute', (route) => {
    const response = route.schema as { response?: Record<string | number, unknown>; hide?: boolean } | undefined;
    if (!response?.response || response.hide) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.some(csrfChecked) && !(403 in response.response)) response.response[403] = errorSchema;
  });
  const resolver = sessions.resolver();
  if (!resolver) return;
  app.addHook('onRequest', async (request) => {
    const cookie = request.cookies[SESSION_COOKIE];
    if (!cookie) return;
    const signedIn = await resolver.resolve(cookie);
    if (!signedIn) return;
    if (csrfChecked(request.method)) {
      const header = request.headers[CSRF_HEADER];
      if (!resolver.csrfMatches(signedIn.session, Array.isArray(header) ? header[0] : header)) {
        throw new ApiError(
          'csrf_failed',
          'This request uses your session but does not carry its CSRF token.',
          `Send the header X-CSRF-Token with the value of the ${CSRF_COOKIE} cookie.`,
        );
      }
    }
    request.signedIn = signedIn;
  });
}

/** The signed-in caller, or 503 `auth_not_configured` (sign-in not configured) / 401 `not_signed_in`. */
export function requireUser(request: FastifyRequest, sessions: Sessions): SignedIn {
  sessions.signedIn();
  if (!request.signedIn)
    throw new ApiError(
      'not_signed_in',
      'You are not signed in, or your session has ended.',
      'Sign in again: POST /api/auth/session with an access token from the identity provider.',
    );
  return request.signedIn;
}
