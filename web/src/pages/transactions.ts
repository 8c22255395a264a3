// Transactions: what an organization scored (and imported), newest first, for its members. Filters
// for decision, band, outcome, the rule that matched and a time range, a search by transaction,
// customer or merchant id, the value of a key field it carried (`field.<name>=<value>`, set from
// that value's page and shown as an active filter with a link that removes it), and cursor paging,
// all kept in the address (`#/transactions?org=…&decision=review`), so a view can be bookmarked,
// shared and gone back to. A transaction's page shows the decision it was answered, the rules that
// matched it (and which one decided) with the answer's notes, its own fields and its key values'
// histories (record-fields.ts), its reasons in words, its channel scores, the evidence the answer
// showed, and its outcome with every change, with buttons to mark it fraud or legitimate, and
// "Open case" (open-case.ts).

import { api, ApiError } from '../api.ts';
import type { Field, RuleList, TransactionPage, TransactionRecord } from '../contract.ts';
import { bar, errorBox, filterSelect, h, money, pct, table, utc } from '../dom.ts';
import { organizationFor, type Organization } from '../org.ts';
import type { Route } from '../route.ts';
import { entityHref, keyValueHref, ruleHref, transactionHref, transactionsHref as href } from '../links.ts';
import { FIELD_NAME } from '../../../src/domain/fields.ts';
import { fieldDeclarations, fieldsCard } from './record-fields.ts';
import { openCaseCard } from './open-case.ts';
import './key-values.css';

const FILTERS = ['decision', 'risk_band', 'outcome', 'rule_id', 'customer_id', 'merchant_id', 'from', 'to'] as const;
/** A filter by a key field's value in the address, as the API takes it: `field.<name>=<value>`. */
const KEY_FILTER = new RegExp(`^field\\.${FIELD_NAME.source.slice(1, -1)}$`);
const SOURCES = [
  ['chargeback', 'Chargeback'],
  ['review', 'Analyst review'],
  ['customer_report', 'Customer report'],
  ['other', 'Other'],
] as const;

export async function transactionsPage(root: HTMLElement, route: Route): Promise<void> {
  root.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
  try {
    const chosen = await organizationFor(root, route.query, 'transactions', 'Transactions');
    if (!chosen) return;
    const id = route.path[1];
    if (id !== undefined) await detail(root, chosen.org, id);
    else await list(root, chosen.org, chosen.picker, route.query);
  } catch (e) {
    root.replaceChildren(h('h1', {}, 'Transactions'), errorBox(e));
  }
}

const outcomeText = (r: TransactionRecord) => (r.outcome ? (r.outcome.outcome === 'fraud' ? 'fraud' : 'legitimate') : r.source === 'import' ? '—' : 'unknown');

export const TRANSACTION_COLUMNS = ['Time', 'Transaction', 'Amount', 'Customer', 'Merchant', 'Score', 'Band', 'Decision', 'Outcome'];

/** Listed transactions as table rows (TRANSACTION_COLUMNS), linked to their pages. */
export function transactionRows(org: Organization, records: TransactionRecord[]): (string | Node)[][] {
  return records.map((r) => [
    utc(r.time),
    h('a', { href: transactionHref(org.id, r.transaction_id) }, r.transaction_id),
    money(r.amount),
    h('a', { href: entityHref(org.id, 'customer', r.customer_id) }, r.customer_id),
    h('a', { href: entityHref(org.id, 'merchant', r.merchant_id) }, r.merchant_id),
    r.risk_score === null ? '—' : pct(r.risk_score, 2),
    r.risk_band ? h('span', { class: `band-${r.risk_band}` }, r.risk_band) : '—',
    r.decision ? h('span', { class: `decision-${r.decision}` }, r.decision) : 'imported',
    h('span', { class: r.outcome ? `outcome-${r.outcome.outcome}` : 'muted' }, outcomeText(r)),
  ]);
}

