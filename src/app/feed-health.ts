// How current this process's tail of the live feed is, as /api/health reports it: `behind` while
// the database is unavailable or the feed's reads fail, or when the last read that succeeded began
// longer ago than FEED_BEHIND_MS (three polls: reads have stalled). A transaction held open
// elsewhere on the server does not make the feed behind: it delays only its own changes
// (src/storage/live-feed.ts), and the report counts such transactions.

import type { Health } from '../contract/health.ts';
import type { TailStatus } from '../live/tail.ts';
import { POLL_MS } from '../live/tail.ts';

export { POLL_MS };

/** The feed is behind when its last successful read began longer ago than this. */
export const FEED_BEHIND_MS = 3 * POLL_MS;

/** The feed's health from the tail's status, whether the database answered a ping, and now. */
export function feedHealth(tail: TailStatus, database: boolean, now: number): Health['feed'] {
  const lag = tail.readAt === undefined ? null : Math.max(0, now - tail.readAt);
  const unavailable = !database || tail.failing !== undefined;
  const late = lag === null || lag > FEED_BEHIND_MS;
  return {
    state: unavailable || late ? 'behind' : 'current',
    lag_ms: lag,
    last_read_at: tail.readAt === undefined ? null : new Date(tail.readAt).toISOString(),
    waiting_on_transactions: tail.pending,
    reason: unavailable ? 'database_unavailable' : late ? 'reads_late' : null,
  };
}
