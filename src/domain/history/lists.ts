// Many growable lists of numbers in a few shared typed arrays: every customer's, merchant's and
// channel's entries in the history. One object per list would be millions of small objects for the
// collector to trace on every full collection; here a list is a number, its entries a block of the
// shared columns (`start`, `length`, `capacity` per list), and the collector sees a handful of
// typed arrays whose contents it never looks into.
// A full list moves to a block twice its size; the block it leaves is kept, by size, for the next
// list that needs one that big, so blocks freed as lists grow are used again as new lists grow.
// Columns are parallel: an entry is one value in each (an Int32 column for a transaction's number,
// Float64 columns for running sums at checkpoints, and so on). A call that adds an entry may
// replace the columns with larger ones, so a caller takes the position first and reads the column
// after (`const at = lists.append(id); lists.ints[0]![at] = v`, never in one expression).

import { grown } from './strings.ts';

/** Size classes: a free block of capacity c is kept under floor(log2 c). */
const CLASSES = 32;

/** A copy of `a` at least `at + 1` long (grown by half again at a time), new places set to `fill`:
 *  the per-entity arrays beside the lists. */
export function widenFloats(a: Float64Array<ArrayBuffer>, at: number, fill: number): Float64Array<ArrayBuffer> {
  if (at < a.length) return a;
  let n = Math.max(64, a.length);
  while (n <= at) n += n >> 1;
  const b = new Float64Array(n).fill(fill);
  b.set(a);
  return b;
}

/** `a` cut (or widened) to `n` places: the per-entity arrays after a load, the size of what it made. */
export function trimFloats(a: Float64Array<ArrayBuffer>, n: number): Float64Array<ArrayBuffer> {
  if (a.length === n) return a;
  const b = new Float64Array(n);
  b.set(a.subarray(0, Math.min(n, a.length)));
  return b;
}

/** Gives a compacted column's memory back now rather than at the collector's next collection (a
 *  load's end compacts every part, and each old column would stay resident beside its copy until
 *  then). Only a column that is the whole of its buffer: nothing else reads the columns (see above). */
function giveBack(old: Int32Array | Float64Array | Int8Array): void {
  const b = old.buffer;
  if (b instanceof ArrayBuffer && !b.resizable && old.byteOffset === 0 && old.byteLength === b.byteLength) b.transfer(0);
}

function classOf(capacity: number): number {
  return 31 - Math.clz32(capacity);
}

/** The room a list of `n` entries gets when lists are packed or laid out: a sixteenth more, and one
 *  (none for an empty list). */
function withRoom(n: number): number {
  return n === 0 ? 0 : n + (n >> 4) + 1;
}

/** Copies lists [from, to) of `old` end to end into `col` from `at`, each followed by room for a
 *  sixteenth more (and one); returns where the next goes. */
function moveLists<T extends Int32Array | Float64Array | Int8Array>(
  old: T,
  col: T,
  start: Int32Array,
  length: Int32Array,
  from: number,
  to: number,
  at: number,
): number {
  for (let l = from; l < to; l++) {
    const len = length[l]!;
    if (len === 0) continue;
    col.set(old.subarray(start[l]!, start[l]! + len), at);
    at += withRoom(len);
  }
  return at;
}

/** `counts` up to the last list that has any (empty when none has). */
export function usedCounts(counts: Int32Array): Int32Array {
  let last = -1;
  for (let l = 0; l < counts.length; l++) if (counts[l]! > 0) last = l;
  return counts.subarray(0, last + 1);
}

/** Lays out lists of entries at `counts` (Lists.layOut), and their checkpoints' lists: one before
 *  the first entry and one after every 2^`shift`-th, as a series or a label store keeps them. */
export function layOutCheckpointed(entries: Lists, checkpoints: Lists, counts: Int32Array, shift: number): void {
  entries.layOut(counts);
  checkpoints.layOut(counts.map((n) => (n === 0 ? 0 : (n >> shift) + 1)));
}

export class Lists {
  /** Where each list's entries start in the columns, how many it has, and how many fit. */
  start: Int32Array;
  length: Int32Array;
  capacity: Int32Array;
  /** The columns: `ints[c][start[l] + i]` is entry i of list l in Int32 column c. */
  readonly ints: Int32Array[];
  readonly floats: Float64Array[];
  readonly bytes: Int8Array[];
  private top = 0;
  private size: number;
  /** The first free block of each size class (-1: none); a free block's first Int32 (or Float64)
   *  value is the next free block of its class. */
  private readonly free = new Int32Array(CLASSES).fill(-1);
  /** Entries in free blocks, and in blocks being used below their capacity by dropped entries. */
  private freeEntries = 0;
  /** Every list is still where `layOut` or the last compaction put it: the columns are as a
   *  compaction would leave them. */
  private laidOut = false;

