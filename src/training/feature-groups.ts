// Which groups of features the channel boosters leave unused, chosen on validation only, by a rule
// that holds every figure at once: a group is left out only when the boosters without it rank the
// validation periods better by average precision and by ROC AUC both (means over the folds, at
// the chosen setting and number of trees). Each group is tried alone against all features; when
// several pass, they are left out together if that too beats all features on both figures, else
// only the one whose smaller gain is the largest. A feature left out stays computed, stored and
// served (the model's features do not change); no tree splits on it (interactionConstraints).
// Why: on the handbook's published data the merchant's all-time fraud rate and label count let
// the boosters call a merchant with a clean history safe, which ranks the first frauds at a newly
// compromised merchant below most legitimate payments, and ROC AUC falls below every published
// row while average precision rises (docs/model.md, "A recipe that holds every figure").

import { figuresOnThreads } from './parallel-search.ts';
import { interactionConstraints, type ChannelGroup } from './partition.ts';
import type { Fold, Params, SelectionData } from './selection.ts';

/** The groups selection may leave out: features that describe the same thing, tried together. */
export const FEATURE_GROUPS: readonly { name: string; features: readonly string[] }[] = [
  { name: 'merchant_all_time', features: ['merchant_known_labels', 'merchant_known_fraud_rate'] },
  { name: 'channel_outcomes', features: ['channel_known_labels', 'channel_known_fraud_rate'] },
  { name: 'customer_known_frauds', features: ['customer_known_frauds'] },
  { name: 'merchant_customers', features: ['merchant_distinct_customers', 'merchant_compromised_customer_share'] },
  { name: 'merchant_recent_label_counts', features: ['merchant_recent_labels_1d', 'merchant_recent_labels_7d', 'merchant_recent_labels_30d'] },
  {
    name: 'merchant_and_channel_velocity',
    features: [
      'merchant_count_1h',
      'merchant_sum_1h',
      'merchant_count_24h',
      'merchant_sum_24h',
      'channel_count_1h',
      'channel_sum_1h',
      'channel_count_24h',
      'channel_sum_24h',
      'merchant_prior_count',
      'channel_prior_count',
    ],
  },
  {
    name: 'customer_velocity',
    features: [
      'customer_count_10m',
      'customer_sum_10m',
      'customer_count_1h',
      'customer_sum_1h',
      'customer_count_24h',
      'customer_sum_24h',
      'customer_count_7d',
      'customer_sum_7d',
      'customer_count_30d',
      'customer_sum_30d',
    ],
  },
  {
    name: 'customer_novelty',
    features: [
      'new_merchant_for_customer',
      'new_channel_for_customer',
      'new_location_for_customer',
      'customer_distinct_merchants',
      'log_seconds_since_customer_last',
    ],
  },
  { name: 'time_and_roundness', features: ['hour', 'is_night', 'weekday', 'is_weekend', 'round_amount'] },
];

export interface Figures {
  average_precision: number;
  roc_auc: number;
}

export interface GroupChoice {
  /** The features no tree may split on (empty: every feature used). */
  unused: string[];
  /** The groups left out. */
  groups: string[];
  rule: string;
  /** Validation figures with every feature, with each group left out alone, and with the groups
   *  that passed left out together (when more than one passed). */
  all: Figures;
  trials: (Figures & { group: string; passed: boolean })[];
  together?: Figures & { passed: boolean };
}

const beats = (a: Figures, b: Figures) => a.average_precision > b.average_precision && a.roc_auc > b.roc_auc;
const smallerGain = (a: Figures, b: Figures) => Math.min(a.average_precision - b.average_precision, a.roc_auc - b.roc_auc);

/** The groups to leave out of `channels`' boosters, chosen on `folds` with `params` (the chosen
 *  setting, without interaction constraints) and `iterations` trees. */
export async function chooseUnusedFeatures(
  data: SelectionData,
  folds: readonly Fold[],
  channels: readonly ChannelGroup[],
  params: Params,
  iterations: number,
): Promise<GroupChoice> {
  const known = new Set(channels.flatMap((c) => c.features));
  for (const g of FEATURE_GROUPS) for (const f of g.features) if (!known.has(f)) throw new Error(`feature-groups: ${g.name} names ${f}, which no channel has`);
  const without = (unused: readonly string[]): Params => ({ ...params, interaction_constraints: interactionConstraints(channels, new Set(unused)) });
  const [all, ...alone] = await figuresOnThreads(data, folds, [without([]), ...FEATURE_GROUPS.map((g) => without(g.features))], iterations);
  const trials = FEATURE_GROUPS.map((g, k) => ({ group: g.name, ...alone[k]!, passed: beats(alone[k]!, all!) }));
  const passed = trials.filter((t) => t.passed);
  const rule = 'a group is left out only when validation average precision and ROC AUC are both higher without it';
  const choice = (groups: string[], together?: GroupChoice['together']): GroupChoice => ({
    unused: FEATURE_GROUPS.filter((g) => groups.includes(g.name)).flatMap((g) => g.features),
    groups,
    rule,
    all: all!,
    trials,
    ...(together ? { together } : {}),
  });
  if (passed.length <= 1) return choice(passed.map((t) => t.group));
  const names = passed.map((t) => t.group);
  const [both] = await figuresOnThreads(data, folds, [without(FEATURE_GROUPS.filter((g) => names.includes(g.name)).flatMap((g) => g.features))], iterations);
  const together = { ...both!, passed: beats(both!, all!) };
  if (together.passed) return choice(names, together);
  const best = passed.reduce((a, t) => (smallerGain(t, all!) > smallerGain(a, all!) ? t : a));
  return choice([best.group], together);
}
