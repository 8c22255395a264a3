// The Account page's members section (account.ts draws it for the organization chosen): who belongs,
// with their role and since when, the invitations waiting, the latest membership changes, and what
// each role may do. Owners invite by e-mail with a role, change a role, remove a member (or leave)
// and withdraw an invitation; an analyst sees the same lists without any control (the service would
// answer 403). The service decides everything, the last owner's protection included: its refusals
// are shown as they come, message and fix, in the section's status line, which also says what an
// action did. Names and e-mails come from the identity provider and are only ever set as text (dom.ts).

import { api } from '../api.ts';
import type { Invitation, Member, MemberAudit, MemberChange, MemberList, Organization, Role } from '../contract.ts';
import { errorBox, h, table, utc } from '../dom.ts';
import './members.css';

/** What the section needs of the page: the organization shown, who is signed in, and a way to draw
 *  the page again after a change (the organizations too: a role of one's own may have changed). */
export interface MembersContext {
  org: Organization;
  me: string;
  /** Draws the page again with this message in the section's status line, focused. */
  again(message: string): Promise<void>;
}

/** How many of the latest changes the section lists. */
const RECENT = 10;

const ROLE_WORDS: Record<Role, string> = {
  owner: 'Owner: everything an analyst does, and manages API keys, webhooks, models, members, declared fields and active rules',
  analyst: 'Analyst: works cases, outcomes, lists and rules in draft or shadow; reads everything else',
};

const whoIs = (m: Pick<Member, 'name' | 'email' | 'user_id'>) => m.name ?? m.email ?? m.user_id;

/** A change as one line: what happened to whom. */
function changeWords(c: MemberChange): string {
  const whom = c.email ?? c.user_id ?? 'someone';
  switch (c.action) {
    case 'invited':
      return `invited ${whom} as ${c.role}`;
    case 'invitation_withdrawn':
      return `withdrew the invitation of ${whom} (${c.role})`;
    case 'joined':
      return `${whom} joined as ${c.role}`;
    case 'role_changed':
      return `made ${whom} ${c.role === 'owner' ? 'an owner' : 'an analyst'} (was ${c.previous_role})`;
    case 'removed':
      return `removed ${whom} (${c.role})`;
    case 'left':
      return `${whom} left (${c.role})`;
  }
}

