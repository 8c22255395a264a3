// The background side of data protection, in every process: it runs the erasures waiting (at once
// when this process took the request, else within `everyMs`: any process may run one, and a claim
// left by a stopped process is taken over), and sweeps each organization's expired data once a day
// (the first process to claim the organization's sweep does it). A sweep deletes a batch at a time
// with a pause between batches, so requests, which need the same database, are never held behind it:
// on PostgreSQL the pause keeps what the database writes to its log meanwhile (the sweep's deletes,
// and the vacuum and checkpoints they cause) within a budget, since every commit of a request waits
// for the log before it (a sweep of 10 M rows at full speed wrote 10–20 MB a second and tripled the
// requests' p99).

import { claimErasure, claimRetentionSweep, type SweepCounts } from '../../storage/data-protection.ts';
import { logPosition, type Db } from '../../storage/db.ts';
import { organizationData } from '../../storage/organization-data.ts';

export interface SweeperOptions {
  db: Db;
  clock: () => number;
  log: (msg: string) => void;
  /** How often erasures left waiting, and organizations due a sweep, are looked for. */
  everyMs: number;
  /** An organization is swept at most once in this long. */
  sweepEveryMs: number;
  /** Transactions deleted per statement, and the least pause after each. */
  batch: number;
  pauseMs: number;
  /** On PostgreSQL, the most the database's log may grow a second while a sweep runs (the sweep's
   *  writes and everyone else's): after each batch it waits until that pace is kept. */
  logBytesPerSecond: number;
  /** Where the database's log stands (storage/db.ts logPosition; tests count their own). */
  logPosition?: (db: Db) => Promise<number | undefined>;
}

export const SWEEPER_DEFAULTS = { everyMs: 10_000, sweepEveryMs: 86_400_000, batch: 1_000, pauseMs: 20, logBytesPerSecond: 4 * 1024 * 1024 } as const;

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
   *  with a pause after each full one: at least `pauseMs`, and on PostgreSQL as long as the log's
   *  growth since the batch began takes at `logBytesPerSecond`. */
  private async inBatches(batch: () => Promise<number>): Promise<void> {
    for (;;) {
      const began = performance.now();
      const position = this.o.logPosition ?? logPosition;
      const from = await position(this.o.db);
      if ((await batch()) < this.o.batch || this.stopped) return;
      const to = await position(this.o.db);
      const paced = from === undefined || to === undefined ? 0 : ((to - from) / this.o.logBytesPerSecond) * 1000 - (performance.now() - began);
      await this.rest(Math.max(this.o.pauseMs, paced));
      if (this.stopped) return;
    }
  }

  /** Waits `ms`, or until the sweeper stops. */
  private rest(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.resting = done;
    }).finally(() => (this.resting = undefined));
  }

  private resting: (() => void) | undefined;

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.resting?.();
    await this.running;
  }
}
