// The shapes of an organization's live data as the database stores and returns them: a recorded
// transaction to write, as read back, as a history reads it, and a change of its outcome. They sit
// apart from the statements so that the live feed (live-feed.ts) and the repositories that write and
// read these rows (organization-data.ts and the modules it binds) share them without importing
// each other.

import type { FieldValue } from '../domain/fields.ts';
import type { CaseJoin } from '../domain/cases.ts';
import type { Transaction, TransactionEntities, TransactionParties } from '../domain/transaction.ts';
import type { PackedInputs } from './decision-inputs.ts';

/** What every stored transaction has, as the engine's history names it. Times are epoch ms. */
type TransactionFields = Required<Pick<Transaction, 'time' | 'amount' | 'customer_id' | 'merchant_id' | 'location' | 'payment_type'>> & {
  transaction_id: string;
};

/** A transaction to store. */
export interface NewTransaction extends TransactionFields {
  source: 'scored' | 'import';
  import_job_id?: string | null;
  /** The decision answered (scored transactions): the fields listings filter on. */
  decision?: StoredDecision | null;
  /** The exact response body (scored transactions): replayed as it is, and read for the record. */
  response?: string | null;
  /** The features it was scored with, every channel's in the model's order (drift on live traffic). */
  features?: Float32Array | null;
  /** What the decision saw and what the rules did (scored transactions; backtests read it). */
  decided?: DecidedBy | null;
  /** The organization's own fields it was sent with (domain/fields.ts), as sent. */
  fields?: Readonly<Record<string, FieldValue>> | null;
  /** Its key fields' values as `name=value` entries (domain/fields.ts keyEntries). */
  field_keys?: readonly string[] | null;
  /** The case it opens or joins (a decision an inbox takes), recorded with it. */
  case_join?: CaseJoin | null;
  /** An imported label and when it became known. */
  label?: 0 | 1 | null;
  label_known_ms?: number | null;
  outcome_source?: string | null;
  outcome_reported_by?: string | null;
}

/** How a scored transaction was decided, beside its response: the model that scored it, the
 *  decision of its thresholds, the action of the rule that decided (if one did), the rules that
 *  matched and those that could not be evaluated (ids), and the values packed by decision-inputs.ts. */
export interface DecidedBy {
  model_id: string;
  model_decision: string;
  rule_action: string | null;
  rule_ids: readonly string[];
  rule_errors: readonly string[];
  inputs: PackedInputs;
  /** What the organization's challengers made of it, in shadow (none: null). */
  challengers?: readonly ShadowScore[] | null;
}

/** A challenger's score of a transaction, recorded beside the decision it never made. */
export interface ShadowScore {
  model_id: string;
  risk_score: number;
  decision: string;
}

/** What listings and reports filter and count on, of a scored transaction's decision. */
export interface StoredDecision {
  risk_score: number;
  risk_band: string;
  decision: string;
  mode: string;
}

/** One stored transaction as read back. */
export interface TransactionRow extends TransactionParties, TransactionEntities {
  seq: number;
  transaction_id: string;
  time_ms: number;
  source: 'scored' | 'import';
  /** The response body answered (scored transactions). */
  response: string | null;
  label: 0 | 1 | null;
  label_known_ms: number | null;
  outcome_source: string | null;
  outcome_reported_by: string | null;
  /** What the organization's challengers made of it, in shadow (null: none scored it). */
  challengers: ShadowScore[] | null;
  /** The organization's own fields it was sent with (null: none). */
  fields: Record<string, FieldValue> | null;
}

/** What the history needs of a stored transaction, in time order. */
export interface HistoryRow extends TransactionFields {
  label: 0 | 1 | null;
  label_known_ms: number | null;
  /** Its key fields' values, `name=value` (null or absent: none). */
  keys?: readonly string[] | null;
}

/** A stored transaction as a history adds it: its label only with the time it became known. */
export function historyTransaction(r: HistoryRow): Transaction & { transaction_id: string } {
  const tx: Transaction & { transaction_id: string } = {
    transaction_id: r.transaction_id,
    time: r.time,
    amount: r.amount,
    customer_id: r.customer_id,
    merchant_id: r.merchant_id,
    location: r.location,
    payment_type: r.payment_type,
  };
  if (r.label === 0 || r.label === 1) {
    tx.label = r.label;
    tx.labelKnownAt = r.label_known_ms!;
  }
  if (r.keys) tx.keys = r.keys;
  return tx;
}

export interface OutcomeChangeRow {
  transaction_seq: number;
  from_label: 0 | 1 | null;
  to_label: 0 | 1;
  source: string;
  reported_at_ms: number;
  reported_by: string;
}
