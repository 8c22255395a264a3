// The decision log's writer: every transaction an organization scores is stored with the decision
// it was answered and the exact response body. Writes are grouped: what is queued while a write is
// in flight goes to the database as one statement when it ends (one round trip and one commit for
// every organization's rows), so the cost of a statement is shared by all the requests of those
// milliseconds. A group that has waited OVERLAP_MS for a slow write is written beside it, up to
// MAX_WRITES at once: the feed needs no lock between writers (src/storage/live-feed.ts).
// Durability (DURABILITY): with `commit` (the default) `commit()` resolves once the row is
// committed and handed to this process's histories, so a response acknowledges only what is
// durable; with `write_behind` `push()` returns at once and a crash loses what was not written yet.
// Until a row is stored its response body is kept here, so an idempotent replay is answered at
// once; anything that reads the log from the database flushes first, so a caller always reads what
// it was answered.

import type { Db } from '../storage/db.ts';
import type { FeedPosition, FeedTransaction } from '../storage/live-feed.ts';
import type { NewTransaction } from '../storage/live-rows.ts';
import { unbounded, withDeadline } from '../storage/deadline.ts';
import { recordGroup } from '../storage/recorded-group.ts';

export type Durability = 'commit' | 'write_behind';

const WRITE_BEHIND_MS = 25;
/** Groups written at once on PostgreSQL (each holds one of the pool's connections while it
 *  commits). The embedded database runs one statement at a time on this thread: one write. */
const MAX_WRITES = { postgres: 3, pglite: 1 } as const;
/** How long a group waits for the write in flight before it is written beside it. */
const OVERLAP_MS = 2;
/** How long a write-behind batch that failed waits before it is tried again. */
const RETRY_MS = 1000;

interface Pending {
  organizationId: string;
  row: NewTransaction;
  /** Commit durability: settles the caller's promise once the row is stored (true) or was taken. */
  settle?: { resolve: (stored: boolean) => void; reject: (e: unknown) => void };
}

export class DecisionLog {
  private readonly db: Db;
  readonly durability: Durability;
  private readonly afterCommit: (stored: FeedTransaction[]) => void;
  private readonly onError: (e: unknown) => void;
  private readonly wantsEvent: (organizationId: string, type: string) => boolean;
  private readonly writeDeadlineSeconds: number;

  private pending: Pending[] = [];
  private readonly bodies = new Map<string, string>();
  private readonly committing = new Map<string, Promise<boolean>>();
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private overlap: NodeJS.Timeout | undefined;
  private readonly writes = new Set<Promise<void>>();
  private readonly maxWrites: number;

  constructor(
    db: Db,
    durability: Durability,
    /** Runs after each commit with the rows stored, in feed order, before commit() callers resume:
     *  the histories take them. */
    afterCommit: (stored: FeedTransaction[]) => void,
    onError: (e: unknown) => void,
    /** Whether an organization may have an endpoint subscribed to a decision event type
     *  (decision-subscriptions.ts). */
    wantsEvent: (organizationId: string, type: string) => boolean,
    /** Each group's write has this deadline of its own (the scoring deadline), never the deadline
     *  of the request that happened to start it (storage/deadline.ts). */
    writeDeadlineSeconds: number,
  ) {
    this.db = db;
    this.durability = durability;
    this.afterCommit = afterCommit;
    this.onError = onError;
    this.wantsEvent = wantsEvent;
    this.writeDeadlineSeconds = writeDeadlineSeconds;
    this.maxWrites = MAX_WRITES[db.kind];
  }

  /** Write-behind: queues a scored transaction to be stored within a few milliseconds. */
  push(organizationId: string, row: NewTransaction): void {
    this.enqueue({ organizationId, row });
    this.timer ??= setTimeout(() => void unbounded(() => this.flush()), WRITE_BEHIND_MS);
  }

  /** Commit: stores a scored transaction with the next group; resolves true once it is committed
   *  and handed to this process's histories, false when the organization already had the id. Rejects
   *  (a StorageError) when the database could not store it: nothing was recorded. */
  commit(organizationId: string, row: NewTransaction): Promise<boolean> {
    const done = new Promise<boolean>((resolve, reject) => this.enqueue({ organizationId, row, settle: { resolve, reject } }));
    const k = key(organizationId, row.transaction_id);
    this.committing.set(k, done);
    const forget = () => {
      if (this.committing.get(k) === done) this.committing.delete(k);
    };
    done.then(forget, forget);
    // Everything queued in this turn of the event loop goes in one, and more while a write is in flight.
    // The group's write is no single request's: it runs outside every request's deadline and has
    // one of its own (write()).
    this.immediate ??= setImmediate(() =>
      unbounded(() => {
        this.immediate = undefined;
        this.next();
      }),
    );
    return done;
  }

