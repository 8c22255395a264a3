// What the graph features count of the customer–merchant graph: per merchant, the times its
// customers first paid it and the times they count as known-compromised neighbours, kept sorted so
// a merchant's neighbours before t are counted by search instead of walking its edges; and per
// customer, when it counts as compromised (its earliest known fraud). The pairs themselves (the
// graph's edges, with their first payment) are the customers' first uses of merchants (first-use.ts).
// The History class decides when this changes; the methods here keep the two time lists in step.

import { Lists, widenFloats } from './lists.ts';
import { countBelowIn, insertSortedIn, removeSortedIn } from './sorted.ts';
import { USE_MERCHANT, type Uses } from './first-use.ts';

/** Sorts the times of lists from `from` on until about `budget` entries are sorted; returns the
 *  next list (a plain function's loop: a generator's is not optimised). */
function sortLists(l: Lists, from: number, budget: number): number {
  let m = from;
  for (; m < l.lists && budget > 0; m++) {
    const n = l.count(m);
    if (n > 1) l.floats[0]!.subarray(l.start[m]!, l.start[m]! + n).sort();
    budget -= n + 1;
  }
  return m;
}

export class Neighbours {
  private readonly uses: Uses;

  /** Per merchant, ascending: when each of its customers first paid it. */
  private readonly customerTimes = new Lists(0, 1);
  /** Per merchant, ascending: when each of its customers counts as a known-compromised neighbour,
   *  max(first payment there, fraud known). */
  private readonly compromisedTimes = new Lists(0, 1);
  /** Per customer: when its first fraud became known (NaN: none known). */
  private compromisedAt = new Float64Array(0);

  constructor(uses: Uses) {
    this.uses = uses;
  }

  /** When the customer counts as compromised, or undefined. */
  compromised(customer: number): number | undefined {
    const at = customer >= 0 && customer < this.compromisedAt.length ? this.compromisedAt[customer]! : Number.NaN;
    return Number.isNaN(at) ? undefined : at;
  }

  /** A new pair's first payment at `time`, in time order. */
  newPair(customer: number, merchant: number, time: number): void {
    this.customerTimes.ensure(merchant);
    const at = this.customerTimes.append(merchant);
    this.customerTimes.floats[0]![at] = time;
    const known = this.compromised(customer);
    if (known !== undefined) insertSortedIn(this.compromisedTimes, merchant, Math.max(time, known));
  }

  /** A late payment at `t`: a new pair (`first` NaN) or an earlier first payment of a known pair
   *  (first at `first`) moves the pair's times to where time order puts them. */
  latePair(customer: number, merchant: number, t: number, first: number): void {
    const known = this.compromised(customer);
    if (Number.isNaN(first)) {
      insertSortedIn(this.customerTimes, merchant, t);
      if (known !== undefined) insertSortedIn(this.compromisedTimes, merchant, Math.max(t, known));
    } else if (t < first) {
      removeSortedIn(this.customerTimes, merchant, first);
      insertSortedIn(this.customerTimes, merchant, t);
      if (known !== undefined) {
        removeSortedIn(this.compromisedTimes, merchant, Math.max(first, known));
        insertSortedIn(this.compromisedTimes, merchant, Math.max(t, known));
      }
    }
  }

  /** A loaded pair's first payment; the times are appended unsorted and sorted by `finishLoad`. */
  loadPair(merchant: number, first: number): void {
    this.customerTimes.ensure(merchant);
    const at = this.customerTimes.append(merchant);
    this.customerTimes.floats[0]![at] = first;
  }

  /** Puts each merchant's loaded first payments in order, in steps. */
  *finishingLoad(): Generator<void> {
    const l = this.customerTimes;
    for (let m = 0; m < l.lists; ) {
      m = sortLists(l, m, 4096);
      yield;
    }
  }

  /** A customer counts as compromised from its earliest known fraud (`after`; undefined: none
   *  known), once it has paid a merchant (before, it has no place in the graph): moves its
   *  compromised time there, and each of its merchants' compromised-neighbour times with it. */
  follow(customer: number, after: number | undefined): void {
    if (!this.uses.hasMerchants(customer)) return;
    const before = this.compromised(customer);
    if (before === after) return;
    this.compromisedAt = widenFloats(this.compromisedAt, customer, Number.NaN);
    this.compromisedAt[customer] = after ?? Number.NaN;
    this.uses.forEach(customer, (kind, merchant, first) => {
      if (kind !== USE_MERCHANT) return;
      if (before !== undefined) removeSortedIn(this.compromisedTimes, merchant, Math.max(first, before));
      if (after !== undefined) insertSortedIn(this.compromisedTimes, merchant, Math.max(first, after));
    });
  }

  /** The merchant's distinct customers whose first payment there is strictly before `t`, and how
   *  many of those were known compromised strictly before `t`, excluding `customer` itself. */
  count(merchant: number, customer: number, t: number): { customers: number; compromised: number } {
    if (merchant < 0) return { customers: 0, compromised: 0 };
    const customers = countBelowIn(this.customerTimes, merchant, t);
    let compromised = countBelowIn(this.compromisedTimes, merchant, t);
    const known = this.compromised(customer);
    if (known !== undefined) {
      const first = this.uses.first(customer, USE_MERCHANT, merchant);
      if (!Number.isNaN(first) && Math.max(first, known) < t) compromised--;
    }
    return { customers, compromised };
  }

  /** Packs the lists (see Lists.compact), in steps. */
  *compacting(): Generator<void> {
    yield* this.customerTimes.compacting();
    yield* this.compromisedTimes.compacting();
  }

  get byteLength(): number {
    return this.customerTimes.byteLength + this.compromisedTimes.byteLength + this.compromisedAt.byteLength;
  }
}
