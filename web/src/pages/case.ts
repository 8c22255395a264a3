// A case's page (`#/cases/{case_id}?org=…`): who and what it is about (its entity, linked to the
// entity's own page, its inbox, status, assignee and due time), its decisions (a table, and the one
// chosen shown as a transaction's page shows it: score, reasons in words, channel scores, evidence),
// its timeline with who did what when and whether its hash chain holds, a note to add, its files
// and putting its entity on a list (case-sections.ts), and what an analyst does with it: claim,
// assign to a member of its inbox, snooze, escalate, close with a verdict, reopen, export.
// Keyboard first, like the review queue: N takes the caller's next case and opens it, C claims, S
// snoozes (a small form for the time), E escalates (a small form for the reason; the page then
// shows the case it went into, which is another when it was merged into the entity's open case
// there), F, L and I close it as fraud, legitimate or inconclusive; a
// key does exactly what its button does, and nothing while that button is disabled or a form field
// has focus. What an action did is said in the page's status line, which takes the focus, so a
// screen reader follows the loop.

import { api } from '../api.ts';
import type { CaseDetail, Inbox, InboxList, List, ListIndex, Me, Member, MemberList } from '../contract.ts';
import { errorBox, h, money, table, utc } from '../dom.ts';
import { caseHref, casesHref, entityHref, keyValueHref, transactionHref } from '../links.ts';
import type { Organization } from '../org.ts';
import { fieldDeclarations } from './record-fields.ts';
import { attachmentsSection, entitySection, listSection, sizeText } from './case-sections.ts';
import { recordParts, TRANSACTION_COLUMNS, transactionRows } from './transactions.ts';
import './cases.css';

/** What a case's page needs besides the case: its organization, inboxes, members and who is signed in. */
export interface CaseContext {
  org: Organization;
  inboxes: Inbox[];
  members: Member[];
  me: string;
  /** The organization's lists, read when a case's page is first drawn. */
  lists?: List[];
}

/** The case's page on screen: a key's button to press. */
let active: { press: (key: string) => void } | undefined;

/** The buttons the case's keys press, by key. */
const KEYS: Record<string, string> = {
  n: 'case-next',
  c: 'case-claim',
  s: 'case-snooze',
  e: 'case-escalate',
  f: 'case-fraud',
  l: 'case-legitimate',
  i: 'case-inconclusive',
};

