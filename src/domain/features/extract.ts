// Point-in-time feature extraction: one implementation for training, single scoring and batch
// scoring. `extractOne` computes a transaction's features from a history of older transactions;
// `extractBatch` walks a time-ordered dataset, computing each transaction's features before adding
// it to the history. Both read only strictly older transactions (see history.ts), so a transaction
// scored alone after its history gets exactly the features the batch pass gave it (tested).
// Fraud labels enter the history only once older than its label delay (see history.ts).

import type { Channel } from '../channels.ts';
import { History } from '../history/history.ts';
import { type HistoryTransaction } from '../transaction.ts';
import { behavioral, BEHAVIORAL_FEATURES } from './behavioral.ts';
import { graph, GRAPH_FEATURES } from './graph.ts';
import { tabular, TABULAR_FEATURES } from './tabular.ts';
import { velocity, VELOCITY_FEATURES } from './velocity.ts';

export const CHANNEL_FEATURES = {
  tabular: TABULAR_FEATURES,
  behavioral: BEHAVIORAL_FEATURES,
  velocity: VELOCITY_FEATURES,
  graph: GRAPH_FEATURES,
} as const satisfies Record<Channel, readonly string[]>;

/** Features that depend on how long a history is and how completely its outcomes were reported,
 *  more than on the payment: all-time counts, and the graph channel's rates and counts of known
 *  outcomes. A service running longer than the training period, a file shorter than it, or another
 *  population's fraud at particular merchants and channels moves them without the payments being
 *  unlike those the model learned from, so drift reports them but does not decide on them
 *  (model/drift.ts); the score's own distribution still shows what they do to the answers. */
export const HISTORY_DEPENDENT_FEATURES = [
  'customer_prior_count',
  'customer_distinct_merchants',
  'merchant_prior_count',
  'channel_prior_count',
  ...GRAPH_FEATURES,
] as const satisfies readonly (typeof CHANNEL_FEATURES)[Channel][number][];

/** Row-major features per channel. */
export type ChannelMatrices = Record<Channel, Float64Array>;

/** Writes one transaction's features into row `row` of preallocated matrices (no allocation). */
export function writeFeatures(tx: HistoryTransaction, history: History, m: ChannelMatrices, row: number): void {
  tabular(tx, m.tabular, row * TABULAR_FEATURES.length);
  behavioral(tx, history, m.behavioral, row * BEHAVIORAL_FEATURES.length);
  velocity(tx, history, m.velocity, row * VELOCITY_FEATURES.length);
  graph(tx, history, m.graph, row * GRAPH_FEATURES.length);
}

export function allocateFeatures(rows: number): ChannelMatrices {
  return {
    tabular: new Float64Array(rows * TABULAR_FEATURES.length),
    behavioral: new Float64Array(rows * BEHAVIORAL_FEATURES.length),
    velocity: new Float64Array(rows * VELOCITY_FEATURES.length),
    graph: new Float64Array(rows * GRAPH_FEATURES.length),
  };
}

/** Features of one transaction given the history before it. */
export function extractOne(tx: HistoryTransaction, history: History): ChannelMatrices {
  const m = allocateFeatures(1);
  writeFeatures(tx, history, m, 0);
  return m;
}

/** Features of every transaction of a time-ordered dataset; also returns the filled history. */
export function extractBatch(rows: readonly HistoryTransaction[], history = new History()): { features: ChannelMatrices; history: History } {
  const m = allocateFeatures(rows.length);
  rows.forEach((tx, i) => {
    writeFeatures(tx, history, m, i);
    history.add(tx);
  });
  return { features: m, history };
}
