// A recorded transaction as the decision log answers it (`GET .../transactions/{id}` and the
// listing): the transaction, the decision it was answered (src/scoring/decision.ts; null for an
// imported transaction, which was never scored here), its current outcome and, on a single record,
// every change of it, the evidence the answer showed (entity history, the histories of the key
// values it carried, graph evidence and the related ring, as they stood when it was scored) and what the challengers in shadow made of it.

import type { OutcomeLabel, TransactionRecord } from '../../contract/transactions.ts';
import type { OutcomeChangeRow, TransactionRow } from '../../storage/live-rows.ts';
import { decisionOf } from '../../scoring/decision.ts';
import type { ScoreResponse } from '../../contract/score.ts';
import { isoTime } from '../../domain/iso-time.ts';

export const labelName = (label: 0 | 1): OutcomeLabel => (label === 1 ? 'fraud' : 'legit');

/** The record of a stored row; with its outcome changes when `changes` is given. */
export function transactionRecord(row: TransactionRow, changes?: readonly OutcomeChangeRow[]): TransactionRecord {
  const answered = row.response === null ? null : (JSON.parse(row.response) as ScoreResponse);
  const d = answered === null ? null : decisionOf(answered);
  const record: TransactionRecord = {
    transaction_id: row.transaction_id,
    time: isoTime(row.time_ms),
    amount: row.amount,
    customer_id: row.customer_id,
    merchant_id: row.merchant_id,
    location: row.location,
    payment_type: row.payment_type,
    source: row.source,
    risk_score: d?.risk_score ?? null,
    risk_band: d?.risk_band ?? null,
    decision: d?.decision ?? null,
    mode: d?.mode ?? null,
    model_id: d?.model_id ?? null,
    model_version: d?.model_version ?? null,
    path: d?.path ?? null,
    review_threshold: d?.review_threshold ?? null,
    block_threshold: d?.block_threshold ?? null,
    channel_scores: d?.channel_scores ?? null,
    channel_attribution: d?.channel_attribution ?? null,
    reasons: d?.reasons ?? [],
    rules: d?.rules ?? [],
    notes: d?.notes ?? [],
    latency_ms: d?.latency_ms ?? null,
    fields: row.fields ?? {},
    outcome:
      row.label === null
        ? null
        : {
            outcome: labelName(row.label),
            source: row.outcome_source ?? 'other',
            reported_at: isoTime(row.label_known_ms!),
            reported_by: row.outcome_reported_by ?? 'unknown',
          },
  };
  if (changes) {
    record.outcome_history = changes.map((c) => ({
      from: c.from_label === null ? null : labelName(c.from_label),
      to: labelName(c.to_label),
      source: c.source,
      reported_at: isoTime(c.reported_at_ms),
      reported_by: c.reported_by,
    }));
    record.challengers = (row.challengers ?? []).map((c) => ({
      model_id: c.model_id,
      risk_score: c.risk_score,
      decision: c.decision as 'approve' | 'review' | 'block',
    }));
    record.evidence =
      answered === null
        ? null
        : {
            entity_history: answered.entity_history ?? {},
            ...(answered.field_history ? { field_history: answered.field_history } : {}),
            graph_evidence: answered.graph_evidence ?? {},
            related_ring: answered.related_ring ?? null,
          };
  }
  return record;
}
