// Data protection: how long an organization keeps its payment data, and its customers' requests to
// see or erase theirs (docs/operating.md, "Data protection"), for its owners. The page shows the
// retention period with the latest sweep and changes it (the service holds the bounds: a value
// outside them is sent, and its refusal shown with the reason); downloads a customer's export as a
// JSON file named by its time, never by the customer; erases a customer after a confirmation that
// says what goes and that it cannot be undone; lists the erasures (status, when, what was erased and
// kept), read again every two seconds while one is pending and the page is shown; and the audit,
// newest first. A customer is named only by what the owner types: the erasures and the audit name
// it by its keyed hash, as the service answers them. An analyst sees the retention period (every
// member reads it) and no control; the navigation's link is shown to owners only (org.ts).
// Address: #/data-protection?org=….

import { api } from '../api.ts';
import type {
  ApiKeyList,
  CustomerExport,
  DataProtectionAudit,
  Erasure,
  ErasureAccepted,
  ErasureList,
  ListIndex,
  MemberList,
  Organization,
  Retention,
} from '../contract.ts';
import { errorBox, h, table, utc } from '../dom.ts';
import { organizationFor } from '../org.ts';
import type { Route } from '../route.ts';
import { fieldErrorBox } from './fields.ts';
import './rules/rules.css';
import './data-protection.css';

const TITLE = 'Data protection';
/** How many of the newest erasures and audit entries the page lists. */
const NEWEST = 25;
/** While an erasure is pending, the erasures and the audit are read again this often. */
const FOLLOW_MS = 2000;

type ErasureCounts = NonNullable<Erasure['counts']>;
type SweepCounts = NonNullable<Retention['last_sweep']>['counts'];
type AuditAction = DataProtectionAudit['data'][number]['action'];
type Counted = keyof ErasureCounts | keyof SweepCounts | 'lists';

/** Every count the service gives of an erasure, a sweep or an export (its `lists`), in words, one
 *  and many, in the order said (a Record over their names: a new one fails the typecheck until
 *  worded here). */
const COUNTED: Record<Counted, readonly [string, string]> = {
  transactions: ['transaction', 'transactions'],
  outcome_changes: ['outcome change', 'outcome changes'],
  list_items: ['list entry', 'list entries'],
  lists: ['list entry', 'list entries'],
  cases: ['case', 'cases'],
  case_transactions: ['transaction taken out of a case', 'transactions taken out of cases'],
  case_entries_redacted: ['case timeline entry rewritten', 'case timeline entries rewritten'],
  audit_entries_redacted: ["lists' audit entry rewritten", "lists' audit entries rewritten"],
  webhook_events: ['webhook event', 'webhook events'],
  rings: ['ring', 'rings'],
  ring_windows: ['ring analysis', 'ring analyses'],
  totals: ['total adjusted', 'totals adjusted'],
  uses: ['first use', 'first uses'],
};

/** What an erasure deletes, said in the confirmation before it is asked for. */
const ERASES = [
  'its transactions, with their features, decisions, outcomes and outcome changes;',
  'its totals and first uses; the totals of its merchants, channels and key values are adjusted as if it had never paid;',
  'cases about it, with their timelines, notes and files; its transactions leave other cases, whose timelines are rewritten without its id;',
  'webhook events naming it, with their deliveries;',
  'the rings it was in.',
];

const plural = (n: number, [one, many]: readonly [string, string]) => `${n.toLocaleString('en')} ${n === 1 ? one : many}`;

/** The counts that are not zero, in words ("3 transactions, 1 total adjusted"), or that none was. */
function countsText(counts: unknown): string {
  const c = (counts ?? {}) as Partial<Record<Counted, unknown>>;
  const said = (Object.keys(COUNTED) as Counted[]).flatMap((k) => {
    const n = c[k];
    return typeof n === 'number' && n > 0 ? [plural(n, COUNTED[k])] : [];
  });
  return said.length ? said.join(', ') : 'nothing';
}

/** The start of a customer's keyed hash, enough to tell one from another in the audit. */
const shortHash = (hash: unknown) => h('code', { class: 'dp-hash' }, `${String(hash ?? '').slice(0, 12)}…`);

/** A status line that shows only when it has something to say, focused when it says it. */
const statusLine = (id: string) => h('div', { id, class: 'notice', role: 'status', 'aria-live': 'polite', tabindex: '-1' });

/** Shows `what` in `line` and moves the focus there. */
function say(line: HTMLElement, ...what: (string | Node)[]): void {
  line.replaceChildren(...what);
  line.focus();
}

