// How an organization's challengers compare with the model that answered, on its own outcomes
// (GET /api/organizations/{id}/challengers/report, members): per challenger, overall and per ISO
// week, over the scored transactions it scored in shadow that are older than the model's label
// delay (their frauds could be reported by now), each figure with its interval and a verdict
// (model/challenger-comparison.ts). Read through the organization's own data only.

import type { ChallengerReport } from '../../contract/models.ts';
import { compareModels, type ShadowedRow } from '../../model/challenger-comparison.ts';
import type { Db } from '../../storage/db.ts';
import { organizationData } from '../../storage/organization-data.ts';
import { memberOrganization } from '../access/ownership.ts';
import { isoWeek, weekStart } from './performance.ts';

const WEEK_MS = 7 * 86_400_000;

/** The report as JSON says it: a figure that is not a number (an interval over resamples with no
 *  fraud at all) is null. */
function finite<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (_, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v))) as T;
}
/** Weeks of shadow scores a report reads. */
export const REPORT_WEEKS = 12;

export interface ChallengerReportDeps {
  db: Db;
  /** The model's label delay: a transaction counts once it is this old. */
  labelDelay: number;
  clock?: () => number;
}

export async function challengerReport(deps: ChallengerReportDeps, organizationId: string, userId: string): Promise<ChallengerReport> {
  const org = await memberOrganization(deps.db, organizationId, userId);
  const now = (deps.clock ?? Date.now)();
  const until = now - deps.labelDelay;
  const from = weekStart(until) - (REPORT_WEEKS - 1) * WEEK_MS;
  const rows = await organizationData(deps.db, org.id).performance.shadowed(from, until, now);
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
  const iso = (ms: number) => new Date(ms).toISOString();
  return finite({
    organization_id: org.id,
    generated_at: iso(now),
    evaluated_from: iso(from),
    evaluated_until: iso(until),
    label_delay_days: deps.labelDelay / 86_400_000,
    challengers: [...byChallenger]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([modelId, { rows: mine, active }]) => {
        const weeks = new Map<string, ShadowedRow[]>();
        for (const r of mine) {
          const week = isoWeek(weekStart(r.time));
          let list = weeks.get(week);
          if (!list) weeks.set(week, (list = []));
          list.push(r);
        }
        return {
          model_id: modelId,
          active_model_ids: [...active].sort(),
          overall: mine.length ? compareModels(mine) : null,
          weeks: [...weeks].map(([week, list]) => ({ week, ...compareModels(list, { resamples: 200 }) })),
        };
      }),
  });
}
