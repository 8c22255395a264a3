// A transaction's own fields, on its page and in the review queue: each field the payment was sent
// with and its value, how the organization declares it (its type and whether a key; a field it
// does not declare, or no longer does, is shown too and marked so), a key field's value linked to
// that value's page, and the history of each key value its decision saw (`field_history`, as the
// answer showed it), each figure said in words. Nothing is shown for a payment sent without fields.

import { api } from '../api.ts';
import type { Field, FieldList, TransactionRecord } from '../contract.ts';
import { h, money, table } from '../dom.ts';
import { fieldsHref, keyValueHref } from '../links.ts';
import type { Organization } from '../org.ts';
import './key-values.css';

type KeyHistory = NonNullable<NonNullable<TransactionRecord['evidence']>['field_history']>[string];

/** The organization's fields, the retired ones too, when the record carries any (else none asked). */
export async function fieldDeclarations(org: Organization, r: TransactionRecord): Promise<Field[]> {
  if (Object.keys(r.fields).length === 0) return [];
  return (await api<FieldList>(`/api/organizations/${encodeURIComponent(org.id)}/fields?retired=true`)).data;
}

/** The declaration of `name` that holds now, else a retired one. */
const declarationOf = (declared: Field[], name: string) =>
  declared.find((f) => f.name === name && f.retired_at === null) ?? declared.find((f) => f.name === name);

/** What a key value's history holds, in words, in the order shown (a list per key value, which
 *  reads as well on a phone as beside the page's other summaries). */
const HISTORY_ROWS: [string, (x: KeyHistory) => string][] = [
  ['Earlier transactions', (x) => x.prior_transactions.toLocaleString('en')],
  ['New (never carried before)', (x) => (x.is_new ? 'yes' : 'no')],
  ['In the last hour', (x) => x.count_1h.toLocaleString('en')],
  ['In the last 24 h', (x) => x.count_24h.toLocaleString('en')],
  ['In the last 7 days', (x) => x.count_7d.toLocaleString('en')],
  ['Amount, last 24 h', (x) => money(x.amount_24h)],
  ['Distinct customers, 24 h', (x) => x.distinct_customers_24h.toLocaleString('en')],
  ['Distinct customers, 30 days', (x) => x.distinct_customers_30d.toLocaleString('en')],
];

/** The card of the payment's fields and its key values' histories; null when it carried none. */
export function fieldsCard(org: Organization, r: TransactionRecord, declared: Field[]): HTMLElement | null {
  const names = Object.keys(r.fields).sort();
  if (names.length === 0) return null;
  const isKey = (name: string) => {
    const f = declarationOf(declared, name);
    return !!f && f.key && f.retired_at === null;
  };
  /** A value as sent; a key field's text value linked to its page. */
  const valueCell = (name: string): string | Node => {
    const v = r.fields[name]!;
    return isKey(name) && typeof v === 'string' ? h('a', { href: keyValueHref(org.id, name, v) }, v) : String(v);
  };
  const rows = names.map((name) => {
    const f = declarationOf(declared, name);
    const kind = f ? `${f.type}${f.key ? ', a key' : ''}` : '';
    return [
      f ? h('a', { href: fieldsHref(org.id, name) }, name) : name,
      valueCell(name),
      !f
        ? h('span', { class: 'field-undeclared' }, 'not declared: stored, not read by rules')
        : f.retired_at !== null
          ? h('span', { class: 'field-undeclared' }, `retired (was ${kind})`)
          : kind,
    ];
  });
  const histories = Object.entries(r.evidence?.field_history ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return h(
    'section',
    { class: 'card', id: 'record-fields', 'aria-labelledby': 'record-fields-title' },
    h('h2', { id: 'record-fields-title' }, 'Its own fields'),
    h('div', { id: 'record-field-values', class: 'key-values-table' }, table(['Field', 'Value', 'Declared as'], rows)),
    histories.length
      ? h(
          'div',
          { id: 'record-field-history' },
          h('h3', { id: 'record-field-history-title' }, 'Its key values when it was scored'),
          h(
            'p',
            { class: 'muted' },
            'Each key value’s earlier transactions in the organization, strictly before this one, as its decision saw them and rules read them (field_history.<name>).',
          ),
          h(
            'div',
            { class: 'key-histories' },
            ...histories.map(([name, x]) =>
              h(
                'section',
                { class: 'key-history', 'aria-labelledby': `key-history-${name}` },
                h('h4', { id: `key-history-${name}` }, `${name} `, r.fields[name] === undefined ? '' : valueCell(name)),
                h('dl', { class: 'kv' }, ...HISTORY_ROWS.flatMap(([label, say]) => [h('dt', {}, label), h('dd', {}, say(x))])),
              ),
            ),
          ),
        )
      : null,
  );
}
