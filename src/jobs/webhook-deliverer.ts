// Delivers webhooks from the outbox (storage/webhook-queue.ts) in this server process. Woken by the
// NOTIFY a committed event queues, by its own timer (a missed notification costs at most one
// poll), and after each endpoint it lets go of, it leases endpoints whose oldest pending delivery is
// due and sends their deliveries in order, one at a time per endpoint and several endpoints at
// once. A failure schedules the delivery again (about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then
// every 12 h, each ±10 %), holding back the endpoint's later deliveries; after three days of
// failures the delivery fails and the endpoint is disabled with the reason. A process that dies
// holding an endpoint loses its lease when it lapses, and the next process sends again whatever
// was not recorded as delivered: at least once, never lost.

import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Db } from '../storage/db.ts';
import { WEBHOOKS_CHANNEL } from '../storage/webhook-outbox.ts';
import {
  disableLeased,
  leaseEndpoints,
  pendingDeliveries,
  recordAttempts,
  releaseLease,
  releaseWorkerLeases,
  renewLease,
  type AttemptOutcome,
  type AttemptResult,
  type LeasedEndpoint,
  type RecordedAttempt,
} from '../storage/webhook-queue.ts';
import type { AddressPolicy } from './webhook-address.ts';
import { eventBody, WebhookSender } from './webhook-send.ts';
import { unbounded } from '../storage/deadline.ts';

/** Seconds after each failed attempt before the next; the last repeats. */
export const RETRY_SCHEDULE_SECONDS: readonly number[] = [5, 300, 1800, 7200, 18_000, 36_000, 43_200];
/** After this long failing since its first attempt, a delivery fails and its endpoint is disabled. */
export const GIVE_UP_AFTER_SECONDS = 3 * 86_400;

export interface DelivererTimings {
  /** Per attempt, connection to the end of the read. */
  timeoutMs: number;
  pollMs: number;
  /** How long an endpoint is this process's without renewal (more than one attempt's timeout): a
   *  process that dies holding one delays its deliveries this long. */
  leaseMs: number;
  /** Endpoints sent to at once by this process. */
  concurrency: number;
  retrySeconds: readonly number[];
  giveUpAfterSeconds: number;
  /** Spread of each retry time, as a share of it (0.1: ±10 %). */
  jitter: number;
  /** How long a notification waits for others before the deliverer looks: events committed
   *  close together go out in one lease of their endpoint, not one lease each. */
  gatherMs: number;
}

export const DEFAULT_TIMINGS: DelivererTimings = {
  timeoutMs: 10_000,
  pollMs: 1_000,
  leaseMs: 15_000,
  concurrency: 8,
  retrySeconds: RETRY_SCHEDULE_SECONDS,
  giveUpAfterSeconds: GIVE_UP_AFTER_SECONDS,
  jitter: 0.1,
  gatherMs: 100,
};

export interface DelivererOptions {
  db: Db;
  policy: AddressPolicy;
  /** The signing secret (`whsec_…`) a sealed one holds. */
  openSecret: (sealed: string) => string;
  log: (msg: string) => void;
  timings?: Partial<DelivererTimings>;
  /** Uniform in [0, 1): the retry jitter's draw. */
  random?: () => number;
}

/** Deliveries read per round trip from one endpoint's order. */
const BATCH = 32;

export class WebhookDeliverer {
  private readonly o: DelivererOptions;

  readonly worker = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly t: DelivererTimings;
  private readonly sender: WebhookSender;
  private readonly active = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private unlisten: (() => Promise<void>) | undefined;
  /** The lease round running, and since when. */
  private leasing: { since: number; done: Promise<void> } | undefined;
  private again = false;
  private stopped = false;
  /** After a lease round failed (the database out of reach), the timer leaves it alone until then. */
  private restUntil = 0;
  private gathering: NodeJS.Timeout | undefined;

  constructor(o: DelivererOptions) {
    this.o = o;
    this.t = { ...DEFAULT_TIMINGS, ...o.timings };
    this.sender = new WebhookSender(o.policy, this.t.timeoutMs, 'fraud-risk-webhooks/1');
  }

  async start(): Promise<void> {
    this.unlisten = await this.o.db.listen(
      WEBHOOKS_CHANNEL,
      () => this.soon(),
      () => this.wake(),
    );
    this.timer = setInterval(() => {
      if (performance.now() >= this.restUntil) this.wake();
    }, this.t.pollMs);
    this.timer.unref();
    this.wake();
  }

  /** Looks for due deliveries after the gathering time (a committed event's notification). */
  private soon(): void {
    this.gathering ??= setTimeout(() => {
      this.gathering = undefined;
      this.wake();
    }, this.t.gatherMs);
  }