async function list(root: HTMLElement, org: Organization, picker: HTMLElement | null, query: URLSearchParams): Promise<void> {
  const current = Object.fromEntries(FILTERS.map((f) => [f, query.get(f) ?? undefined])) as Record<(typeof FILTERS)[number], string | undefined>;
  // The filters by key values (`field.<name>`), kept through every other change of the view.
  const keys: Record<string, string> = {};
  for (const [k, v] of query) if (KEY_FILTER.test(k) && v) keys[k] = v;
  const kept = { ...current, ...keys };
  const after = query.get('starting_after') ?? undefined;
  const params = new URLSearchParams({ limit: '25' });
  for (const [f, v] of Object.entries(kept)) if (v) params.set(f, v);
  if (after) params.set('starting_after', after);
  // The organization's rules, for the rule filter (a deleted rule's id in the address still filters).
  // A key filter on a field that is not a key is refused (422): said in the results, with the
  // filter there to remove.
  const [page, rules] = await Promise.all([
    api<TransactionPage>(`/api/organizations/${encodeURIComponent(org.id)}/transactions?${params}`).catch((e: unknown) => {
      if (e instanceof ApiError && e.status === 422 && Object.keys(keys).length) return e;
      throw e;
    }),
    api<RuleList>(`/api/organizations/${encodeURIComponent(org.id)}/rules`).then((r) => r.data),
  ]);
  const ruleName = (id: string) => rules.find((r) => r.id === id)?.name ?? id;
  const ruleOptions: [string, string][] = rules.map((r) => [r.id, r.name]);
  if (current.rule_id && !rules.some((r) => r.id === current.rule_id)) ruleOptions.push([current.rule_id, current.rule_id]);

  const select = (name: keyof typeof current, label: string, options: [string, string][]) =>
    filterSelect(name, label, options, current[name] as string | undefined);
  const when = (name: 'from' | 'to', label: string) =>
    h(
      'label',
      { class: 'field' },
      h('span', {}, label),
      h('input', { type: 'datetime-local', name, id: `filter-${name}`, step: '1', value: current[name] ? current[name]!.slice(0, 19) : undefined }),
    );
  const filters = h(
    'form',
    { class: 'card form filters', id: 'filters', 'aria-label': 'Filter transactions' },
    h(
      'div',
      { class: 'grid' },
      select('decision', 'Decision', [
        ['approve', 'Approve'],
        ['review', 'Review'],
        ['block', 'Block'],
      ]),
      select('risk_band', 'Band', [
        ['low', 'Low'],
        ['medium', 'Medium'],
        ['high', 'High'],
        ['critical', 'Critical'],
      ]),
      select('outcome', 'Outcome', [
        ['fraud', 'Fraud'],
        ['legit', 'Legitimate'],
        ['none', 'Not reported yet'],
      ]),
      select('rule_id', 'Rule that matched', ruleOptions),
      when('from', 'From (UTC)'),
      when('to', 'Before (UTC)'),
    ),
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'submit' }, 'Apply filters'),
      h('a', { class: 'button secondary', href: href({ org: org.id }) }, 'Clear'),
    ),
  );
  filters.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const data = new FormData(filters);
    const next: Record<string, string | undefined> = { org: org.id, customer_id: current.customer_id, merchant_id: current.merchant_id, ...keys };
    for (const f of ['decision', 'risk_band', 'outcome', 'rule_id'] as const) next[f] = String(data.get(f) ?? '') || undefined;
    for (const f of ['from', 'to'] as const) {
      const v = String(data.get(f) ?? '');
      next[f] = v ? `${v.length === 16 ? `${v}:00` : v}Z` : undefined;
    }
    location.hash = href(next);
  });

  const kind = h(
    'select',
    { id: 'search-kind', name: 'kind', 'aria-label': 'Search by' },
    h('option', { value: 'transaction' }, 'Transaction id'),
    h('option', { value: 'customer_id', selected: !!current.customer_id }, 'Customer id'),
    h('option', { value: 'merchant_id', selected: !current.customer_id && !!current.merchant_id }, 'Merchant id'),
  );
  const term = h('input', {
    id: 'search-term',
    name: 'term',
    type: 'search',
    autocomplete: 'off',
    'aria-label': 'Id to find',
    placeholder: 'an id, exactly as sent',
    value: current.customer_id ?? current.merchant_id,
  });
  const search = h(
    'form',
    { class: 'card form', id: 'search', role: 'search', 'aria-label': 'Find a transaction, customer or merchant' },
    h('div', { class: 'actions' }, kind, term, h('button', { type: 'submit' }, 'Find')),
  );
  search.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const value = term.value.trim();
    if (kind.value === 'transaction') {
      if (value) location.hash = href({ org: org.id }, `/${encodeURIComponent(value)}`);
      return;
    }
    location.hash = href({
      ...kept,
      org: org.id,
      customer_id: kind.value === 'customer_id' ? value || undefined : undefined,
      merchant_id: kind.value === 'merchant_id' ? value || undefined : undefined,
    });
  });

  const refused = page instanceof ApiError ? page : undefined;
  const data = page instanceof ApiError ? [] : page.data;
  const rows = transactionRows(org, data);
  const fieldName = (k: string) => k.slice('field.'.length);
  const active = [
    ...FILTERS.filter((f) => current[f]).map((f) =>
      f === 'rule_id' ? `rule ${ruleName(current[f]!)}` : `${f.replace('_', ' ')} ${f === 'from' || f === 'to' ? utc(current[f]!) : current[f]}`,
    ),
    ...Object.entries(keys).map(([k, v]) => `${fieldName(k)} ${v}`),
  ];
  // Each key filter, linked to the value's page, with a link to the same view without it.
  const keyFilters = Object.keys(keys).length
    ? h(
        'ul',
        { class: 'key-filters', id: 'key-filters', 'aria-label': 'Filters by a key field’s value' },
        ...Object.entries(keys).map(([k, v]) =>
          h(
            'li',
            {},
            h('span', {}, 'Carried ', h('a', { href: keyValueHref(org.id, fieldName(k), v) }, `${fieldName(k)} ${v}`)),
            h(
              'a',
              { class: 'button secondary', href: href({ ...kept, [k]: undefined, org: org.id }), 'aria-label': `Remove the filter ${fieldName(k)} ${v}` },
              'Remove',
            ),
          ),
        ),
      )
    : null;
  const pager = h(
    'nav',
    { class: 'pager', 'aria-label': 'Pages' },
    after ? h('a', { class: 'button secondary', href: href({ ...kept, org: org.id }), id: 'first-page' }, 'Newest') : null,
    !(page instanceof ApiError) && page.has_more
      ? h(
          'a',
          {
            class: 'button secondary',
            href: href({ ...kept, org: org.id, starting_after: data[data.length - 1]!.transaction_id }),
            id: 'next-page',
          },
          'Older',
        )
      : null,
  );
  root.replaceChildren(
    h('h1', {}, 'Transactions'),
    h(
      'div',
      { class: 'actions' },
      picker,
      h('p', { class: 'muted' }, `${org.name}: every transaction scored with its API keys or imported as history, newest first. Times are UTC.`),
    ),
    search,
    filters,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'results-title' },
      h('h2', { id: 'results-title' }, active.length ? `Matching ${active.join(', ')}` : after ? 'Older transactions' : 'Newest transactions'),
      keyFilters,
      refused
        ? errorBox(refused)
        : data.length === 0
          ? h(
              'p',
              { class: 'muted', id: 'no-results' },
              active.length
                ? 'No transaction matches these filters.'
                : 'Nothing yet: transactions appear here once the organization scores with an API key or imports its history.',
            )
          : h('div', { id: 'results' }, table(TRANSACTION_COLUMNS, rows)),
      pager,
    ),
  );
}

