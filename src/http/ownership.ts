// Who may see a dataset or a job (issue 6, "Ownership"): one owned by an organization is visible to
// its members only; one owned by a signed-in user (no organization) to that user only; a guest's
// upload or job to anyone holding its unguessable id. Everyone else gets 404, never 403, so ids
// cannot be probed. `organization_id` on an upload or a scoring request must name an organization
// the caller belongs to (else 404), and signing in is required to name one.

import type { FastifyRequest } from 'fastify';
import type { Service } from '../app/service.ts';
import { organizationForMember, type OrganizationRow } from '../storage/accounts-store.ts';
import { requireUser } from './caller.ts';
import { ApiError } from './errors.ts';

export interface Owned {
  owner_user_id: string | null;
  organization_id: string | null;
}

/** Whether the caller of `request` may see a record with this ownership. */
export async function visibleTo(service: Service, request: FastifyRequest, record: Owned): Promise<boolean> {
  if (!record.organization_id && !record.owner_user_id) return true;
  const user = request.signedIn?.user;
  if (!user) return false;
  if (record.organization_id) return (await organizationForMember(service.db, record.organization_id, user.id)) !== undefined;
  return record.owner_user_id === user.id;
}

/** The ownership a new upload or job gets: the signed-in caller, and the organization they name
 *  (which they must belong to). Guests own nothing and cannot name an organization. */
export async function newOwnership(service: Service, request: FastifyRequest, organizationId: string | undefined): Promise<Owned & { organization?: OrganizationRow }> {
  if (organizationId === undefined) return { owner_user_id: request.signedIn?.user.id ?? null, organization_id: null };
  const { user } = requireUser(request, service);
  const organization = await organizationForMember(service.db, organizationId, user.id);
  if (!organization) throw notFoundOrganization(organizationId);
  return { owner_user_id: user.id, organization_id: organization.id, organization };
}

export function notFoundOrganization(id: string): ApiError {
  return new ApiError(404, 'not_found', `No organization ${id} that you belong to.`, 'List yours with GET /api/organizations.');
}

/** The organization if the signed-in caller belongs to it; 404 otherwise (never 403). */
export async function memberOrganization(service: Service, orgId: string, userId: string): Promise<OrganizationRow> {
  const org = await organizationForMember(service.db, orgId, userId);
  if (!org) throw notFoundOrganization(orgId);
  return org;
}
