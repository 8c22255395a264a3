// A key field's value's page (`#/fields/email_domain/values/example.com?org=…`), linked from a
// transaction's fields and from the Transactions filter by it: like a customer's page, its all-time
// totals in this organization (transactions, amount, outcomes and frauds), how many of its latest
// transactions were reviewed and blocked, the customers who paid with it (each linked to their
// page), its newest transactions, and all the transactions that carried it on Transactions
// (`field.<name>=<value>`). The service answers 404 both for a field that is not a key and for a
// value no transaction carried; the page tells the two apart from the organization's fields.

import { api, ApiError } from '../api.ts';
import type { Entity, FieldList, TransactionPage } from '../contract.ts';
import { errorBox, h } from '../dom.ts';
import { fieldsHref, keyFilter, transactionsHref } from '../links.ts';
import { organizationFor, type Organization } from '../org.ts';
import type { Route } from '../route.ts';
import { entitySections, NEWEST } from './entity.ts';

/** `route.path` is ['fields', name, 'values', value]. */
export async function keyValuePage(root: HTMLElement, route: Route): Promise<void> {
  const name = route.path[1] ?? '';
  const value = route.path[3] ?? '';
  const title = `${name} ${value}`;
  root.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
  try {
    const chosen = await organizationFor(root, route.query, 'fields', title);
    if (!chosen) return;
    const org = chosen.org;
    const base = `/api/organizations/${encodeURIComponent(org.id)}`;
    const back = h('p', {}, h('a', { href: fieldsHref(org.id, name) }, `← Field ${name}`));
    let e: Entity;
    try {
      e = await api<Entity>(`${base}/fields/${encodeURIComponent(name)}/values/${encodeURIComponent(value)}`);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        root.replaceChildren(h('h1', { class: 'key-value-title' }, title), back, await notFound(org, name, value));
        return;
      }
      throw err;
    }
    const newest = await api<TransactionPage>(`${base}/transactions?${new URLSearchParams({ [keyFilter(name)]: value, limit: String(NEWEST) })}`);
    root.replaceChildren(
      h('h1', { class: 'key-value-title' }, title),
      back,
      h('p', { class: 'muted' }, `A value of the key field ${name} in ${org.name}: what the payments that carried it add up to. Times are UTC.`),
      ...entitySections(org, e, newest.data, {
        counterparties: 'Customers who paid with it',
        all: transactionsHref({ org: org.id, [keyFilter(name)]: value }),
        allText: 'All the transactions that carried it, with filters →',
      }),
    );
  } catch (err) {
    root.replaceChildren(h('h1', {}, title), errorBox(err));
  }
}

/** Why there is no page: the field is not a key field the organization declares now, or no
 *  transaction carried the value. */
async function notFound(org: Organization, name: string, value: string): Promise<HTMLElement> {
  const { data } = await api<FieldList>(`/api/organizations/${encodeURIComponent(org.id)}/fields?retired=true`);
  const field = data.find((f) => f.name === name && f.retired_at === null) ?? data.find((f) => f.name === name);
  const itsPage = h('a', { href: fieldsHref(org.id, name) }, `the field ${name}`);
  const text: (string | Node)[] =
    field?.key && field.retired_at === null
      ? [
          `No transaction of ${org.name} carried ${name} “${value}”. Values are matched exactly, as they were sent, and counted from when ${name} became a key (see `,
          itsPage,
          ').',
        ]
      : field
        ? [
            `${name} is not a key field of ${org.name}${field.retired_at !== null ? ' (it was retired)' : ''}: only a key field's values have a page of their own, with their history. See `,
            itsPage,
            '.',
          ]
        : [
            `${name} is not a key field of ${org.name}: it has no field of that name. Its key fields are on the `,
            h('a', { href: fieldsHref(org.id) }, 'Fields'),
            ' page.',
          ];
  return h('div', { class: 'card', id: 'not-found' }, h('p', {}, ...text));
}
