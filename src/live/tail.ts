// This process's tail of the live feed (src/storage/live-feed.ts): it reads every change recorded
// after the cursor it has applied, by any process, and hands them to the organizations' in-memory
// histories (src/live/tenants.ts). Each read sees every transaction committed before it began,
// whatever else is still running on the server (a transaction held open elsewhere delays only its
// own changes), so a committed change reaches this process with the next read.
// It reads when woken: by another process's NOTIFY, when the notification connection is
// re-established, by a catch-up poll every second (a lost notification, a failed read), and by a
// caller waiting for a change of its own (`reach`). One read runs at a time; a wake during a read
// starts another right after it, so a caller of `catchUp` always gets a read that began after it
// asked. This process's own scored transactions reach the histories directly after their commit
// (src/live/decision-log.ts), and their database transactions are named here (`appliedHere`): the
// reads leave their rows out, so the poll does not read back every score this process answered
// (a burst of rows every second on a busy server, each one then skipped).

import type { Db } from '../storage/db.ts';
import { FEED_CHANNEL, FEED_SENDER, feedStart, notification, readFeed, type FeedChange, type FeedCursor } from '../storage/live-feed.ts';
import { unbounded } from '../storage/deadline.ts';

/** Changes per read. */
const PAGE = 256;
/** The catch-up poll's period. */
export const POLL_MS = 1_000;
/** The longest `reach` waits for a change to be applied (while the database is unreachable, say);
 *  the change is stored, and applied by a later read. */
const REACH_MS = 5_000;

/** How current the tail is. */
export interface TailStatus {
  /** When (epoch ms) the last read that succeeded began: everything committed before then has been
   *  applied. Undefined before the first. */
  readAt: number | undefined;
  /** Transactions the feed waits on: running when the reads passed them (their changes are applied
   *  when they commit). */
  pending: number;
  /** The message of the last read's failure, while reads fail. */
  failing: string | undefined;
}

export class LiveTail {
  private readonly db: Db;
  private readonly apply: (changes: FeedChange[]) => void;
  private readonly onError: (e: unknown) => void;
  private readonly pollMs: number;

  private cursor: FeedCursor = { position: { xid: 0, seq: 0 }, pending: new Map() };
  /** Database transactions whose recorded transactions were applied without the tail, until the
   *  cursor is past them. */
  private readonly appliedXids = new Set<number>();
  private reading: Promise<void> | undefined;
  private next: Promise<void> | undefined;
  private poll: NodeJS.Timeout | undefined;
  private unlisten: (() => Promise<void>) | undefined;
  private stopped = false;
  private readAt: number | undefined;
  private failing: string | undefined;
  /** A failure of the reads has been reported: the next is not, until a read succeeds (a poll
   *  every second during an outage would otherwise fill the log). */
  private reported = false;

  constructor(db: Db, apply: (changes: FeedChange[]) => void, onError: (e: unknown) => void = () => {}, pollMs = POLL_MS) {
    this.db = db;
    this.apply = apply;
    this.onError = onError;
    this.pollMs = pollMs;
  }

  /** Starts at the feed's watermark (histories are loaded from the database later, so what came
   *  before is in them) and reads once. */
  async start(): Promise<void> {
    this.cursor = { position: await feedStart(this.db), pending: new Map() };
    this.unlisten = await this.db.listen(
      FEED_CHANNEL,
      (payload) => {
        if (notification(payload).sender !== FEED_SENDER) this.wake();
      },
      () => this.wake(),
    );
    this.poll = setInterval(() => this.wake(), this.pollMs);
    this.poll.unref();
    await this.catchUp();
  }

  /** Reads and applies everything readable now; resolves once a read that began after this call
   *  has finished. */
  catchUp(): Promise<void> {
    if (!this.reading) {
      this.reading = this.read().finally(() => {
        this.reading = undefined;
      });
      return this.reading;
    }
    this.next ??= this.reading
      .catch(() => {})
      .then(() => {
        this.next = undefined;
        return this.catchUp();
      });
    return this.next;
  }

  /** Resolves once the changes of database transaction `xid` (committed before the call) have been
   *  applied: the next read sees them. Retries a read that fails for up to REACH_MS, then throws its
   *  error (the change is stored, and a later read applies it). */
  async reach(xid: number): Promise<void> {
    const deadline = Date.now() + REACH_MS;
    for (let wait = 10; ; wait = Math.min(wait * 2, 200)) {
      try {
        await this.catchUp();
      } catch (e) {
        if (Date.now() > deadline) throw e;
      }
      if (this.applied(xid) || this.stopped || Date.now() > deadline) return;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  /** Whether the changes of transaction `xid` are applied (or it has ended without any): the cursor
   *  is past it, so no read reaches its rows again. */
  private applied(xid: number): boolean {
    const { position, pending } = this.cursor;
    return xid < position.xid && !pending.has(xid);
  }

  /** The recorded transactions of these database transactions (committed) have been applied
   *  already: the reads leave them out. */
  appliedHere(xids: Iterable<number>): void {
    for (const xid of xids) if (!this.applied(xid)) this.appliedXids.add(xid);
  }

  status(): TailStatus {
    return { readAt: this.readAt, pending: this.cursor.pending.size, failing: this.failing };
  }

  private wake(): void {
    if (this.stopped) return;
    // Whatever woke it (a commit a request waits for), the feed's reads are no request's.
    unbounded(() => this.catchUp()).catch((e) => {
      if (this.reported) return;
      this.reported = true;
      this.onError(e);
    });
  }

  private async read(): Promise<void> {
    const began = Date.now();
    try {
      for (;;) {
        const { changes, next, more } = await readFeed(this.db, this.cursor, PAGE, this.appliedXids);
        if (changes.length) this.apply(changes);
        this.cursor = next;
        for (const xid of this.appliedXids) if (this.applied(xid)) this.appliedXids.delete(xid);
        if (!more) break;
      }
    } catch (e) {
      this.failing = (e as Error).message;
      throw e;
    }
    this.failing = undefined;
    this.reported = false;
    this.readAt = began;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.poll) clearInterval(this.poll);
    await this.unlisten?.();
    await this.reading?.catch(() => {});
  }
}
