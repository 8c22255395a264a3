// Account, when sign-in is configured: sign in through the hosted authentication project (it
// returns to /login with the access token in the address's fragment; login.ts exchanges it for a
// session and wipes it from the address), sign out, organizations (create, list), and for the one
// chosen: members with their invitations (members.ts), API keys (create with the secret shown
// once, rotate, revoke) and usage. Without sign-in configured the page says so; the rest of the
// dashboard works anyway.

import { api } from '../api.ts';
import type { ApiKey, ApiKeyList, ApiKeyWithSecret, Me, Organization, OrganizationList, OrganizationWithMembers, PublicConfig, Usage } from '../contract.ts';
import { errorBox, h, table, utc } from '../dom.ts';
import { ownerLinks } from '../org.ts';
import { membersSection } from './members.ts';

export async function accountPage(root: HTMLElement): Promise<void> {
  root.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
  try {
    const config = await api<PublicConfig>('/api/config');
    if (!config.auth_configured) {
      root.replaceChildren(
        h('h1', {}, 'Account'),
        h(
          'div',
          { class: 'card', id: 'auth-off' },
          h(
            'p',
            {},
            'Sign-in is not configured on this server, so organizations and API keys cannot be managed here. Scoring, datasets and the evaluation work without one, and so do API keys made from the command line (npm run org:create).',
          ),
          h('p', { class: 'muted' }, 'An operator turns sign-in on with AUTHPROVIDER_URL; for development, npm run dev:idp is a local identity provider.'),
        ),
      );
      return;
    }
    const me = await api<Me>('/api/auth/me');
    if (!me.authenticated || !me.user) {
      const signIn = h(
        'a',
        {
          class: 'button',
          id: 'sign-in',
          href: `${config.auth_url}/auth/v1/authorize?provider=google&redirect_to=${encodeURIComponent(`${location.origin}/login`)}`,
        },
        'Sign in',
      );
      root.replaceChildren(h('h1', {}, 'Account'), h('div', { class: 'card' }, h('p', {}, 'Sign in to create organizations and API keys.'), signIn));
      return;
    }
    const signOut = h('button', { type: 'button', class: 'secondary', id: 'sign-out' }, 'Sign out');
    signOut.addEventListener('click', async () => {
      await api<null>('/api/auth/logout', { method: 'POST' }).catch(() => undefined);
      ownerLinks([]);
      await accountPage(root);
    });
    const orgArea = h('div', { id: 'organizations' });
    const user = me.user;
    root.replaceChildren(
      h('h1', {}, 'Account'),
      h('div', { class: 'card' }, h('p', { id: 'who' }, `Signed in as ${user.name ?? user.email ?? user.id}${user.email ? ` (${user.email})` : ''}`), signOut),
      orgArea,
    );
    await organizations(orgArea, user.id);
  } catch (e) {
    root.replaceChildren(errorBox(e));
  }
}

/** The organizations card and the chosen one's detail; `message` is what a change of its members
 *  did, shown in the members section (or here, when the change was leaving it). */
async function organizations(area: HTMLElement, me: string, selected?: string, message?: string): Promise<void> {
  const { organizations: orgs } = await api<OrganizationList>('/api/organizations');
  ownerLinks(orgs);
  const name = h('input', { id: 'org-name', name: 'name', required: true, placeholder: 'Organization name' });
  const stage = h(
    'select',
    { id: 'org-stage', name: 'stage', 'aria-label': 'Stage' },
    h('option', { value: 'test' }, 'test (sk_test_ keys)'),
    h('option', { value: 'live' }, 'live (sk_live_ keys)'),
  );
  const create = h(
    'form',
    { class: 'actions', id: 'create-org' },
    h('label', { class: 'field' }, h('span', {}, 'New organization'), name),
    stage,
    h('button', { type: 'submit' }, 'Create'),
  );
  create.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    try {
      const org = await api<Organization>('/api/organizations', { method: 'POST', body: { name: name.value, stage: stage.value } });
      await organizations(area, me, org.id);
    } catch (e) {
      area.prepend(errorBox(e));
    }
  });
  const current = orgs.find((o) => o.id === selected) ?? orgs[0];
  const picker = h(
    'select',
    { id: 'org-picker', 'aria-label': 'Organization' },
    ...orgs.map((o) => h('option', { value: o.id }, `${o.name} (${o.stage}, ${o.role})`)),
  );
  if (current) picker.value = current.id;
  picker.addEventListener('change', () => void organizations(area, me, picker.value));
  const detail = h('div', { id: 'org-detail' });
  // A message about an organization no longer shown (one just left) is said here.
  const gone = message !== undefined && current?.id !== selected;
  area.replaceChildren(
    h(
      'div',
      { class: 'card' },
      h('h3', {}, 'Organizations'),
      gone ? h('p', { id: 'org-status', role: 'status' }, message) : null,
      orgs.length ? picker : h('p', { class: 'muted' }, 'None yet.'),
      create,
    ),
    detail,
  );
  if (current) await organization(detail, current, area, me, undefined, gone ? undefined : message);
}

