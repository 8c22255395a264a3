// What a transaction's decision saw, as rules read it, and how rule matches make the decision: one
// definition for scoring (src/scoring/rules-stage.ts) and backtests, so a backtest evaluates a
// logged transaction exactly as scoring would have.
//
// Precedence: an `allow` match approves, else a `block` match blocks, else a `review` match
// reviews, else the model's thresholds decide. Only `active` rules decide; `shadow` rules are
// evaluated and recorded, never applied.

import type { EntityHistoryValue, RuleAction, RuleInput } from './expression.ts';
import type { TransactionEntities } from '../transaction.ts';

export type Decision = 'approve' | 'review' | 'block';

/** Precedence of the actions, first to last. */
export const ACTION_ORDER: readonly RuleAction[] = ['allow', 'block', 'review'];

/** The decision an action makes. */
export const ACTION_DECISION: Record<RuleAction, Decision> = { allow: 'approve', block: 'block', review: 'review' };

/** The action that decides among those matched, by precedence; undefined when none did. */
export function decidingAction(matched: Iterable<RuleAction>): RuleAction | undefined {
  let best: RuleAction | undefined;
  for (const a of matched) if (best === undefined || ACTION_ORDER.indexOf(a) < ACTION_ORDER.indexOf(best)) best = a;
  return best;
}

/** The decision: the deciding action's, else the model's. */
export function decide(modelDecision: Decision, action: RuleAction | undefined): Decision {
  return action === undefined ? modelDecision : ACTION_DECISION[action];
}

/** What a decision saw, in plain values (scoring has them in its answer; a backtest reads them
 *  from the logged transaction). */
export interface DecisionValues extends TransactionEntities {
  time: number;
  amount: number;
  mode: string;
  risk_score: number;
  risk_band: string;
  cold: boolean;
  channel_scores: Record<string, number>;
  priors: { customer: number; merchant: number; channel: number };
}

const history = (prior: number): EntityHistoryValue => ({ prior_transactions: BigInt(prior), is_new: prior === 0 });

/** The values an expression reads. `features` is called only when a rule reads them. */
export function ruleInput(v: DecisionValues, features: () => Map<string, number>): RuleInput {
  const at = new Date(v.time);
  let built: Map<string, number> | undefined;
  return {
    amount: v.amount,
    customer_id: v.customer_id,
    merchant_id: v.merchant_id,
    location: v.location,
    payment_type: v.payment_type,
    channel: `${v.payment_type}:${v.location}`,
    mode: v.mode,
    hour: BigInt(at.getUTCHours()),
    weekday: BigInt(at.getUTCDay()),
    risk_score: v.risk_score,
    risk_band: v.risk_band,
    path: v.cold ? 'COLD_START' : 'MODEL',
    channel_scores: v.channel_scores,
    get features() {
      return (built ??= features());
    },
    customer: history(v.priors.customer),
    merchant: history(v.priors.merchant),
    channel_history: history(v.priors.channel),
  };
}

/** A model's features by name from its per-channel values (NaN, a missing value, is left out). */
export function featureMap(names: readonly (readonly string[])[], values: readonly ArrayLike<number>[]): Map<string, number> {
  const m = new Map<string, number>();
  names.forEach((list, c) => {
    const row = values[c]!;
    for (let k = 0; k < list.length; k++) {
      const x = row[k]!;
      if (!Number.isNaN(x)) m.set(list[k]!, x);
    }
  });
  return m;
}

/** The fields an expression reads, with their values as JSON (ints as numbers, maps as objects):
 *  what a check and a backtest's examples show. */
export function valuesRead(input: RuleInput, fields: Iterable<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of [...fields].sort()) {
    if (!(f in input)) continue;
    const v = (input as unknown as Record<string, unknown>)[f];
    if (typeof v === 'bigint') out[f] = Number(v);
    else if (v instanceof Map) out[f] = Object.fromEntries(v);
    else if (v && typeof v === 'object') out[f] = Object.fromEntries(Object.entries(v).map(([k, x]) => [k, typeof x === 'bigint' ? Number(x) : x]));
    else out[f] = v;
  }
  return out;
}
