// What a performance report reads of an organization's scored transactions, bound to the
// organization (organization-data.ts makes one for a scope): per-bucket counts and quantiles, a
// bounded sample of features for drift, the labelled scores, and what challengers scored in shadow. The statements are in
// weekly-aggregates.ts.

import type { OrganizationScope } from '../organization-scope.ts';
import { labelledScores, scoredFeatures, shadowedTransactions, weeklyAggregates, type ShadowedTransaction, type WeekAggregate } from '../weekly-aggregates.ts';

export class OrganizationPerformance {
  constructor(private readonly scope: OrganizationScope) {}

  /** Scored transactions in [from, to) per `period`-long bucket (weekly-aggregates.ts). */
  weekly(from: number, to: number, period: number, quantiles: readonly number[]): Promise<WeekAggregate[]> {
    return weeklyAggregates(this.scope, from, to, period, quantiles);
  }

  /** A bounded sample of the scored transactions' features per bucket (weekly-aggregates.ts). */
  scoredFeatures(
    from: number,
    to: number,
    period: number,
    strides: readonly number[],
  ): Promise<{ week: number; risk_score: number; decision: string; location: string; payment_type: string; features: Uint8Array }[]> {
    return scoredFeatures(this.scope, from, to, period, strides);
  }

  /** Scores and outcomes of the labelled scored transactions per bucket (weekly-aggregates.ts). */
  labelledScores(from: number, to: number, period: number): Promise<{ week: number; risk_score: number; decision: string; label: 0 | 1 }[]> {
    return labelledScores(this.scope, from, to, period);
  }

  /** The scored transactions challengers scored in shadow, with the outcomes known by `knownBy` (weekly-aggregates.ts). */
  shadowed(from: number, to: number, knownBy: number): Promise<ShadowedTransaction[]> {
    return shadowedTransactions(this.scope, from, to, knownBy);
  }
}
