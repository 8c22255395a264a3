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
import type { SignedIn } from '../app/accounts.ts';
import type { Service } from '../app/service.ts';
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
export function installCaller(app: FastifyInstance, service: Service, errorSchema: unknown): void {
  app.addHook('onRoute', (route) => {
    const response = (route.schema as { response?: Record<string | number, unknown>; hide?: boolean } | undefined);
    if (!response?.response || response.hide) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.some(csrfChecked) && !(403 in response.response)) response.response[403] = errorSchema;
  });
  app.addHook('onRequest', async (request) => {
    const accounts = service.accounts;
    if (!accounts || !service.config.authConfigured) return;
    const cookie = request.cookies[SESSION_COOKIE];
    if (!cookie) return;
    const signedIn = await accounts.resolve(cookie);
    if (!signedIn) return;
    if (csrfChecked(request.method)) {
      const header = request.headers[CSRF_HEADER];
      if (!accounts.csrfMatches(signedIn.session, Array.isArray(header) ? header[0] : header)) {
        throw new ApiError(403, 'csrf_failed', 'This request uses your session but does not carry its CSRF token.', `Send the header X-CSRF-Token with the value of the ${CSRF_COOKIE} cookie.`);
      }
    }
    request.signedIn = signedIn;
  });
}

/** The accounts of a service where sign-in is configured, or 503 `auth_not_configured`. */
export function requireAccounts(service: Service): NonNullable<Service['accounts']> {
  if (!service.accounts || !service.config.authConfigured) {
    throw new ApiError(503, 'auth_not_configured', 'Sign-in is not configured on this server.', 'Set AUTHPROVIDER_URL (and, on PostgreSQL, SESSION_SECRET; see the README, Configuration), restart, and check that GET /api/health reports auth_configured true. For development, npm run dev:idp is a local identity provider.');
  }
  return service.accounts;
}

/** The accounts that check API keys: there whether or not sign-in is configured, except on
 *  PostgreSQL without SESSION_SECRET (nothing to hash keys with), 503 `auth_not_configured`. */
export function requireKeys(service: Service): NonNullable<Service['accounts']> {
  if (!service.accounts) {
    throw new ApiError(503, 'auth_not_configured', 'API keys cannot be checked: this server has no SESSION_SECRET.', 'Set SESSION_SECRET (the same value in every server process sharing the database; README, Configuration) and restart.');
  }
  return service.accounts;
}

/** The signed-in caller, or 503 (sign-in not configured) / 401 `not_signed_in`. */
export function requireUser(request: FastifyRequest, service: Service): SignedIn {
  requireAccounts(service);
  if (!request.signedIn) throw new ApiError(401, 'not_signed_in', 'You are not signed in, or your session has ended.', 'Sign in again: POST /api/auth/session with an access token from the identity provider.');
  return request.signedIn;
}
