// The database's side of a performance report (src/app/decisions/performance.ts): an organization's scored
// transactions grouped into fixed-length buckets from a start (weeks, as the report uses them),
// counted and summarised in the database so that a report reads a few rows per bucket, not the
// transactions. Every statement reads the scope's organization only (organization-scope.ts).

import type { OrganizationScope } from './organization-scope.ts';

/** Per week of a performance report: scored volume and decisions, and the labelled scores. */
export interface WeekAggregate {
  week: number;
  transactions: number;
  reviews: number;
  blocks: number;
  quantiles: number[] | null;
  labelled: number;
  fraud: number;
}

/** Scored transactions in [from, to) grouped into `period`-long buckets from `from`: volume,
 *  decisions, score quantiles and labels. */
export async function weeklyAggregates(
  scope: OrganizationScope,
  from: number,
  to: number,
  period: number,
  quantiles: readonly number[],
): Promise<WeekAggregate[]> {
  return scope.db.query<WeekAggregate>(
    `SELECT floor((time_ms - $2) / $4)::int AS week, count(*)::int AS transactions,
            count(*) FILTER (WHERE decision = 'review')::int AS reviews, count(*) FILTER (WHERE decision = 'block')::int AS blocks,
            percentile_cont($5::float8[]) WITHIN GROUP (ORDER BY risk_score) AS quantiles,
            count(label)::int AS labelled, coalesce(sum(label), 0)::int AS fraud
     FROM transactions WHERE organization_id = $1 AND source = 'scored' AND time_ms >= $2 AND time_ms < $3
     GROUP BY 1 ORDER BY 1`,
    [scope.organizationId, from, to, period, quantiles],
  );
}

/** The scored transactions in [from, to) that carry their features, with their bucket: every
 *  `strides[bucket]`-th of a bucket by the order recorded (a bounded, even sample of a busy week). */
export async function scoredFeatures(
  scope: OrganizationScope,
  from: number,
  to: number,
  period: number,
  strides: readonly number[],
): Promise<{ week: number; risk_score: number; decision: string; location: string; payment_type: string; features: Uint8Array }[]> {
  return scope.db.query(
    `SELECT week, risk_score, decision, location, payment_type, features FROM (
       SELECT floor((time_ms - $2) / $4)::int AS week, seq, risk_score, decision, location, payment_type, features FROM transactions
       WHERE organization_id = $1 AND source = 'scored' AND features IS NOT NULL AND time_ms >= $2 AND time_ms < $3) AS w
     WHERE seq % ($5::int[])[week + 1] = 0`,
    [scope.organizationId, from, to, period, strides],
  );
}

/** Scores, decisions and outcomes of the labelled scored transactions in [from, to), with their bucket. */
export async function labelledScores(
  scope: OrganizationScope,
  from: number,
  to: number,
  period: number,
): Promise<{ week: number; risk_score: number; decision: string; label: 0 | 1 }[]> {
  return scope.db.query(
    `SELECT floor((time_ms - $2) / $4)::int AS week, risk_score, decision, label FROM transactions
     WHERE organization_id = $1 AND source = 'scored' AND label IS NOT NULL AND time_ms >= $2 AND time_ms < $3`,
    [scope.organizationId, from, to, period],
  );
}

/** A scored transaction its challengers scored too, with the outcome known by `knownBy`. */
export interface ShadowedTransaction {
  time_ms: number;
  amount: number;
  customer_id: string;
  risk_score: number;
  /** The model that answered. */
  model_id: string;
  model_decision: string;
  /** 1 when a fraud was reported by `knownBy`; else 0 (legitimate, or never reported). */
  label: 0 | 1;
  challengers: { model_id: string; risk_score: number; decision: string }[];
}

/** The scored transactions in [from, to) that challengers scored, oldest first. */
export async function shadowedTransactions(scope: OrganizationScope, from: number, to: number, knownBy: number): Promise<ShadowedTransaction[]> {
  return scope.db.query<ShadowedTransaction>(
    `SELECT time_ms, amount, customer_id, risk_score, model_id, model_decision, CASE WHEN label = 1 AND label_known_ms <= $4 THEN 1 ELSE 0 END AS label, challengers
     FROM transactions WHERE organization_id = $1 AND source = 'scored' AND challengers IS NOT NULL AND time_ms >= $2 AND time_ms < $3
     ORDER BY time_ms, seq`,
    [scope.organizationId, from, to, knownBy],
  );
}
