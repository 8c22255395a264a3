// This process's tail of the live feed (src/storage/live-feed.ts): it reads every change recorded
// after the position it has applied, by any process, in feed order, and hands them to the
// organizations' in-memory histories (src/live/tenants.ts).
//
// It reads when woken: by a NOTIFY from another process's commit (at once), when the notification
// connection is re-established, by a catch-up poll every second that covers a notification that was
// lost, and by a caller that waits for a change of its own (`reach`). A notification names the
// transaction that committed; while the feed's watermark is still below it (a transaction that
// began writing earlier is still running), the tail reads again after 1, 2, 4… up to 50 ms rather
// than waiting for the poll. One read runs at a time; a wake during a read starts another right
// after it, so a caller of `catchUp` always gets a read that began after it asked.
//
// This process's own scored transactions are handed to the histories directly after their commit
// (src/live/decision-log.ts); when the tail reads them again, the histories know their ids and skip
// them.

import type { Db } from '../storage/db.ts';
import { FEED_CHANNEL, FEED_SENDER, feedStart, notification, readFeed, type FeedChange, type FeedPosition } from '../storage/live-feed.ts';

/** Changes per read. */
const PAGE = 256;
/** The catch-up poll's period. */
export const POLL_MS = 1_000;
/** The longest `reach` waits for the feed to pass a change (a long transaction elsewhere holds the
 *  feed's watermark back); the change is stored, and applied by a later read. */
const REACH_MS = 5_000;

export class LiveTail {
  private position: FeedPosition = { xid: 0, seq: 0 };
  private reading: Promise<void> | undefined;
  private next: Promise<void> | undefined;
  private poll: NodeJS.Timeout | undefined;
  private unlisten: (() => Promise<void>) | undefined;
  private stopped = false;
  /** The newest committed database transaction the tail has been told of. */
  private target = 0;
  private retry: NodeJS.Timeout | undefined;
  private retryMs = 1;

  constructor(
    private readonly db: Db,
    private readonly apply: (changes: FeedChange[]) => void,
    private readonly onError: (e: unknown) => void = () => {},
    private readonly pollMs = POLL_MS,
  ) {}

  /** Starts at the feed's watermark: histories are loaded from the database later, so what came
   *  before is in them. */
  async start(): Promise<void> {
    this.position = await feedStart(this.db);
    this.unlisten = await this.db.listen(
      FEED_CHANNEL,
      (payload) => {
        const { sender, xid } = notification(payload);
        if (sender === FEED_SENDER) return;
        if (xid > this.target) this.target = xid;
        this.wake();
      },
      () => this.wake(),
    );
    this.poll = setInterval(() => this.wake(), this.pollMs);
    this.poll.unref();
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

  /** Resolves once the changes of database transaction `xid` (committed) have been applied: reads
   *  until the feed's watermark has passed it, which waits for transactions that began writing
   *  before it to end (a few milliseconds; at most REACH_MS). */
  async reach(xid: number): Promise<void> {
    if (xid > this.target) this.target = xid;
    const deadline = Date.now() + REACH_MS;
    for (let wait = 1; ; wait = Math.min(wait * 2, 50)) {
      await this.catchUp();
      if (this.position.xid > xid || this.stopped || Date.now() > deadline) return;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  private wake(): void {
    if (this.stopped) return;
    this.catchUp().catch((e) => this.onError(e));
  }

  private async read(): Promise<void> {
    for (;;) {
      const { changes, through } = await readFeed(this.db, this.position, PAGE);
      if (changes.length) this.apply(changes);
      this.position = through;
      if (changes.length < PAGE) break;
    }
    if (this.position.xid > this.target || this.stopped) {
      this.retryMs = 1;
    } else {
      this.retry ??= setTimeout(() => {
        this.retry = undefined;
        this.wake();
      }, this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, 50);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.poll) clearInterval(this.poll);
    if (this.retry) clearTimeout(this.retry);
    await this.unlisten?.();
    await this.reading?.catch(() => {});
  }
}
