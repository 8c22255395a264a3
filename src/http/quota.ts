// The per-organization daily job quota (MAX_JOBS_PER_ORG_PER_DAY, README Configuration): days are UTC days,
// and going over answers 429 `job_quota_exceeded` with Retry-After until the next UTC midnight.

import { ApiError } from './errors.ts';

const DAY_MS = 86_400_000;

/** Start of the current UTC day. */
export function utcDayStart(now = Date.now()): Date {
  return new Date(Math.floor(now / DAY_MS) * DAY_MS);
}

export function quotaExceeded(organizationName: string, quota: number, now = Date.now()): ApiError {
  const seconds = Math.max(1, Math.ceil((utcDayStart(now).getTime() + DAY_MS - now) / 1000));
  return new ApiError(
    429,
    'job_quota_exceeded',
    `${organizationName} has queued its ${quota} jobs for today (UTC).`,
    `Wait until 00:00 UTC (${seconds} s, Retry-After), or raise MAX_JOBS_PER_ORG_PER_DAY on the server.`,
    { retry_after_seconds: seconds, quota },
    { 'retry-after': String(seconds) },
  );
}
