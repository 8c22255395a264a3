// The per-organization daily job quota (MAX_JOBS_PER_ORG_PER_DAY, README Configuration), shared by
// scoring jobs, history imports and the training check: days are UTC days, and going over is
// refused `job_quota_exceeded` until the next UTC midnight, with `retry_after_seconds` (the HTTP
// layer answers 429 and sends it as Retry-After too).

import { AppError } from '../errors.ts';

const DAY_MS = 86_400_000;

/** Start of the current UTC day. */
export function utcDayStart(now = Date.now()): Date {
  return new Date(Math.floor(now / DAY_MS) * DAY_MS);
}

export function quotaExceeded(organizationName: string, quota: number, now = Date.now()): AppError {
  const seconds = Math.max(1, Math.ceil((utcDayStart(now).getTime() + DAY_MS - now) / 1000));
  return new AppError(
    'job_quota_exceeded',
    `${organizationName} has queued its ${quota} jobs for today (UTC).`,
    `Wait until 00:00 UTC (${seconds} s, Retry-After), or raise MAX_JOBS_PER_ORG_PER_DAY on the server.`,
    { retry_after_seconds: seconds, quota },
  );
}
