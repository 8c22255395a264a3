// A decision, in one place: the part of a score response that the decision log keeps for every
// transaction an organization scores, and that `GET .../transactions/{id}` reads back. It is a
// projection of the response (`decisionOf`), so the answer a caller got and the record an analyst
// reads can never disagree; the reasons in both are the scorer's (src/scoring/explain.ts).

import type { ScoreResult } from './scorer.ts';

export interface Decision {
  risk_score: number;
  risk_band: ScoreResult['risk_band'];
  decision: ScoreResult['decision'];
  mode: ScoreResult['mode'];
  model_id: string;
  model_version: string;
  path: ScoreResult['path'];
  review_threshold: number;
  block_threshold: number;
  channel_scores: ScoreResult['channel_scores'];
  channel_attribution: ScoreResult['channel_attribution'];
  reasons: ScoreResult['reasons'];
  /** When the transaction was scored (ISO 8601 UTC). */
  scored_at: string;
  latency_ms: number;
}

export function decisionOf(r: ScoreResult, scoredAt: number): Decision {
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
    scored_at: new Date(scoredAt).toISOString(),
    latency_ms: r.latency_ms,
  };
}
