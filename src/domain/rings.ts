// Fraud-ring detection over completed time windows. For each window, the customer–merchant graph of
// that window's transactions (edge weight = number of payments) is split into communities by
// Louvain (graphology-communities-louvain) with a seeded random source, so the same data always
// gives the same groups. A group is flagged when enough of its payments are known fraud, "known"
// meaning the label was available when the window closed plus the label delay: detection runs on
// completed windows and never on labels it could not yet have had.
//
// A score only says that its merchant or channel belongs to a flagged group (`related_ring`); it
// is not evidence that the payment itself is part of a ring.

import { UndirectedGraph } from 'graphology';
import louvainModule from 'graphology-communities-louvain';
import { Rng } from './rng.ts';
import { KeyCache } from './key-cache.ts';
import { channelOf, type Transaction } from './transaction.ts';

// The package is CommonJS (`module.exports = louvain`) while its types declare a default export, so
// under NodeNext the default import is, at run time, the function its types call `.default`.
const louvain = louvainModule as unknown as (typeof louvainModule)['default'];

/** Node keys of a window's graph: customers and merchants may share an id, so each is prefixed. */
const customerNodes = new KeyCache((id) => `c:${id}`);
const merchantNodes = new KeyCache((id) => `m:${id}`);
const customerNode = (id: string) => customerNodes.get(id);
const merchantNode = (id: string) => merchantNodes.get(id);

export interface RingOptions {
  /** Window length, milliseconds (default one week). */
  window: number;
  labelDelay: number;
  seed: number;
  /** Smallest group (customers + merchants) considered. */
  minMembers: number;
  /** Flag a group when at least this share of its known-labelled payments are fraud. */
  minFraudShare: number;
  /** ... and at least this many of its payments have known labels. */
  minKnownLabels: number;
}

export const DEFAULT_RINGS: RingOptions = {
  window: 7 * 86_400_000,
  labelDelay: 7 * 86_400_000,
  seed: 11,
  minMembers: 4,
  minFraudShare: 0.5,
  minKnownLabels: 5,
};

export interface Ring {
  ring_id: string;
  window_start: number;
  window_end: number;
  /** window_end + label delay: when its labels were all known and the result could exist. */
  published_at: number;
  customers: string[];
  merchants: string[];
  /** Channels the group's payments went through, most used first. */
  channels: string[];
  members: number;
  fraud_rate: number;
}

/** Transactions in time order, read by index: an array, or the live history's record store. */
export interface TimeOrderedRows {
  readonly length: number;
  at(index: number): Transaction | undefined;
}

/** Index of the first row at or after `t` (rows are in time order). */
function firstAtOrAfter(rows: TimeOrderedRows, t: number): number {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (rows.at(mid)!.time < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Rings of every window whose results are published (end + label delay) by `until`, windows
 *  counted from the first row. */
export function detectRings(rows: TimeOrderedRows, until: number, options: Partial<RingOptions> = {}): Ring[] {
  const o = { ...DEFAULT_RINGS, ...options };
  if (rows.length === 0) return [];
  const first = rows.at(0)!.time;
  const rings: Ring[] = [];
  for (let start = first; start + o.window + o.labelDelay <= until; start += o.window) {
    const end = start + o.window;
    const inWindow: Transaction[] = [];
    for (let i = firstAtOrAfter(rows, start); i < rows.length; i++) {
      const r = rows.at(i)!;
      if (r.time >= end) break;
      inWindow.push(r);
    }
    rings.push(...detectWindow(inWindow, start, o, o.seed + Math.floor((start - first) / o.window), rings.length));
  }
  return rings;
}

/**
 * The flagged groups of one window: `rows` are its transactions (time in [start, start + window)),
 * with labels as stored; a label counts when it was known by the result's publication. `seed`
 * seeds Louvain; ring ids are numbered on from `numbered`.
 */
export function detectWindow(rows: readonly Transaction[], start: number, options: Partial<RingOptions>, seed: number, numbered = 0): Ring[] {
  const o = { ...DEFAULT_RINGS, ...options };
  const end = start + o.window;
  const graph = new UndirectedGraph();
  for (const r of rows) {
    const c = customerNode(r.customer_id);
    const m = merchantNode(r.merchant_id);
    graph.mergeNode(c);
    graph.mergeNode(m);
    const e = graph.edge(c, m);
    if (e === undefined) graph.addEdge(c, m, { weight: 1 });
    else graph.updateEdgeAttribute(e, 'weight', (w: number) => w + 1);
  }
  if (graph.size === 0) return [];
  const rng = new Rng(seed);
  const community: Record<string, number> = louvain(graph, { rng: () => rng.uniform(), getEdgeWeight: 'weight' });

  const groups = new Map<number, { members: Set<string>; known: number; fraud: number; channels: Map<string, number> }>();
  for (const r of rows) {
    const id = community[customerNode(r.customer_id)]!;
    let g = groups.get(id);
    if (!g) groups.set(id, (g = { members: new Set(), known: 0, fraud: 0, channels: new Map() }));
    g.members.add(customerNode(r.customer_id));
    g.members.add(merchantNode(r.merchant_id));
    const ch = channelOf(r);
    g.channels.set(ch, (g.channels.get(ch) ?? 0) + 1);
    // Only labels known when the result is published (a reported outcome may come later).
    if ((r.label === 0 || r.label === 1) && (r.labelKnownAt ?? r.time + o.labelDelay) <= end + o.labelDelay) {
      g.known++;
      g.fraud += r.label;
    }
  }
  const flagged = [...groups.entries()]
    .filter(([, g]) => g.members.size >= o.minMembers && g.known >= o.minKnownLabels && g.fraud / g.known >= o.minFraudShare)
    .sort((a, b) => a[0] - b[0]);
  return flagged.map(([, g], i) => {
    const members = [...g.members].sort();
    return {
      ring_id: `ring-${new Date(start).toISOString().slice(0, 10)}-${numbered + i + 1}`,
      window_start: start,
      window_end: end,
      published_at: end + o.labelDelay,
      customers: members.filter((m) => m.startsWith('c:')).map((m) => m.slice(2)),
      merchants: members.filter((m) => m.startsWith('m:')).map((m) => m.slice(2)),
      channels: [...g.channels.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([c]) => c),
      members: members.length,
      fraud_rate: g.fraud / g.known,
    };
  });
}
