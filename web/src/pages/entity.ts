// A customer's or a merchant's page (`#/entity/customer/C-1?org=…`), linked from every table and
// record that names one: its all-time totals in this organization (transactions, amount, outcomes
// and frauds), how many of its latest transactions were reviewed and blocked, the counterparties it
// dealt with most (each linked to its own page), and its newest transactions. A key field's value
// has a page of the same sections (key-value.ts).

import { api, ApiError } from '../api.ts';
import type { Entity, TransactionPage, TransactionRecord } from '../contract.ts';
import { errorBox, h, money, table, utc } from '../dom.ts';
import { entityHref, transactionsHref } from '../links.ts';
import { organizationFor, type Organization } from '../org.ts';
import type { Route } from '../route.ts';
import { TRANSACTION_COLUMNS, transactionRows } from './transactions.ts';

export const NEWEST = 10;

export async function entityPage(root: HTMLElement, route: Route): Promise<void> {
  const role = route.path[1] === 'merchant' ? 'merchant' : 'customer';
  const id = route.path[2] ?? '';
  const title = `${role === 'customer' ? 'Customer' : 'Merchant'} ${id}`;
  root.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
  try {
    const chosen = await organizationFor(root, route.query, 'transactions', title);
    if (!chosen) return;
    const org = chosen.org;
    const base = `/api/organizations/${encodeURIComponent(org.id)}`;
    const filter = role === 'customer' ? 'customer_id' : 'merchant_id';
    const all = transactionsHref({ org: org.id, [filter]: id });
    let e: Entity;
    try {
      e = await api<Entity>(`${base}/entities/${role}/${encodeURIComponent(id)}`);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        root.replaceChildren(
          h('h1', {}, title),
          h(
            'div',
            { class: 'card', id: 'not-found' },
            h('p', {}, `${org.name} has no transaction of ${role} “${id}”. Ids are matched exactly, as they were sent.`),
          ),
        );
        return;
      }
      throw err;
    }
    const newest = await api<TransactionPage>(`${base}/transactions?${new URLSearchParams({ [filter]: id, limit: String(NEWEST) })}`);
    root.replaceChildren(
      h('h1', {}, title),
      h('p', {}, h('a', { href: transactionsHref({ org: org.id }) }, '← All transactions')),
      ...entitySections(org, e, newest.data, {
        counterparties: role === 'customer' ? 'Merchants it paid' : 'Customers who paid it',
        all,
        allText: 'All its transactions, with filters →',
      }),
    );
  } catch (err) {
    root.replaceChildren(h('h1', {}, title), errorBox(err));
  }
}

/** A summary's sections, as a customer's, a merchant's and a key value's pages show them: the
 *  totals, the counterparties (headed `counterparties`, each linked to its page) and the newest
 *  transactions with a link to all of them (`all`). */
export function entitySections(
  org: Organization,
  e: Entity,
  newest: TransactionRecord[],
  words: { counterparties: string; all: string; allText: string },
): HTMLElement[] {
  const t = e.totals;
  return [
    h(
      'section',
      { class: 'card', id: 'entity-summary', 'aria-label': 'Summary' },
      h(
        'dl',
        { class: 'kv' },
        ...[
          ['Transactions', `${t.transactions.toLocaleString('en')}, ${money(t.amount_sum)} in all`],
          ['Latest', utc(t.last_time)],
          ['Outcomes reported', `${t.labelled.toLocaleString('en')}, of them ${t.fraud.toLocaleString('en')} fraud`],
          // The time in the value, not the label: a label as long as a date would not fit a phone.
          [
            `Of its latest ${e.recent.transactions.toLocaleString('en')}`,
            `${e.recent.reviewed.toLocaleString('en')} reviewed, ${e.recent.blocked.toLocaleString('en')} blocked${e.recent.first_time ? ` (since ${utc(e.recent.first_time)})` : ''}`,
          ],
        ].flatMap(([k, v]) => [h('dt', {}, k!), h('dd', {}, v!)]),
      ),
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'counterparties-title' },
      h('h2', { id: 'counterparties-title' }, words.counterparties),
      h(
        'div',
        { id: 'counterparties' },
        table(
          [e.role === 'customer' ? 'Merchant' : 'Customer', 'Transactions', 'Amount', 'Outcomes', 'Fraud', 'Latest'],
          e.counterparties.map((c) => [
            h('a', { href: entityHref(org.id, c.role, c.id) }, c.id),
            String(c.transactions),
            money(c.amount_sum),
            String(c.labelled),
            String(c.fraud),
            utc(c.last_time),
          ]),
        ),
      ),
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'entity-transactions-title' },
      h('h2', { id: 'entity-transactions-title' }, 'Newest transactions'),
      h('div', { id: 'entity-transactions' }, table(TRANSACTION_COLUMNS, transactionRows(org, newest))),
      h('p', {}, h('a', { href: words.all, id: 'entity-all' }, words.allText)),
    ),
  ];
}