async function organization(
  detail: HTMLElement,
  org: Organization,
  area: HTMLElement,
  me: string,
  secret?: { id: string; value: string },
  message?: string,
): Promise<void> {
  const again = async (done: string) => {
    await organizations(area, me, org.id, done);
    (document.getElementById('members-status') ?? document.getElementById('org-status'))?.focus();
  };
  const [one, keys, usage, members] = await Promise.all([
    api<OrganizationWithMembers>(`/api/organizations/${org.id}`),
    api<ApiKeyList>(`/api/organizations/${org.id}/api-keys`),
    api<Usage>(`/api/organizations/${org.id}/usage`),
    membersSection({ org, me, again }, message),
  ]);
  const keyName = h('input', { id: 'key-name', required: true, placeholder: 'Key name' });
  const newKey = h(
    'form',
    { class: 'actions', id: 'create-key' },
    h('label', { class: 'field' }, h('span', {}, 'New API key'), keyName),
    h('button', { type: 'submit' }, 'Create key'),
  );
  newKey.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    try {
      const k = await api<ApiKeyWithSecret>(`/api/organizations/${org.id}/api-keys`, { method: 'POST', body: { name: keyName.value } });
      await organization(detail, org, area, me, { id: k.id, value: k.secret });
    } catch (e) {
      detail.prepend(errorBox(e));
    }
  });
  const keyRows = keys.api_keys.map((k) => {
    const actions = h('span', { class: 'actions' });
    // Analysts see the keys without the controls (the service would answer 403).
    if (!k.revoked_at && one.role === 'owner') {
      for (const action of ['rotate', 'revoke'] as const) {
        const b = h('button', { type: 'button', class: 'secondary', 'data-action': action, 'data-key': k.id }, action === 'rotate' ? 'Rotate' : 'Revoke');
        b.addEventListener('click', async () => {
          if (action === 'revoke' && !confirm(`Revoke ${k.name}? Requests with it will get 401 at once.`)) return;
          try {
            if (action === 'rotate') {
              const r = await api<ApiKeyWithSecret>(`/api/api-keys/${k.id}/rotate`, { method: 'POST' });
              await organization(detail, org, area, me, { id: r.id, value: r.secret });
            } else {
              await api<ApiKey>(`/api/api-keys/${k.id}/revoke`, { method: 'POST' });
              await organization(detail, org, area, me);
            }
          } catch (e) {
            detail.prepend(errorBox(e));
          }
        });
        actions.append(b);
      }
    }
    return h(
      'tr',
      { 'data-key': k.id },
      h('td', { 'data-label': 'Name' }, k.name),
      h('td', { 'data-label': 'Key' }, `${k.prefix}…${k.last4}`),
      h('td', { 'data-label': 'State' }, k.revoked_at ? `revoked ${k.revoked_at.slice(0, 10)}` : 'active'),
      h('td', { 'data-label': 'Last used' }, k.last_used_at ? utc(k.last_used_at) : 'never'),
      h('td', { 'data-label': '' }, actions),
    );
  });
  detail.replaceChildren(
    h(
      'div',
      { class: 'card' },
      h('h3', {}, `${one.name}`),
      h('p', { class: 'muted', id: 'org-summary' }, `Stage ${one.stage} · id ${one.id} · you are ${one.role === 'owner' ? 'an owner' : 'an analyst'}`),
    ),
    members,
    h(
      'div',
      { class: 'card' },
      h('h3', {}, 'API keys'),
      secret
        ? h(
            'div',
            { class: 'secret', id: 'new-secret', role: 'status' },
            h('strong', {}, 'Copy this secret now; it is not shown again: '),
            h('code', {}, secret.value),
          )
        : null,
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { id: 'keys', class: 'stack' },
          h('thead', {}, h('tr', {}, ...['Name', 'Key', 'State', 'Last used', ''].map((c) => h('th', { scope: 'col' }, c)))),
          h('tbody', {}, ...keyRows),
        ),
      ),
      one.role === 'owner' ? newKey : h('p', { class: 'muted', id: 'keys-analyst-note' }, 'Only owners create, rotate and revoke keys.'),
    ),
    h(
      'div',
      { class: 'card' },
      h('h3', {}, `Usage (last ${usage.days} days)`),
      table(
        ['Day', 'Key', 'Requests'],
        usage.daily.map((d) => [d.day, d.key_name, String(d.requests)]),
      ),
    ),
  );
}
