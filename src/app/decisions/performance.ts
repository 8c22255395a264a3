// How the model does on an organization's own traffic, week by week (ISO weeks, Monday 00:00 UTC):
// how many transactions it scored, what share it sent to review and blocked, the spread of its
// scores; and, on the transactions whose outcome has been reported, each mode's precision and
// recall at its thresholds and the ranking figures (ROC AUC, average precision). A figure needs
// enough outcomes to mean anything: with fewer than MIN_LABELLED labelled transactions in a week,
// or no fraud (or no legitimate one) among them, it is null rather than a number that looks exact.
// Each week also carries drift (model/drift.ts) on an even sample of its scored transactions'
// features. `weeklyPerformance` (GET /api/organizations/{id}/performance) reads the organization a
// checked membership names, with the thresholds and scorer of the model it scores with, and answers
// in the contract's shape (contract/performance.ts).

import type { ModeName, ModelBundle, ModelProblem } from '../../model/bundle-types.ts';
import { DRIFT_SAMPLE, DriftCounter } from '../../model/drift.ts';
import type { Db } from '../../storage/db.ts';
import { activeModelIdOf } from '../../storage/models-store.ts';
import { organizationData } from '../../storage/organization-data.ts';
import type { OrganizationPerformance } from '../../storage/organization-data.ts';
import { averagePrecision, rocAuc } from '../../model/metrics.ts';
import type { DecisionLog } from '../../live/decision-log.ts';
import type { Scorer } from '../../scoring/scorer.ts';
import { available, modelUnavailable } from '../errors.ts';
import type { OrganizationCaller } from '../access/organization-caller.ts';
import type { ScorerFor } from '../score-and-record.ts';
import type { ModePerformance, Performance, Week } from '../../contract/performance.ts';

export const MIN_LABELLED = 20;
export const SCORE_QUANTILES = [0.1, 0.25, 0.5, 0.75, 0.9, 0.99] as const;
const WEEK_MS = 7 * 86_400_000;

/** Monday 00:00 UTC of the ISO week holding `t`. */
export function weekStart(t: number): number {
  const d = new Date(t);
  const day = (d.getUTCDay() + 6) % 7;
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - day);
}

/** The ISO week name (`YYYY-Www`) of a Monday. */
export function isoWeek(monday: number): string {
  // The ISO year is the year of the week's Thursday; week 1 holds that year's first Thursday.
  const thursday = new Date(monday + 3 * 86_400_000);
  const year = thursday.getUTCFullYear();
  const firstThursday = Date.UTC(year, 0, 4);
  const week = 1 + Math.round((weekStart(thursday.getTime()) - weekStart(firstThursday)) / WEEK_MS);
  return `${year}-W${String(week).padStart(2, '0')}`;
}

function ratio(num: number, den: number): number | null {
  return den > 0 ? num / den : null;
}