export async function membersSection(ctx: MembersContext, message?: string): Promise<HTMLElement> {
  const base = `/api/organizations/${encodeURIComponent(ctx.org.id)}`;
  const [list, recent] = await Promise.all([api<MemberList>(`${base}/members`), api<MemberAudit>(`${base}/members/audit?limit=${RECENT}`)]);
  const owner = ctx.org.role === 'owner';
  const status = h('div', { id: 'members-status', class: 'notice', role: 'status', 'aria-live': 'polite', tabindex: '-1' }, message ?? '');
  /** Runs a change; on success the page is drawn again with `done`, on a refusal its error shows here. */
  const act = async (button: HTMLButtonElement, change: () => Promise<unknown>, done: string) => {
    button.disabled = true;
    try {
      await change();
    } catch (e) {
      button.disabled = false;
      status.replaceChildren(errorBox(e));
      status.focus();
      return;
    }
    await ctx.again(done);
  };

  const memberRows = list.members.map((m, i) => {
    const name = whoIs(m);
    const self = m.user_id === ctx.me;
    let role: Node | string = m.role;
    let actions: Node | string = '';
    if (owner) {
      const select = h(
        'select',
        { id: `member-role-${i}`, 'aria-label': `Role of ${name}` },
        h('option', { value: 'analyst' }, 'analyst'),
        h('option', { value: 'owner' }, 'owner'),
      );
      select.value = m.role;
      const save = h('button', { type: 'button', class: 'secondary', id: `member-role-save-${i}` }, 'Change role');
      save.addEventListener('click', () =>
        act(
          save,
          () => api<Member>(`${base}/members/${encodeURIComponent(m.user_id)}`, { method: 'PATCH', body: { role: select.value } }),
          `${name} is ${select.value === 'owner' ? 'an owner' : 'an analyst'} now.`,
        ),
      );
      role = h('span', { class: 'actions' }, select, save);
      const remove = h('button', { type: 'button', class: 'secondary', id: `member-remove-${i}` }, self ? 'Leave' : 'Remove');
      remove.addEventListener('click', () => {
        const question = self
          ? `Leave ${ctx.org.name}? You lose access to it at once.`
          : `Remove ${name} from ${ctx.org.name}? They lose access to it at once; the API keys they made stay.`;
        if (!confirm(question)) return;
        void act(
          remove,
          () => api<null>(`${base}/members/${encodeURIComponent(m.user_id)}`, { method: 'DELETE' }),
          self ? `You left ${ctx.org.name}.` : `${name} was removed.`,
        );
      });
      actions = remove;
    }
    return h(
      'tr',
      { 'data-member': m.user_id },
      h('td', { 'data-label': 'Member' }, self ? `${name} (you)` : name),
      h('td', { 'data-label': 'E-mail' }, m.email ?? '—'),
      h('td', { 'data-label': 'Role' }, role),
      h('td', { 'data-label': 'Since' }, m.joined_at.slice(0, 10)),
      ...(owner ? [h('td', { 'data-label': '' }, actions)] : []),
    );
  });

  const invitationRows = list.invitations.map((v: Invitation, i) => {
    const cells = [
      h('td', { 'data-label': 'E-mail' }, v.email),
      h('td', { 'data-label': 'Role' }, v.role),
      h('td', { 'data-label': 'Invited' }, utc(v.invited_at)),
    ];
    if (owner) {
      const withdraw = h('button', { type: 'button', class: 'secondary', id: `invitation-withdraw-${i}` }, 'Withdraw');
      withdraw.addEventListener('click', () =>
        act(
          withdraw,
          () => api<null>(`${base}/invitations/${encodeURIComponent(v.email)}`, { method: 'DELETE' }),
          `The invitation of ${v.email} was withdrawn.`,
        ),
      );
      cells.push(h('td', { 'data-label': '' }, withdraw));
    }
    return h('tr', { 'data-invitation': v.email }, ...cells);
  });

  const head = (cols: string[]) => h('thead', {}, h('tr', {}, ...cols.map((c) => h('th', { scope: 'col' }, c))));
  const memberCols = ['Member', 'E-mail', 'Role', 'Since', ...(owner ? ['Remove'] : [])];
  const invitationCols = ['E-mail', 'Role', 'Invited', ...(owner ? ['Withdraw'] : [])];

  let invite: HTMLElement | null = null;
  if (owner) {
    const email = h('input', { id: 'invite-email', name: 'email', type: 'email', required: true, autocomplete: 'off', placeholder: 'name@example.com' });
    const role = h('select', { id: 'invite-role', name: 'role' }, h('option', { value: 'analyst' }, 'analyst'), h('option', { value: 'owner' }, 'owner'));
    const submit = h('button', { type: 'submit', id: 'invite-submit' }, 'Invite');
    invite = h(
      'form',
      { class: 'actions', id: 'invite-member', 'aria-label': 'Invite a member' },
      h('label', { class: 'field' }, h('span', {}, 'Invite by e-mail'), email),
      h('label', { class: 'field' }, h('span', {}, 'Role'), role),
      submit,
    );
    invite.addEventListener('submit', (ev) => {
      ev.preventDefault();
      void act(
        submit,
        () => api<Invitation>(`${base}/members`, { method: 'POST', body: { email: email.value, role: role.value } }),
        `Invited ${email.value.trim().toLowerCase()} as ${role.value}: they join at their first sign-in with that e-mail.`,
      );
    });
  }

  return h(
    'section',
    { class: 'card', id: 'members', 'aria-labelledby': 'members-title' },
    h('h3', { id: 'members-title' }, 'Members'),
    status,
    h(
      'div',
      { class: 'table-wrap' },
      h('table', { id: 'member-list', class: 'stack' }, h('caption', {}, `Members of ${ctx.org.name}`), head(memberCols), h('tbody', {}, ...memberRows)),
    ),
    list.invitations.length
      ? h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            { id: 'invitation-list', class: 'stack' },
            h('caption', {}, 'Invitations waiting'),
            head(invitationCols),
            h('tbody', {}, ...invitationRows),
          ),
        )
      : h('p', { class: 'muted', id: 'no-invitations' }, 'No invitation is waiting.'),
    invite,
    h(
      'p',
      { class: 'muted', id: 'members-note' },
      owner
        ? 'An invitation is claimed when someone first signs in with that e-mail, verified by the identity provider; the organization always keeps at least one owner.'
        : 'Only owners invite members, change roles and remove members; as an analyst you see who belongs.',
    ),
    h('ul', { class: 'muted', id: 'role-words' }, ...(Object.values(ROLE_WORDS) as string[]).map((w) => h('li', {}, w))),
    recent.data.length
      ? table(
          ['When', 'By', 'What'],
          recent.data.map((c) => [utc(c.at), c.by_email ?? c.by, changeWords(c)]),
          `Latest membership changes (the ${RECENT} newest)`,
        )
      : null,
  );
}