/** A labelled field with a hint under it, which the field's input names (aria-describedby). */
const hinted = (cls: string, label: string, input: HTMLElement, hint: string) =>
  h('label', { class: cls }, h('span', {}, label), input, h('span', { class: 'field-hint', id: input.getAttribute('aria-describedby') ?? undefined }, hint));

/** A form of the page: its fields, its button, then what follows (its status line last). */
const actionForm = (attrs: Record<string, string | boolean>, fields: Node[], button: HTMLButtonElement, ...after: Node[]) =>
  h('form', attrs, ...fields, h('div', { class: 'actions' }, button), ...after);

/** Runs `act` when `form` is submitted, its button disabled meanwhile; a refusal is said in
 *  `status` (as `refused` shows it). */
function onSubmit(form: HTMLFormElement, button: HTMLButtonElement, status: HTMLElement, act: () => Promise<void>, refused = errorBox): void {
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    button.disabled = true;
    try {
      await act();
    } catch (e) {
      say(status, refused(e));
    } finally {
      button.disabled = false;
    }
  });
}

export async function dataProtectionPage(root: HTMLElement, route: Route): Promise<void> {
  root.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
  try {
    const chosen = await organizationFor(root, route.query, 'data-protection', TITLE);
    if (!chosen) return;
    await page(root, chosen.org, chosen.picker);
  } catch (e) {
    root.replaceChildren(h('h1', {}, TITLE), errorBox(e));
  }
}

/** What the sections share: the organization's API path, names for who did what, and a reading
 *  of the erasures and the audit again (after an action, and while an erasure is pending). */
interface Context {
  org: Organization;
  base: string;
  who(by: string): string;
  refresh(): Promise<void>;
}

async function page(root: HTMLElement, org: Organization, picker: HTMLElement | null): Promise<void> {
  const base = `/api/organizations/${encodeURIComponent(org.id)}`;
  const owner = org.role === 'owner';
  const retained = await api<Retention>(`${base}/retention`);
  const intro = h(
    'div',
    { class: 'actions' },
    picker,
    h(
      'p',
      { class: 'muted', id: 'dp-intro' },
      `${org.name}: how long its payment data is kept, and its customers' requests to see or erase their data (an access request is answered with the export, an erasure request with the erasure). Every change, export and erasure is audited.`,
    ),
  );
  if (!owner) {
    root.replaceChildren(
      h('h1', {}, TITLE),
      intro,
      retentionSection(base, retained).section,
      h(
        'section',
        { class: 'card', id: 'dp-owners-only' },
        h('p', {}, `Only owners of ${org.name} change the retention period, export or erase a customer's data, and see the erasures and their audit.`),
      ),
    );
    return;
  }

  const [members, keys, lists] = await Promise.all([api<MemberList>(`${base}/members`), api<ApiKeyList>(`${base}/api-keys`), api<ListIndex>(`${base}/lists`)]);
  const names = new Map<string, string>([
    ...members.members.map((m): [string, string] => [m.user_id, m.name ?? m.email ?? m.user_id]),
    ...keys.api_keys.map((k): [string, string] => [`key:${k.id}`, `API key “${k.name}”`]),
  ]);
  const retention = retentionSection(base, retained, () => ctx.refresh());
  const erasures = h('div', { id: 'erasure-area' });
  const audit = h('div', { id: 'audit-area' });
  let seq = 0;
  let timer: number | undefined;
  const ctx: Context = {
    org,
    base,
    who: (by) => (by === 'system' ? 'the service' : (names.get(by) ?? by)),
    async refresh() {
      const mine = ++seq;
      window.clearTimeout(timer);
      let period: Retention;
      let list: ErasureList;
      let entries: DataProtectionAudit;
      try {
        // The audit after the erasures: an erasure read as done has its audit entry too.
        [period, list] = await Promise.all([api<Retention>(`${base}/retention`), api<ErasureList>(`${base}/erasures?limit=${NEWEST}`)]);
        entries = await api<DataProtectionAudit>(`${base}/data-protection/audit?limit=${NEWEST}`);
      } catch (e) {
        if (mine === seq) erasures.replaceChildren(errorBox(e));
        return;
      }
      if (mine !== seq) return;
      retention.show(period);
      erasures.replaceChildren(erasureTable(ctx, list));
      audit.replaceChildren(auditTable(ctx, entries));
      // Followed while one is pending and the page is shown; a page left is detached, and stops.
      if (list.data.some((e) => e.status === 'pending'))
        timer = window.setTimeout(() => {
          if (erasures.isConnected) void ctx.refresh();
        }, FOLLOW_MS);
    },
  };
  await ctx.refresh();
  root.replaceChildren(
    h('h1', {}, TITLE),
    intro,
    retention.section,
    exportSection(ctx),
    eraseSection(ctx, lists),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'erasures-title' },
      h('h2', { id: 'erasures-title' }, 'Erasures'),
      h(
        'p',
        { class: 'muted' },
        "Newest first. A pending erasure runs within seconds and this list follows it. Once done, the service keeps the customer's id nowhere: an erasure names the customer only by a keyed hash of the id, which proves which customer it was to whoever knows the id.",
      ),
      erasures,
    ),
    h('section', { class: 'card', 'aria-labelledby': 'audit-title' }, h('h2', { id: 'audit-title' }, 'Audit'), audit),
  );
}

