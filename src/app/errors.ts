// What a use case can refuse, in one definition: the error reason codes the service answers with
// (every error body's `detail.reason`), and `AppError`, which a use case throws with one of them, a
// message and a fix. It names what went wrong, not an HTTP status: the HTTP layer maps each kind to
// its status (http/errors.ts), so the same use case can serve any surface.

import { isProblem, type ModelProblem } from '../model/bundle-types.ts';
import { StorageError, databaseUnavailable as outOfReach } from '../storage/errors.ts';

export const ERROR_REASONS = [
  'validation_failed', 'bad_request', 'not_signed_in', 'invalid_api_key', 'csrf_failed', 'forbidden', 'not_found',
  'job_not_finished', 'upload_expired', 'payload_too_large', 'too_many_rows', 'rate_limited', 'job_quota_exceeded',
  'auth_not_configured', 'model_unavailable', 'evaluation_unavailable', 'not_implemented', 'internal_error',
  'duplicate_transaction', 'method_not_allowed', 'uri_too_long', 'unsupported_media_type', 'shutting_down',
  'request_timeout', 'headers_too_large', 'database_unavailable', 'database_timeout', 'history_loading', 'invalid_rule', 'list_in_use', 'conflict', 'limit_reached', 'invalid_webhook_url',
] as const;
export type ErrorReason = (typeof ERROR_REASONS)[number];

/** What kind of refusal: the caller is not known, may not do it, sent what cannot be used, asks
 *  for what does not apply to what it names (activating the built-in model, say), names nothing
 *  (or nothing they may see), conflicts with what is stored or is not ready yet, sent too much or
 *  too often, asks for more work than a limit of the service allows (a dataset over its rows),
 *  asks for what has gone, or the service cannot do it now. */
export type AppErrorKind = 'unauthorized' | 'forbidden' | 'invalid' | 'not_applicable' | 'not_found' | 'conflict' | 'not_ready' | 'too_large' | 'too_many' | 'over_limit' | 'gone' | 'unavailable';

export class AppError extends Error {
  constructor(
    readonly kind: AppErrorKind,
    readonly reason: ErrorReason,
    message: string,
    readonly fix: string,
    /** More of `detail`, e.g. `fields` of a validation failure. */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** The model (or its evaluation) a use case needs, or the reason it is unavailable. */
export function available<T>(x: T | ModelProblem): T {
  if (isProblem(x)) throw new AppError('unavailable', x.reason, x.message, x.fix);
  return x;
}

/** `model_unavailable`: scoring without a scorer. */
export function modelUnavailable(): AppError {
  return new AppError('unavailable', 'model_unavailable', 'No model is loaded.', 'Restart the server with a complete model folder.');
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
