// How long a request may wait for the database (storage/deadline.ts), by what it does: a score
// (SCORE_DEADLINE_SECONDS, its commit included), an upload or an export (TRANSFER_DEADLINE_SECONDS
// for each database operation, since their bodies may take minutes to arrive), anything else
// (DATABASE_DEADLINE_SECONDS). The HTTP layer starts one per request and finishes it once answered.
// A route that never reads or writes the database (the public sandbox's score) runs under none: a
// deadline is an asynchronous context that everything the request starts carries, a cost on the
// busiest route for no use there.

import type { Config } from '../config.ts';
import { Deadline } from '../storage/deadline.ts';

export type RequestKind = 'score' | 'transfer' | 'other' | 'none';

export type DeadlineSettings = Pick<Config, 'SCORE_DEADLINE_SECONDS' | 'TRANSFER_DEADLINE_SECONDS' | 'DATABASE_DEADLINE_SECONDS'>;

/** A new deadline for a request of this kind (none for a route that never uses the database);
 *  `run` the request's work under it, `finish` it. */
export function requestDeadline(kind: RequestKind, config: DeadlineSettings): Deadline | undefined {
  if (kind === 'none') return undefined;
  if (kind === 'score') return new Deadline(config.SCORE_DEADLINE_SECONDS);
  if (kind === 'transfer') return new Deadline(config.TRANSFER_DEADLINE_SECONDS, true);
  return new Deadline(config.DATABASE_DEADLINE_SECONDS);
}
