// Two parts of a case's page (case.ts) beside its decisions and timeline: its files, and putting
// its entity on one of the organization's lists.
// - Files: those attached so far, read from the timeline (each `attachment` entry names the file's
//   id, name, size and SHA-256), each a download link (the service sends it as a file to save, never
//   to render); and a form to attach one more, at most 5 MB: a larger file is refused here, before
//   anything is sent, with what to do instead.
// - "Add to a list": the organization's lists that hold this kind of value (a customer id list for a
//   customer, any `text` list), a reason and an optional expiry, through the lists API
//   (`POST …/lists/{name}/items`), as the Lists page adds a value.

import { api } from '../api.ts';
import type { AddResult, CaseDetail, List } from '../contract.ts';
import { errorBox, h, money, table, utc } from '../dom.ts';
import { listsHref } from '../links.ts';
import type { Organization } from '../org.ts';
import { MAX_ATTACHMENT_BYTES } from '../../../src/domain/cases.ts';
import { kindsHolding } from '../../../src/domain/rules/lists.ts';
import { utcInput } from './rules/editor.ts';

/** What the sections do with what they did: say it, or draw the case again saying it. */
export interface SectionActions {
  say: (m: string | Node) => void;
  refresh: (message: string) => Promise<void>;
}

/** A size in bytes, in words: "812 bytes", "12.4 KB", "5.2 MB". */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} ${bytes === 1 ? 'byte' : 'bytes'}`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** An attachment as the timeline tells it. */
interface Attached {
  attachment_id: string;
  name: string;
  size: number;
  sha256: string;
}

/** The case's files, each a download, and a form to attach another. */
export function attachmentsSection(org: Organization, c: CaseDetail, who: (id: string) => string, actions: SectionActions): HTMLElement {
  const base = `/api/organizations/${encodeURIComponent(org.id)}/cases/${encodeURIComponent(c.id)}`;
  const closed = c.status === 'closed';
  const files = c.timeline.filter((e) => e.kind === 'attachment').map((e) => ({ ...(e.detail as Attached), at: e.at, actor: e.actor }));
  const input = h('input', { type: 'file', id: 'attachment-file', name: 'file', required: true, disabled: closed });
  const submit = h('button', { type: 'submit', class: 'secondary', disabled: closed }, 'Attach');
  const form = h(
    'form',
    { id: 'attachment-form', class: 'actions', 'aria-label': 'Attach a file' },
    h('label', { class: 'field inline' }, h('span', {}, closed ? 'A closed case takes no file: reopen it first' : 'File (at most 5 MB)'), input),
    submit,
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const file = input.files?.[0];
    if (!file) return;
    if (file.size > MAX_ATTACHMENT_BYTES) {
      actions.say(
        h(
          'div',
          { class: 'error', role: 'alert', id: 'attachment-too-large' },
          h(
            'strong',
            {},
            `${file.name} is ${file.size.toLocaleString('en')} bytes: a case takes files of at most ${MAX_ATTACHMENT_BYTES.toLocaleString('en')} bytes (5 MB).`,
          ),
          h('p', {}, 'Nothing was sent. Compress or split it, then attach it again.'),
        ),
      );
      return;
    }
    submit.disabled = true;
    const data = new FormData();
    data.append('file', file, file.name);
    try {
      await api(`${base}/attachments`, { method: 'POST', form: data });
      await actions.refresh(`Attached ${file.name} (${sizeText(file.size)}); the timeline records its SHA-256.`);
    } catch (e) {
      actions.say(errorBox(e));
      submit.disabled = false;
    }
  });
  return h(
    'section',
    { class: 'card', id: 'case-attachments', 'aria-labelledby': 'case-attachments-title' },
    h('h2', { id: 'case-attachments-title' }, `Files (${files.length})`),
    files.length === 0
      ? h('p', { class: 'muted', id: 'no-attachments' }, 'No file yet: statements, screenshots, a customer’s letter.')
      : h(
          'div',
          { id: 'attachment-list' },
          table(
            ['File', 'Size', 'Attached by', 'When', 'SHA-256'],
            files.map((f) => [
              h('a', { href: `${base}/attachments/${encodeURIComponent(f.attachment_id)}`, download: f.name }, f.name),
              sizeText(f.size),
              who(f.actor),
              utc(f.at),
              h('code', { class: 'sha256' }, f.sha256),
            ]),
          ),
        ),
    form,
  );
}

/** The case's entity as its own page sums it up (all-time totals, its latest decisions, who it
 *  deals with most) and the organization's lists it is on now, with when, why and until when. */
export function entitySection(org: Organization, c: CaseDetail, entity: string): HTMLElement {
  const s = c.entity_summary;
  const title = h('h2', { id: 'case-entity-title' }, `About ${entity}`);
  const totals = s
    ? h(
        'p',
        { id: 'case-entity-totals' },
        `${s.totals.transactions.toLocaleString('en')} transactions, ${money(s.totals.amount_sum)} in all, last ${utc(s.totals.last_time)}; `,
        `${s.totals.fraud} reported fraud of ${s.totals.labelled} with an outcome; of the latest ${s.recent.transactions}, ${s.recent.reviewed} reviewed and ${s.recent.blocked} blocked.`,
      )
    : h('p', { class: 'muted', id: 'case-entity-totals' }, 'No transaction of it is recorded.');
  const counterparties = s?.counterparties.length
    ? table(
        ['Deals most with', 'Transactions', 'Amount', 'Fraud'],
        s.counterparties.slice(0, 5).map((p) => [`${p.role} ${p.id}`, String(p.transactions), money(p.amount_sum), String(p.fraud)]),
        'Who it deals with most, over its latest transactions',
      )
    : '';
  const lists = c.lists.length
    ? h(
        'ul',
        { id: 'case-entity-lists' },
        ...c.lists.map((l) =>
          h(
            'li',
            {},
            h('a', { href: listsHref(org.id, l.name) }, l.name),
            ` since ${utc(l.added_at)}${l.expires_at ? `, until ${utc(l.expires_at)}` : ''}${l.reason ? `: ${l.reason}` : ''}`,
          ),
        ),
      )
    : h('p', { class: 'muted', id: 'case-entity-lists' }, 'On none of the organization’s lists.');
  return h(
    'section',
    { class: 'card', id: 'case-entity', 'aria-labelledby': 'case-entity-title' },
    title,
    totals,
    counterparties,
    h('h3', {}, 'On lists'),
    lists,
  );
}

/** "Add to a list": the lists that hold the entity's kind of value, a reason and an optional expiry. */
export function listSection(org: Organization, c: CaseDetail, lists: List[], entity: string, actions: SectionActions): HTMLElement {
  const holding = kindsHolding(c.entity.kind);
  const fitting = lists.filter((l) => holding.includes(l.kind));
  const title = h('h2', { id: 'case-list-title' }, `Add ${entity} to a list`);
  if (fitting.length === 0)
    return h(
      'section',
      { class: 'card', id: 'case-lists', 'aria-labelledby': 'case-list-title' },
      title,
      h(
        'p',
        { class: 'muted', id: 'no-fitting-list' },
        `No list of the organization holds ${c.entity.kind === 'key' ? 'text' : `${c.entity.kind} ids`} yet: make one on the `,
        h('a', { href: listsHref(org.id) }, 'Lists'),
        ' page, then come back.',
      ),
    );
  const select = h('select', { id: 'case-list', name: 'list' }, ...fitting.map((l) => h('option', { value: l.name }, `${l.name} (${l.kind})`)));
  const reason = h('input', {
    id: 'case-list-reason',
    name: 'reason',
    required: true,
    maxlength: '500',
    autocomplete: 'off',
    placeholder: 'e.g. confirmed fraud',
  });
  const expires = h('input', { id: 'case-list-expires', name: 'expires_at', type: 'datetime-local', step: '1' });
  const submit = h('button', { type: 'submit', class: 'secondary' }, 'Add to list');
  const form = h(
    'form',
    { class: 'card form', id: 'case-list-form', 'aria-labelledby': 'case-list-title' },
    title,
    h(
      'div',
      { class: 'grid' },
      h('label', { class: 'field' }, h('span', {}, 'List'), select),
      h('label', { class: 'field' }, h('span', {}, 'Reason (kept with the value)'), reason),
      h('label', { class: 'field' }, h('span', {}, 'Leaves the list at (UTC, optional)'), expires),
    ),
    h('div', { class: 'actions' }, submit),
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    submit.disabled = true;
    const name = select.value;
    const until = utcInput(expires.value);
    try {
      const r = await api<AddResult>(`/api/organizations/${encodeURIComponent(org.id)}/lists/${encodeURIComponent(name)}/items`, {
        method: 'POST',
        body: { values: [c.entity.id], reason: reason.value.trim(), ...(until ? { expires_at: until } : {}) },
      });
      reason.value = '';
      expires.value = '';
      actions.say(
        h(
          'span',
          {},
          r.replaced ? `${entity} was on ` : `Added ${entity} to `,
          h('a', { href: listsHref(org.id, name) }, name),
          r.replaced ? ' already: it stays, with this reason' : '',
          until ? ` until ${utc(until)}` : ', with no expiry',
          '.',
        ),
      );
    } catch (e) {
      actions.say(errorBox(e));
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}
