// Addresses of the analyst's pages, so that every table and record links the same way: a filtered
// list of transactions, one transaction, a customer's or merchant's page, a rule (or a backtest of
// one), a list, a field and a key field's value, the cases, one case and the inboxes, each in an
// organization.

/** `#/transactions…` with these parameters (empty ones left out). */
export function transactionsHref(params: Record<string, string | undefined>, path = ''): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  return `#/transactions${path}?${q.toString()}`;
}

export const transactionHref = (orgId: string, transactionId: string) => transactionsHref({ org: orgId }, `/${encodeURIComponent(transactionId)}`);

export const entityHref = (orgId: string, role: 'customer' | 'merchant', id: string) =>
  `#/entity/${role}/${encodeURIComponent(id)}?org=${encodeURIComponent(orgId)}`;

/** `#/rules`, a rule (`/rule_…`), a new one (`/new`) or a backtest's report (`/backtests/job_…`). */
export const rulesHref = (orgId: string, path = '') => `#/rules${path}?org=${encodeURIComponent(orgId)}`;

export const ruleHref = (orgId: string, ruleId: string) => rulesHref(orgId, `/${encodeURIComponent(ruleId)}`);

export const backtestHref = (orgId: string, jobId: string) => rulesHref(orgId, `/backtests/${encodeURIComponent(jobId)}`);

/** `#/lists`, or one list by name, with these parameters (empty ones left out). */
export function listsHref(orgId: string, name?: string, params: Record<string, string | undefined> = {}): string {
  const q = new URLSearchParams({ org: orgId });
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  return `#/lists${name ? `/${encodeURIComponent(name)}` : ''}?${q.toString()}`;
}

/** `#/fields`, or one field's page by name, with these parameters (empty ones left out). */
export function fieldsHref(orgId: string, name?: string, params: Record<string, string | undefined> = {}): string {
  const q = new URLSearchParams({ org: orgId });
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  return `#/fields${name ? `/${encodeURIComponent(name)}` : ''}?${q.toString()}`;
}

/** A key field's value's page, like a customer's: `#/fields/{name}/values/{value}`. */
export const keyValueHref = (orgId: string, name: string, value: string) =>
  `#/fields/${encodeURIComponent(name)}/values/${encodeURIComponent(value)}?org=${encodeURIComponent(orgId)}`;

/** The listing's parameter for the transactions that carried a key field's value (`field.<name>`). */
export const keyFilter = (name: string) => `field.${name}`;

/** `#/cases` with these parameters (empty ones left out). */
export function casesHref(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  return `#/cases?${q.toString()}`;
}

/** One case's page: `#/cases/{case_id}`. */
export const caseHref = (orgId: string, caseId: string) => `#/cases/${encodeURIComponent(caseId)}?org=${encodeURIComponent(orgId)}`;

/** The inboxes with their figures (and, for owners, their settings to change): `#/inboxes`. */
export const inboxesHref = (orgId: string) => `#/inboxes?org=${encodeURIComponent(orgId)}`;