  /** `intColumns` Int32, `floatColumns` Float64 and `byteColumns` Int8 columns (at least one of
   *  the first two: a free block keeps its link there); room for `expected` entries at first. */
  constructor(intColumns: number, floatColumns: number, byteColumns = 0, expected = 0) {
    if (intColumns + floatColumns === 0) throw new Error('lists need an Int32 or a Float64 column');
    this.size = Math.max(1024, expected);
    this.ints = Array.from({ length: intColumns }, () => new Int32Array(this.size));
    this.floats = Array.from({ length: floatColumns }, () => new Float64Array(this.size));
    this.bytes = Array.from({ length: byteColumns }, () => new Int8Array(this.size));
    this.start = new Int32Array(64);
    this.length = new Int32Array(64);
    this.capacity = new Int32Array(64);
  }

  /** Makes list `id` (and every lower one) exist, empty if new. */
  ensure(id: number): void {
    if (id < this.start.length) return;
    let n = this.start.length;
    while (n <= id) n = Math.max(64, grown(n));
    const widen = (a: Int32Array) => {
      const b = new Int32Array(n);
      b.set(a);
      return b;
    };
    this.start = widen(this.start);
    this.length = widen(this.length);
    this.capacity = widen(this.capacity);
  }

  /** How many lists there are room for (lists past it are empty). */
  get lists(): number {
    return this.start.length;
  }

  /** Entries of list `id` (0 for one never made). */
  count(id: number): number {
    return id < this.length.length ? this.length[id]! : 0;
  }

  /** Makes room in the columns for `n` more entries in new blocks, so that adding them grows the
   *  columns once, to the size needed, rather than by half again each time they fill. */
  expect(n: number): void {
    if (this.top + n > this.size) this.growTo(this.top + n);
  }

  /** Makes room for list `id` to hold `n` entries without moving; `exact`: a block of exactly that
   *  size when it has to move (a load, which knows every list's size). */
  reserve(id: number, n: number, exact = false): void {
    this.ensure(id);
    if (n <= this.capacity[id]!) return;
    const capacity = exact ? n : Math.max(4, 1 << (32 - Math.clz32(n - 1)));
    const at = this.allocate(capacity);
    const old = this.start[id]!;
    const len = this.length[id]!;
    if (len > 0) {
      for (const c of this.ints) c.copyWithin(at, old, old + len);
      for (const c of this.floats) c.copyWithin(at, old, old + len);
      for (const c of this.bytes) c.copyWithin(at, old, old + len);
    }
    if (this.capacity[id]! > 0) this.release(old, this.capacity[id]!);
    this.start[id] = at;
    this.capacity[id] = capacity;
  }

  /** Places empty lists end to end, list l in one block for `counts[l]` entries and a sixteenth more
   *  (and one), as a compaction would leave them: a load that knows how many entries each list is
   *  about to get then adds them without moving a list, leaves no free block behind, grows the
   *  columns once, and needs no compaction after. */
  layOut(counts: Int32Array): void {
    if (this.top !== 0) throw new Error('layOut() on lists that hold entries');
    if (counts.length > 0) this.ensure(counts.length - 1);
    let total = 0;
    for (let l = 0; l < counts.length; l++) {
      const n = counts[l]!;
      const capacity = withRoom(n);
      this.start[l] = total;
      this.capacity[l] = capacity;
      total += capacity;
    }
    if (total > this.size) this.growTo(total);
    this.top = total;
    this.laidOut = true;
  }

  /** Appends an entry to list `id`; returns its position in the columns, for the caller to write. */
  append(id: number): number {
    this.ensure(id);
    const len = this.length[id]!;
    if (len === this.capacity[id]!) this.reserve(id, len + 1);
    this.length[id] = len + 1;
    return this.start[id]! + len;
  }

  /** Inserts an entry at index `i` of list `id`, moving the entries from `i` on one place up;
   *  returns its position in the columns. */
  insert(id: number, i: number): number {
    this.ensure(id);
    const len = this.length[id]!;
    if (len === this.capacity[id]!) this.reserve(id, len + 1);
    const s = this.start[id]!;
    if (i < len) {
      for (const c of this.ints) c.copyWithin(s + i + 1, s + i, s + len);
      for (const c of this.floats) c.copyWithin(s + i + 1, s + i, s + len);
      for (const c of this.bytes) c.copyWithin(s + i + 1, s + i, s + len);
    }
    this.length[id] = len + 1;
    return s + i;
  }

  /** Removes entry `i` of list `id`. */
  remove(id: number, i: number): void {
    const s = this.start[id]!;
    const len = this.length[id]!;
    for (const c of this.ints) c.copyWithin(s + i, s + i + 1, s + len);
    for (const c of this.floats) c.copyWithin(s + i, s + i + 1, s + len);
    for (const c of this.bytes) c.copyWithin(s + i, s + i + 1, s + len);
    this.length[id] = len - 1;
  }

  /** Removes the first `k` entries of list `id`. */
  dropFront(id: number, k: number): void {
    const s = this.start[id]!;
    const len = this.length[id]!;
    for (const c of this.ints) c.copyWithin(s, s + k, s + len);
    for (const c of this.floats) c.copyWithin(s, s + k, s + len);
    for (const c of this.bytes) c.copyWithin(s, s + k, s + len);
    this.length[id] = len - k;
  }

