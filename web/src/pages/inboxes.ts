// Inboxes (`#/inboxes?org=…`, linked from Cases): where a manager sees the flow of case work and an
// owner shapes it. Each inbox, in routing order, with its settings (whose decisions a case groups,
// its route, whether blocks open cases, its SLA, who works it, where its cases escalate, round-robin
// assignment and its cap) and its figures now (`GET …/inboxes/{id}/stats`: cases open, in progress,
// snoozed and overdue, closed in 7 and 30 days, the median time to close, and per analyst their
// open, snoozed and closed cases). Owners make an inbox, change one (only the settings changed are
// sent), move it in routing order and delete it; the service's refusals (a name taken, cases still
// open in it, another inbox escalating to it) are said in the page's status line with their fix.
// Analysts see the same settings and figures with no control to change them.

import { api } from '../api.ts';
import type { FieldList, Inbox, InboxStats } from '../contract.ts';
import { errorBox, h, table, utc } from '../dom.ts';
import { casesHref } from '../links.ts';
import { organizationFor } from '../org.ts';
import type { Route } from '../route.ts';
import { type CaseContext, caseContext, leaveCase, who } from './case.ts';
import './cases.css';

export async function inboxesPage(root: HTMLElement, route: Route): Promise<void> {
  leaveCase();
  root.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
  try {
    const chosen = await organizationFor(root, route.query, 'inboxes', 'Inboxes');
    if (!chosen) return;
    await draw(root, await caseContext(chosen.org), chosen.picker);
  } catch (e) {
    root.replaceChildren(h('h1', {}, 'Inboxes'), errorBox(e));
  }
}

const ordinal = (n: number) =>
  `${n}${n % 10 === 1 && n % 100 !== 11 ? 'st' : n % 10 === 2 && n % 100 !== 12 ? 'nd' : n % 10 === 3 && n % 100 !== 13 ? 'rd' : 'th'}`;

async function draw(root: HTMLElement, ctx: CaseContext, picker: HTMLElement | null, message?: string | Node): Promise<void> {
  const org = ctx.org;
  const base = `/api/organizations/${encodeURIComponent(org.id)}`;
  const owner = org.role === 'owner';
  const [stats, fields] = await Promise.all([
    Promise.all(ctx.inboxes.map((i) => api<InboxStats>(`${base}/inboxes/${encodeURIComponent(i.id)}/stats`))),
    owner ? api<FieldList>(`${base}/fields`).then((f) => f.data.filter((x) => x.key && x.retired_at === null).map((x) => x.name)) : [],
  ]);
  const status = h('div', { id: 'inboxes-page-status', role: 'status', 'aria-live': 'polite', tabindex: '-1' }, message ?? '');
  const say = (m: string | Node) => {
    status.replaceChildren(m);
    status.focus();
  };
  /** Reads the inboxes again and draws the page, saying `done`. */
  const reload = async (done: string) => {
    await draw(root, await caseContext(org), picker, done);
    document.getElementById('inboxes-page-status')?.focus();
  };
  /** Runs a change; a refusal is said, with its fix. */
  const run = async (button: HTMLButtonElement | null, act: () => Promise<string>) => {
    if (button) button.disabled = true;
    try {
      await reload(await act());
    } catch (e) {
      say(errorBox(e));
      if (button) button.disabled = false;
    }
  };

  const cards = ctx.inboxes.map((inbox, index) => inboxCard(ctx, inbox, index, stats[index]!, owner, run));
  root.replaceChildren(
    h('h1', {}, 'Inboxes'),
    h('p', {}, h('a', { href: casesHref({ org: org.id }) }, '← Cases')),
    h(
      'div',
      { class: 'actions' },
      picker,
      h(
        'p',
        { class: 'muted' },
        `${org.name}: a decision of “review” (and of “block” where an inbox takes blocks) goes to the first inbox in this order whose route matches it, else to the first default inbox, and opens or joins the case of its entity there. Figures are as of now; times are UTC.`,
      ),
    ),
    ...[
      owner ? null : h('p', { class: 'muted', id: 'inboxes-read-only' }, 'Only owners make, change and delete inboxes: you see their settings and figures.'),
      status,
      ...(cards.length
        ? cards
        : [
            h(
              'p',
              { class: 'card muted', id: 'no-inboxes' },
              owner ? 'No inbox yet, so no case opens: make the first below.' : 'No inbox yet, so no case opens.',
            ),
          ]),
      owner ? newInboxCard(ctx, fields, run) : null,
    ].filter((x): x is HTMLElement => x !== null),
  );
  if (message) status.focus();
}

