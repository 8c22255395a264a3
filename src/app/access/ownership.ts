// Who may see a dataset or a job, and which organization a caller may act for: one owned by an
// organization is visible to its members only; one owned by a signed-in user (no organization) to
// that user only; a guest's upload or job to anyone holding its unguessable id. Everyone else gets
// `not_found`, never `forbidden`, so ids cannot be probed. An organization named on an upload or a
// scoring request must be one the caller belongs to.

import { AppError } from '../errors.ts';
import type { Queryable } from '../../storage/db.ts';
import { organizationForMember, type OrganizationRow } from '../../storage/accounts-store.ts';

export interface Owned {
  owner_user_id: string | null;
  organization_id: string | null;
}

/** Whether a caller (signed in as `userId`, or a guest) may see a record with this ownership. */
export async function visibleTo(db: Queryable, userId: string | undefined, record: Owned): Promise<boolean> {
  if (!record.organization_id && !record.owner_user_id) return true;
  if (!userId) return false;
  if (record.organization_id) return (await organizationForMember(db, record.organization_id, userId)) !== undefined;
  return record.owner_user_id === userId;
}

export function notFoundOrganization(id: string): AppError {
  return new AppError('not_found', `No organization ${id} that you belong to.`, 'List yours with GET /api/organizations.');
}

/** The organization if the user belongs to it; `not_found` otherwise. */
export async function memberOrganization(db: Queryable, orgId: string, userId: string): Promise<OrganizationRow> {
  const org = await organizationForMember(db, orgId, userId);
  if (!org) throw notFoundOrganization(orgId);
  return org;
}
