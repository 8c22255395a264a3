// What a transaction's decision saw, as rules read it, and how rule matches make the decision: one
// definition for scoring (src/scoring/rules-stage.ts) and backtests, so a backtest evaluates a
// logged transaction exactly as scoring would have.
//
// Precedence: an `allow` match approves, else a `block` match blocks, else a `review` match
// reviews, else the model's thresholds decide. Only `active` rules decide; `shadow` rules are
// evaluated and recorded, never applied.

import { EntityHistoryValue, FieldHistories, FieldHistoryValue, FieldValues, type RuleAction, type RuleInput, type RuleLanguage } from './expression.ts';
import { keyEntry } from '../fields.ts';
import type { KeyHistory } from '../history/key-fields.ts';
import type { TransactionEntities } from '../transaction.ts';
import type { FieldValue } from '../fields.ts';

/** What a transaction is answered (a decision record, with its score and reasons, is
 *  scoring/decision.ts's DecisionRecord). */
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
  /** The organization's own fields the payment carried, declared or not (undefined: none). */
  fields?: Readonly<Record<string, FieldValue>> | undefined;
  /** A key value's history before the payment (`name=value`): scoring has it; a decision read back
   *  does not keep it. */
  keyHistory?: ((entry: string) => KeyHistory | undefined) | undefined;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** Small whole numbers as CEL's ints, and entities' histories with few priors, made once: every
 *  hour and weekday is one, and so are most prior counts. */
const SMALL_INTS = Array.from({ length: 1024 }, (_, k) => BigInt(k));
const SMALL_HISTORIES = SMALL_INTS.map((n, k) => new EntityHistoryValue(n, k === 0));

const int = (k: number): bigint => SMALL_INTS[k] ?? BigInt(k);
const history = (prior: number): EntityHistoryValue => SMALL_HISTORIES[prior] ?? new EntityHistoryValue(BigInt(prior), prior === 0);

const mod = (a: number, n: number) => ((a % n) + n) % n;

const JS_TYPE = { string: 'string', number: 'number', boolean: 'boolean' } as const;

/** What ruleInput returns: a class, so that each input is one allocation with its getter shared. */
class Input implements RuleInput {
  readonly amount: number;
  readonly customer_id: string;
  readonly merchant_id: string;
  readonly location: string;
  readonly payment_type: string;
  readonly channel: string;
  readonly mode: string;
  readonly hour: bigint;
  readonly weekday: bigint;
  readonly risk_score: number;
  readonly risk_band: string;
  readonly path: string;
  readonly channel_scores: Record<string, number>;
  readonly customer: EntityHistoryValue;
  readonly merchant: EntityHistoryValue;
  readonly channel_history: EntityHistoryValue;
  #features: (() => Map<string, number>) | undefined;
  #built: Map<string, number> | undefined;
  readonly #sent: Readonly<Record<string, FieldValue>> | undefined;
  readonly #language: RuleLanguage;
  #fields: FieldValues | undefined;
  readonly #keyHistory: ((entry: string) => KeyHistory | undefined) | undefined;
  #histories: FieldHistories | undefined;

  constructor(v: DecisionValues, features: () => Map<string, number>, language: RuleLanguage) {
    // UTC hour and weekday as Date computes them (whole milliseconds; 1970-01-01 was a Thursday).
    const ms = Math.trunc(v.time);
    this.amount = v.amount;
    this.customer_id = v.customer_id;
    this.merchant_id = v.merchant_id;
    this.location = v.location;
    this.payment_type = v.payment_type;
    this.channel = `${v.payment_type}:${v.location}`;
    this.mode = v.mode;
    this.hour = int(mod(Math.floor(ms / HOUR_MS), 24));
    this.weekday = int(mod(Math.floor(ms / DAY_MS) + 4, 7));
    this.risk_score = v.risk_score;
    this.risk_band = v.risk_band;
    this.path = v.cold ? 'COLD_START' : 'MODEL';
    this.channel_scores = v.channel_scores;
    this.customer = history(v.priors.customer);
    this.merchant = history(v.priors.merchant);
    this.channel_history = history(v.priors.channel);
    this.#features = features;
    this.#sent = v.fields;
    this.#language = language;
    this.#keyHistory = v.keyHistory;
  }

  /** The histories of the key values the payment carried (those of its key fields it carried). */
  get field_history(): FieldHistories {
    if (this.#histories === undefined) {
      this.#histories = new FieldHistories();
      const fields = this.fields;
      if (this.#keyHistory)
        for (const name of this.#language.keys) {
          const value = fields[name];
          if (typeof value !== 'string') continue;
          const h = this.#keyHistory(keyEntry(name, value));
          if (h === undefined) continue;
          this.#histories[name] = new FieldHistoryValue(
            int(h.prior_transactions),
            h.is_new,
            int(h.count_1h),
            int(h.count_24h),
            int(h.count_7d),
            h.amount_24h,
            int(h.distinct_customers_24h),
            int(h.distinct_customers_30d),
          );
        }
    }
    return this.#histories;
  }

  /** The declared fields the payment carried with a value of the declared type: a field sent before
   *  it was declared, or retired since, is not read. */
  get fields(): FieldValues {
    if (this.#fields === undefined) {
      this.#fields = new FieldValues();
      const sent = this.#sent;
      if (sent !== undefined)
        for (const [name, type] of this.#language.fields) {
          const x = sent[name];
          if (x !== undefined && typeof x === JS_TYPE[type]) this.#fields[name] = x;
        }
    }
    return this.#fields;
  }

  get features(): Map<string, number> {
    if (this.#built === undefined) {
      this.#built = this.#features!();
      this.#features = undefined;
    }
    return this.#built;
  }
}

/** The values an expression reads in `language` (the organization's). `features` is called only
 *  when a rule reads them. */
export function ruleInput(v: DecisionValues, features: () => Map<string, number>, language: RuleLanguage): RuleInput {
  return new Input(v, features, language);
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
  for (const f of [...fields].sort()) if (f in input) out[f] = asJson((input as unknown as Record<string, unknown>)[f]);
  return out;
}

/** A value an expression read, as JSON: ints as numbers, maps and objects (nested: a key field's
 *  history) as objects. */
function asJson(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof Map) return Object.fromEntries(v);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, asJson(x)]));
  return v;
}
