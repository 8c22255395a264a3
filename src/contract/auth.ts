// Who is calling, as the sign-in routes answer it: the session a sign-in opens (POST
// /api/auth/session) and the caller's own view (GET /api/auth/me). The cookies themselves are the
// HTTP layer's; these are the bodies, which the dashboard reads.

import { z } from 'zod';

export const User = z.object({ id: z.string(), email: z.string().nullable(), name: z.string().nullable(), avatar_url: z.string().nullable() });
export type User = z.infer<typeof User>;
export const SessionResponse = z.object({
  authenticated: z.literal(true),
  user: User,
  csrf_token: z.string().describe('Also set as the readable service_csrf cookie: send it as X-CSRF-Token on unsafe requests'),
  expires_at: z.string(),
});
export type SessionResponse = z.infer<typeof SessionResponse>;
export const Me = z.object({
  authenticated: z.boolean(),
  auth_configured: z.boolean(),
  user: User.optional(),
  expires_at: z.string().optional(),
});
export type Me = z.infer<typeof Me>;