/** The retention period and the latest sweep (`show` says them anew); for an owner (`changed`,
 *  called after a change), a form to change the period. */
function retentionSection(base: string, r: Retention, changed?: () => Promise<void>): { section: HTMLElement; show(r: Retention): void } {
  const period = h('p', { id: 'retention-period' });
  const sweep = h('p', { id: 'retention-sweep' });
  const show = (r: Retention) => {
    period.textContent = `Recorded transactions are kept ${plural(r.days, ['day', 'days'])}${r.days === r.default_days ? ' (the default)' : `; the default is ${r.default_days}`}. Once a day the service deletes what is older: transactions with their outcomes and places in cases, webhook events and ring analyses. The totals the features count stay.`;
    sweep.textContent = r.last_sweep
      ? `Last sweep: ${utc(r.last_sweep.at)}, deleting what was older than ${utc(r.last_sweep.cutoff)}: ${countsText(r.last_sweep.counts)}.`
      : 'No sweep has run for the organization yet.';
  };
  show(r);
  const section = h(
    'section',
    { class: 'card', id: 'retention', 'aria-labelledby': 'retention-title' },
    h('h2', { id: 'retention-title' }, 'Retention'),
    period,
    sweep,
  );
  if (!changed) return { section, show };

  const days = h('input', {
    id: 'retention-days',
    name: 'days',
    type: 'number',
    inputmode: 'numeric',
    min: String(r.minimum_days),
    max: String(r.maximum_days),
    step: '1',
    value: String(r.days),
    'aria-describedby': 'retention-hint',
  });
  const save = h('button', { type: 'submit', id: 'retention-save' }, 'Save retention period');
  const status = statusLine('retention-status');
  // The browser does not hold the bounds (novalidate): the service says what is wrong, and why.
  const form = actionForm(
    { id: 'retention-form', class: 'form', novalidate: true, 'aria-label': 'Change the retention period' },
    [
      hinted(
        'field dp-days',
        'Keep recorded transactions for (days)',
        days,
        `From ${r.minimum_days} to ${r.maximum_days.toLocaleString('en')} days; ${r.default_days} by default, which covers the card networks' chargeback windows. The next daily sweep deletes by it.`,
      ),
    ],
    save,
    status,
  );
  onSubmit(
    form,
    save,
    status,
    async () => {
      // An empty or unreadable number goes as null, which the service refuses with its reason.
      const next = await api<Retention>(`${base}/retention`, { method: 'PUT', body: { days: days.valueAsNumber } });
      days.removeAttribute('aria-invalid');
      show(next);
      say(status, `Recorded transactions are kept ${plural(next.days, ['day', 'days'])} from now on; the next daily sweep deletes by it.`);
      await changed();
    },
    (e) => {
      days.setAttribute('aria-invalid', 'true');
      return fieldErrorBox(e);
    },
  );
  section.append(form);
  return { section, show };
}

/** A customer id's field (the same for the export and the erasure). */
function customerField(id: string, hint: string): { field: HTMLElement; input: HTMLInputElement } {
  const input = h('input', {
    id,
    name: 'customer_id',
    required: true,
    maxlength: '200',
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': `${id}-hint`,
  });
  return { field: hinted('field wide', 'Customer id', input, hint), input };
}