/** The last `weeks` ISO weeks up to and including the one holding `now`, oldest first. */
export async function organizationPerformance(data: OrganizationPerformance, model: ModelBundle, weeks: number, now: number): Promise<Week[]> {
  const last = weekStart(now);
  const from = last - (weeks - 1) * WEEK_MS;
  const to = last + WEEK_MS;
  const aggregates = await data.weekly(from, to, WEEK_MS, SCORE_QUANTILES);
  const labelled = await data.labelledScores(from, to, WEEK_MS);
  const byWeek = new Map(aggregates.map((a) => [a.week, a]));
  const drift = await weeklyDrift(data, model, from, to, weeks, byWeek);
  const scores = new Map<number, { s: number[]; y: number[]; flagged: boolean[] }>();
  for (const r of labelled) {
    let w = scores.get(r.week);
    if (!w) scores.set(r.week, (w = { s: [], y: [], flagged: [] }));
    w.s.push(r.risk_score);
    w.y.push(r.label);
    w.flagged.push(r.decision !== 'approve');
  }
  const modes = Object.keys(model.file.thresholds) as ModeName[];
  const out: Week[] = [];
  for (let k = 0; k < weeks; k++) {
    const a = byWeek.get(k);
    const w = scores.get(k) ?? { s: [], y: [], flagged: [] };
    const n = w.y.length;
    const fraud = w.y.reduce((x, y) => x + y, 0);
    const enough = n >= MIN_LABELLED && fraud > 0 && fraud < n;
    const by_mode = {} as Record<ModeName, ModePerformance>;
    for (const mode of modes) {
      const t = model.file.thresholds[mode];
      const at = (threshold: number) => {
        let flagged = 0;
        let caught = 0;
        for (let i = 0; i < n; i++) {
          if (w.s[i]! >= threshold) {
            flagged++;
            caught += w.y[i]!;
          }
        }
        return { precision: enough ? ratio(caught, flagged) : null, recall: enough ? ratio(caught, fraud) : null };
      };
      const block = at(t.block);
      const review = at(t.review);
      by_mode[mode] = {
        review_threshold: t.review,
        block_threshold: t.block,
        precision: block.precision,
        recall: block.recall,
        review_precision: review.precision,
        review_recall: review.recall,
      };
    }
    const monday = from + k * WEEK_MS;
    out.push({
      week: isoWeek(monday),
      week_start: new Date(monday).toISOString(),
      transactions: a?.transactions ?? 0,
      review_rate: a ? ratio(a.reviews, a.transactions) : null,
      block_rate: a ? ratio(a.blocks, a.transactions) : null,
      score_quantiles: a?.quantiles ? Object.fromEntries(SCORE_QUANTILES.map((q, i) => [`p${Math.round(q * 100)}`, a.quantiles![i]!])) : null,
      labelled: n,
      fraud,
      by_mode,
      roc_auc: enough ? rocAuc(w.s, w.y) : null,
      average_precision: enough ? averagePrecision(w.s, w.y) : null,
      // The week's outcomes decide its verdict when there are enough of both kinds.
      drift: drift.get(k)?.report({ scores: w.s, labels: w.y, flagged: (i) => w.flagged[i]! }) ?? null,
    });
  }
  return out;
}

/** Each week's drift counter over its sampled scored transactions (none without a reference). */
async function weeklyDrift(
  data: OrganizationPerformance,
  model: ModelBundle,
  from: number,
  to: number,
  weeks: number,
  byWeek: Map<number, { transactions: number }>,
): Promise<Map<number, DriftCounter>> {
  const counters = new Map<number, DriftCounter>();
  const reference = model.reference;
  if (!reference) return counters;
  const strides = Array.from({ length: weeks }, (_, k) => Math.max(1, Math.ceil((byWeek.get(k)?.transactions ?? 0) / DRIFT_SAMPLE)));
  for (const r of await data.scoredFeatures(from, to, WEEK_MS, strides)) {
    let counter = counters.get(r.week);
    if (!counter) counters.set(r.week, (counter = new DriftCounter(reference)));
    // A copy: the driver's bytes need not start on a float boundary.
    const bytes = Uint8Array.from(r.features);
    if (counter.addPacked(new Float32Array(bytes.buffer, 0, bytes.length >> 2), r.payment_type, r.location))
      counter.addScore(r.risk_score, r.decision !== 'approve');
  }
  return counters;
}

/** What the performance report needs of the service. */
export interface PerformanceDeps {
  db: Db;
  /** The loaded model, or why there is none (`unavailable` with its reason). */
  model: ModelBundle | ModelProblem;
  /** The built-in model's scorer; undefined when no model is loaded. */
  scorer: Scorer | undefined;
  /** The scorer of an organization's active custom model. */
  scorerForModel: ScorerFor;
  /** Flushed first: transactions answered a moment ago may not be stored yet. */
  decisionLog: DecisionLog;
}

/** The organization's last `weeks` ISO weeks, oldest first, measured with the scorer it scores
 *  with (its active custom model's, else the built-in one, named as `model_id`), or `unavailable`
 *  without a model. */
export async function weeklyPerformance(deps: PerformanceDeps, caller: OrganizationCaller, weeks: number): Promise<Performance> {
  const active = await activeModelIdOf(deps.db, caller.organizationId);
  const scorer = (active ? (await deps.scorerForModel(active))?.scorer : undefined) ?? deps.scorer;
  available(deps.model);
  if (!scorer) throw modelUnavailable();
  await deps.decisionLog.flush();
  const measured = await organizationPerformance(organizationData(deps.db, caller.organizationId).performance, scorer.bundle, weeks, Date.now());
  return { organization_id: caller.organizationId, model_id: scorer.modelId, min_labelled: MIN_LABELLED, weeks: measured };
}