  /** Starts the next group's write: at once when no write is in flight, else when the one in
   *  flight ends or after OVERLAP_MS, whichever comes first. */
  private next(waited = false): void {
    if (this.pending.length === 0 || this.writes.size >= this.maxWrites) return;
    if (this.writes.size > 0 && !waited) {
      this.overlap ??= setTimeout(() => {
        this.overlap = undefined;
        this.next(true);
      }, OVERLAP_MS);
      return;
    }
    this.start();
  }

  private start(): void {
    if (this.overlap) clearTimeout(this.overlap);
    this.overlap = undefined;
    const batch = this.pending;
    this.pending = [];
    const write: Promise<void> = this.write(batch).finally(() => {
      this.writes.delete(write);
      // Write-behind rows wait for their timer (and a failed write for its retry).
      if (this.durability === 'commit') this.next(true);
    });
    this.writes.add(write);
  }

  /** A commit of this id in flight in this process, if any. */
  inFlight(organizationId: string, transactionId: string): Promise<boolean> | undefined {
    return this.committing.get(key(organizationId, transactionId));
  }

  /** The response body of a scored transaction not stored yet. */
  pendingResponse(organizationId: string, transactionId: string): string | undefined {
    return this.bodies.get(key(organizationId, transactionId));
  }

  private enqueue(p: Pending): void {
    this.pending.push(p);
    if (p.row.response) this.bodies.set(key(p.organizationId, p.row.transaction_id), p.row.response);
  }

  /** Stores everything pending; resolves when it and every write in flight are stored (or,
   *  write-behind, kept for the next try). */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.writes.size >= this.maxWrites) await Promise.race(this.writes);
    if (this.pending.length > 0) this.start();
    await Promise.all(this.writes);
  }

  private async write(batch: Pending[]): Promise<void> {
    let stored: Map<string, Map<string, FeedPosition>>;
    try {
      stored = await withDeadline(this.writeDeadlineSeconds, () => recordGroup(this.db, batch, this.wantsEvent));
    } catch (e) {
      this.onError(e);
      const retry = batch.filter((p) => !p.settle);
      for (const p of batch) {
        if (!p.settle) continue;
        this.bodies.delete(key(p.organizationId, p.row.transaction_id));
        p.settle.reject(e);
      }
      if (retry.length) {
        // Kept for the next flush rather than lost.
        this.pending.unshift(...retry);
        this.timer ??= setTimeout(() => void unbounded(() => this.flush()), RETRY_MS);
      }
      return;
    }
    if (batch.some((p) => p.settle)) {
      const feed: FeedTransaction[] = [];
      for (const p of batch) {
        const at = stored.get(p.organizationId)!.get(p.row.transaction_id);
        if (at !== undefined) feed.push(feedTransaction(p.organizationId, p.row, at));
      }
      try {
        this.afterCommit(feed.sort((a, b) => a.xid - b.xid || a.seq - b.seq));
      } catch (e) {
        // Stored: the tail will apply it with its next read.
        this.onError(e);
      }
    }
    for (const p of batch) {
      this.bodies.delete(key(p.organizationId, p.row.transaction_id));
      p.settle?.resolve(stored.get(p.organizationId)!.has(p.row.transaction_id));
    }
  }
}

function feedTransaction(organizationId: string, r: NewTransaction, at: FeedPosition): FeedTransaction {
  return {
    kind: 'transaction',
    xid: at.xid,
    seq: at.seq,
    organization_id: organizationId,
    transaction_id: r.transaction_id,
    time: r.time,
    amount: r.amount,
    customer_id: r.customer_id,
    merchant_id: r.merchant_id,
    location: r.location,
    payment_type: r.payment_type,
    source: r.source,
    label: r.label ?? null,
    label_known_ms: r.label_known_ms ?? null,
    keys: r.field_keys ?? null,
  };
}

function key(organizationId: string, transactionId: string): string {
  return `${organizationId}\0${transactionId}`;
}
