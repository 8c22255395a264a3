// Cases (`#/cases?org=…`): the organization's inboxes and their cases, the soonest due first, each
// with its entity, status, assignee, priority, due time (overdue marked) and number of decisions,
// filtered by status, inbox, "assigned to me" and overdue, a page at a time (the API's
// `starting_after`), all kept in the address. "Next case" starts the keyboard loop of a case's
// page (case.ts), which `#/cases/{case_id}` shows; the inboxes' figures and settings are on their
// own page (inboxes.ts).

import { api } from '../api.ts';
import type { CasePage } from '../contract.ts';
import { errorBox, filterSelect, h, money, table } from '../dom.ts';
import { caseHref, casesHref, inboxesHref } from '../links.ts';
import { organizationFor } from '../org.ts';
import type { Route } from '../route.ts';
import { type CaseContext, caseContext, dueText, entityText, leaveCase, nextCaseButton, showCase, statusText, who } from './case.ts';

const PAGE = 25;
const STATUSES = [
  ['open', 'Open'],
  ['in_progress', 'In progress'],
  ['snoozed', 'Snoozed'],
  ['closed', 'Closed'],
] as const;

export async function casesPage(root: HTMLElement, route: Route): Promise<void> {
  leaveCase();
  root.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
  try {
    const chosen = await organizationFor(root, route.query, 'cases', 'Cases');
    if (!chosen) return;
    const ctx = await caseContext(chosen.org);
    const id = route.path[1];
    if (id !== undefined) await showCase(root, ctx, id);
    else await list(root, ctx, chosen.picker, route.query);
  } catch (e) {
    root.replaceChildren(h('h1', {}, 'Cases'), errorBox(e));
  }
}

async function list(root: HTMLElement, ctx: CaseContext, picker: HTMLElement | null, query: URLSearchParams): Promise<void> {
  const org = ctx.org;
  const current = {
    status: query.get('status') ?? undefined,
    inbox_id: query.get('inbox_id') ?? undefined,
    mine: query.get('mine') === 'true' ? 'true' : undefined,
    overdue: query.get('overdue') === 'true' ? 'true' : undefined,
  };
  const after = query.get('starting_after') ?? undefined;
  const params = new URLSearchParams({ limit: String(PAGE) });
  if (current.status) params.set('status', current.status);
  if (current.inbox_id) params.set('inbox_id', current.inbox_id);
  if (current.mine && ctx.me) params.set('assignee', ctx.me);
  if (current.overdue) params.set('overdue', 'true');
  if (after) params.set('starting_after', after);
  const page = await api<CasePage>(`/api/organizations/${encodeURIComponent(org.id)}/cases?${params}`);

  const status = h('div', { id: 'cases-status', role: 'status', 'aria-live': 'polite', tabindex: '-1' });
  const say = (m: string | Node) => {
    status.replaceChildren(m);
    status.focus();
  };
  const inboxName = (id: string) => ctx.inboxes.find((i) => i.id === id)?.name ?? id;

  const inboxes = h(
    'section',
    { class: 'card', id: 'inboxes', 'aria-labelledby': 'inboxes-title' },
    h('h2', { id: 'inboxes-title' }, 'Inboxes'),
    h(
      'p',
      {},
      h(
        'a',
        { href: inboxesHref(org.id), id: 'manage-inboxes' },
        org.role === 'owner' ? 'Their figures, and making and changing inboxes' : 'Their figures: open, overdue, time to close, per analyst',
      ),
    ),
    ctx.inboxes.length === 0
      ? h(
          'p',
          { class: 'muted', id: 'no-inboxes' },
          'No inbox yet, so no case opens. An owner makes one on the Inboxes page: decisions of “review” it routes then open cases in it.',
        )
      : table(
          ['Inbox', 'Groups by', 'Route', 'Due after', 'Worked by'],
          ctx.inboxes.map((i) => [
            h('a', { href: casesHref({ org: org.id, inbox_id: i.id }) }, i.name),
            i.group_by,
            i.route ? h('code', {}, i.route) : 'the default: what no route takes',
            `${i.sla_hours} h`,
            i.members.length ? i.members.map((m) => who(ctx, m)).join(', ') : 'every member',
          ]),
        ),
  );

  const check = (name: string, label: string, on: boolean) =>
    h('label', { class: 'field inline' }, h('input', { type: 'checkbox', name, id: `filter-${name}`, checked: on }), h('span', {}, label));
  const filters = h(
    'form',
    { class: 'card form filters', id: 'case-filters', 'aria-label': 'Filter cases' },
    h(
      'div',
      { class: 'grid' },
      filterSelect('status', 'Status', STATUSES, current.status),
      filterSelect(
        'inbox_id',
        'Inbox',
        ctx.inboxes.map((i) => [i.id, i.name] as const),
        current.inbox_id,
      ),
    ),
    h(
      'div',
      { class: 'actions' },
      check('mine', 'Assigned to me', !!current.mine),
      check('overdue', 'Overdue only', !!current.overdue),
      h('button', { type: 'submit' }, 'Apply filters'),
      h('a', { class: 'button secondary', href: casesHref({ org: org.id }) }, 'Clear'),
    ),
  );
  filters.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const data = new FormData(filters);
    location.hash = casesHref({
      org: org.id,
      status: String(data.get('status') ?? '') || undefined,
      inbox_id: String(data.get('inbox_id') ?? '') || undefined,
      mine: data.get('mine') ? 'true' : undefined,
      overdue: data.get('overdue') ? 'true' : undefined,
    });
  });

  const kept = { org: org.id, ...current };
  const active = [
    current.status ? `status ${current.status.replace('_', ' ')}` : '',
    current.inbox_id ? `inbox ${inboxName(current.inbox_id)}` : '',
    current.mine ? 'assigned to me' : '',
    current.overdue ? 'overdue' : '',
  ].filter(Boolean);
  const rows = page.data.map((c) => [
    h('a', { href: caseHref(org.id, c.id) }, entityText(c.entity)),
    statusText(c),
    who(ctx, c.assignee),
    money(c.priority),
    dueText(c),
    String(c.decision_count),
    inboxName(c.inbox_id),
  ]);
  const pager = h(
    'nav',
    { class: 'pager', 'aria-label': 'Pages' },
    after ? h('a', { class: 'button secondary', href: casesHref(kept), id: 'first-page' }, 'Soonest due') : null,
    page.has_more ? h('a', { class: 'button secondary', href: casesHref({ ...kept, starting_after: page.data.at(-1)!.id }), id: 'next-page' }, 'Later') : null,
  );
  root.replaceChildren(
    h('h1', {}, 'Cases'),
    h(
      'div',
      { class: 'actions' },
      picker,
      nextCaseButton(org, say),
      h(
        'p',
        { class: 'muted' },
        `${org.name}: cases group one entity’s decisions that need a person. “Next case” takes yours, claims it and opens it. Times are UTC.`,
      ),
    ),
    status,
    inboxes,
    filters,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'cases-title' },
      h('h2', { id: 'cases-title' }, active.length ? `Cases ${active.join(', ')}` : 'Cases, the soonest due first'),
      page.data.length === 0
        ? h('p', { class: 'muted', id: 'no-cases' }, active.length ? 'No case matches these filters.' : 'No case yet.')
        : h('div', { id: 'case-list' }, table(['Entity', 'Status', 'Assignee', 'Priority', 'Due', 'Decisions', 'Inbox'], rows)),
      pager,
    ),
  );
}
