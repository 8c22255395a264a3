// The history a process keeps of an organization (a tenant's, built on the event loop or on a
// thread of its own): every transaction kept, so that late arrivals are placed and `recent()`
// answers, and each found by its id.

import { History } from '../domain/history/history.ts';

export function keptHistory(labelDelay: number): History {
  const h = new History(labelDelay).withRecords();
  h.transactions.indexIds();
  return h;
}
