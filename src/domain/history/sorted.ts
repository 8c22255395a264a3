// Sorted-array helpers: the gallop-and-bisect count of an ascending array's entries below a time,
// which every point-in-time query comes down to (the history's per-merchant and per-customer time
// lists, and the training tools' handbook features), and ascending lists kept in shared columns
// (insert, remove in place).

import type { Lists } from './lists.ts';

/** Entries of an ascending array strictly below `t` (of its entries `start` to `start + n`, when
 *  given: a list in shared columns). Queries mostly ask about recent times (windows ending now,
 *  the last few minutes or days), so the search gallops back from the end first: it touches the
 *  array's tail, which is in cache, instead of probing from the middle of a long array. */
export function countBelow(a: ArrayLike<number> | undefined, t: number, start = 0, n = a?.length ?? 0): number {
  if (!a || n === 0 || a[start + n - 1]! < t) return n;
  // a[hi] >= t; widen the step until a[lo] < t or the start is passed.
  let hi = n - 1;
  let step = 1;
  let lo = hi - step;
  while (lo >= 0 && a[start + lo]! >= t) {
    hi = lo;
    step *= 2;
    lo = hi - step;
  }
  // The answer is in (lo, hi]: the first index whose value is >= t.
  lo = lo < 0 ? 0 : lo + 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[start + mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** `countBelow` for list `id` of `lists`, whose Float64 column 0 is ascending. */
export function countBelowIn(lists: Lists, id: number, t: number): number {
  const n = lists.count(id);
  return n === 0 ? 0 : countBelow(lists.floats[0], t, lists.start[id]!, n);
}

/** Inserts into list `id` of `lists` keeping Float64 column 0 ascending (values mostly arrive near
 *  the end). */
export function insertSortedIn(lists: Lists, id: number, value: number): void {
  lists.ensure(id);
  let i = lists.count(id);
  const s = lists.start[id]!;
  while (i > 0 && lists.floats[0]![s + i - 1]! > value) i--;
  const at = lists.insert(id, i);
  lists.floats[0]![at] = value;
}

/** Removes one occurrence of `value` from list `id` of `lists` (ascending). */
export function removeSortedIn(lists: Lists, id: number, value: number): void {
  const i = countBelowIn(lists, id, value);
  if (i >= lists.count(id) || lists.floats[0]![lists.start[id]! + i] !== value) throw new Error('no such entry in the history');
  lists.remove(id, i);
}
