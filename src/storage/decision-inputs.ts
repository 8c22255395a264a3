// What a scored transaction's decision saw beyond the columns a listing filters on, packed in a
// few bytes per row (the `inputs` column): whether the cold-start floor applied, each channel's
// score and the prior transaction counts of the customer, merchant and channel. A backtest reads
// them back for every logged transaction, so it evaluates a rule on the values the decision had
// without reading the response body (far fewer bytes, and no JSON to parse).
//
// Layout (little-endian): a version byte (1), a flags byte (bit 0: cold start), then float64 ×
// (the four channel scores in CHANNELS order, then the three prior counts).

import { CHANNELS } from '../domain/channels.ts';
import type { DecisionValues } from '../domain/rules/decide.ts';
import type { TransactionEntities } from '../domain/transaction.ts';
import type { FieldValue } from '../domain/fields.ts';
import type { KeyHistory } from '../domain/history/key-fields.ts';

const VERSION = 1;
const SIZE = 2 + 8 * (CHANNELS.length + 3);

export type PackedInputs = Pick<DecisionValues, 'cold' | 'channel_scores' | 'priors'>;

export function packInputs(v: PackedInputs): Buffer {
  const b = Buffer.alloc(SIZE);
  b[0] = VERSION;
  b[1] = v.cold ? 1 : 0;
  let at = 2;
  for (const c of CHANNELS) at = b.writeDoubleLE(v.channel_scores[c] ?? Number.NaN, at);
  at = b.writeDoubleLE(v.priors.customer, at);
  at = b.writeDoubleLE(v.priors.merchant, at);
  b.writeDoubleLE(v.priors.channel, at);
  return b;
}

/** The values packed by `packInputs`; undefined for bytes of another layout. */
export function unpackInputs(b: Uint8Array): PackedInputs | undefined {
  if (b.length !== SIZE || b[0] !== VERSION) return undefined;
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const channel_scores: Record<string, number> = {};
  let at = 2;
  for (const c of CHANNELS) {
    channel_scores[c] = view.getFloat64(at, true);
    at += 8;
  }
  return {
    cold: (b[1]! & 1) === 1,
    channel_scores,
    priors: { customer: view.getFloat64(at, true), merchant: view.getFloat64(at + 8, true), channel: view.getFloat64(at + 16, true) },
  };
}

/** A logged (scored) transaction as rules read it back: its columns, its packed inputs and its
 *  features; the response only where the inputs are missing (scored before they were kept). */
export interface LoggedDecision extends TransactionEntities {
  seq: number;
  transaction_id: string;
  time_ms: number;
  amount: number;
  mode: string;
  risk_score: number;
  risk_band: string;
  decision: string;
  model_decision: string | null;
  rule_action: string | null;
  model_id: string | null;
  inputs: Uint8Array | null;
  features: Uint8Array | null;
  response: string | null;
  label: 0 | 1 | null;
  label_known_ms: number | null;
  /** The organization's own fields it was sent with (null: none, or not read). */
  fields: Record<string, FieldValue> | null;
}

/** The columns a LoggedDecision is read from (SQL, table `t`), the response inflated by the
 *  caller; `withFeatures` and `withFields` false leave the features and the fields out (NULL) for
 *  rules that do not read them. */
export const loggedColumns = (withFeatures: boolean, withFields: boolean) =>
  `t.seq, t.transaction_id, t.time_ms, t.amount, t.customer_id, t.merchant_id, t.location, t.payment_type, t.mode, t.risk_score, t.risk_band, t.decision,
   t.model_decision, t.rule_action, t.model_id, t.inputs, ${withFeatures ? 't.features' : 'NULL::bytea AS features'},
   CASE WHEN ${RESPONSE_NEEDED(withFields, 't.')} THEN t.response END AS response, t.label, t.label_known_ms,
   ${withFields ? 't.fields' : 'NULL::jsonb AS fields'}`;

/** When a logged decision's response is read (SQL over a transactions row, columns prefixed by
 *  `t`): without its packed inputs (scored before they were kept), and, with the fields, when it
 *  carried key values (their histories are in it). */
export const RESPONSE_NEEDED = (withFields: boolean, t = '') => `${t}inputs IS NULL${withFields ? ` OR ${t}field_keys IS NOT NULL` : ''}`;

interface StoredAnswer {
  model_id: string;
  path: string;
  decision: string;
  channel_scores: Record<string, number>;
  entity_history: Record<string, { role: string; prior_transactions: number }>;
  field_history?: Record<string, KeyHistory>;
}

/** What the decision saw; undefined for a transaction that has no decision (imported). */
export function decisionValues(row: LoggedDecision): DecisionValues | undefined {
  let packed = row.inputs ? unpackInputs(row.inputs) : undefined;
  const answer = row.response ? (JSON.parse(row.response) as StoredAnswer) : undefined;
  if (!packed && answer) {
    const prior = (role: string) => Object.values(answer.entity_history).find((e) => e.role === role)?.prior_transactions ?? 0;
    packed = {
      cold: answer.path === 'COLD_START',
      channel_scores: answer.channel_scores,
      priors: { customer: prior('customer'), merchant: prior('merchant'), channel: prior('channel') },
    };
  }
  if (!packed) return undefined;
  return {
    time: row.time_ms,
    amount: row.amount,
    customer_id: row.customer_id,
    merchant_id: row.merchant_id,
    location: row.location,
    payment_type: row.payment_type,
    mode: row.mode,
    risk_score: row.risk_score,
    risk_band: row.risk_band,
    ...packed,
    fields: row.fields ?? undefined,
    keyHistory: answer?.field_history ? keyHistoryOf(answer.field_history) : undefined,
  };
}

/** A decision's key histories as it answered them (by field name), looked up by `name=value`. */
function keyHistoryOf(answered: Record<string, KeyHistory>): (entry: string) => KeyHistory | undefined {
  return (entry) => answered[entry.slice(0, entry.indexOf('='))];
}

/** The model's features by name from the stored float32 values (every channel's, in the model's
 *  order; NaN, a missing value, left out). */
export function loggedFeatures(bytes: Uint8Array | null, names: readonly (readonly string[])[]): Map<string, number> {
  const m = new Map<string, number>();
  if (!bytes) return m;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  for (const list of names) {
    for (const name of list) {
      if (at + 4 > bytes.byteLength) return m;
      const x = view.getFloat32(at, true);
      at += 4;
      if (!Number.isNaN(x)) m.set(name, x);
    }
  }
  return m;
}