type Run = (button: HTMLButtonElement | null, act: () => Promise<string>) => Promise<void>;

/** One inbox: its settings, its figures, and an owner's controls. */
function inboxCard(ctx: CaseContext, inbox: Inbox, index: number, s: InboxStats, owner: boolean, run: Run): HTMLElement {
  const base = `/api/organizations/${encodeURIComponent(ctx.org.id)}/inboxes/${encodeURIComponent(inbox.id)}`;
  const name = (id: string | null) => (id === null ? null : (ctx.inboxes.find((i) => i.id === id)?.name ?? id));
  const titleId = `inbox-title-${inbox.id}`;
  const settings = h(
    'dl',
    { class: 'kv inbox-settings' },
    ...(
      [
        ['Routing order', `${ordinal(index + 1)} of ${ctx.inboxes.length}`],
        ['Groups by', inbox.group_by],
        ['Route', inbox.route ? h('code', {}, inbox.route) : 'the default: what no route takes'],
        ['Blocked decisions', inbox.on_block ? 'open cases here too' : 'open no case here'],
        ['Due after', `${inbox.sla_hours} h`],
        ['Worked by', inbox.members.length ? inbox.members.map((m) => who(ctx, m)).join(', ') : 'every member'],
        ['Escalates to', name(inbox.escalation_inbox_id) ?? 'nowhere (escalating is refused)'],
        ['Round-robin', inbox.auto_assign ? `on: at most ${inbox.auto_assign.cap} open cases each` : 'off: cases wait to be taken'],
      ] as [string, string | Node][]
    ).flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
  );
  const median = s.median_time_to_close_hours === null ? '—' : `${s.median_time_to_close_hours} h`;
  const figures = h(
    'div',
    { class: 'inbox-figures', 'data-inbox': inbox.id },
    table(
      ['Open', 'In progress', 'Snoozed', 'Overdue', 'Closed in 7 days', 'Closed in 30 days', 'Median time to close (30 days)'],
      [[String(s.open), String(s.in_progress), String(s.snoozed), String(s.overdue), String(s.closed_7d), String(s.closed_30d), median]],
      `Cases now (${utc(s.at)})`,
    ),
    s.analysts.length
      ? table(
          ['Analyst', 'Open or in progress', 'Snoozed', 'Closed in 30 days'],
          s.analysts.map((a) => [who(ctx, a.user_id), String(a.open), String(a.snoozed), String(a.closed_30d)]),
          'Per analyst',
        )
      : h('p', { class: 'muted' }, 'Nobody holds a case here or closed one in the last 30 days.'),
  );
  const card = h(
    'section',
    { class: 'card', id: `inbox-${inbox.id}`, 'aria-labelledby': titleId },
    h('h2', { id: titleId }, inbox.name),
    settings,
    figures,
    h('p', {}, h('a', { href: casesHref({ org: ctx.org.id, inbox_id: inbox.id }) }, 'Its cases')),
  );
  if (!owner) return card;

  const button = (text: string, label: string, disabled = false, cls = 'secondary') =>
    h('button', { type: 'button', class: cls, disabled, 'aria-label': `${label} ${inbox.name}`, 'data-action': text.toLowerCase().replace(/\W+/g, '-') }, text);
  const edit = button('Edit', 'Edit');
  const up = button('Move up', 'Move up', index === 0);
  const down = button('Move down', 'Move down', index === ctx.inboxes.length - 1);
  const remove = button('Delete', 'Delete');
  const move = (b: HTMLButtonElement, to: number) =>
    run(b, async () => {
      await api<Inbox>(base, { method: 'PATCH', body: { position: to } });
      return `Moved ${inbox.name} ${to < index ? 'up' : 'down'}: now ${ordinal(to + 1)} in routing order.`;
    });
  up.addEventListener('click', () => void move(up, index - 1));
  down.addEventListener('click', () => void move(down, index + 1));
  remove.addEventListener('click', () => {
    if (!confirm(`Delete the inbox ${inbox.name}? No decision goes to it any more; its closed cases stay readable.`)) return;
    void run(remove, async () => {
      await api(base, { method: 'DELETE' });
      return `Deleted ${inbox.name}.`;
    });
  });

  const form = inboxForm(ctx, `edit-${inbox.id}`, inbox, []);
  form.form.hidden = true;
  edit.addEventListener('click', () => {
    form.form.hidden = !form.form.hidden;
    edit.setAttribute('aria-expanded', String(!form.form.hidden));
    if (!form.form.hidden) form.first.focus();
  });
  edit.setAttribute('aria-expanded', 'false');
  form.form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const v = form.read();
    const change: Record<string, unknown> = {};
    const changed: string[] = [];
    const set = (key: string, word: string, value: unknown, same: boolean) => {
      if (same) return;
      change[key] = value;
      changed.push(word);
    };
    set('name', 'name', v.name, v.name === inbox.name);
    set('route', 'route', v.route, v.route === inbox.route);
    set('on_block', 'blocks', v.on_block, v.on_block === inbox.on_block);
    set('sla_hours', 'SLA', v.sla_hours, v.sla_hours === inbox.sla_hours);
    set('members', 'members', v.members, [...v.members].sort().join('\n') === [...inbox.members].sort().join('\n'));
    set('escalation_inbox_id', 'escalation inbox', v.escalation_inbox_id, v.escalation_inbox_id === inbox.escalation_inbox_id);
    set('auto_assign', 'round-robin', v.auto_assign, (v.auto_assign?.cap ?? null) === (inbox.auto_assign?.cap ?? null));
    if (changed.length === 0) {
      form.say('Nothing changed.');
      return;
    }
    void run(form.submit, async () => {
      await api<Inbox>(base, { method: 'PATCH', body: change });
      return `Changed ${v.name}: ${changed.join(', ')}.`;
    });
  });
  card.append(h('div', { class: 'actions' }, edit, up, down, remove), form.form);
  return card;
}

