// The HTTP side of ownership (the application decides, app/access/ownership.ts): whom a member's request
// acts for, and the ownership a new upload or job gets from the signed-in caller.

import type { FastifyRequest } from 'fastify';
import type { App } from '../app/app.ts';
import { requireUser } from './caller.ts';

type Door = Pick<App, 'sessions' | 'organizations'>;

/** The ownership a new upload or job gets: the signed-in caller, and the organization they name
 *  (which they must belong to). Guests own nothing and cannot name an organization. */
export async function newOwnership(app: Door, request: FastifyRequest, organizationId: string | undefined) {
  if (organizationId === undefined) return { owner_user_id: request.signedIn?.user.id ?? null, organization_id: null };
  const { user } = requireUser(request, app.sessions);
  const organization = await app.organizations.member(organizationId, user.id);
  return { owner_user_id: user.id, organization_id: organization.id, organization };
}

/** Whom a member's request about an organization acts for, or 404 (401/503 as for every
 *  signed-in route). */
export async function memberCaller(app: Door, request: FastifyRequest, organizationId: string) {
  const { user } = requireUser(request, app.sessions);
  return app.organizations.caller(organizationId, user.id);
}
