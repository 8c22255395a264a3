// Point-in-time feature extraction: one implementation for training, single scoring and batch
// scoring. `extractOne` computes a transaction's features from a history of older transactions;
// `extractBatch` walks a time-ordered dataset, computing each transaction's features before adding
// it to the history. Both read only strictly older transactions (see history.ts), so a transaction
// scored alone after its history gets exactly the features the batch pass gave it (tested).
// Fraud labels enter the history only once older than its label delay (see history.ts).

import type { Channel } from '../channels.ts';
import { History } from '../history/history.ts';
import type { Transaction } from '../transaction.ts';
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

/** What a feature's value depends on besides the payment's own fields:
 *  - `payment`: nothing else (its amount, whether it is round, its payment type);
 *  - `period`: the time of day and week, so a file or week covering part of a day or a week has
 *    another mix of them without its payments being any different;
 *  - `history`: the transactions before it: how many there are (a file of 30 days has smaller
 *    all-time counts than one of 90) and how many parties share a merchant or a channel (a smaller
 *    population puts fewer transactions through each channel in a day), and which outcomes are known.
 *  Drift (model/drift.ts) lets only `payment` features decide its verdict, since the others move with
 *  the length and size of the data while the payments stay alike; their effect on the answers shows
 *  in the score's own distribution. */
export type FeatureDependence = 'payment' | 'period' | 'history';

const PERIOD_FEATURES: readonly string[] = ['hour', 'is_night', 'weekday', 'is_weekend'] satisfies readonly (typeof TABULAR_FEATURES)[number][];

export function featureDependence(feature: string): FeatureDependence {
  if (PERIOD_FEATURES.includes(feature)) return 'period';
  return (TABULAR_FEATURES as readonly string[]).includes(feature) ? 'payment' : 'history';
}

/** Row-major features per channel. */
export type ChannelMatrices = Record<Channel, Float64Array>;

/** Writes one transaction's features into row `row` of preallocated matrices (no allocation). */
export function writeFeatures(tx: Transaction, history: History, m: ChannelMatrices, row: number): void {
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
export function extractOne(tx: Transaction, history: History): ChannelMatrices {
  const m = allocateFeatures(1);
  writeFeatures(tx, history, m, 0);
  return m;
}

/** Features of every transaction of a time-ordered dataset; also returns the filled history. */
export function extractBatch(rows: readonly Transaction[], history = new History()): { features: ChannelMatrices; history: History } {
  const m = allocateFeatures(rows.length);
  rows.forEach((tx, i) => {
    writeFeatures(tx, history, m, i);
    history.add(tx);
  });
  return { features: m, history };
}