// One listener for the page's keys, acting only while a case is on screen and no field has focus.
document.addEventListener('keydown', (ev) => {
  if (!active || !location.hash.startsWith('#/cases/') || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const target = ev.target as HTMLElement | null;
  if (target && /^(INPUT|SELECT|TEXTAREA)$/.test(target.tagName)) return;
  const key = ev.key.toLowerCase();
  if (!(key in KEYS)) return;
  ev.preventDefault();
  active.press(key);
});

/** Stops the case's keys (another page is drawn). */
export function leaveCase(): void {
  active = undefined;
}

/** What the next page drawn says first: set before going to the next case. */
let arriving: string | undefined;

/** The organization's inboxes, members and the signed-in member, for the cases' pages. */
export async function caseContext(org: Organization): Promise<CaseContext> {
  const base = `/api/organizations/${encodeURIComponent(org.id)}`;
  const [inboxes, members, me] = await Promise.all([api<InboxList>(`${base}/inboxes`), api<MemberList>(`${base}/members`), api<Me>('/api/auth/me')]);
  return { org, inboxes: inboxes.data, members: members.members, me: me.user?.id ?? '' };
}

/** A member's name as the identity provider gave it, else their e-mail or id; the service and API keys said so. */
export function who(ctx: CaseContext, id: string | null): string {
  if (id === null) return 'nobody';
  if (id === 'system') return 'the service';
  if (id.startsWith('key:')) return `API key ${id.slice(4)}`;
  const m = ctx.members.find((x) => x.user_id === id);
  const name = m?.name ?? m?.email ?? id;
  return id === ctx.me ? `${name} (you)` : name;
}

/** A case's entity in words: "customer C-1", "merchant M-1", "device_hash d-9". */
export const entityText = (c: CaseDetail['entity']) => `${c.kind === 'key' ? c.field : c.kind} ${c.id}`;

/** The entity's own page. */
export function entityLink(org: Organization, e: CaseDetail['entity']): HTMLElement {
  const href = e.kind === 'key' ? keyValueHref(org.id, e.field ?? '', e.id) : entityHref(org.id, e.kind, e.id);
  return h('a', { href, class: 'case-entity' }, entityText(e));
}

/** The due time, marked (in words, not only colour) when it has passed. */
export function dueText(c: { due_at: string; overdue: boolean }): HTMLElement {
  return h('span', { class: c.overdue ? 'overdue' : '' }, utc(c.due_at), c.overdue ? ' · overdue' : '');
}

/** The status in words, with the verdict of a closed case and the time a snoozed one wakes. */
export function statusText(c: Pick<CaseDetail, 'status' | 'resolution' | 'snoozed_until'>): string {
  // Only a merge (an escalation into the entity's open case) closes a case without a verdict.
  if (c.status === 'closed') return c.resolution ? `closed as ${c.resolution}` : 'closed: merged into another case';
  if (c.status === 'snoozed' && c.snoozed_until) return `snoozed until ${utc(c.snoozed_until)}`;
  return c.status === 'in_progress' ? 'in progress' : c.status;
}

/** Takes the caller's next case (claimed for them) and opens it; `say` tells why when none is waiting. */
export async function takeNextCase(org: Organization, say: (message: string | Node) => void, current?: string): Promise<void> {
  let next: CaseDetail;
  try {
    next = await api<CaseDetail>(`/api/organizations/${encodeURIComponent(org.id)}/cases/next`, { method: 'POST' });
  } catch (e) {
    say(errorBox(e));
    return;
  }
  const message = `Your next case: ${entityText(next.entity)}, ${next.decision_count} ${next.decision_count === 1 ? 'decision' : 'decisions'}, due ${utc(next.due_at)}.`;
  arriving = message;
  const href = caseHref(org.id, next.id);
  // The same case again (it is still the caller's and open): drawn afresh, saying so.
  if (current === next.id || location.hash === href) window.dispatchEvent(new HashChangeEvent('hashchange'));
  else location.hash = href;
}

/** A button that takes the caller's next case. */
export function nextCaseButton(org: Organization, say: (message: string | Node) => void, withKey = false): HTMLButtonElement {
  const b = h(
    'button',
    { type: 'button', id: withKey ? 'case-next' : 'take-next-case', ...(withKey ? { 'aria-keyshortcuts': 'N' } : {}) },
    'Next case',
    withKey ? ' ' : '',
    withKey ? h('kbd', {}, 'N') : '',
  );
  b.addEventListener('click', async () => {
    b.disabled = true;
    try {
      await takeNextCase(org, say, withKey ? currentCaseId() : undefined);
    } finally {
      b.disabled = false;
    }
  });
  return b;
}

const currentCaseId = () => /^#\/cases\/([^?/]+)/.exec(location.hash)?.[1];

/** Loads and draws case `id`. */
export async function showCase(root: HTMLElement, ctx: CaseContext, id: string): Promise<void> {
  active = undefined;
  const base = `/api/organizations/${encodeURIComponent(ctx.org.id)}`;
  let c: CaseDetail;
  try {
    c = await api<CaseDetail>(`${base}/cases/${encodeURIComponent(id)}`);
  } catch (e) {
    arriving = undefined;
    root.replaceChildren(h('h1', {}, `Case ${id}`), h('p', {}, h('a', { href: casesHref({ org: ctx.org.id }) }, '← All cases')), errorBox(e));
    return;
  }
  const message = arriving;
  arriving = undefined;
  await draw(root, ctx, c, message);
}

/** Draws the case; `message` (what was just done) goes to the status line, which then takes the focus. */
async function draw(root: HTMLElement, ctx: CaseContext, c: CaseDetail, message?: string | Node, chosen?: string): Promise<void> {
  const base = `/api/organizations/${encodeURIComponent(ctx.org.id)}/cases/${encodeURIComponent(c.id)}`;
  const status = h('div', { id: 'case-status', role: 'status', 'aria-live': 'polite', tabindex: '-1' }, message ?? '');
  const say = (m: string | Node) => {
    status.replaceChildren(m);
    status.focus();
  };
  const closed = c.status === 'closed';
  const inbox = ctx.inboxes.find((i) => i.id === c.inbox_id);
  const shownId = chosen ?? c.decisions[0]?.transaction_id;

  /** Runs a change of the case and draws what it answers, saying `done`. */
  const change = async (button: HTMLButtonElement | null, path: string, body: unknown, done: (after: CaseDetail) => string) => {
    if (button) button.disabled = true;
    try {
      const after = await api<CaseDetail>(`${base}/${path}`, { method: 'POST', ...(body === undefined ? {} : { body }) });
      await draw(root, ctx, after, done(after), shownId);
    } catch (e) {
      say(errorBox(e));
      if (button) button.disabled = false;
    }
  };
  const button = (id: string, text: string, key: string | null, disabled: boolean, cls = 'secondary') =>
    h('button', { type: 'button', id, class: cls, disabled, ...(key ? { 'aria-keyshortcuts': key } : {}) }, text, key ? ' ' : '', key ? h('kbd', {}, key) : '');

  const claim = button('case-claim', c.assignee === ctx.me ? 'Yours' : 'Claim', 'C', closed || c.assignee === ctx.me);
  claim.addEventListener('click', () => void change(claim, 'claim', undefined, () => 'Claimed: the case is yours.'));

  const verdicts = (['fraud', 'legitimate', 'inconclusive'] as const).map((resolution) => {
    const b = button(`case-${resolution}`, `Close as ${resolution}`, resolution[0]!.toUpperCase(), closed, resolution === 'fraud' ? '' : 'secondary');
    b.addEventListener(
      'click',
      () =>
        void change(b, 'status', { status: 'closed', resolution }, (after) => {
          const recorded = (after.timeline.at(-1)?.detail as { transaction_ids?: string[] } | undefined)?.transaction_ids;
          const outcome =
            resolution === 'inconclusive'
              ? 'No outcome recorded.'
              : recorded && after.timeline.at(-1)?.kind === 'outcomes_recorded'
                ? `${resolution === 'fraud' ? 'Fraud' : 'Legitimate'} recorded on ${recorded.length} ${recorded.length === 1 ? 'decision' : 'decisions'}${recorded.length ? `: ${recorded.join(', ')}` : ''}.`
                : '';
          return `Closed as ${resolution}. ${outcome} Press N for your next case.`;
        }),
    );
    return b;
  });

  // Snoozing: S opens a small form for the time (UTC), Escape closes it.
  const snooze = button('case-snooze', 'Snooze…', 'S', closed);
  const until = h('input', { type: 'datetime-local', id: 'snooze-until', name: 'until', required: true, step: '60' });
  const snoozeForm = h(
    'form',
    { id: 'snooze-form', class: 'card form', hidden: true, 'aria-label': 'Snooze the case' },
    h('label', { class: 'field inline' }, h('span', {}, 'Until (UTC)'), until),
    h('button', { type: 'submit' }, 'Snooze'),
    h('button', { type: 'button', class: 'secondary', id: 'snooze-cancel' }, 'Cancel'),
  );
  const closeSnooze = () => {
    snoozeForm.hidden = true;
    snooze.focus();
  };
  snooze.addEventListener('click', () => {
    until.value = new Date(Date.now() + 24 * 3_600_000).toISOString().slice(0, 16);
    snoozeForm.hidden = false;
    until.focus();
  });
  snoozeForm.querySelector('#snooze-cancel')!.addEventListener('click', closeSnooze);
  snoozeForm.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape') closeSnooze();
  });
  snoozeForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const at = `${until.value.length === 16 ? `${until.value}:00` : until.value}Z`;
    void change(null, 'status', { status: 'snoozed', until: new Date(at).toISOString() }, (after) => `Snoozed until ${utc(after.snoozed_until ?? at)}.`);
  });

  // Escalating: E opens a small form for the reason, Escape closes it. The answer is the case that
  // carries the work on: this one, moved, or the entity's open case there it was merged into.
  const escalate = button('case-escalate', 'Escalate…', 'E', closed);
  const target = ctx.inboxes.find((i) => i.id === inbox?.escalation_inbox_id);
  const escalationReason = h('input', { id: 'escalate-reason', name: 'reason', required: true, maxlength: '2000', autocomplete: 'off' });
  const escalateForm = h(
    'form',
    { id: 'escalate-form', class: 'card form', hidden: true, 'aria-label': 'Escalate the case' },
    h('label', { class: 'field inline' }, h('span', {}, target ? `Why (it goes to ${target.name})` : 'Why'), escalationReason),
    h('button', { type: 'submit' }, 'Escalate'),
    h('button', { type: 'button', class: 'secondary', id: 'escalate-cancel' }, 'Cancel'),
  );
  const closeEscalate = () => {
    escalateForm.hidden = true;
    escalate.focus();
  };
  escalate.addEventListener('click', () => {
    escalateForm.hidden = false;
    escalationReason.focus();
  });
  escalateForm.querySelector('#escalate-cancel')!.addEventListener('click', closeEscalate);
  escalateForm.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape') closeEscalate();
  });
  escalateForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    let after: CaseDetail;
    try {
      after = await api<CaseDetail>(`${base}/escalate`, { method: 'POST', body: { reason: escalationReason.value } });
    } catch (e) {
      say(errorBox(e));
      return;
    }
    const there = ctx.inboxes.find((i) => i.id === after.inbox_id)?.name ?? after.inbox_id;
    if (after.id === c.id) {
      await draw(root, ctx, after, `Escalated to ${there}: open, unassigned, due ${utc(after.due_at)}.`, shownId);
      return;
    }
    arriving = `Escalated to ${there}, into the case of ${entityText(after.entity)} open there, which this is: it now groups ${after.decision_count} ${after.decision_count === 1 ? 'decision' : 'decisions'}; the escalated case is closed, naming it.`;
    location.hash = caseHref(ctx.org.id, after.id);
  });

  const reopen = closed ? button('case-reopen', 'Reopen', null, false) : null;
  reopen?.addEventListener('click', () => void change(reopen, 'status', { status: 'open' }, () => 'Reopened.'));

  // Assigning: to a member who works the inbox (an inbox naming nobody is everyone's), or to nobody.
  const workers = inbox?.members.length ? ctx.members.filter((m) => inbox.members.includes(m.user_id)) : ctx.members;
  const assignee = h(
    'select',
    { id: 'case-assignee', name: 'assignee', disabled: closed },
    h('option', { value: '' }, 'Nobody'),
    ...workers.map((m) => h('option', { value: m.user_id, selected: m.user_id === c.assignee }, who(ctx, m.user_id))),
  );
  const assignForm = h(
    'form',
    { id: 'case-assign', class: 'actions', 'aria-label': 'Assign the case' },
    h('label', { class: 'field inline' }, h('span', {}, 'Assign to'), assignee),
    h('button', { type: 'submit', class: 'secondary', disabled: closed }, 'Assign'),
  );
  assignForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const to = assignee.value || null;
    void change(null, 'assign', { user_id: to }, () => (to ? `Assigned to ${who(ctx, to)}.` : 'Unassigned.'));
  });

  const note = h('textarea', { id: 'case-note', name: 'text', rows: '3', maxlength: '10000', required: true, disabled: closed });
  const noteForm = h(
    'form',
    { id: 'case-note-form', class: 'card form', 'aria-labelledby': 'case-note-title' },
    h('h2', { id: 'case-note-title' }, 'Add a note'),
    h('label', { class: 'field' }, h('span', {}, closed ? 'A closed case takes no note: reopen it first' : 'Note (kept on the timeline)'), note),
    h('div', { class: 'actions' }, h('button', { type: 'submit', disabled: closed }, 'Add note')),
  );
  noteForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void change(null, 'notes', { text: note.value }, () => 'Note added to the timeline.');
  });

  const exportName = `case-${c.id}.json`;
  const exportLink = h('a', { class: 'button secondary', id: 'case-export', href: `${base}/export`, download: exportName }, 'Export (JSON)');

  const header = h(
    'section',
    { class: 'card', id: 'case-header', 'aria-label': 'The case' },
    h(
      'dl',
      { class: 'kv' },
      ...(
        [
          ['Entity', entityLink(ctx.org, c.entity)],
          ['Inbox', inbox?.name ?? c.inbox_id],
          ['Status', h('span', { id: 'case-state' }, statusText(c))],
          ['Assignee', h('span', { id: 'case-assigned' }, who(ctx, c.assignee))],
          ['Due', dueText(c)],
          ['Opened', utc(c.opened_at)],
          ['Priority', `${money(c.priority)} (expected loss of its worst decision)`],
        ] as [string, string | Node][]
      ).flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
    ),
  );
  const bar = h(
    'section',
    { class: 'card review-bar', id: 'case-actions', 'aria-label': 'Work the case' },
    h('div', { class: 'actions' }, nextCaseButton(ctx.org, say, true), claim, snooze, escalate, ...verdicts, reopen, exportLink),
    h(
      'p',
      { class: 'muted case-keys' },
      'Keys: N next case, C claim, S snooze, E escalate, F fraud, L legitimate, I inconclusive. Closing as fraud or legitimate records that outcome on each decision without one.',
    ),
    snoozeForm,
    escalateForm,
    assignForm,
  );

  ctx.lists ??= (await api<ListIndex>(`/api/organizations/${encodeURIComponent(ctx.org.id)}/lists`)).data;
  const actions = {
    say,
    refresh: async (done: string) => draw(root, ctx, await api<CaseDetail>(base), done, shownId),
  };
  const decisions = await decisionsSection(root, ctx, c, shownId, message);
  root.replaceChildren(
    h('h1', { id: 'case-title' }, `Case: ${entityText(c.entity)}`),
    h('p', {}, h('a', { href: casesHref({ org: ctx.org.id }) }, '← All cases')),
    status,
    header,
    bar,
    decisions,
    timelineSection(ctx, c),
    noteForm,
    attachmentsSection(ctx.org, c, (id) => who(ctx, id), actions),
    entitySection(ctx.org, c, entityText(c.entity)),
    listSection(ctx.org, c, ctx.lists, entityText(c.entity), actions),
  );
  active = {
    press: (key) => {
      const b = document.getElementById(KEYS[key]!) as HTMLButtonElement | null;
      if (b && !b.disabled) b.click();
    },
  };
  if (message) status.focus();
}

