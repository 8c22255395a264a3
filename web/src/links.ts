// Addresses of the analyst's pages, so that every table and record links the same way: a filtered
// list of transactions, one transaction, and a customer's or merchant's page, each in an
// organization.

/** `#/transactions…` with these parameters (empty ones left out). */
export function transactionsHref(params: Record<string, string | undefined>, path = ''): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  return `#/transactions${path}?${q.toString()}`;
}

export const transactionHref = (orgId: string, transactionId: string) => transactionsHref({ org: orgId }, `/${encodeURIComponent(transactionId)}`);

export const entityHref = (orgId: string, role: 'customer' | 'merchant', id: string) => `#/entity/${role}/${encodeURIComponent(id)}?org=${encodeURIComponent(orgId)}`;
