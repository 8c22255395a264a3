// How an organization's challengers compare with the model that answered, on its own outcomes
// (GET /api/organizations/{id}/challengers/report, members): per challenger, overall and per ISO
// week, over the scored transactions it scored in shadow that are older than the model's label
// delay (their frauds could be reported by now), each figure with its interval and a verdict
// (model/challenger-comparison.ts). Beside it, for each of the organization's challengers now, a
// backtest over its imported history: the most recent imported transactions older than the label
// delay, scored now by the challenger and by the model that answers the organization's traffic,
// from the features the import stored for each (the scorers' own code, in batches), compared the
// same way. Every comparison runs in a worker thread (its bootstrap is seconds of CPU per 100,000
// rows: on the event loop it would hold every request that long). Read through the organization's
// own data only.

import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ChallengerReport } from '../../contract/models.ts';
import { compareModels, type Comparison, type ComparisonOptions, type ShadowedRow } from '../../model/challenger-comparison.ts';
import type { ModeName } from '../../model/bundle-types.ts';
import type { Scorer } from '../../scoring/scorer.ts';
import { sameFeatures, storedWidth } from '../../scoring/stored-features.ts';
import type { Db } from '../../storage/db.ts';
import { activeModelIdOf, challengerIdsOf } from '../../storage/models-store.ts';
import { organizationData, type OrganizationData } from '../../storage/organization-data.ts';
import { memberOrganization } from '../access/ownership.ts';
import { type ScorerFor, usableScorers } from '../score-and-record.ts';
import { isoTime } from '../../domain/iso-time.ts';
import { isoWeek, weekStart } from './performance.ts';

const WEEK_MS = 7 * 86_400_000;

/** The report as JSON says it: a figure that is not a number (an interval over resamples with no
 *  fraud at all) is null. */
function finite<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (_, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v))) as T;
}
/** Weeks of shadow scores a report reads. */
export const REPORT_WEEKS = 12;
/** The most imported transactions a backtest scores (the most recent ones): the bootstrap's cost
 *  grows with the rows, and a report is answered while the member waits. */
export const BACKTEST_ROWS = 10_000;
/** Transactions read and scored at a time: the event loop is given back after each batch. */
export const BACKTEST_BATCH_ROWS = 2_000;
/** The thresholds a backtest decides with: the API's default mode (imported rows have none). */
const BACKTEST_MODE: ModeName = 'balanced';
const BACKTEST_NOTE =
  'A backtest over imported history, not live traffic: each imported transaction is scored now by both models from the features the import computed for it after the fact (as of its own time), and judged with the outcomes known now. It can flatter a model: those outcomes were not shaped by either model deciding, and a model trained on this organization’s history has seen most of these transactions while it learned. The shadow comparison on live traffic is the measure before a promotion.';

export interface ChallengerReportDeps {
  db: Db;
  /** The model's label delay: a transaction counts once it is this old. */
  labelDelay: number;
  clock?: () => number;
  /** The built-in model's scorer (undefined when no model is loaded: no backtest). */
  scorer?: Scorer | undefined;
  /** A custom model's scorer, with a note when it cannot be used (Service.scorerForModel). */
  scorerForModel?: ScorerFor;
  /** The most imported transactions a backtest scores (BACKTEST_ROWS). */
  backtestRows?: number;
  /** compareModels off the event loop (Service.compare: a worker thread); here when not given. */
  compare?: Compare | undefined;
}

type Backtest = NonNullable<ChallengerReport['challengers'][number]['backtest']>;
export type Compare = (rows: readonly ShadowedRow[], options?: Partial<ComparisonOptions>) => Promise<Comparison>;

/** Resamples of a week's comparison (the overall one has the default 500). */
const WEEK_RESAMPLES = 200;

/** `deps.compare`, or compareModels in this thread (no worker pool: tools and tests). */
const comparer = (deps: ChallengerReportDeps): Compare => deps.compare ?? (async (rows, options) => compareModels(rows, options));

