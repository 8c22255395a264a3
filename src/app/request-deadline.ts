// How long a request may wait for the database (storage/deadline.ts), by what it does: a score
// (SCORE_DEADLINE_SECONDS, its commit included), an upload or an export (TRANSFER_DEADLINE_SECONDS
// for each database operation, since their bodies may take minutes to arrive), anything else
// (DATABASE_DEADLINE_SECONDS). The HTTP layer starts one per request and finishes it once answered.

import type { Config } from '../config.ts';
import { Deadline } from '../storage/deadline.ts';

export type RequestKind = 'score' | 'transfer' | 'other';

export type DeadlineSettings = Pick<Config, 'SCORE_DEADLINE_SECONDS' | 'TRANSFER_DEADLINE_SECONDS' | 'DATABASE_DEADLINE_SECONDS'>;

/** A new deadline for a request of this kind; `run` the request's work under it, `finish` it. */
export function requestDeadline(kind: RequestKind, config: DeadlineSettings): Deadline {
  if (kind === 'score') return new Deadline(config.SCORE_DEADLINE_SECONDS);
  if (kind === 'transfer') return new Deadline(config.TRANSFER_DEADLINE_SECONDS, true);
  return new Deadline(config.DATABASE_DEADLINE_SECONDS);
}