/** The case's decisions as a table (as Transactions lists them), and the one chosen as its page shows it. */
async function decisionsSection(
  root: HTMLElement,
  ctx: CaseContext,
  c: CaseDetail,
  shownId: string | undefined,
  message?: string | Node,
): Promise<HTMLElement> {
  const shown = c.decisions.find((d) => d.transaction_id === shownId);
  const rows = transactionRows(ctx.org, c.decisions).map((cells, i) => {
    const d = c.decisions[i]!;
    const b = h(
      'button',
      { type: 'button', class: 'secondary', 'aria-pressed': d === shown ? 'true' : 'false', 'data-show': d.transaction_id },
      d === shown ? 'Shown' : 'Show',
    );
    b.addEventListener('click', async () => {
      await draw(root, ctx, c, message, d.transaction_id);
      document.getElementById('decision-title')?.focus();
    });
    return [...cells, b];
  });
  return h(
    'section',
    { class: 'card', id: 'case-decisions', 'aria-labelledby': 'case-decisions-title' },
    h('h2', { id: 'case-decisions-title' }, `Decisions (${c.decisions.length})`),
    table([...TRANSACTION_COLUMNS, 'Details'], rows),
    shown
      ? h(
          'div',
          { id: 'case-decision' },
          h(
            'h2',
            { id: 'decision-title', tabindex: '-1' },
            'Transaction ',
            h('a', { href: transactionHref(ctx.org.id, shown.transaction_id) }, shown.transaction_id),
          ),
          ...recordParts(ctx.org, shown, await fieldDeclarations(ctx.org, shown)),
        )
      : null,
  );
}

