// What a use case can refuse: `AppError`, thrown with one of the reason codes of the catalogue
// (contract/errors.ts, which gives each its one status, default message and fix) and what is
// particular to this refusal. The HTTP layer answers it (http/errors.ts).

import { ERRORS, type ErrorReason } from '../contract/errors.ts';
import { isProblem, type ModelProblem } from '../model/bundle-types.ts';
import { StorageError, databaseUnavailable as outOfReach } from '../storage/errors.ts';

export { ERROR_REASONS, type ErrorReason } from '../contract/errors.ts';

export class AppError extends Error {
  readonly reason: ErrorReason;
  readonly extra: Record<string, unknown>;

  readonly fix: string;

  /** A refusal for `reason` (its status is the catalogue's: contract/errors.ts), with what is
   *  particular to it; the catalogue's message and fix when it adds nothing. */
  constructor(
    reason: ErrorReason,
    message?: string,
    fix?: string,
    /** More of `detail`, e.g. `fields` of a validation failure. */
    extra: Record<string, unknown> = {},
  ) {
    super(message ?? ERRORS[reason].message);
    this.reason = reason;
    this.extra = extra;
    this.fix = fix ?? ERRORS[reason].fix;
  }
}

/** The model (or its evaluation) a use case needs, or the reason it is unavailable. */
export function available<T>(x: T | ModelProblem): T {
  if (isProblem(x)) throw new AppError(x.reason, x.message, x.fix);
  return x;
}

/** `model_unavailable`: scoring without a scorer. */
export function modelUnavailable(): AppError {
  return new AppError('model_unavailable');
}

/** Whether a failure is the database being out of reach (storage/errors.ts): the request may
 *  succeed once it is back, so it is answered 503 with Retry-After, never 500. */
export function databaseUnavailable(err: unknown): boolean {
  return outOfReach(err);
}

/** Whether a failure is a statement the database cancelled at the statement time limit (a lock held
 *  elsewhere, an overloaded server): like an outage, answered 503 with Retry-After. */
export function databaseTimedOut(err: unknown): boolean {
  return err instanceof StorageError && err.code === 'query_timeout';
}
