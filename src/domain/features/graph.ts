// Graph channel: what the shared-entity graph knows, using fraud labels only once they are older
// than the label delay: the known fraud rates of the merchant and the channel (smoothed toward a
// small prior so that a handful of labels cannot read as certainty), the merchant's rates over
// the labels that became known in the last 1, 7 and 30 days (a fresh compromise), the customer's own known
// fraud, the merchant's degree (distinct customers) and the share of those customers already known
// to be compromised (their neighbours' fraud). Ring membership is not a feature: a score reports
// it beside the model's answer (`related_ring`).

import type { History } from '../history/history.ts';
import { channelOf, type Transaction } from '../transaction.ts';

/** Pseudo-count and prior rate for smoothed fraud rates. */
const PRIOR_WEIGHT = 20;
const PRIOR_RATE = 0.01;
const DAY = 86_400_000;

export const GRAPH_FEATURES = [
  'merchant_known_labels',
  'merchant_known_fraud_rate',
  'merchant_recent_labels_1d',
  'merchant_recent_fraud_rate_1d',
  'merchant_recent_labels_7d',
  'merchant_recent_fraud_rate_7d',
  'merchant_recent_labels_30d',
  'merchant_recent_fraud_rate_30d',
  'channel_known_labels',
  'channel_known_fraud_rate',
  'customer_known_frauds',
  'merchant_distinct_customers',
  'merchant_compromised_customer_share',
] as const;

const RECENT_DAYS = [1, 7, 30];
/** A window's count and sum, reused call after call. */
const scratch = new Float64Array(2);

function smoothed(labels: number, frauds: number): number {
  return (frauds + PRIOR_WEIGHT * PRIOR_RATE) / (labels + PRIOR_WEIGHT);
}

export function graph(tx: Transaction, history: History, out: Float64Array, at: number): void {
  const t = tx.time;
  const merchant = history.merchantLabelSeries(tx.merchant_id).window(-Infinity, t);
  const channel = history.channelLabelSeries(channelOf(tx)).window(-Infinity, t);
  // Labels that became known in the last 1, 7 and 30 days: the merchant's transactions of the window
  // one label delay back. A compromise shows here long before it moves the all-time rate.
  out[at] = merchant.count;
  out[at + 1] = smoothed(merchant.count, merchant.sum);
  const labels = history.merchantLabelSeries(tx.merchant_id);
  for (let k = 0; k < RECENT_DAYS.length; k++) {
    labels.windowInto(t - RECENT_DAYS[k]! * DAY, t, scratch, 0);
    const count = scratch[0]!;
    out[at + 2 + 2 * k] = count;
    out[at + 3 + 2 * k] = count > 0 ? scratch[1]! / count : Number.NaN;
  }
  out[at + 8] = channel.count;
  out[at + 9] = smoothed(channel.count, channel.sum);
  out[at + 10] = history.customerKnownFrauds(tx.customer_id, t);

  // The merchant's customers before t, and how many of them were known compromised before t
  // (the customer–merchant graph, indexed by time in history.ts).
  const { customers, compromised } = history.merchantNeighbours(tx.merchant_id, tx.customer_id, t);
  out[at + 11] = customers;
  out[at + 12] = customers > 0 ? compromised / customers : Number.NaN;
}