/** One recorded transaction of the organization, or undefined when it has none with this id. */
export async function loadRecord(org: Organization, transactionId: string): Promise<TransactionRecord | undefined> {
  try {
    return await api<TransactionRecord>(`/api/organizations/${encodeURIComponent(org.id)}/transactions/${encodeURIComponent(transactionId)}`);
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return undefined;
    throw e;
  }
}

/** Records an outcome as the signed-in member. */
export function markOutcome(org: Organization, transactionId: string, outcome: 'fraud' | 'legit', source: string): Promise<TransactionRecord> {
  return api<TransactionRecord>(`/api/organizations/${encodeURIComponent(org.id)}/transactions/${encodeURIComponent(transactionId)}/outcome`, {
    method: 'POST',
    body: { outcome, source },
  });
}

async function detail(root: HTMLElement, org: Organization, transactionId: string): Promise<void> {
  const back = h('p', {}, h('a', { href: href({ org: org.id }) }, '← All transactions'));
  const r = await loadRecord(org, transactionId);
  if (!r) {
    root.replaceChildren(
      h('h1', {}, `Transaction ${transactionId}`),
      back,
      h(
        'div',
        { class: 'card', id: 'not-found' },
        h('p', {}, `${org.name} has no transaction with the id “${transactionId}”. Ids are matched exactly, as they were sent.`),
      ),
    );
    return;
  }
  const [summary, ...rest] = recordParts(org, r, await fieldDeclarations(org, r));
  const parts: Node[] = [
    h('h1', {}, `Transaction ${r.transaction_id}`),
    back,
    summary!,
    outcomeCard(root, org, r),
    openCaseCard(org, r.transaction_id),
    ...rest,
  ];
  root.replaceChildren(...parts);
}

