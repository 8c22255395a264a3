// The history as it was before its columnar form: kept, unchanged, as the reference the tests hold
// the columnar history to (test/domain/history-reference.test.ts). Not used by the service.
// The history's customer–merchant graph: customers and merchants as nodes, an edge for each pair
// that has paid, with the time of its first payment, and each customer's earliest known fraud; and
// beside it, per merchant, the times its customers first paid it and the times they count as
// known-compromised neighbours, kept sorted so the graph features count them by search instead of
// walking the merchant's edges. The History class owns this state (its fields) and decides when it
// changes; the functions here keep the graph and the two time lists in step with each other.

import type { UndirectedGraph } from 'graphology';
import { KeyCache } from '../../../src/domain/key-cache.ts';
import { append, countBelow, insertSorted, removeSorted } from './sorted.ts';

/** Customer attribute `fraudKnownAt` = when their first fraud became known; edge attribute
 *  `first` = time of the pair's first transaction. */
type CustomerMerchantGraph = UndirectedGraph<{ fraudKnownAt?: number }, { first: number }>;

/** Per merchant, ascending times (see History.merchantCustomerTimes). */
type MerchantTimes = Map<string, number[]>;

/** Node keys of the customer–merchant graph. */
const customerNodes = new KeyCache((id) => `c:${id}`);
const merchantNodes = new KeyCache((id) => `m:${id}`);
export const customerNode = (id: string) => customerNodes.get(id);
export const merchantNode = (id: string) => merchantNodes.get(id);

/** A payment at `time`, in time order, that is the pair's first (`newPair`) or a fraud (whose
 *  refresh needs the customer's node): both nodes, and for a new pair its edge and the merchant's
 *  customer and compromised-neighbour times. */
export function notePair(
  graph: CustomerMerchantGraph,
  customerTimes: MerchantTimes,
  compromisedTimes: MerchantTimes,
  customerId: string,
  merchantId: string,
  time: number,
  newPair: boolean,
): void {
  const c = customerNode(customerId);
  const m = merchantNode(merchantId);
  graph.mergeNode(c);
  graph.mergeNode(m);
  if (newPair) {
    graph.addEdge(c, m, { first: time });
    append(customerTimes, merchantId, time);
    const fraudKnown = graph.getNodeAttribute(c, 'fraudKnownAt');
    if (fraudKnown !== undefined) insertSorted(compromisedTimes, merchantId, Math.max(time, fraudKnown));
  }
}

/** `notePair` for a late payment at `t`: a new pair (`first` undefined) or an earlier first payment
 *  of a known one (first at `first`) moves the pair's times to where time order puts them. */
export function notePairLate(
  graph: CustomerMerchantGraph,
  customerTimes: MerchantTimes,
  compromisedTimes: MerchantTimes,
  customerId: string,
  merchantId: string,
  t: number,
  first: number | undefined,
): void {
  const c = customerNode(customerId);
  const m = merchantNode(merchantId);
  graph.mergeNode(c);
  graph.mergeNode(m);
  // The customer's compromised time as the graph has it (a fraud of this transaction's joins
  // in the history's refreshCompromised, after this).
  const fraudKnown = graph.getNodeAttribute(c, 'fraudKnownAt');
  if (first === undefined) {
    graph.addEdge(c, m, { first: t });
    insertSorted(customerTimes, merchantId, t);
    if (fraudKnown !== undefined) insertSorted(compromisedTimes, merchantId, Math.max(t, fraudKnown));
  } else if (t < first) {
    // An earlier first payment of a known pair.
    graph.setEdgeAttribute(graph.edge(c, m)!, 'first', t);
    removeSorted(customerTimes, merchantId, first);
    insertSorted(customerTimes, merchantId, t);
    if (fraudKnown !== undefined) {
      removeSorted(compromisedTimes, merchantId, Math.max(first, fraudKnown));
      insertSorted(compromisedTimes, merchantId, Math.max(t, fraudKnown));
    }
  }
}

/** A loaded pair's first payment (`History.loadUse`); the customer times are appended unsorted,
 *  and sorted when the load finishes. */
export function loadPair(graph: CustomerMerchantGraph, customerTimes: MerchantTimes, customerId: string, merchantId: string, first: number): void {
  const c = customerNode(customerId);
  const m = merchantNode(merchantId);
  graph.mergeNode(c);
  graph.mergeNode(m);
  graph.addEdge(c, m, { first });
  // Sorted in finishLoad.
  append(customerTimes, merchantId, first);
}

/** Moves customer node `c`'s compromised time from `before` to `after` (either undefined: not
 *  compromised), and each of its merchants' compromised-neighbour times with it. */
export function moveCompromised(
  graph: CustomerMerchantGraph,
  compromisedTimes: MerchantTimes,
  c: string,
  before: number | undefined,
  after: number | undefined,
): void {
  if (after === undefined) graph.removeNodeAttribute(c, 'fraudKnownAt');
  else graph.setNodeAttribute(c, 'fraudKnownAt', after);
  graph.forEachEdge(c, (_e, attributes, source, target) => {
    const merchant = (source === c ? target : source).slice(2);
    if (before !== undefined) removeSorted(compromisedTimes, merchant, Math.max(attributes.first, before));
    if (after !== undefined) insertSorted(compromisedTimes, merchant, Math.max(attributes.first, after));
  });
}

/** The merchant's distinct customers whose first payment there is strictly before `t`, and how
 *  many of those were known compromised strictly before `t`, excluding `customer` itself. */
export function countNeighbours(
  graph: CustomerMerchantGraph,
  customerTimes: MerchantTimes,
  compromisedTimes: MerchantTimes,
  merchantId: string,
  customerId: string,
  t: number,
): { customers: number; compromised: number } {
  const customers = countBelow(customerTimes.get(merchantId), t);
  let compromised = countBelow(compromisedTimes.get(merchantId), t);
  const c = customerNode(customerId);
  const m = merchantNode(merchantId);
  const known = graph.hasNode(c) ? graph.getNodeAttribute(c, 'fraudKnownAt') : undefined;
  if (known !== undefined && graph.hasNode(m)) {
    const edge = graph.edge(c, m);
    if (edge !== undefined && Math.max(graph.getEdgeAttribute(edge, 'first'), known) < t) compromised--;
  }
  return { customers, compromised };
}
