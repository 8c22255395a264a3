// Fraud rings that keep up with live data: each organization's weekly windows (weeks from Monday
// 00:00 UTC, the same in every process) are analysed as soon as their result can exist, the
// window's end plus the label delay (the labels it counts are known by then).
// Every process ticks (`RingWindows`): it queues a `rings` job for each organization with
// transactions in a due window that has none; the window's row in `ring_windows`, inserted in the
// same database transaction, lets one process win, so each window is analysed once however many
// processes there are. The job (src/jobs/rings-job.ts) finds the rings in a worker thread and
// stores them, and a NOTIFY wakes every process to read the organization's latest windows into its
// tenant (`related_ring` in scores, GET /api/metrics/rings); the tick also reads them again,
// covering a lost notification.

import { DEFAULT_RINGS, type Ring } from '../domain/rings.ts';
import { createJob, newJobId } from '../storage/job-queue.ts';
import type { Db } from '../storage/db.ts';
import { organizationData } from '../storage/organization-data.ts';
import { RINGS_CHANNEL } from '../storage/rings-store.ts';

export const WEEK = 7 * 86_400_000;
/** 1970-01-05 00:00 UTC, a Monday: windows start on Mondays. */
const MONDAY = 4 * 86_400_000;
/** After a stop, the latest this many due windows are still analysed. */
export const CATCH_UP_WINDOWS = 4;
/** After an import, its due windows are analysed, at most this many (two years). */
export const IMPORT_WINDOWS = 104;
/** Windows whose rings a tenant keeps (about a year). */
export const KEPT_WINDOWS = 52;
/** How often a process looks for due windows and reads the stored rings again. */
export const TICK_MS = 30_000;

/** The start of the window holding `t`. */
export function windowStart(t: number): number {
  return Math.floor((t - MONDAY) / WEEK) * WEEK + MONDAY;
}

/** The windows due at `now`, newest first: ended at least a label delay ago; the latest
 *  `count`, or those from the one holding `since` on (at most IMPORT_WINDOWS). */
export function dueWindows(now: number, labelDelay: number, since?: number): number[] {
  // The newest window whose end + labelDelay ≤ now ends at the start of the window holding now − labelDelay.
  const newestEnd = windowStart(now - labelDelay);
  const count = since === undefined ? CATCH_UP_WINDOWS : Math.min(IMPORT_WINDOWS, Math.max(0, (newestEnd - windowStart(since)) / WEEK));
  return Array.from({ length: count }, (_, k) => newestEnd - (k + 1) * WEEK);
}

/** What a `rings` job names. */
export interface RingsJobParams {
  organization_id: string;
  window_start: number;
}

/** Queues the analysis of every due window (the latest few; `after.organization`'s from its
 *  oldest transaction on, after an import) of every organization with transactions in it and no
 *  analysis yet; returns how many this process queued (a window another process queued first is
 *  left to it). */
export async function queueDueWindows(db: Db, now: number, labelDelay: number, after?: { organization: string; since: number }): Promise<number> {
  let queued = 0;
  for (const start of dueWindows(now, labelDelay, after?.since)) {
    const end = start + WEEK;
    const organizations = await db.query<{ id: string }>(
      `SELECT o.id FROM organizations o
       WHERE EXISTS (SELECT 1 FROM transactions t WHERE t.organization_id = o.id AND t.time_ms >= $1 AND t.time_ms < $2)
         AND NOT EXISTS (SELECT 1 FROM ring_windows w WHERE w.organization_id = o.id AND w.window_start = $1)
         ${after ? 'AND o.id = $3' : ''}`,
      after ? [start, end, after.organization] : [start, end],
    );
    for (const { id } of organizations) {
      const won = await db.transaction(async (tx) => {
        const jobId = newJobId();
        const [row] = await tx.query(
          `INSERT INTO ring_windows (organization_id, window_start, window_end, published_at, job_id) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (organization_id, window_start) DO NOTHING RETURNING job_id`,
          [id, start, end, end + labelDelay, jobId],
        );
        if (!row) return false;
        // No owner: the job is the service's, listed to nobody and counted in no quota.
        await createJob(tx, {
          id: jobId,
          kind: 'rings',
          params: { organization_id: id, window_start: start } satisfies RingsJobParams,
          dataset_id: null,
          mode: null,
        });
        return true;
      });
      if (won) queued++;
    }
  }
  return queued;
}

/** The seed of a window's ring detection: the same window gets the same rings, in any process. */
export function windowSeed(start: number): number {
  return DEFAULT_RINGS.seed + Math.round((start - MONDAY) / WEEK);
}

/** The organization's rings of its latest analysed windows, oldest window first. */
export function storedRings(db: Db, organizationId: string): Promise<Ring[]> {
  return organizationData(db, organizationId).rings.stored(KEPT_WINDOWS);
}

export interface RingWindowsOptions {
  db: Db;
  clock: () => number;
  labelDelay: number;
  /** Reads an organization's stored rings into its tenant, if this process has it. */
  refresh: (organizationId: string) => Promise<void>;
  /** Every organization this process has a tenant of. */
  organizations: () => Iterable<string>;
  /** After queueing: the job runner looks for work at once. */
  queued: () => void;
  onError: (e: unknown) => void;
}

/** This process's part: ticks, and reads stored rings into its tenants when told. */
export class RingWindows {
  private readonly o: RingWindowsOptions;

  private timer: NodeJS.Timeout | undefined;
  private unlisten: (() => Promise<void>) | undefined;
  private ticking: Promise<void> | undefined;

  constructor(o: RingWindowsOptions) {
    this.o = o;
  }

  async start(): Promise<void> {
    this.unlisten = await this.o.db.listen(
      RINGS_CHANNEL,
      (organizationId) => void this.o.refresh(organizationId).catch(this.o.onError),
      () => void this.refreshAll(),
    );
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    this.timer.unref();
    void this.tick();
  }

  /** Queues what is due, then reads every tenant's rings again; one tick at a time. */
  tick(): Promise<void> {
    this.ticking ??= (async () => {
      try {
        if ((await queueDueWindows(this.o.db, this.o.clock(), this.o.labelDelay)) > 0) this.o.queued();
        await this.refreshAll();
      } catch (e) {
        this.o.onError(e);
      } finally {
        this.ticking = undefined;
      }
    })();
    return this.ticking;
  }

  /** After an import into the organization: its due windows back to its oldest transaction. */
  async imported(organizationId: string): Promise<void> {
    try {
      const [row] = await this.o.db.query<{ since: number | null }>('SELECT min(time_ms) AS since FROM transactions WHERE organization_id = $1', [
        organizationId,
      ]);
      if (row?.since === null || row?.since === undefined) return;
      if ((await queueDueWindows(this.o.db, this.o.clock(), this.o.labelDelay, { organization: organizationId, since: row.since })) > 0) this.o.queued();
    } catch (e) {
      this.o.onError(e);
    }
  }

  private async refreshAll(): Promise<void> {
    for (const id of [...this.o.organizations()]) await this.o.refresh(id).catch(this.o.onError);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.unlisten?.();
    await this.ticking;
  }
}
