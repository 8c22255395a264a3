// The weekly drift verdict, watched for the organizations that asked to hear when it turns (an
// endpoint subscribed to `drift.verdict_changed`). Every hour each process looks at the last
// completed ISO week of each such organization; the first to find it without a stored verdict
// measures it with the performance report's own figures (app/decisions/performance.ts, with the
// model the organization scores with) and stores it, announcing the change when it differs from
// the week before's (as stored, or else as measured now). Measuring is the costly part and happens
// once per organization and week.

import type { DriftReport } from '../../contract/drift.ts';
import { activeModelIdOf } from '../../storage/models-store.ts';
import { organizationData } from '../../storage/organization-data.ts';
import { organizationsWatchingDrift, recordVerdict, storedVerdict, type StoredVerdict } from '../../storage/drift-verdicts.ts';
import { isoWeek, organizationPerformance, weekStart, type PerformanceDeps } from '../decisions/performance.ts';

const HOUR_MS = 3_600_000;
const WEEK_MS = 7 * 86_400_000;

export interface DriftWatchOptions {
  deps: PerformanceDeps;
  clock: () => number;
  log: (msg: string) => void;
  everyMs?: number;
}

function verdictOf(week: string, drift: DriftReport | null): StoredVerdict {
  return { week, verdict: drift?.verdict ?? null, reasons: drift?.reasons ?? [], basis: drift?.basis ?? null };
}

export class DriftWatch {
  private readonly o: DriftWatchOptions;

  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;

  constructor(o: DriftWatchOptions) {
    this.o = o;
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.o.everyMs ?? HOUR_MS);
    this.timer.unref();
  }

  /** One look at every watching organization (one look at a time); resolves when it is done. */
  tick(): Promise<void> {
    this.ticking ??= this.look()
      .catch((e) => this.o.log(`drift watch: ${(e as Error).message}`))
      .finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  private async look(): Promise<void> {
    const { db } = this.o.deps;
    const now = this.o.clock();
    const lastWeek = isoWeek(weekStart(now) - WEEK_MS);
    for (const organizationId of await organizationsWatchingDrift(db)) {
      if (await storedVerdict(db, organizationId, lastWeek)) continue;
      const measured = await this.measure(organizationId, now);
      if (!measured) continue;
      const [before, last] = measured;
      await recordVerdict(db, organizationId, last, (await storedVerdict(db, organizationId, before.week)) ?? before);
    }
  }

  /** The two completed weeks before `now`'s, older first, as the performance report measures them. */
  private async measure(organizationId: string, now: number): Promise<[StoredVerdict, StoredVerdict] | undefined> {
    const { deps } = this.o;
    const active = await activeModelIdOf(deps.db, organizationId);
    const scorer = (active ? (await deps.scorerForModel(active))?.scorer : undefined) ?? deps.scorer;
    if (!scorer) return undefined;
    await deps.decisionLog.flush();
    const weeks = await organizationPerformance(organizationData(deps.db, organizationId).performance, scorer.bundle, 3, now);
    return [verdictOf(weeks[0]!.week, weeks[0]!.drift), verdictOf(weeks[1]!.week, weeks[1]!.drift)];
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.ticking;
  }
}
