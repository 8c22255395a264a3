// Sign-in (the specification's "Sign-in flow", steps 3–6): `POST /api/auth/session` exchanges an
// identity-provider access token, verified by app/access/tokens.ts, for the HttpOnly `service_session`
// cookie and the readable `service_csrf` cookie; `POST /api/auth/logout` revokes the session on the
// server and clears both; `GET /api/auth/me` says who is calling (`authenticated: false` for guests).
// The token itself is never stored or logged. Signing in and out are use cases of app/access/accounts.ts
// (which refuses a bad token, and shapes both answers); this file keeps the cookies.

import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { sessionAnswer, whoIsCalling, type NewSession } from '../../app/access/accounts.ts';
import type { App } from '../../app/app.ts';
import type { Config } from '../../config.ts';
import { Me, SessionResponse } from '../../contract/auth.ts';
import { ErrorResponse } from '../../contract/errors.ts';
import { CSRF_COOKIE, requireUser, SESSION_COOKIE } from '../caller.ts';

const SessionRequest = z
  .object({
    access_token: z
      .string()
      .min(1, 'access_token must not be empty')
      .max(16_384, 'access_token is at most 16,384 characters')
      .describe("The identity provider's access token (a JWT)"),
  })
  .strict();

function setSessionCookies(reply: FastifyReply, c: Config, s: NewSession): void {
  const common = {
    path: '/',
    sameSite: 'lax' as const,
    secure: c.COOKIE_SECURE,
    expires: s.session.expires_at,
    ...(c.COOKIE_DOMAIN ? { domain: c.COOKIE_DOMAIN } : {}),
  };
  reply.setCookie(SESSION_COOKIE, s.cookie, { ...common, httpOnly: true });
  reply.setCookie(CSRF_COOKIE, s.csrf, { ...common, httpOnly: false });
}

function clearSessionCookies(reply: FastifyReply, c: Config): void {
  const common = { path: '/', sameSite: 'lax' as const, secure: c.COOKIE_SECURE, ...(c.COOKIE_DOMAIN ? { domain: c.COOKIE_DOMAIN } : {}) };
  reply.clearCookie(SESSION_COOKIE, { ...common, httpOnly: true });
  reply.clearCookie(CSRF_COOKIE, common);
}

export function authRoutes(server: FastifyInstance, app: Pick<App, 'config' | 'sessions'>): void {
  const r = server.withTypeProvider<ZodTypeProvider>();

  r.post(
    '/api/auth/session',
    {
      // Room for the longest token the schema takes even when every character is JSON-escaped, so a
      // token that is too long is told so (422), not refused as a body (413).
      bodyLimit: 16_384 * 12 + 1024,
      schema: {
        tags: ['accounts'],
        summary: 'Exchange an identity-provider access token for a session',
        description:
          'Verifies the token (ES256/RS256 through the project key set, HS256 with the legacy secret; issuer must be the configured project), then sets the HttpOnly service_session cookie and the readable service_csrf cookie. The token is not stored.',
        body: SessionRequest,
        response: { 200: SessionResponse, 401: ErrorResponse, 422: ErrorResponse, 503: ErrorResponse },
      },
    },
    async (request, reply) => {
      const accounts = app.sessions.signedIn();
      const s = await accounts.signIn(request.body.access_token, (problem) => request.log.info({ reason: problem }, 'sign-in refused'));
      setSessionCookies(reply, app.config, s);
      return sessionAnswer(s);
    },
  );

  r.post(
    '/api/auth/logout',
    {
      schema: {
        tags: ['accounts'],
        summary: 'End the session on the server',
        description: 'Marks the session revoked (its cookie stops working everywhere at once) and clears both cookies. Needs X-CSRF-Token.',
        response: { 204: z.null(), 401: ErrorResponse, 403: ErrorResponse, 503: ErrorResponse },
      },
    },
    async (request, reply) => {
      const { session } = requireUser(request, app.sessions);
      await app.sessions.signedIn().signOut(session);
      clearSessionCookies(reply, app.config);
      return reply.code(204).send(null);
    },
  );

  r.get(
    '/api/auth/me',
    {
      schema: {
        tags: ['accounts'],
        summary: 'Who is calling',
        description: 'The signed-in user, or `authenticated: false` for a guest (also when sign-in is not configured).',
        response: { 200: Me },
      },
    },
    async (request) => whoIsCalling(request.signedIn, app.sessions.configured),
  );
}
