// The HTTP side of ownership (src/app/ownership.ts decides): the caller a request is signed in as,
// and signing in required to name an organization on an upload or a scoring request.

import type { FastifyRequest } from 'fastify';
import type { Service } from '../app/service.ts';
import type { OrganizationRow } from '../storage/accounts-store.ts';
import * as ownership from '../app/ownership.ts';
import type { Owned } from '../app/ownership.ts';
import { OrganizationCaller } from '../app/organization-caller.ts';
import { requireUser } from './caller.ts';

/** Whether the caller of `request` may see a record with this ownership. */
export function visibleTo(service: Service, request: FastifyRequest, record: Owned): Promise<boolean> {
  return ownership.visibleTo(service.db, request.signedIn?.user.id, record);
}

/** The ownership a new upload or job gets: the signed-in caller, and the organization they name
 *  (which they must belong to). Guests own nothing and cannot name an organization. */
export async function newOwnership(service: Service, request: FastifyRequest, organizationId: string | undefined): Promise<Owned & { organization?: OrganizationRow }> {
  if (organizationId === undefined) return { owner_user_id: request.signedIn?.user.id ?? null, organization_id: null };
  const { user } = requireUser(request, service);
  const organization = await ownership.memberOrganization(service.db, organizationId, user.id);
  return { owner_user_id: user.id, organization_id: organization.id, organization };
}

/** The organization if the signed-in caller belongs to it; 404 otherwise (never 403). */
export function memberOrganization(service: Service, orgId: string, userId: string): Promise<OrganizationRow> {
  return ownership.memberOrganization(service.db, orgId, userId);
}

/** Whom a member's request about an organization acts for, or 404 (401/503 as for every
 *  signed-in route). */
export async function memberCaller(service: Service, request: FastifyRequest, organizationId: string): Promise<OrganizationCaller> {
  const { user } = requireUser(request, service);
  const org = await memberOrganization(service, organizationId, user.id);
  return OrganizationCaller.member(org, user.id);
}