/** "New inbox", for owners. */
function newInboxCard(ctx: CaseContext, keyFields: string[], run: Run): HTMLElement {
  const form = inboxForm(ctx, 'new-inbox', undefined, keyFields);
  form.form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const v = form.read();
    void run(form.submit, async () => {
      const made = await api<Inbox>(`/api/organizations/${encodeURIComponent(ctx.org.id)}/inboxes`, { method: 'POST', body: v });
      return `Made ${made.name}: last in routing order.`;
    });
  });
  return h('section', { class: 'card', id: 'new-inbox', 'aria-labelledby': 'new-inbox-title' }, h('h2', { id: 'new-inbox-title' }, 'New inbox'), form.form);
}

interface InboxValues {
  name: string;
  group_by?: string;
  route: string | null;
  on_block: boolean;
  sla_hours: number;
  members: string[];
  escalation_inbox_id: string | null;
  auto_assign: { cap: number } | null;
}

/** The settings of an inbox as a form (`inbox` fills it; without one, a new inbox's, with its
 *  grouping: customer, merchant or one of `keyFields`). Ids start with `prefix`. */
function inboxForm(
  ctx: CaseContext,
  prefix: string,
  inbox: Inbox | undefined,
  keyFields: string[],
): { form: HTMLFormElement; first: HTMLInputElement; submit: HTMLButtonElement; read: () => InboxValues; say: (m: string) => void } {
  const id = (x: string) => `${prefix}-${x}`;
  const name = h('input', { id: id('name'), name: 'name', required: true, maxlength: '100', autocomplete: 'off', value: inbox?.name });
  const groupBy = inbox
    ? null
    : h(
        'select',
        { id: id('group_by'), name: 'group_by' },
        h('option', { value: 'customer' }, 'customer'),
        h('option', { value: 'merchant' }, 'merchant'),
        ...keyFields.map((f) => h('option', { value: `field:${f}` }, `the key field ${f}`)),
      );
  const route = h('input', {
    id: id('route'),
    name: 'route',
    maxlength: '4000',
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: 'empty: a default inbox; e.g. amount >= 1000.0',
    value: inbox?.route ?? undefined,
  });
  const onBlock = h('input', { type: 'checkbox', id: id('on_block'), name: 'on_block', checked: inbox?.on_block ?? false });
  const sla = h('input', {
    type: 'number',
    id: id('sla_hours'),
    name: 'sla_hours',
    required: true,
    min: '0.01',
    max: String(24 * 365),
    step: 'any',
    value: String(inbox?.sla_hours ?? 24),
  });
  const members = ctx.members.map((m) =>
    h('input', { type: 'checkbox', name: 'members', value: m.user_id, id: id(`member-${m.user_id}`), checked: inbox?.members.includes(m.user_id) ?? false }),
  );
  const escalation = h(
    'select',
    { id: id('escalation'), name: 'escalation_inbox_id' },
    h('option', { value: '' }, 'None'),
    ...ctx.inboxes.filter((i) => i.id !== inbox?.id).map((i) => h('option', { value: i.id, selected: i.id === inbox?.escalation_inbox_id }, i.name)),
  );
  const rotate = h('input', { type: 'checkbox', id: id('auto_assign'), name: 'auto_assign', checked: !!inbox?.auto_assign });
  const cap = h('input', { type: 'number', id: id('cap'), name: 'cap', min: '1', max: '10000', step: '1', value: String(inbox?.auto_assign?.cap ?? 5) });
  const submit = h('button', { type: 'submit' }, inbox ? 'Save changes' : 'Make inbox');
  const note = h('p', { class: 'muted', role: 'status', id: id('note') });
  const form = h(
    'form',
    { class: 'form', id: id('form'), 'aria-label': inbox ? `Change ${inbox.name}` : 'Make an inbox' },
    h(
      'div',
      { class: 'grid' },
      h('label', { class: 'field' }, h('span', {}, 'Name'), name),
      groupBy ? h('label', { class: 'field' }, h('span', {}, 'A case groups the decisions of one'), groupBy) : null,
      h('label', { class: 'field' }, h('span', {}, 'Route (rules’ language)'), route),
      h('label', { class: 'field' }, h('span', {}, 'Due after (hours)'), sla),
      h('label', { class: 'field' }, h('span', {}, 'Escalates to'), escalation),
      h('label', { class: 'field' }, h('span', {}, 'Round-robin cap (open cases each)'), cap),
    ),
    h(
      'fieldset',
      { class: 'inbox-members' },
      h('legend', {}, 'Worked by (none ticked: every member)'),
      ...members.map((box, i) => h('label', { class: 'check' }, box, h('span', {}, who(ctx, ctx.members[i]!.user_id)))),
    ),
    h(
      'div',
      { class: 'actions' },
      h('label', { class: 'check' }, onBlock, h('span', {}, 'Blocked decisions open cases here too')),
      h('label', { class: 'check' }, rotate, h('span', {}, 'Give new cases round the members')),
      submit,
    ),
    note,
  );
  const read = (): InboxValues => ({
    name: name.value.trim(),
    ...(groupBy ? { group_by: groupBy.value } : {}),
    route: route.value.trim() || null,
    on_block: onBlock.checked,
    sla_hours: Number(sla.value),
    members: members.filter((b) => b.checked).map((b) => b.value),
    escalation_inbox_id: escalation.value || null,
    auto_assign: rotate.checked ? { cap: Number(cap.value) } : null,
  });
  return { form, first: name, submit, read, say: (m) => note.replaceChildren(m) };
}