  /** Moves every list into new columns, end to end, each with room for a sixteenth more entries
   *  (and one): after a load, which added every entry as it came, the columns hold what the lists
   *  hold and little else; free blocks are gone. `lists`: how many lists to keep room for (every
   *  list from it on must be empty; the rest are made again when asked for). */
  compact(lists = this.start.length): void {
    for (const _ of this.compacting(lists));
  }

  /** `compact` in steps of a few thousand lists each (a caller can let other work run between
   *  them; nothing may read or change the lists until the last step). */
  *compacting(lists = this.start.length): Generator<void> {
    const n = lists;
    for (let l = n; l < this.start.length; l++) if (this.length[l]! > 0) throw new Error(`compact(${n}) would drop list ${l}`);
    if (this.laidOut && this.top === this.size) {
      // Already end to end (dropped entries leave a list's block as it was).
      this.start = this.start.slice(0, n);
      this.length = this.length.slice(0, n);
      this.capacity = this.capacity.slice(0, n);
      return;
    }
    let total = 0;
    for (let l = 0; l < n; l++) {
      const len = this.length[l]!;
      total += withRoom(len);
    }
    const size = Math.max(1024, total);
    // A step moves a few thousand lists (a plain function's loop: a generator's is not optimised).
    const length = this.length;
    const start = this.start;
    function* move<T extends Int32Array | Float64Array | Int8Array>(old: T, col: T): Generator<void, T> {
      let at = 0;
      for (let l = 0; l < n; l += 4096) {
        at = moveLists(old, col, start, length, l, Math.min(n, l + 4096), at);
        yield;
      }
      return col;
    }
    for (let c = 0; c < this.ints.length; c++) {
      const old = this.ints[c]!;
      this.ints[c] = yield* move(old, new Int32Array(size));
      giveBack(old);
    }
    for (let c = 0; c < this.floats.length; c++) {
      const old = this.floats[c]!;
      this.floats[c] = yield* move(old, new Float64Array(size));
      giveBack(old);
    }
    for (let c = 0; c < this.bytes.length; c++) {
      const old = this.bytes[c]!;
      this.bytes[c] = yield* move(old, new Int8Array(size));
      giveBack(old);
    }
    this.start = this.start.slice(0, n);
    this.length = this.length.slice(0, n);
    this.capacity = this.capacity.slice(0, n);
    let at = 0;
    for (let l = 0; l < n; l++) {
      const len = this.length[l]!;
      const capacity = withRoom(len);
      this.start[l] = at;
      this.capacity[l] = capacity;
      at += capacity;
    }
    this.top = total;
    this.size = size;
    this.free.fill(-1);
    this.freeEntries = 0;
    this.laidOut = true;
  }

  private allocate(capacity: number): number {
    this.laidOut = false;
    // A free block of the class that guarantees the size: blocks of class c hold at least 2^c.
    const wanted = classOf(capacity) + (capacity & (capacity - 1) ? 1 : 0);
    const at = wanted < CLASSES ? this.free[wanted]! : -1;
    if (at >= 0) {
      this.free[wanted] = this.ints.length ? this.ints[0]![at]! : this.floats[0]![at]!;
      this.freeEntries -= 1 << wanted;
      return at;
    }
    if (this.top + capacity > this.size) this.growTo(Math.max(this.top + capacity, grown(this.size)));
    const start = this.top;
    this.top += capacity;
    return start;
  }

  /** Keeps the block at `at` for reuse; only the first 2^class entries of it are ever reused. */
  private release(at: number, capacity: number): void {
    const k = classOf(capacity);
    if (this.ints.length) this.ints[0]![at] = this.free[k]!;
    else this.floats[0]![at] = this.free[k]!;
    this.free[k] = at;
    this.freeEntries += 1 << k;
  }

  private growTo(size: number): void {
    for (let c = 0; c < this.ints.length; c++) {
      const wider = new Int32Array(size);
      wider.set(this.ints[c]!.subarray(0, this.top));
      this.ints[c] = wider;
    }
    for (let c = 0; c < this.floats.length; c++) {
      const wider = new Float64Array(size);
      wider.set(this.floats[c]!.subarray(0, this.top));
      this.floats[c] = wider;
    }
    for (let c = 0; c < this.bytes.length; c++) {
      const wider = new Int8Array(size);
      wider.set(this.bytes[c]!.subarray(0, this.top));
      this.bytes[c] = wider;
    }
    this.size = size;
  }

  /** Bytes held by the columns and the per-list arrays. */
  get byteLength(): number {
    let perEntry = 0;
    for (const c of this.ints) perEntry += c.BYTES_PER_ELEMENT;
    for (const c of this.floats) perEntry += c.BYTES_PER_ELEMENT;
    perEntry += this.bytes.length;
    return this.size * perEntry + 3 * this.start.byteLength + this.free.byteLength;
  }

  /** Entries in use, entries held in free blocks, and the columns' room. */
  get usage(): { used: number; free: number; room: number } {
    let used = 0;
    for (let l = 0; l < this.length.length; l++) used += this.length[l]!;
    return { used, free: this.freeEntries, room: this.size };
  }
}
