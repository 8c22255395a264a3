// Whom a request about an organization's live data acts for: the organization an authenticated API
// key belongs to, or one a membership check has returned, and who that is (`key:<api key id>` or the
// user id, kept with every outcome reported). The use cases of the decision log, outcomes,
// performance and rings (decisions.ts, performance.ts, rings.ts) take the organization from this
// and from nothing else, and read its data only through `organizationData` bound to it
// (storage/organization-data.ts); what the caller may change there, they ask roles.ts with its
// `role`. Its constructor is private: one is made only from a key or from
// the organization row a membership check answered (http/ownership.ts, app/access/ownership.ts).

import type { LiveApiKey, OrganizationRow } from '../../storage/accounts-store.ts';
import type { Actor } from './roles.ts';

export class OrganizationCaller {
  readonly organizationId: string;
  readonly by: string;
  readonly role: Actor;

  private constructor(
    organizationId: string,
    /** Who acts: `key:<api key id>`, or a user id. */
    by: string,
    /** What the caller is to the organization: an owner, an analyst, or one of its API keys; what
     *  each may do is roles.ts's (`requireCapability(caller.role, …)`). */
    role: Actor,
  ) {
    this.organizationId = organizationId;
    this.by = by;
    this.role = role;
  }

  /** The organization of an API key the request authenticated with. */
  static key(key: Pick<LiveApiKey, 'id' | 'organization_id'>): OrganizationCaller {
    return new OrganizationCaller(key.organization_id, `key:${key.id}`, 'key');
  }

  /** An organization the signed-in user `userId` has been checked to belong to, with their role. */
  static member(organization: Pick<OrganizationRow, 'id' | 'role'>, userId: string): OrganizationCaller {
    return new OrganizationCaller(organization.id, userId, organization.role);
  }
}
