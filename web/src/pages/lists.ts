// Lists: an organization's named sets of values (customers, merchants, locations, payment types,
// channels or any text) that its rules read with in_list("name", field). The index lists them with
// how many values each holds now and creates new ones. A list's page pages through its values,
// adds and removes them (typed or pasted one a line, or read from a text or CSV file in this
// browser: one value a line, the first column of a CSV, a header line that names the column left
// out), each with a reason and an expiry, sent in batches of at most 10,000 (the service's limit per
// request) with the progress shown. The list can be read as it was at any past time (what a
// backtest or a past decision saw), and deleted unless a running rule uses it (the service names
// the rules). Addresses: #/lists, #/lists/{name}?as_of=…&after=….

import { api } from '../api.ts';
import type { AddResult, List, ListIndex, ListPage, RemoveResult } from '../contract.ts';
import { errorBox, h, table, utc } from '../dom.ts';
import { listsHref, rulesHref } from '../links.ts';
import { organizationFor, type Organization } from '../org.ts';
import type { Route } from '../route.ts';
import { utcInput } from './rules/editor.ts';
import './rules/rules.css';

/** The service's limit of values per request. */
export const BATCH = 10_000;
const PAGE = 100;

const KINDS: [string, string][] = [
  ['customer_id', 'Customer ids'],
  ['merchant_id', 'Merchant ids'],
  ['location', 'Locations'],
  ['payment_type', 'Payment types'],
  ['channel', 'Channels (payment_type:location)'],
  ['text', 'Any text'],
];
const kindWords = (k: string) => KINDS.find(([v]) => v === k)?.[1] ?? k;
/** The field a list of this kind is usually compared with, for the example rule. */
const FIELD: Record<string, string> = {
  customer_id: 'customer_id',
  merchant_id: 'merchant_id',
  location: 'location',
  payment_type: 'payment_type',
  channel: 'channel',
  text: 'customer_id',
};

export async function listsPage(root: HTMLElement, route: Route): Promise<void> {
  root.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
  try {
    const chosen = await organizationFor(root, route.query, 'lists', 'Lists');
    if (!chosen) return;
    const name = route.path[1];
    if (name) await listPage(root, chosen.org, name, route.query);
    else await listIndex(root, chosen.org, chosen.picker);
  } catch (e) {
    root.replaceChildren(h('h1', {}, 'Lists'), errorBox(e));
  }
}

const base = (org: Organization) => `/api/organizations/${encodeURIComponent(org.id)}/lists`;

async function listIndex(root: HTMLElement, org: Organization, picker: HTMLElement | null): Promise<void> {
  const { data } = await api<ListIndex>(base(org));
  const name = h('input', {
    id: 'list-name',
    name: 'name',
    required: true,
    pattern: '[a-z][a-z0-9_]{0,63}',
    maxlength: '64',
    autocomplete: 'off',
    placeholder: 'blocked_customers',
    'aria-describedby': 'list-name-hint',
  });
  const kind = h('select', { id: 'list-kind', name: 'kind' }, ...KINDS.map(([v, text]) => h('option', { value: v }, text)));
  const description = h('input', { id: 'list-description', name: 'description', maxlength: '1000', autocomplete: 'off' });
  const status = h('div', { id: 'list-create-status', role: 'status', 'aria-live': 'polite' });
  const create = h(
    'form',
    { class: 'card form', id: 'list-create', 'aria-labelledby': 'list-create-title' },
    h('h2', { id: 'list-create-title' }, 'New list'),
    h(
      'div',
      { class: 'grid' },
      h(
        'label',
        { class: 'field' },
        h('span', {}, 'Name'),
        name,
        h('span', { class: 'field-hint', id: 'list-name-hint' }, 'Lowercase letters, digits and _, starting with a letter; rules name it.'),
      ),
      h('label', { class: 'field' }, h('span', {}, 'It holds'), kind),
      h('label', { class: 'field wide' }, h('span', {}, 'Description (optional)'), description),
    ),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Create list')),
    status,
  );
  create.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    try {
      const list = await api<List>(base(org), {
        method: 'POST',
        body: { name: name.value.trim(), kind: kind.value, ...(description.value.trim() ? { description: description.value.trim() } : {}) },
      });
      location.hash = listsHref(org.id, list.name);
    } catch (e) {
      status.replaceChildren(errorBox(e));
      name.focus();
    }
  });
  root.replaceChildren(
    h('h1', {}, 'Lists'),
    h(
      'div',
      { class: 'actions' },
      picker,
      h(
        'p',
        { class: 'muted' },
        `${org.name}: named lists of values that rules read, e.g. in_list("blocked_customers", customer_id). API keys can add and remove values too (POST and DELETE /api/v1/lists/{name}/items), so a chargeback can block a customer at once.`,
      ),
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'list-index-title' },
      h('h2', { id: 'list-index-title' }, `${data.length} list${data.length === 1 ? '' : 's'}`),
      data.length === 0
        ? h('p', { class: 'muted', id: 'no-lists' }, 'No lists yet: create one below.')
        : h(
            'div',
            { id: 'list-table' },
            table(
              ['List', 'It holds', 'Values now', 'Description', 'Created'],
              data.map((l) => [
                h('a', { href: listsHref(org.id, l.name) }, l.name),
                kindWords(l.kind),
                l.items.toLocaleString('en'),
                l.description ?? '—',
                utc(l.created_at),
              ]),
            ),
          ),
      h('p', {}, h('a', { href: rulesHref(org.id) }, 'Rules →')),
    ),
    create,
  );
}