/** Saves `body` as a JSON file named `name`, from the browser (nothing is asked of the service again). */
function saveJson(name: string, body: unknown): void {
  const url = URL.createObjectURL(new Blob([`${JSON.stringify(body, null, 2)}\n`], { type: 'application/json' }));
  const link = h('a', { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  window.setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** A customer's records in one JSON document, downloaded as a file named by its time. */
function exportSection(ctx: Context): HTMLElement {
  const { field, input } = customerField(
    'export-customer',
    'As your payments name it (customer_id). The file holds every record naming the customer: its transactions with decisions and outcomes, list entries, cases, webhook events, totals and first uses. It is named by the time of the export, not by the customer.',
  );
  const submit = h('button', { type: 'submit', id: 'export-submit' }, 'Download export (JSON)');
  const status = statusLine('export-status');
  const form = actionForm(
    { class: 'card form', id: 'export', 'aria-labelledby': 'export-title' },
    [h('h2', { id: 'export-title' }, "Export a customer's data"), h('div', { class: 'grid' }, field)],
    submit,
    status,
  );
  onSubmit(form, submit, status, async () => {
    const doc = await api<CustomerExport>(`${ctx.base}/customers/${encodeURIComponent(input.value.trim())}/export`);
    const name = `customer-export-${doc.exported_at.slice(0, 19).replaceAll(':', '-')}Z.json`;
    saveJson(name, doc);
    say(
      status,
      `Downloaded ${name}: ${plural(doc.transactions.length, COUNTED.transactions)}, ${plural(doc.lists.length, COUNTED.lists)}, ${plural(doc.cases.length, COUNTED.cases)}, ${plural(doc.webhook_events.length, COUNTED.webhook_events)}.`,
    );
    await ctx.refresh();
  });
  return form;
}

/** A customer's erasure: the id and the lists to keep, then a confirmation saying what goes, then the request. */
function eraseSection(ctx: Context, lists: ListIndex): HTMLElement {
  const { field, input } = customerField(
    'erase-customer',
    'As your payments name it (customer_id). You are asked to confirm, with what will be deleted, before anything is.',
  );
  // Only lists of customer ids and of text hold a customer's id.
  const keepable = lists.data.filter((l) => l.kind === 'customer_id' || l.kind === 'text');
  const boxes = keepable.map((l) => h('input', { type: 'checkbox', name: 'keep_lists', value: l.name, id: `erase-keep-${l.name}` }));
  const keep = h(
    'fieldset',
    { class: 'choices', id: 'erase-keep' },
    h('legend', {}, 'Keep its entries in these lists (optional)'),
    keepable.length
      ? h(
          'div',
          { class: 'dp-keep-list' },
          ...keepable.map((l, i) =>
            h(
              'label',
              { class: 'check' },
              boxes[i]!,
              h('span', {}, h('code', {}, l.name), h('span', { class: 'field-hint' }, ` ${l.kind === 'text' ? 'text' : 'customer ids'}`)),
            ),
          ),
        )
      : h('p', { class: 'muted', id: 'erase-no-lists' }, `${ctx.org.name} has no list of customer ids or of text, so no entry names the customer.`),
    h(
      'p',
      { class: 'field-hint' },
      'Entries naming the customer in every list not ticked are erased. Tick a list kept for fraud prevention (a block list of customers) that you may keep; the entry stays, with the reason it was added with.',
    ),
  );
  const review = h('button', { type: 'submit', id: 'erase-review' }, 'Review the erasure…');
  const confirmArea = h('div', { id: 'erase-confirm-area' });
  const status = statusLine('erase-status');
  const controls = [input, ...boxes, review];
  const form = actionForm(
    { class: 'card form', id: 'erase', 'aria-labelledby': 'erase-title' },
    [h('h2', { id: 'erase-title' }, 'Erase a customer'), h('div', { class: 'grid' }, field), keep],
    review,
    confirmArea,
    status,
  );
  const settle = () => {
    confirmArea.replaceChildren();
    for (const c of controls) c.disabled = false;
  };

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const customer = input.value.trim();
    const kept = boxes.filter((b) => b.checked).map((b) => b.value);
    status.replaceChildren();
    for (const c of controls) c.disabled = true;
    const erase = h('button', { type: 'button', class: 'danger', id: 'erase-confirm' }, 'Erase this customer');
    const cancel = h('button', { type: 'button', class: 'secondary', id: 'erase-cancel' }, 'Cancel');
    const title = h('h3', { id: 'erase-confirm-title', tabindex: '-1' }, `Erase customer “${customer}” from ${ctx.org.name}? This cannot be undone.`);
    confirmArea.replaceChildren(
      h(
        'div',
        { class: 'dp-confirm', role: 'group', 'aria-labelledby': 'erase-confirm-title' },
        title,
        h('p', {}, 'Within seconds the service deletes every record naming the customer:'),
        h(
          'ul',
          { id: 'erase-what' },
          ...ERASES.map((w) => h('li', {}, w)),
          h('li', {}, kept.length ? `its entries in every list but ${kept.join(', ')}, whose entries stay.` : 'its entries in every list: none is kept.'),
        ),
        h(
          'p',
          {},
          "Afterwards the service keeps the customer's id nowhere; the erasure is listed by a keyed hash of it. Not erased: datasets you uploaded (files you delete yourself) and the database's backups.",
        ),
        h('div', { class: 'actions' }, erase, cancel),
      ),
    );
    title.focus();
    cancel.addEventListener('click', () => {
      settle();
      review.focus();
    });
    erase.addEventListener('click', async () => {
      erase.disabled = true;
      cancel.disabled = true;
      try {
        const accepted = await api<ErasureAccepted>(`${ctx.base}/customers/${encodeURIComponent(customer)}/erasure`, {
          method: 'POST',
          body: kept.length ? { keep_lists: kept } : {},
        });
        settle();
        form.reset();
        say(status, `Erasure ${accepted.id} requested: it runs within seconds, and the erasures below follow it.`);
        await ctx.refresh();
      } catch (e) {
        settle();
        say(status, errorBox(e));
      }
    });
  });
  return form;
}

/** What an erasure kept: the lists it was asked to keep and, once done, the entries kept in them. */
function keptText(e: Erasure): string {
  if (e.keep_lists.length === 0) return 'No list kept';
  if (!e.kept) return `Keeping ${e.keep_lists.join(', ')}`;
  if (e.kept.length === 0) return `Kept ${e.keep_lists.join(', ')}: no entry named the customer`;
  return e.kept.map((k) => `${k.list}${k.reason ? ` (${k.reason})` : ''}`).join('; ');
}

function erasureTable(ctx: Context, list: ErasureList): HTMLElement {
  if (list.data.length === 0) return h('p', { class: 'muted', id: 'no-erasures' }, `No erasure has been asked for in ${ctx.org.name}.`);
  return h(
    'div',
    { id: 'erasure-list', class: 'dp-table' },
    table(
      ['Requested', 'By', 'Status', 'Done', 'Erased', 'Kept', 'Customer (keyed hash)'],
      list.data.map((e) => [
        utc(e.requested_at),
        ctx.who(e.requested_by),
        h('span', { id: `erasure-${e.id}`, class: `dp-${e.status}` }, e.status === 'done' ? 'Done' : 'Pending'),
        e.done_at ? utc(e.done_at) : '—',
        e.counts ? countsText(e.counts) : 'Not yet',
        keptText(e),
        h('code', { class: 'dp-hash' }, e.customer_hash),
      ]),
      list.has_more ? `The ${NEWEST} newest (GET …/erasures pages through them all)` : undefined,
    ),
  );
}

/** An audit entry's detail in words, by its action (a Record over the actions: a new one fails the typecheck until worded here). */
const AUDIT_WORDS: Record<AuditAction, (d: Record<string, unknown>) => (string | Node)[]> = {
  retention_changed: (d) => [`Changed the retention period from ${d.previous_days} to ${d.days} days`],
  retention_swept: (d) => [
    `Swept what was older than ${typeof d.cutoff_ms === 'number' ? utc(new Date(d.cutoff_ms).toISOString()) : 'the period'}: ${countsText(d.counts)}`,
  ],
  customer_exported: (d) => ['Exported the records of customer ', shortHash(d.customer_hash), `: ${countsText(d.counts)}`],
  erasure_requested: (d) => [
    'Asked to erase customer ',
    shortHash(d.customer_hash),
    Array.isArray(d.keep_lists) && d.keep_lists.length ? `, keeping ${d.keep_lists.join(', ')}` : ', keeping no list',
    ` (${d.erasure_id})`,
  ],
  erasure_done: (d) => [
    'Erased customer ',
    shortHash(d.customer_hash),
    `: ${countsText(d.counts)}${typeof d.kept === 'number' && d.kept > 0 ? `; ${plural(d.kept, ['list entry', 'list entries'])} kept` : ''} (${d.erasure_id})`,
  ],
};

function auditTable(ctx: Context, audit: DataProtectionAudit): HTMLElement {
  if (audit.data.length === 0) return h('p', { class: 'muted', id: 'no-audit' }, `Nothing has been changed, exported or erased in ${ctx.org.name} yet.`);
  return h(
    'div',
    { id: 'audit-list', class: 'dp-table' },
    table(
      ['When', 'Who', 'What'],
      audit.data.map((a) => [utc(a.at), ctx.who(a.by), h('span', {}, ...AUDIT_WORDS[a.action](a.detail))]),
      audit.has_more ? `The ${NEWEST} newest, newest first (GET …/data-protection/audit pages through them all)` : 'Newest first',
    ),
  );
}