  /** Looks for due deliveries now (a lease round runs at most once at a time; a wake during one
   *  runs another after it). A round that has not answered within a lease is no longer waited for:
   *  one statement that never settles must not stop every delivery of this process. */
  wake(): void {
    if (this.stopped) return;
    const now = performance.now();
    if (this.leasing) {
      const waited = now - this.leasing.since;
      if (waited < this.t.leaseMs) {
        this.again = true;
        return;
      }
      this.o.log(`webhooks: looking for deliveries has not answered for ${Math.round(waited / 1000)} s; looking again beside it`);
    }
    // Whatever woke it, deliveries are no request's work: no request's deadline applies.
    const round = { since: now, done: Promise.resolve() };
    round.done = unbounded(() => this.leaseRound())
      .catch((e) => {
        // The database is probably out of reach: asking every second adds nothing while it is
        // (a notification still wakes the deliverer at once).
        this.restUntil = performance.now() + 5 * this.t.pollMs;
        this.o.log(`webhooks: looking for deliveries failed: ${(e as Error).message}`);
      })
      .finally(() => {
        if (this.leasing !== round) return;
        this.leasing = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
    this.leasing = round;
  }

  private async leaseRound(): Promise<void> {
    const free = this.t.concurrency - this.active.size;
    if (free <= 0) return;
    for (const endpoint of await leaseEndpoints(this.o.db, this.worker, this.t.leaseMs, free)) {
      const work = this.work(endpoint)
        .catch((e) => this.o.log(`webhooks: endpoint ${endpoint.id}: ${(e as Error).message}`))
        .finally(() => {
          // A work that outlived its lease finds the endpoint leased again, and that work listed.
          if (this.active.get(endpoint.id) === work) this.active.delete(endpoint.id);
          this.wake();
        });
      this.active.set(endpoint.id, work);
    }
  }

  /** Sends the endpoint's due deliveries in order until none is due, one fails, or the process stops. */
  private async work(endpoint: LeasedEndpoint): Promise<void> {
    let held = true;
    // Renewed before an attempt once a third of it has passed: an attempt may take its whole
    // timeout, and the lease must outlast it.
    let renewed = performance.now();
    try {
      while (!this.stopped) {
        const batch = await pendingDeliveries(this.o.db, endpoint.id, BATCH);
        if (batch.length === 0) return;
        const secrets = await this.secretsOf(endpoint, batch[0]!);
        if (!secrets) return void (held = false);
        // Sent one at a time, in order; recorded together when the batch ends, a failure stops it,
        // or a third of the lease has passed (a crash in between sends those again: at least once).
        const done: RecordedAttempt[] = [];
        let failed = false;
        for (const d of batch) {
          if (this.stopped || !d.due) break;
          if (performance.now() - renewed > this.t.leaseMs / 3) {
            held =
              (await recordAttempts(this.o.db, endpoint.id, this.worker, done.splice(0))) &&
              (await renewLease(this.o.db, endpoint.id, this.worker, this.t.leaseMs));
            if (!held) return;
            renewed = performance.now();
          }
          const result = await this.sender.send(d.url, { id: d.event_id, body: eventBody({ ...d, id: d.event_id }) }, secrets);
          const attempt = d.attempts + 1;
          done.push({ deliveryId: d.id, attempt, result, outcome: this.outcome(result, attempt, d.first_attempt_at ?? result.startedAt) });
          if (result.error !== null) {
            failed = true;
            break;
          }
        }
        held = await recordAttempts(this.o.db, endpoint.id, this.worker, done);
        // A batch shorter than asked for emptied the queue: what was committed since notifies, and
        // the lease round after this endpoint is let go (finally, wake) finds it.
        if (!held || failed || this.stopped || done.length < batch.length || batch.length < BATCH) return;
      }
    } finally {
      if (held) await releaseLease(this.o.db, endpoint.id, this.worker);
    }
  }

  /** The secrets that sign now; undefined (and the endpoint disabled) when they cannot be opened. */
  private async secretsOf(endpoint: LeasedEndpoint, now: { secret_sealed: string; previous_secret_sealed: string | null }): Promise<string[] | undefined> {
    try {
      return [now.secret_sealed, now.previous_secret_sealed].filter((s): s is string => s !== null).map(this.o.openSecret);
    } catch {
      this.o.log(`webhooks: endpoint ${endpoint.id} disabled: its signing secret cannot be opened (the hashing secret changed)`);
      await disableLeased(
        this.o.db,
        endpoint.id,
        this.worker,
        'secret_unreadable',
        "The signing secret cannot be read: the server's SESSION_SECRET changed since it was made. Rotate the secret, update your receiver, then enable the endpoint.",
      );
      return undefined;
    }
  }

  /** What the `attempt`-th attempt's result makes of its delivery. */
  private outcome(r: AttemptResult, attempt: number, firstAttempt: Date): AttemptOutcome {
    if (r.error === null) return { kind: 'succeeded' };
    const base = this.t.retrySeconds[Math.min(attempt - 1, this.t.retrySeconds.length - 1)]!;
    const after = base * (1 + this.t.jitter * (2 * (this.o.random ?? Math.random)() - 1));
    const elapsed = (r.startedAt.getTime() - firstAttempt.getTime()) / 1000;
    if (elapsed + after > this.t.giveUpAfterSeconds) {
      const last = r.statusCode !== null ? `HTTP ${r.statusCode}` : r.error;
      return {
        kind: 'gave_up',
        endpointMessage: `Deliveries to this endpoint failed for ${describeSeconds(this.t.giveUpAfterSeconds)}; the last attempt ended with ${last}. Fix the receiver, then enable the endpoint: its pending deliveries are sent again in order.`,
      };
    }
    return { kind: 'retry', afterSeconds: after };
  }

  /** Stops leasing, lets each endpoint's attempt in flight finish and record, and lets go of every
   *  lease. A lease round is waited for until a lease's time from its start, as `wake` waits for it:
   *  one whose statement never answers does not hold the stop. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.gathering) clearTimeout(this.gathering);
    await this.unlisten?.().catch(() => {});
    const round = this.leasing;
    if (round) {
      let timer: NodeJS.Timeout | undefined;
      const left = Math.max(0, round.since + this.t.leaseMs - performance.now());
      await Promise.race([round.done, new Promise<void>((resolve) => (timer = setTimeout(resolve, left)))]);
      clearTimeout(timer);
    }
    await Promise.all(this.active.values());
    await releaseWorkerLeases(this.o.db, this.worker).catch(() => {});
    this.sender.close();
  }
}

function describeSeconds(s: number): string {
  return s % 86_400 === 0 ? `${s / 86_400} days` : s % 3600 === 0 ? `${s / 3600} hours` : `${s} seconds`;
}