/** The first cell of a line of a CSV (or tab-separated) file: up to the first comma or tab, or a
 *  quoted cell with its doubled quotes undone. A quoted cell that spans lines is not read. */
export function firstCell(line: string): string {
  if (line.startsWith('"')) {
    let out = '';
    for (let i = 1; i < line.length; i++) {
      const c = line[i]!;
      if (c !== '"') out += c;
      else if (line[i + 1] === '"') {
        out += '"';
        i++;
      } else break;
    }
    return out;
  }
  const end = line.search(/[,\t]/);
  return end < 0 ? line : line.slice(0, end);
}

/** The values of a file's text: the first cell of each line, trimmed, empty ones left out; a first
 *  line that names the column (the list's kind or name, "value", "values" or "id") is a header. */
export function fileValues(text: string, list: { name: string; kind: string }): { values: string[]; header: string | undefined } {
  const values = text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n|\r/)
    .map((l) => firstCell(l).trim())
    .filter((v) => v !== '');
  const first = values[0]?.toLowerCase();
  const header = first !== undefined && [list.kind, list.name, 'value', 'values', 'id'].includes(first) ? values.shift() : undefined;
  return { values, header };
}

async function listPage(root: HTMLElement, org: Organization, name: string, query: URLSearchParams, message?: string): Promise<void> {
  const asOf = query.get('as_of') ?? undefined;
  const after = query.get('after') ?? undefined;
  const q = new URLSearchParams({ limit: String(PAGE) });
  if (asOf) q.set('as_of', asOf);
  if (after) q.set('starting_after', after);
  const page = await api<ListPage>(`${base(org)}/${encodeURIComponent(name)}?${q}`);
  const list = page.list;
  const path = `${base(org)}/${encodeURIComponent(list.name)}`;
  const status = h('div', { id: 'list-status', class: 'notice', role: 'status', 'aria-live': 'polite' }, message ?? '');
  const reload = (text: string) => listPage(root, org, name, query, text);

  // Add or remove: typed, pasted or read from a file, in batches.
  const values = h('textarea', {
    id: 'list-values',
    name: 'values',
    rows: '6',
    spellcheck: 'false',
    autocomplete: 'off',
    'aria-describedby': 'list-values-hint',
  });
  const reason = h('input', { id: 'list-reason', name: 'reason', maxlength: '500', autocomplete: 'off', placeholder: 'e.g. chargeback' });
  const expires = h('input', { id: 'list-expires', name: 'expires_at', type: 'datetime-local', step: '1' });
  const file = h('input', { id: 'list-file', name: 'file', type: 'file', accept: '.csv,.txt,.tsv,text/csv,text/plain', 'aria-describedby': 'list-file-hint' });
  const progress = h('progress', { id: 'list-progress', max: '1', value: '0', hidden: true, 'aria-label': 'Values sent' });
  const add = h('button', { type: 'submit', id: 'list-add', value: 'add' }, 'Add');
  const drop = h('button', { type: 'submit', id: 'list-remove', value: 'remove', class: 'secondary' }, 'Remove');
  const form = h(
    'form',
    { class: 'card form', id: 'list-values-form', 'aria-labelledby': 'list-values-title' },
    h('h2', { id: 'list-values-title' }, 'Add or remove values'),
    h(
      'label',
      { class: 'field wide' },
      h('span', {}, 'Values, one a line'),
      values,
      h(
        'span',
        { class: 'field-hint', id: 'list-values-hint' },
        `Type or paste them; each is trimmed, and a value already on the list starts again with this reason and expiry. Sent ${BATCH.toLocaleString('en')} at a time.`,
      ),
    ),
    h(
      'div',
      { class: 'grid' },
      h(
        'label',
        { class: 'field' },
        h('span', {}, 'Or read a file'),
        file,
        h(
          'span',
          { class: 'field-hint', id: 'list-file-hint' },
          'A text or CSV file, one value a line (a CSV’s first column); it fills the box above, to check before sending.',
        ),
      ),
      h('label', { class: 'field' }, h('span', {}, 'Reason (optional, when adding)'), reason),
      h('label', { class: 'field' }, h('span', {}, 'Leaves the list at (UTC, optional)'), expires),
    ),
    h('div', { class: 'actions' }, add, drop),
    progress,
  );
  file.addEventListener('change', async () => {
    const f = file.files?.[0];
    if (!f) return;
    try {
      const read = fileValues(await f.text(), { name: list.name, kind: list.kind });
      values.value = read.values.join('\n');
      status.textContent = `Read ${read.values.length.toLocaleString('en')} value${read.values.length === 1 ? '' : 's'} from ${f.name}${read.header ? ` (its header “${read.header}” left out)` : ''} into the box: check them, then Add or Remove.`;
    } catch (e) {
      status.replaceChildren(errorBox(e));
    }
  });
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const removing = (ev as SubmitEvent).submitter?.id === 'list-remove';
    const all = [
      ...new Set(
        values.value
          .split(/\r?\n/)
          .map((v) => v.trim())
          .filter((v) => v !== ''),
      ),
    ];
    if (all.length === 0) {
      status.textContent = 'Nothing to send: write or paste at least one value, one a line.';
      values.focus();
      return;
    }
    add.disabled = drop.disabled = true;
    progress.hidden = false;
    progress.value = 0;
    let done = 0;
    let changed = 0;
    let replaced = 0;
    try {
      for (let i = 0; i < all.length; i += BATCH) {
        const batch = all.slice(i, i + BATCH);
        if (removing) {
          const r = await api<RemoveResult>(`${path}/items`, { method: 'DELETE', body: { values: batch } });
          changed += r.removed;
        } else {
          const r = await api<AddResult>(`${path}/items`, {
            method: 'POST',
            body: {
              values: batch,
              ...(reason.value.trim() ? { reason: reason.value.trim() } : {}),
              ...(expires.value ? { expires_at: utcInput(expires.value) } : {}),
            },
          });
          changed += r.added;
          replaced += r.replaced;
        }
        done += batch.length;
        progress.value = done / all.length;
        status.textContent = `Sent ${done.toLocaleString('en')} of ${all.length.toLocaleString('en')}…`;
      }
      await reload(
        removing
          ? `Removed ${changed.toLocaleString('en')} value${changed === 1 ? '' : 's'}${changed < all.length ? ` (${(all.length - changed).toLocaleString('en')} were not on the list)` : ''}.`
          : `Added ${changed.toLocaleString('en')} value${changed === 1 ? '' : 's'}${replaced ? `, ${replaced.toLocaleString('en')} of them already on the list (started again)` : ''}.`,
      );
    } catch (e) {
      status.replaceChildren(h('p', {}, `Stopped after ${done.toLocaleString('en')} of ${all.length.toLocaleString('en')} values:`), errorBox(e));
      add.disabled = drop.disabled = false;
    }
  });

  // Reading the list as it was.
  const when = h('input', { id: 'list-as-of', name: 'as_of', type: 'datetime-local', step: '1', value: asOf ? asOf.slice(0, 19) : undefined });
  const history = h(
    'form',
    { class: 'actions', id: 'list-as-of-form', 'aria-label': 'Read the list as it was' },
    h('label', { class: 'field inline' }, h('span', {}, 'As it was at (UTC)'), when),
    h('button', { type: 'submit', class: 'secondary' }, 'Show'),
    asOf ? h('a', { href: listsHref(org.id, list.name), id: 'list-now' }, 'Back to now') : null,
  );
  history.addEventListener('submit', (ev) => {
    ev.preventDefault();
    location.hash = listsHref(org.id, list.name, { as_of: utcInput(when.value) });
  });

  const removeOne = (value: string) => {
    const b = h('button', { type: 'button', class: 'secondary', 'aria-label': `Remove ${value}` }, 'Remove');
    b.addEventListener('click', async () => {
      b.disabled = true;
      try {
        await api<RemoveResult>(`${path}/items`, { method: 'DELETE', body: { values: [value] } });
        await reload(`Removed ${value}.`);
      } catch (e) {
        status.replaceChildren(errorBox(e));
        b.disabled = false;
      }
    });
    return b;
  };
  const head = ['Value', 'Added', 'By', 'Reason', 'Leaves', asOf ? 'Removed' : 'Remove'];
  const rows = page.data.map((item) => [
    h('code', {}, item.value),
    utc(item.added_at),
    item.added_by,
    item.reason ?? '—',
    item.expires_at ? utc(item.expires_at) : 'never',
    asOf ? (item.removed_at ? `${utc(item.removed_at)} by ${item.removed_by ?? '—'}` : 'still on it') : removeOne(item.value),
  ]);

  const del = h('button', { type: 'button', id: 'list-delete', class: 'secondary' }, 'Delete the list');
  del.addEventListener('click', async () => {
    if (!confirm(`Delete ${list.name} and its values?`)) return;
    try {
      await api<null>(path, { method: 'DELETE' });
      location.hash = listsHref(org.id);
    } catch (e) {
      status.replaceChildren(errorBox(e));
    }
  });

  const pager = h(
    'nav',
    { class: 'pager', 'aria-label': 'Pages of values' },
    after ? h('a', { class: 'button secondary', href: listsHref(org.id, list.name, { as_of: asOf }), id: 'list-first' }, 'First values') : null,
    page.has_more
      ? h(
          'a',
          { class: 'button secondary', href: listsHref(org.id, list.name, { as_of: asOf, after: page.data[page.data.length - 1]!.value }), id: 'list-next' },
          'Next values',
        )
      : null,
  );
  const parts: (Node | null)[] = [
    h('h1', {}, `List ${list.name}`),
    h('p', {}, h('a', { href: listsHref(org.id) }, '← All lists')),
    h(
      'section',
      { class: 'card', id: 'list-summary', 'aria-label': 'Summary' },
      h(
        'dl',
        { class: 'kv' },
        ...[
          ['It holds', kindWords(list.kind)],
          ['Values now', h('span', { id: 'list-count' }, list.items.toLocaleString('en'))],
          ['In a rule', h('code', {}, `in_list("${list.name}", ${FIELD[list.kind] ?? 'customer_id'})`)],
          ['Created', `${utc(list.created_at)} by ${list.created_by}`],
          ...(list.description ? [['Description', list.description]] : []),
        ].flatMap(([k, v]) => [h('dt', {}, k as string), h('dd', {}, v as string | Node)]),
      ),
      h('div', { class: 'actions' }, del),
    ),
    status,
    asOf ? null : form,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'list-items-title' },
      h('h2', { id: 'list-items-title' }, asOf ? `Values on ${utc(asOf)}` : after ? 'More values' : 'Values'),
      history,
      page.data.length === 0
        ? h('p', { class: 'muted', id: 'list-empty' }, asOf ? 'The list had no values then.' : 'No values yet.')
        : h('div', { id: 'list-items', class: 'values-table' }, table(head, rows)),
      pager,
    ),
  ];
  root.replaceChildren(...parts.filter((p): p is Node => p !== null));
}