/** What a timeline entry says, in words. */
function entryText(ctx: CaseContext, kind: string, detail: unknown, actor: string): string | Node {
  const d = (detail ?? {}) as Record<string, unknown>;
  const str = (k: string) => (typeof d[k] === 'string' ? (d[k] as string) : null);
  switch (kind) {
    case 'opened':
      return `Opened in ${ctx.inboxes.find((i) => i.id === d.inbox_id)?.name ?? str('inbox_id') ?? 'an inbox'}`;
    case 'decision_joined':
      return `${str('transaction_id')} joined${str('reason') ? ` (${str('reason')})` : ''}`;
    case 'assigned':
      // Taking a case (claiming it, or the next case) is assigning it to oneself.
      return d.to === null
        ? `Unassigned (was ${who(ctx, str('from'))})`
        : `${d.claimed || d.to === actor ? 'Claimed by' : 'Assigned to'} ${who(ctx, str('to'))}`;
    case 'status': {
      if (d.to === 'closed') return `Closed as ${str('resolution')}`;
      if (d.to === 'snoozed') return `Snoozed until ${str('until') ? utc(str('until')!) : 'later'}`;
      if (d.from === 'closed') return 'Reopened';
      return `Status ${String(d.from).replace('_', ' ')} → ${String(d.to).replace('_', ' ')}`;
    }
    case 'woke':
      return 'Woke from its snooze';
    case 'escalated': {
      const to = ctx.inboxes.find((i) => i.id === d.to_inbox)?.name ?? str('to_inbox') ?? 'its escalation inbox';
      const why = str('reason') ? `: ${str('reason')}` : '';
      const into = str('merged_into');
      return into
        ? h('span', {}, `Escalated to ${to}${why}; merged into `, h('a', { href: caseHref(ctx.org.id, into) }, 'the case open there'))
        : `Escalated to ${to}${why}`;
    }
    case 'merged': {
      const ids = Array.isArray(d.transaction_ids) ? (d.transaction_ids as string[]) : [];
      const from = str('from_case');
      return h(
        'span',
        {},
        'Merged in ',
        from ? h('a', { href: caseHref(ctx.org.id, from) }, 'an escalated case') : 'an escalated case',
        `${str('reason') ? ` (${str('reason')})` : ''}${ids.length ? `, bringing ${ids.join(', ')}` : ''}`,
      );
    }
    case 'attachment':
      return `Attached ${str('name') ?? 'a file'} (${typeof d.size === 'number' ? sizeText(d.size) : 'unknown size'}, SHA-256 ${str('sha256')?.slice(0, 12) ?? '?'}…)`;
    case 'sla_breached':
      return 'Past its due time';
    case 'note':
      return h('span', { class: 'case-note' }, 'Note: ', str('text') ?? '');
    case 'outcomes_recorded': {
      const ids = Array.isArray(d.transaction_ids) ? (d.transaction_ids as string[]) : [];
      const outcome = d.outcome === 'fraud' ? 'fraud' : 'legitimate';
      return ids.length ? `Recorded ${outcome} on ${ids.join(', ')}` : `No outcome recorded: every decision had one already`;
    }
    default:
      return h('span', {}, `${kind.replace(/_/g, ' ')} `, h('code', {}, JSON.stringify(detail)));
  }
}

/** The timeline, oldest first, and whether its hash chain is intact as the service checked it. */
function timelineSection(ctx: CaseContext, c: CaseDetail): HTMLElement {
  const chain = c.chain.intact
    ? h(
        'p',
        { id: 'case-chain', class: 'chain-intact' },
        `✓ Hash chain intact: each of the ${c.timeline.length} entries carries the SHA-256 of the one before it with its own content.`,
      )
    : h(
        'div',
        { id: 'case-chain', class: 'error' },
        h('strong', {}, `Hash chain broken at entry ${c.chain.broken_at}`),
        h(
          'p',
          {},
          'That entry or one before it was changed outside the service: the timeline from there on cannot be trusted. Export the case for an auditor.',
        ),
      );
  return h(
    'section',
    { class: 'card', id: 'case-timeline', 'aria-labelledby': 'case-timeline-title' },
    h('h2', { id: 'case-timeline-title' }, 'Timeline'),
    chain,
    table(
      ['#', 'When', 'Who', 'What'],
      c.timeline.map((e) => [String(e.n), utc(e.at), who(ctx, e.actor), entryText(ctx, e.kind, e.detail, e.actor)]),
    ),
  );
}
