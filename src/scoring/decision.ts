// A decision record, in one place: the part of a score response that the decision log's record of
// a transaction shows (`GET .../transactions/{id}`). The log stores the response itself, and the
// record is this projection of it (`decisionOf`), so the answer a caller got and the record an
// analyst reads can never disagree; the reasons in both are the scorer's (native/src/reasons.rs).

import type { ScoreResponse } from '../contract/score.ts';

export interface DecisionRecord {
  risk_score: number;
  risk_band: ScoreResponse['risk_band'];
  decision: ScoreResponse['decision'];
  mode: ScoreResponse['mode'];
  model_id: string;
  model_version: string;
  path: ScoreResponse['path'];
  review_threshold: number;
  block_threshold: number;
  channel_scores: ScoreResponse['channel_scores'];
  channel_attribution: ScoreResponse['channel_attribution'];
  reasons: ScoreResponse['reasons'];
  /** The rules that matched (empty when none did, or the stored answer has no `rules`). */
  rules: NonNullable<ScoreResponse['rules']>;
  /** The answer's notes: which rule changed the decision, and why a value was missing. */
  notes: string[];
  latency_ms: number;
}

export function decisionOf(r: ScoreResponse): DecisionRecord {
  return {
    risk_score: r.risk_score,
    risk_band: r.risk_band,
    decision: r.decision,
    mode: r.mode,
    model_id: r.model_id,
    model_version: r.model_version,
    path: r.path,
    review_threshold: r.review_threshold,
    block_threshold: r.block_threshold,
    channel_scores: r.channel_scores,
    channel_attribution: r.channel_attribution,
    reasons: r.reasons,
    rules: r.rules ?? [],
    notes: r.notes ?? [],
    latency_ms: r.latency_ms,
  };
}