export async function challengerReport(deps: ChallengerReportDeps, organizationId: string, userId: string): Promise<ChallengerReport> {
  const org = await memberOrganization(deps.db, organizationId, userId);
  const now = (deps.clock ?? Date.now)();
  const until = now - deps.labelDelay;
  const from = weekStart(until) - (REPORT_WEEKS - 1) * WEEK_MS;
  const data = organizationData(deps.db, org.id);
  const rows = await data.performance.shadowed(from, until, now);
  const byChallenger = new Map<string, { rows: ShadowedRow[]; active: Set<string> }>();
  for (const r of rows) {
    for (const c of r.challengers) {
      let entry = byChallenger.get(c.model_id);
      if (!entry) byChallenger.set(c.model_id, (entry = { rows: [], active: new Set() }));
      entry.active.add(r.model_id);
      entry.rows.push({
        time: r.time_ms,
        amount: r.amount,
        card: r.customer_id,
        label: r.label,
        active: { score: r.risk_score, decision: r.model_decision },
        challenger: { score: c.risk_score, decision: c.decision },
      });
    }
  }
  const backtests = await backtestChallengers(deps, data, until, now);
  // A challenger of now with a backtest is listed before it has scored live traffic: a model just
  // trained from imported history is compared at once.
  for (const id of backtests.keys()) if (!byChallenger.has(id)) byChallenger.set(id, { rows: [], active: new Set() });
  const compare = comparer(deps);
  const challengers = await Promise.all(
    [...byChallenger]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(async ([modelId, { rows: mine, active }]) => {
        const weeks = new Map<string, ShadowedRow[]>();
        for (const r of mine) {
          const week = isoWeek(weekStart(r.time));
          let list = weeks.get(week);
          if (!list) weeks.set(week, (list = []));
          list.push(r);
        }
        const [overall, ...weekly] = await Promise.all([
          mine.length ? compare(mine) : null,
          ...[...weeks.values()].map((list) => compare(list, { resamples: WEEK_RESAMPLES })),
        ]);
        return {
          model_id: modelId,
          active_model_ids: [...active].sort(),
          overall,
          weeks: [...weeks.keys()].map((week, i) => ({ week, ...weekly[i]! })),
          backtest: backtests.get(modelId) ?? null,
        };
      }),
  );
  return finite({
    organization_id: org.id,
    generated_at: isoTime(now),
    evaluated_from: isoTime(from),
    evaluated_until: isoTime(until),
    label_delay_days: deps.labelDelay / 86_400_000,
    challengers,
  });
}

/** An imported transaction as the backtest compares it: the active model's score and decision. */
type Scored = Omit<ShadowedRow, 'challenger'>;

/**
 * Each of the organization's challengers now (one that can be loaded and reads the stored
 * features' layout) against the model that answers its traffic, over the most recent imported
 * transactions older than `until` that have features, with the outcomes known at `now`: none when
 * there is no such transaction. Read and scored a batch at a time, newest first, the event loop
 * given back after each batch; each comparison made by `deps.compare`.
 */
async function backtestChallengers(deps: ChallengerReportDeps, data: OrganizationData, until: number, now: number): Promise<Map<string, Backtest>> {
  const out = new Map<string, Backtest>();
  const builtIn = deps.scorer;
  const forModel = deps.scorerForModel;
  if (!builtIn || !forModel) return out;
  const ids = await challengerIdsOf(deps.db, data.organizationId);
  if (ids.length === 0) return out;
  // The model live traffic is answered by: the active custom model, or the built-in one (also when
  // the active one cannot be loaded, as scoring falls back).
  const activeId = await activeModelIdOf(deps.db, data.organizationId);
  const active = (activeId ? (await forModel(activeId))?.scorer : undefined) ?? builtIn;
  const challengers = (await usableScorers(forModel, ids)).filter((c) => sameFeatures(c.scorer.bundle, active.bundle));
  if (challengers.length === 0) return out;
  const limit = deps.backtestRows ?? BACKTEST_ROWS;
  const width = storedWidth(active.bundle.channels);
  const scored: Scored[] = [];
  const theirs = challengers.map(() => ({ score: [] as number[], decision: [] as string[] }));
  let limited = false;
  let before: [number, number] | undefined;
  for (;;) {
    // One row more than the limit, to know whether older ones were left out.
    const asked = Math.min(BACKTEST_BATCH_ROWS, limit + 1 - scored.length);
    const page = await data.importedFeatures.backtest({ to: until, knownBy: now, width: width * 4, rows: asked, before });
    const batch = page.slice(0, limit - scored.length);
    limited = batch.length < page.length;
    if (batch.length > 0) {
      const features = new Float32Array(batch.length * width);
      const bytes = new Uint8Array(features.buffer);
      // Byte by byte: a row's bytes need not sit at a float's alignment in the buffer they came in.
      batch.forEach((r, i) => {
        bytes.set(r.features, i * width * 4);
      });
      const mine = active.scoreStored(features, batch.length, BACKTEST_MODE);
      batch.forEach((r, i) => {
        scored.push({ time: r.time_ms, amount: r.amount, card: r.customer_id, label: r.label, active: { score: mine.risk[i]!, decision: mine.decisions[i]! } });
      });
      challengers.forEach((c, k) => {
        const s = c.scorer.scoreStored(features, batch.length, BACKTEST_MODE);
        theirs[k]!.score.push(...s.risk);
        theirs[k]!.decision.push(...s.decisions);
      });
    }
    if (limited || page.length < asked) break;
    const last = page[page.length - 1]!;
    before = [last.time_ms, last.seq];
    await nextTurn();
  }
  if (scored.length === 0) return out;
  const compare = comparer(deps);
  for (const [k, c] of challengers.entries()) {
    await nextTurn();
    const rows: ShadowedRow[] = scored.map((r, i) => ({ ...r, challenger: { score: theirs[k]!.score[i]!, decision: theirs[k]!.decision[i]! } }));
    out.set(c.id, {
      kind: 'backtest',
      note: BACKTEST_NOTE,
      active_model_id: active.modelId,
      mode: BACKTEST_MODE,
      // Read newest first.
      from: isoTime(scored[scored.length - 1]!.time),
      to: isoTime(scored[0]!.time),
      transactions: scored.length,
      row_limit: limit,
      limited,
      comparison: await compare(rows),
    });
  }
  return out;
}