/** What a record shows, as cards: the summary (score, band, decision, the transaction), the rules
 *  that matched, its own fields (described by the organization's fields `declared`), its reasons,
 *  channel scores and evidence. */
export function recordParts(org: Organization, r: TransactionRecord, declared: Field[]): Node[] {
  const a = scoredAnswer(r);
  const scored = a !== null;
  const decidedBy = r.rules?.find((m) => m.applied);
  const summary = h(
    'div',
    { class: 'card summary' },
    scored
      ? h(
          'div',
          { class: 'big' },
          h('span', { class: 'score', id: 'risk-score' }, pct(a.risk_score, 2)),
          h('span', { class: `badge band-${r.risk_band}` }, r.risk_band),
          h('span', { class: `badge decision-${r.decision}`, id: 'decision' }, r.decision),
          decidedBy
            ? h('span', { class: 'muted', id: 'decided-by' }, 'decided by the rule ', h('a', { href: ruleHref(org.id, decidedBy.id) }, decidedBy.name))
            : null,
        )
      : h('p', {}, 'Imported as history: it was never scored here, so it has no decision.'),
    h(
      'dl',
      { class: 'kv' },
      ...[
        ['Time', utc(r.time)],
        ['Amount', money(r.amount)],
        ['Customer', h('a', { href: entityHref(org.id, 'customer', r.customer_id) }, r.customer_id)],
        ['Merchant', h('a', { href: entityHref(org.id, 'merchant', r.merchant_id) }, r.merchant_id)],
        ['Channel', `${r.payment_type} in ${r.location}`],
        ...(scored
          ? [
              ['Mode', `${r.mode}: review at ${pct(a.review_threshold)}, block at ${pct(a.block_threshold)}`],
              ['Model', `${r.model_id} (${r.model_version}), ${r.path === 'COLD_START' ? 'cold start (no history for these entities)' : 'the full model'}`],
            ]
          : []),
      ].flatMap(([k, v]) => [h('dt', {}, k as string), h('dd', {}, v as string | Node)]),
    ),
  );
  const parts: (Node | null)[] = [
    summary,
    scored ? rulesCard(org, r) : null,
    fieldsCard(org, r, declared),
    scored
      ? h(
          'div',
          { class: 'card' },
          h('h2', {}, 'Why this score'),
          r.reasons.length
            ? h(
                'ol',
                { id: 'reasons', class: 'reasons' },
                ...r.reasons.map((x) => h('li', { class: x.direction }, h('span', {}, x.text), h('code', {}, x.feature))),
              )
            : h('p', { class: 'muted' }, 'No reasons: it was scored with explanations off.'),
        )
      : null,
    scored
      ? h(
          'div',
          { class: 'card' },
          h('h2', {}, 'Channel scores'),
          h('p', { class: 'muted' }, "Each channel's evidence alone, the others at their average."),
          ...Object.entries(a.channel_scores).map(([c, score]) => bar(c, score)),
        )
      : null,
    r.evidence ? evidenceCard(org, r.evidence) : null,
  ];
  return parts.filter((p): p is Node => p !== null);
}

/** A scored record's figures, which are set exactly when it has a decision; null for an imported one. */
function scoredAnswer(r: TransactionRecord) {
  const { risk_score, review_threshold, block_threshold, channel_scores } = r;
  return r.decision !== null && risk_score !== null && review_threshold !== null && block_threshold !== null && channel_scores !== null
    ? { risk_score, review_threshold, block_threshold, channel_scores }
    : null;
}

/** The rules that matched when it was scored (the one that decided marked), and the answer's notes. */
function rulesCard(org: Organization, r: TransactionRecord): HTMLElement {
  const rules = r.rules ?? [];
  const notes: string[] = r.notes ?? [];
  return h(
    'section',
    { class: 'card', id: 'record-rules', 'aria-labelledby': 'record-rules-title' },
    h('h2', { id: 'record-rules-title' }, 'Rules'),
    rules.length === 0
      ? h('p', { class: 'muted' }, 'No rule matched when it was scored: the model’s thresholds decided.')
      : table(
          ['Rule', 'Version', 'Action', 'Status then', 'Decided it'],
          rules.map((m) => [
            h('a', { href: ruleHref(org.id, m.id) }, m.name),
            String(m.version),
            h('span', { class: `action-${m.action}` }, m.action),
            m.status,
            m.applied ? h('strong', {}, 'yes') : m.status === 'shadow' ? 'no (shadow: recorded only)' : 'no',
          ]),
        ),
    notes.length ? h('ul', { id: 'record-notes' }, ...notes.map((n) => h('li', {}, n))) : null,
  );
}

