// Who is calling: the organization a signed-in member's uploads and jobs belong to, or nobody (a
// guest, or a server without sign-in). The page asks once on opening; the upload files into that
// organization, and the past uploads are the organization's, else this browser's (remembered.ts).
// An organization's upload can also be imported into its history, with the organization's own
// fields mapped (mapping.ts, importing.ts).

import { api } from '../../api.ts';
import type { Me, OrganizationList, PublicConfig } from '../../contract.ts';
import { REMEMBERED_ORGANIZATION, type Organization } from '../../org.ts';

export interface Context {
  /** The organization uploads and jobs belong to, for a signed-in member. */
  org: Organization | undefined;
}

/** The signed-in member's organization (the one chosen last in this tab, else the first), if any. */
export async function whoIsThis(): Promise<Context> {
  const config = await api<PublicConfig>('/api/config');
  if (!config.auth_configured) return { org: undefined };
  const me = await api<Me>('/api/auth/me');
  if (!me.authenticated) return { org: undefined };
  const { organizations } = await api<OrganizationList>('/api/organizations');
  const wanted = sessionStorage.getItem(REMEMBERED_ORGANIZATION);
  return { org: organizations.find((o) => o.id === wanted) ?? organizations[0] };
}

/** The organization an upload belongs to, as the page names it, for a signed-in member; undefined
 *  for an upload of no organization (or a visitor who is not signed in). */
export function uploadOrganization(context: Context, organizationId: string | null): { id: string; name: string } | undefined {
  if (!organizationId || !context.org) return undefined;
  return { id: organizationId, name: context.org.id === organizationId ? context.org.name : 'your organization' };
}
