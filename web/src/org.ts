// The organization an analyst's page works in (Transactions, and pages like it): the signed-in
// member's organizations, the one named in the address (`?org=`) or chosen last in this tab, and a
// picker when there are several. A visitor who is not signed in, or a server without sign-in, is
// told where to go instead. Each reading of the member's organizations also shows or hides the
// navigation's links for owners (Data protection): shown while the member owns one of them.

import { api } from './api.ts';
import type { Me, Organization, OrganizationList, PublicConfig } from './contract.ts';
import { h } from './dom.ts';

export type { Organization };

/** sessionStorage key of the organization chosen last in this tab (Datasets reads it too). */
export const REMEMBERED_ORGANIZATION = 'organization';

/** Shows the navigation's links marked `data-owners` while one of `organizations` is the member's
 *  as an owner, and hides them otherwise (a guest has none). */
export function ownerLinks(organizations: readonly Pick<Organization, 'role'>[]): void {
  const owner = organizations.some((o) => o.role === 'owner');
  for (const a of document.querySelectorAll<HTMLAnchorElement>('nav a[data-owners]')) a.hidden = !owner;
}

/** Reads whether the visitor is signed in and, if so, their organizations, for `ownerLinks`. */
export async function checkOwnerLinks(): Promise<void> {
  const me = await api<Me>('/api/auth/me');
  ownerLinks(me.authenticated ? (await api<OrganizationList>('/api/organizations')).organizations : []);
}

/** The organization to show, with a picker when the member has several; undefined after telling
 *  the visitor (in `root`) why there is none. `page` is the hash route the picker returns to. */
export async function organizationFor(
  root: HTMLElement,
  query: URLSearchParams,
  page: string,
  title: string,
): Promise<{ org: Organization; picker: HTMLElement | null } | undefined> {
  const explain = (...text: (string | Node)[]) =>
    root.replaceChildren(h('h1', {}, title), h('div', { class: 'card', id: 'no-organization' }, h('p', {}, ...text)));
  const config = await api<PublicConfig>('/api/config');
  if (!config.auth_configured) {
    explain(
      'Transactions belong to organizations, and this server has no sign-in configured, so it has none. Scoring, datasets and the evaluation work without one.',
    );
    return undefined;
  }
  const me = await api<Me>('/api/auth/me');
  if (!me.authenticated) {
    ownerLinks([]);
    explain('Sign in on the ', h('a', { href: '#/account' }, 'Account'), ' page to see your organization’s transactions.');
    return undefined;
  }
  const { organizations } = await api<OrganizationList>('/api/organizations');
  ownerLinks(organizations);
  if (organizations.length === 0) {
    explain('You are not a member of an organization yet. Create one on the ', h('a', { href: '#/account' }, 'Account'), ' page, then score with its API key.');
    return undefined;
  }
  const wanted = query.get('org') ?? sessionStorage.getItem(REMEMBERED_ORGANIZATION);
  const org = organizations.find((o) => o.id === wanted) ?? organizations[0]!;
  sessionStorage.setItem(REMEMBERED_ORGANIZATION, org.id);
  if (organizations.length === 1) return { org, picker: null };
  const select = h(
    'select',
    { id: 'organization', name: 'organization' },
    ...organizations.map((o) => h('option', { value: o.id, selected: o.id === org.id }, o.name)),
  );
  select.addEventListener('change', () => {
    location.hash = `#/${page}?org=${encodeURIComponent(select.value)}`;
  });
  return { org, picker: h('label', { class: 'field inline' }, h('span', {}, 'Organization'), select) };
}
