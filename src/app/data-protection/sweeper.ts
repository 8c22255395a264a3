// The background side of data protection, in every process: it runs the erasures waiting (at once
// when this process took the request, else within `everyMs`: any process may run one, and a claim
// left by a stopped process is taken over), and sweeps each organization's expired data once a day
// (the first process to claim the organization's sweep does it). A sweep deletes a batch at a time
// with a pause between batches, so requests, which need the same database, are never held behind it.

import { claimErasure, claimRetentionSweep, type SweepCounts } from '../../storage/data-protection.ts';
import type { Db } from '../../storage/db.ts';
import { organizationData } from '../../storage/organization-data.ts';

export interface SweeperOptions {
  db: Db;
  clock: () => number;
  log: (msg: string) => void;
  /** How often erasures left waiting, and organizations due a sweep, are looked for. */
  everyMs: number;
  /** An organization is swept at most once in this long. */
  sweepEveryMs: number;
  /** Transactions deleted per statement, and the pause after each. */
  batch: number;
  pauseMs: number;
}

export const SWEEPER_DEFAULTS = { everyMs: 10_000, sweepEveryMs: 86_400_000, batch: 1_000, pauseMs: 20 } as const;

/** A claim older than this belongs to a process that stopped: another takes the erasure over. */
const STALE_CLAIM_MS = 5 * 60_000;
const DAY_MS = 86_400_000;

export class DataProtectionSweeper {
  private readonly o: SweeperOptions;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(o: SweeperOptions) {
    this.o = o;
  }

  start(): void {
    this.timer = setInterval(() => void this.run(), this.o.everyMs);
    this.timer.unref();
  }

  /** An erasure was requested here: run it now (or right after the run under way). */
  erasureRequested(): void {
    void this.run();
  }

  /** One pass: every erasure waiting, then every organization due a sweep. Resolves when done. */
  run(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.erasures();
        await this.sweeps();
      } while (this.again && !this.stopped);
    })()
      .catch((e) => this.o.log(`data protection: ${(e as Error).message}`))
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private async erasures(): Promise<void> {
    for (;;) {
      if (this.stopped) return;
      const claimed = await claimErasure(this.o.db, this.o.clock(), STALE_CLAIM_MS);
      if (!claimed) return;
      await organizationData(this.o.db, claimed.organization_id).dataProtection.erase(claimed.id, this.o.clock());
    }
  }

  private async sweeps(): Promise<void> {
    for (;;) {
      if (this.stopped) return;
      const at = this.o.clock();
      const due = await claimRetentionSweep(this.o.db, at, this.o.sweepEveryMs);
      if (!due) return;
      await this.sweep(due.id, due.days, at);
    }
  }

  /** Deletes what the organization recorded before its retention period, batch by batch. */
  private async sweep(organizationId: string, days: number, at: number): Promise<void> {
    const part = organizationData(this.o.db, organizationId).dataProtection;
    const cutoff = at - days * DAY_MS;
    const counts: SweepCounts = { transactions: 0, outcome_changes: 0, case_transactions: 0, webhook_events: 0, ring_windows: 0 };
    await this.inBatches(async () => {
      const d = await part.sweepTransactions(cutoff, this.o.batch);
      counts.transactions += d.transactions;
      counts.outcome_changes += d.outcome_changes;
      counts.case_transactions += d.case_transactions;
      return d.transactions;
    });
    await this.inBatches(async () => {
      const n = await part.sweepWebhookEvents(cutoff, this.o.batch);
      counts.webhook_events += n;
      return n;
    });
    counts.ring_windows = await part.sweepRingWindows(cutoff);
    await part.auditSweep(this.o.clock(), { days, cutoff_ms: cutoff, counts });
  }

  /** Runs `batch` (which deletes up to a batch, and says how many) until one comes back short,
   *  with a pause after each full one. */
  private async inBatches(batch: () => Promise<number>): Promise<void> {
    while ((await batch()) >= this.o.batch && !this.stopped) await new Promise((r) => setTimeout(r, this.o.pauseMs));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
