// Epoch milliseconds as an ISO 8601 UTC string, exactly as `Date.prototype.toISOString` writes it
// for years 0000–9999, without going through Date: every score response carries up to fifteen
// evidence times, and formatting through Date is slow on the hot path. The date part is cached
// per day (evidence times cluster on a few days); the time of day is plain integer arithmetic.

const DAY_MS = 86_400_000;
let cachedDay = Number.NaN;
let cachedPrefix = '';

const two = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const three = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

export function isoTime(ms: number): string {
  const day = Math.floor(ms / DAY_MS);
  // Outside 0000–9999, or not an integer number of milliseconds: let Date handle (or reject) it.
  if (!Number.isInteger(ms) || day < -719_528 || day >= 2_932_897) return new Date(ms).toISOString();
  if (day !== cachedDay) {
    cachedDay = day;
    cachedPrefix = new Date(day * DAY_MS).toISOString().slice(0, 11);
  }
  let r = ms - day * DAY_MS;
  const milli = r % 1000;
  r = (r - milli) / 1000;
  const sec = r % 60;
  r = (r - sec) / 60;
  const min = r % 60;
  const hour = (r - min) / 60;
  return `${cachedPrefix}${two(hour)}:${two(min)}:${two(sec)}.${three(milli)}Z`;
}

/** `isoTime`, or null for a time that is not there. */
export const isoTimeOrNull = (ms: number | null): string | null => (ms === null ? null : isoTime(ms));