function outcomeCard(root: HTMLElement, org: Organization, r: TransactionRecord): HTMLElement {
  const source = h(
    'select',
    { id: 'outcome-source', name: 'source' },
    ...SOURCES.map(([v, text]) => h('option', { value: v, selected: v === 'review' }, text)),
  );
  const status = h('p', { id: 'outcome-status', role: 'status', 'aria-live': 'polite' });
  const mark = (outcome: 'fraud' | 'legit', text: string) => {
    const b = h(
      'button',
      { type: 'button', id: `mark-${outcome}`, class: outcome === 'fraud' ? '' : 'secondary', disabled: r.outcome?.outcome === outcome },
      text,
    );
    b.addEventListener('click', async () => {
      b.disabled = true;
      try {
        await markOutcome(org, r.transaction_id, outcome, source.value);
        await detail(root, org, r.transaction_id);
        document.getElementById('outcome-status')!.textContent =
          `Marked ${outcome === 'fraud' ? 'fraud' : 'legitimate'}. Later transactions' features use it from now on.`;
      } catch (e) {
        status.replaceChildren(errorBox(e));
        b.disabled = false;
      }
    });
    return b;
  };
  const history = r.outcome_history ?? [];
  return h(
    'section',
    { class: 'card', id: 'outcome', 'aria-labelledby': 'outcome-title' },
    h('h2', { id: 'outcome-title' }, 'Outcome'),
    h(
      'p',
      { id: 'outcome-current' },
      r.outcome ? h('span', { class: `outcome-${r.outcome.outcome}` }, r.outcome.outcome === 'fraud' ? 'Fraud' : 'Legitimate') : 'Not reported yet',
      r.outcome ? ` · ${r.outcome.source.replace('_', ' ')} · known from ${utc(r.outcome.reported_at)}` : '',
    ),
    h(
      'div',
      { class: 'actions' },
      h('label', { class: 'field inline' }, h('span', {}, 'Source'), source),
      mark('fraud', 'Mark fraud'),
      mark('legit', 'Mark legitimate'),
    ),
    status,
    history.length
      ? h(
          'div',
          { id: 'outcome-history' },
          h('h3', {}, 'Every change'),
          table(
            ['From', 'To', 'Source', 'Known from', 'Reported by'],
            history.map((c) => [c.from ?? 'none', c.to, c.source.replace('_', ' '), utc(c.reported_at), c.reported_by]),
          ),
        )
      : null,
  );
}

function evidenceCard(org: Organization, e: NonNullable<TransactionRecord['evidence']>): HTMLElement {
  const groups = Object.entries(e.graph_evidence);
  return h(
    'section',
    { class: 'card', id: 'evidence', 'aria-labelledby': 'evidence-title' },
    h('h2', { id: 'evidence-title' }, 'Evidence when it was scored'),
    table(
      ['Entity', 'Role', 'Earlier transactions', 'New'],
      Object.entries(e.entity_history).map(([k, v]) => [k, v.role, String(v.prior_transactions), v.is_new ? 'yes' : 'no']),
    ),
    groups.length === 0
      ? h('p', { class: 'muted' }, 'Nothing earlier shared a customer, merchant or channel with it.')
      : h(
          'div',
          {},
          ...groups.map(([k, list]) =>
            h(
              'div',
              {},
              h('h3', {}, k),
              table(
                ['Time', 'Transaction', 'Amount', 'Customer', 'Merchant', 'Outcome'],
                list.map((x) => [
                  utc(x.time),
                  h('a', { href: transactionHref(org.id, x.transaction_id) }, x.transaction_id),
                  money(x.amount),
                  h('a', { href: entityHref(org.id, 'customer', x.source) }, x.source),
                  h('a', { href: entityHref(org.id, 'merchant', x.target) }, x.target),
                  x.outcome,
                ]),
              ),
            ),
          ),
        ),
    e.related_ring
      ? h(
          'p',
          {},
          `${e.related_ring.matched_entity} (${e.related_ring.role}) was in flagged group ${e.related_ring.ring_id} of ${e.related_ring.members} members, fraud rate ${pct(e.related_ring.fraud_rate)}.`,
        )
      : null,
  );
}
