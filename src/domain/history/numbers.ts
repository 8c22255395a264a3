// Columns of numbers in fewer bytes while every value allows it exactly: times and amounts in four
// bytes instead of eight (NumberColumn), entity numbers in two instead of four (IndexColumn).
// The history's times and the times labels became known are whole milliseconds within a few weeks
// of each other, and amounts are mostly whole cents: as Uint32 offsets from a base (in
// milliseconds, or cents of a unit) they take half the memory of Float64, and every value read back
// is the very double that was written. A value that does not fit (a fraction of a millisecond, a
// time seven weeks past the base, an amount in tenths of a cent, a 65,536th customer) turns the
// whole column wide once, every value kept, so nothing is ever rounded.

/** A typed array of `capacity` places holding the first `count` values of `a`. */
export function resized<T extends Uint16Array | Uint32Array | Int32Array | Int8Array | Float64Array>(a: T, capacity: number, count: number): T {
  const b = new (a.constructor as new (n: number) => T)(capacity);
  b.set(a.subarray(0, count));
  return b;
}

/** NaN, in the narrow form. */
const MISSING = 0xffff_ffff;

export class NumberColumn {
  private readonly scale: number;
  private readonly origin: number | { below: number } | NumberColumn;

  private narrow: Uint32Array | undefined;
  private wide: Float64Array | undefined;
  private base: number;

  /**
   * `capacity` values; `scale`: stored units per unit of value (1 for milliseconds, 100 for
   * cents); `origin`: the value the offsets start from; `{ below }`: that much below the first
   * value written (room for values a little older than the first); or another column, whose origin
   * this one takes when it first needs one (the times labels became known, from the times).
   */
  constructor(capacity: number, scale: number, origin: number | { below: number } | NumberColumn) {
    this.scale = scale;
    this.origin = origin;
    this.narrow = new Uint32Array(capacity);
    this.base = typeof origin === 'number' ? origin * scale : Number.NaN;
  }

  /** The origin in stored units, set by the first value written. */
  private baseFor(x: number): number {
    const o = this.origin;
    if (o instanceof NumberColumn) return Number.isNaN(o.base) ? Math.round(x * this.scale) : o.base;
    return Math.round(x * this.scale) - (o as { below: number }).below * this.scale;
  }

  get(k: number): number {
    const n = this.narrow;
    if (n === undefined) return this.wide![k]!;
    const v = n[k]!;
    return v === MISSING ? Number.NaN : this.scale === 1 ? this.base + v : (this.base + v) / this.scale;
  }

  set(k: number, x: number): void {
    const n = this.narrow;
    if (n === undefined) {
      this.wide![k] = x;
      return;
    }
    if (Number.isNaN(x)) {
      n[k] = MISSING;
      return;
    }
    if (Number.isNaN(this.base)) this.base = this.baseFor(x);
    const units = Math.round(x * this.scale);
    const v = units - this.base;
    if (v >= 0 && v < MISSING && (this.scale === 1 ? units === x : units / this.scale === x && !Object.is(x, -0))) n[k] = v;
    else {
      this.widen();
      this.wide![k] = x;
    }
  }

  /** Values [from, to) as Float64 (a view when the column is wide, else a copy). */
  float64(from: number, to: number): Float64Array {
    if (this.wide) return this.wide.subarray(from, to);
    const out = new Float64Array(to - from);
    for (let k = from; k < to; k++) out[k - from] = this.get(k);
    return out;
  }

  /** Whether every value is kept in four bytes. */
  get isNarrow(): boolean {
    return this.narrow !== undefined;
  }

  get capacity(): number {
    return (this.narrow ?? this.wide!).length;
  }

  get byteLength(): number {
    return (this.narrow ?? this.wide!).byteLength;
  }

  /** The same values in `capacity` places (the first `count` kept). */
  resize(capacity: number, count: number): void {
    if (this.narrow) this.narrow = resized(this.narrow, capacity, count);
    else this.wide = resized(this.wide!, capacity, count);
  }

  /** Turns the column into Float64, every value kept. */
  private widen(): void {
    const n = this.narrow!;
    const wide = new Float64Array(n.length);
    for (let k = 0; k < n.length; k++) wide[k] = this.get(k);
    this.narrow = undefined;
    this.wide = wide;
  }
}

/** A column of small whole numbers (a customer's, merchant's or channel's number) kept in two bytes
 *  each while every one is below 65,536, and in four (Int32) from the first that is not. */
export class IndexColumn {
  private narrow: Uint16Array | undefined;
  private wide: Int32Array | undefined;

  constructor(capacity: number) {
    this.narrow = new Uint16Array(capacity);
  }

  get(k: number): number {
    const n = this.narrow;
    return n === undefined ? this.wide![k]! : n[k]!;
  }

  set(k: number, v: number): void {
    const n = this.narrow;
    if (n !== undefined && v >= 0 && v <= 0xffff) {
      n[k] = v;
      return;
    }
    if (n !== undefined) {
      this.wide = Int32Array.from(n);
      this.narrow = undefined;
    }
    this.wide![k] = v;
  }

  /** Values [from, to) as Int32 (a view when the column is wide, else a copy). */
  int32(from: number, to: number): Int32Array {
    return this.wide ? this.wide.subarray(from, to) : Int32Array.from(this.narrow!.subarray(from, to));
  }

  get isNarrow(): boolean {
    return this.narrow !== undefined;
  }

  get byteLength(): number {
    return (this.narrow ?? this.wide!).byteLength;
  }

  /** The same values in `capacity` places (the first `count` kept). */
  resize(capacity: number, count: number): void {
    if (this.narrow) this.narrow = resized(this.narrow, capacity, count);
    else this.wide = resized(this.wide!, capacity, count);
  }
}
