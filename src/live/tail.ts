// This process's tail of the live feed (src/storage/live-feed.ts): it reads every change recorded
// after the position it has applied, by any process, in feed order, and hands them to the
// organizations' in-memory histories (src/live/tenants.ts). It is the only way a change reaches
// memory in commit durability, this process's own scored transactions and outcomes included, so
// every process applies the same changes in the same order.
//
// It reads when woken: by a NOTIFY from another process's commit (at once), when the notification
// connection is re-established, by a catch-up poll every second that covers a notification that was
// lost, and by this process after a commit of its own (`catchUp`, awaited before the response is
// sent). One read runs at a time; a wake during a read starts another right after it, so a caller
// of `catchUp` always gets a read that began after it asked. This process's own group of scored
// transactions is handed over directly (`committed`) when nothing else was committed since the
// applied position: the feed lock means no other writer drew a position inside the group's range.

import type { Db } from '../storage/db.ts';
import { FEED_CHANNEL, FEED_SENDER, feedHead, readFeed, type FeedChange } from '../storage/live-feed.ts';

/** Changes per read. */
const PAGE = 256;
/** The catch-up poll's period. */
export const POLL_MS = 1_000;

export class LiveTail {
  private position = 0;
  private reading: Promise<void> | undefined;
  private next: Promise<void> | undefined;
  private poll: NodeJS.Timeout | undefined;
  private unlisten: (() => Promise<void>) | undefined;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly apply: (changes: FeedChange[]) => void,
    private readonly onError: (e: unknown) => void = () => {},
    private readonly pollMs = POLL_MS,
  ) {}

  /** Starts from the feed's current head: histories are loaded from the database, so what came
   *  before is in them already. */
  async start(): Promise<void> {
    this.position = await feedHead(this.db);
    this.unlisten = await this.db.listen(
      FEED_CHANNEL,
      (sender) => {
        if (sender !== FEED_SENDER) this.wake();
      },
      () => this.wake(),
    );
    this.poll = setInterval(() => this.wake(), this.pollMs);
    this.poll.unref();
  }

  /** The feed position up to which every change has been applied. */
  get applied(): number {
    return this.position;
  }

  /** Reads and applies everything visible now; resolves once a read that began after this call
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

  /** Changes this process has just committed, in feed order (all it stored while holding the feed
   *  lock): applied at once when they follow the applied position and no read is under way, else
   *  read with everything else. */
  committed(changes: FeedChange[]): Promise<void> {
    if (changes.length === 0) return Promise.resolve();
    if (this.reading || changes[0]!.seq !== this.position + 1) return this.catchUp();
    this.apply(changes);
    this.position = changes[changes.length - 1]!.seq;
    return Promise.resolve();
  }

  private wake(): void {
    if (this.stopped) return;
    this.catchUp().catch((e) => this.onError(e));
  }

  private async read(): Promise<void> {
    for (;;) {
      const { changes, through } = await readFeed(this.db, this.position, PAGE);
      if (changes.length) this.apply(changes);
      this.position = Math.max(this.position, through);
      if (changes.length < PAGE) return;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.poll) clearInterval(this.poll);
    await this.unlisten?.();
    await this.reading?.catch(() => {});
  }
}
