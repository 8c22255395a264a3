// Strings packed end to end as UTF-8 in one growable buffer, and found again by content through an
// open-addressing hash table of their numbers: the history's customer, merchant and channel names
// and its transaction ids. Millions of them would otherwise be millions of string objects and map
// entries on the JavaScript heap, each traced by every full collection; packed, they are a few
// typed arrays whose contents the collector never looks into.
// A JavaScript string is hashed and compared against the stored bytes as its UTF-8 encoding, code
// unit by code unit, so a lookup encodes nothing and allocates nothing.

/** The most an index is filled before it grows. */
const MAX_LOAD = 0.75;
/** From this many entries on an array grows gently (`grown`). */
const LARGE = 1 << 20;

/** The next capacity of a growing array: half again while it is small (one that has just grown
 *  holds at most a third unused; doubling would leave half); an eighth again from a million entries
 *  on, so that a large history, loaded at its size, holds at most an eighth more than it uses once
 *  it grows past it, for a copy of the array at every eighth of growth (milliseconds, rare). */
export function grown(capacity: number): number {
  return capacity + (capacity >= LARGE ? capacity >> 3 : capacity >> 1);
}

/** Where a packed value starts, from its offset: stored as `-1 - start` when the row has no value.
 *  Value k ends where value k + 1 starts. */
export function packedStart(offset: number): number {
  return offset < 0 ? -1 - offset : offset;
}

/** The UTF-8 bytes of `s`, one at a time, as Buffer.write encodes it (a lone surrogate as U+FFFD). */
function forEachUtf8Byte(s: string, byte: (b: number) => boolean): boolean {
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      if (!byte(c)) return false;
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
        i++;
      } else c = 0xfffd;
    }
    if (c < 0x800) {
      if (!byte(0xc0 | (c >> 6)) || !byte(0x80 | (c & 0x3f))) return false;
    } else if (c < 0x10000) {
      if (!byte(0xe0 | (c >> 12)) || !byte(0x80 | ((c >> 6) & 0x3f)) || !byte(0x80 | (c & 0x3f))) return false;
    } else if (!byte(0xf0 | (c >> 18)) || !byte(0x80 | ((c >> 12) & 0x3f)) || !byte(0x80 | ((c >> 6) & 0x3f)) || !byte(0x80 | (c & 0x3f))) return false;
  }
  return true;
}

// The hash of a value's UTF-8 bytes, taken four bytes (a little-endian word) at a time, the last
// word short: a load hashes every row's customer, merchant, channel parts and id, and a byte at a
// time (FNV-1a) was a chain of one multiplication per byte. Each word is mixed in by a
// multiplication and a shift, and the result by MurmurHash3's finaliser, so that slots taken as the
// hash modulo any table size spread evenly.
const HASH_SEED = 0x811c9dc5;
const WORD_PRIME = 0x01000193;

function mixWord(h: number, word: number): number {
  h = Math.imul(h ^ word, WORD_PRIME);
  return h ^ (h >>> 15);
}

function finish(h: number, length: number): number {
  h ^= length;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** The hash of bytes [start, end). */
function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let h = HASH_SEED;
  let i = start;
  for (; i + 4 <= end; i += 4) h = mixWord(h, bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24));
  if (i < end) {
    let word = 0;
    for (let shift = 0; i < end; i++, shift += 8) word |= bytes[i]! << shift;
    h = mixWord(h, word);
  }
  return finish(h, end - start);
}

/** The hash of the UTF-8 encoding of `s` (the same as hashBytes of the encoded bytes). */
export function hashString(s: string): number {
  const n = s.length;
  let h = HASH_SEED;
  let i = 0;
  let ascii = true;
  for (; i + 4 <= n; i += 4) {
    const a = s.charCodeAt(i);
    const b = s.charCodeAt(i + 1);
    const c = s.charCodeAt(i + 2);
    const d = s.charCodeAt(i + 3);
    if ((a | b | c | d) >= 0x80) {
      ascii = false;
      break;
    }
    h = mixWord(h, a | (b << 8) | (c << 16) | (d << 24));
  }
  if (ascii) {
    let word = 0;
    for (let shift = 0; i < n; i++, shift += 8) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        ascii = false;
        break;
      }
      word |= c << shift;
    }
    if (ascii) return finish(n % 4 === 0 ? h : mixWord(h, word), n);
  }
  // Not ASCII: the bytes as they are encoded, gathered into words.
  h = HASH_SEED;
  let word = 0;
  let shift = 0;
  let length = 0;
  forEachUtf8Byte(s, (byte) => {
    word |= byte << shift;
    length++;
    shift += 8;
    if (shift === 32) {
      h = mixWord(h, word);
      word = 0;
      shift = 0;
    }
    return true;
  });
  if (shift > 0) h = mixWord(h, word);
  return finish(h, length);
}

/** Whether bytes [start, end) are the UTF-8 encoding of `s`. A string's UTF-8 is as long as it
 *  exactly when it is ASCII, and longer otherwise. */
function equalsString(bytes: Uint8Array, start: number, end: number, s: string): boolean {
  const n = end - start;
  if (n === s.length) {
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80 || bytes[start + i] !== c) return false;
    }
    return true;
  }
  return n > s.length && slowEquals(bytes, start, end, s);
}

/** Whether bytes [a, a + n) of `x` equal bytes [b, b + n) of `y`. */
function sameBytes(x: Uint8Array, a: number, y: Uint8Array, b: number, n: number): boolean {
  for (let i = 0; i < n; i++) if (x[a + i] !== y[b + i]) return false;
  return true;
}

function slowEquals(bytes: Uint8Array, start: number, end: number, s: string): boolean {
  let at = start;
  return forEachUtf8Byte(s, (b) => at < end && bytes[at++] === b) && at === end;
}

/** Strings packed end to end as UTF-8 in one growable buffer, read back by number; a missing value
 *  (undefined) is kept apart from the empty string. While every value has the same length (ids
 *  made by one system usually do) value k is simply at k × that length and no offsets are kept;
 *  the first value of another length (or a missing one) makes them. */
export class PackedStrings {
  // Zeroed and never from Node's pool of small Buffers: the bytes are a snapshot's as they stand,
  // so a pooled slab would carry whatever else the process put there, and unused room whatever
  // memory held before.
  private bytes = Buffer.alloc(1 << 12);
  private used = 0;
  /** Start of value k at [k], end at [k + 1]; negative start: no value. Undefined while every value
   *  is `width` bytes long. */
  private offsets: Int32Array | undefined;
  /** The length of every value, while there are no offsets (-1: none pushed yet). */
  private width = -1;
  private count = 0;
  /** Values there is room for in the offsets, when they are made. */
  private room: number;

  /** `expected`: how many values are about to be pushed, when known. */
  constructor(expected = 0) {
    this.room = Math.max(1025, expected + 2);
  }

  get length(): number {
    return this.count;
  }

  private startOf(k: number): number {
    return this.offsets ? this.offsets[k]! : k * this.width;
  }

  private endOf(k: number): number {
    return this.offsets ? packedStart(this.offsets[k + 1]!) : (k + 1) * this.width;
  }

  /** Makes the offsets of the values so far (a value of another length, or a missing one, comes). */
  private withOffsets(): Int32Array {
    if (!this.offsets) {
      const offsets = new Int32Array(Math.max(this.room, this.count + 2));
      for (let k = 0; k <= this.count; k++) offsets[k] = k * Math.max(0, this.width);
      this.offsets = offsets;
    }
    return this.offsets;
  }

  /** Room for `need` bytes. */
  private fit(need: number): void {
    if (need <= this.bytes.length) return;
    if (need > 0x7fff_ffff) throw new Error('packed strings exceed 2 GB');
    const wider = Buffer.alloc(Math.min(0x7fff_ffff, Math.max(need, grown(this.bytes.length))));
    this.bytes.copy(wider, 0, 0, this.used);
    this.bytes = wider;
  }

  /** Takes a value of `length` bytes (or none) next: keeps the fixed width or makes the offsets. */
  private next(length: number | undefined): void {
    if (!this.offsets) {
      if (length !== undefined && (this.width === -1 || this.width === length)) {
        this.width = length;
        return;
      }
      this.withOffsets();
    }
    if (this.count + 2 > this.offsets!.length) {
      const wider = new Int32Array(grown(this.offsets!.length));
      wider.set(this.offsets!);
      this.offsets = wider;
    }
  }

  /** Appends a value; returns its number. */
  push(value: string | undefined): number {
    const length = value === undefined ? undefined : Buffer.byteLength(value, 'utf8');
    this.next(length);
    const start = this.used;
    if (value !== undefined) {
      this.fit(start + length!);
      this.used += this.bytes.write(value, start, 'utf8');
    }
    if (this.offsets) {
      this.offsets[this.count] = value === undefined ? -1 - start : start;
      this.offsets[this.count + 1] = this.used;
    }
    return this.count++;
  }

  /** Room for `n` bytes in all (none is given back). */
  reserveBytes(n: number): void {
    this.fit(n);
  }

  /** Shrinks the buffers to what is held and a sixteenth more, when they hold more than an eighth
   *  unused (copying them for less is not worth its stall). */
  trim(): void {
    const unused = this.bytes.length - this.used + 4 * ((this.offsets?.length ?? 0) - this.count);
    if (unused <= this.used >> 3) return;
    const bytes = Buffer.alloc(Math.max(1 << 12, this.used + (this.used >> 4)));
    this.bytes.copy(bytes, 0, 0, this.used);
    this.bytes = bytes;
    this.room = Math.max(1025, this.count + 2 + (this.count >> 4));
    if (this.offsets) {
      const offsets = new Int32Array(this.room);
      offsets.set(this.offsets.subarray(0, this.count + 1));
      this.offsets = offsets;
    }
  }

  /** Appends a value given as UTF-8 bytes [start, end) of `source`; returns its number. */
  pushBytes(source: Uint8Array, start: number, end: number): number {
    this.next(end - start);
    const at = this.used;
    this.fit(at + end - start);
    // A short value byte by byte: a view of the source (subarray) would be an object a value.
    const bytes = this.bytes;
    if (end - start <= 64) for (let i = start; i < end; i++) bytes[at + i - start] = source[i]!;
    else bytes.set(source.subarray(start, end), at);
    this.used = at + end - start;
    if (this.offsets) {
      this.offsets[this.count] = at;
      this.offsets[this.count + 1] = this.used;
    }
    return this.count++;
  }

  /** Whether value k is present and is the bytes [start, end) of `source`. */
  equalsBytes(k: number, source: Uint8Array, start: number, end: number): boolean {
    const at = this.startOf(k);
    return at >= 0 && this.endOf(k) - at === end - start && sameBytes(this.bytes, at, source, start, end - start);
  }

  get(k: number): string | undefined {
    const start = this.startOf(k);
    if (start < 0) return undefined;
    return this.bytes.toString('utf8', start, this.endOf(k));
  }

  /** Whether value k is present and equal to `s`. */
  equals(k: number, s: string): boolean {
    const start = this.startOf(k);
    return start >= 0 && equalsString(this.bytes, start, this.endOf(k), s);
  }

  /** hashString of value k (which must be present). */
  hash(k: number): number {
    return hashBytes(this.bytes, this.startOf(k), this.endOf(k));
  }

  /** Whether value k is missing. */
  missing(k: number): boolean {
    return this.startOf(k) < 0;
  }

  /** Values `from` to `to` (exclusive) as stored: all the bytes, and their `to - from + 1` offsets
   *  (views, not copies, valid until the next push; made for the range while there are none). */
  packed(from: number, to: number): { bytes: Buffer; offsets: Int32Array } {
    if (this.offsets) return { bytes: this.bytes, offsets: this.offsets.subarray(from, to + 1) };
    const offsets = new Int32Array(to - from + 1);
    for (let k = from; k <= to; k++) offsets[k - from] = k * Math.max(0, this.width);
    return { bytes: this.bytes, offsets };
  }

  /** Bytes held, for memory accounting: the buffer and the offsets. */
  get byteLength(): number {
    return this.bytes.length + (this.offsets?.byteLength ?? 0);
  }
}

/** Finds packed strings by content: an open-addressing table (linear probing) of value numbers + 1
 *  (0: empty), kept at most three-quarters full, of any size (a slot is the hash modulo the size:
 *  a power of two would leave it between a third and two-thirds full, at twice the memory).
 *  Values are added by number; a missing one is not. */
export class StringIndex {
  private readonly strings: PackedStrings;

  private slots: Int32Array;
  private size = 0;

  constructor(strings: PackedStrings, expected = 0) {
    this.strings = strings;
    this.slots = new Int32Array(Math.max(16, Math.ceil(expected / MAX_LOAD) + 1));
  }

  /** Indexes value k (present); the first value indexed of equal ones is the one found. */
  add(k: number): void {
    if (this.size + 1 > this.slots.length * MAX_LOAD) this.rehash(Math.ceil(this.slots.length * (this.slots.length >= LARGE ? 1.25 : 1.5)));
    this.place(k, this.strings.hash(k));
    this.size++;
  }

  private place(k: number, hash: number): void {
    const slots = this.slots;
    const n = slots.length;
    let i = (hash >>> 0) % n;
    while (slots[i] !== 0) i = i + 1 === n ? 0 : i + 1;
    slots[i] = k + 1;
  }

  /** The number of the value equal to `s`, or -1. */
  find(s: string, hash = hashString(s)): number {
    const slots = this.slots;
    const n = slots.length;
    for (let i = (hash >>> 0) % n; ; i = i + 1 === n ? 0 : i + 1) {
      const k = slots[i]! - 1;
      if (k < 0) return -1;
      if (this.strings.equals(k, s)) return k;
    }
  }

  /** The number of the value whose UTF-8 bytes are [start, end) of `source`, or -1. */
  findBytes(source: Uint8Array, start: number, end: number, hash = hashBytes(source, start, end)): number {
    const slots = this.slots;
    const n = slots.length;
    for (let i = (hash >>> 0) % n; ; i = i + 1 === n ? 0 : i + 1) {
      const k = slots[i]! - 1;
      if (k < 0) return -1;
      if (this.strings.equalsBytes(k, source, start, end)) return k;
    }
  }

  private rehash(n: number): void {
    const old = this.slots;
    this.slots = new Int32Array(n);
    for (const v of old) if (v !== 0) this.place(v - 1, this.strings.hash(v - 1));
  }

  get byteLength(): number {
    return this.slots.byteLength;
  }
}

/** Interned strings: each distinct value stored once, referred to by its number. */
export class StringTable {
  private readonly strings: PackedStrings;
  private readonly index: StringIndex;
  /** Values as strings, made on the first `names()` (the batch job's result lines need them). */
  private materialised: string[] | undefined;
  /** The value found last and its number: the history looks the same customer up several times
   *  for one transaction, and a string compared with itself is compared by reference. */
  private lastValue: string | undefined;
  private lastNumber = -1;

  constructor(expected = 0) {
    this.strings = new PackedStrings(expected);
    this.index = new StringIndex(this.strings, expected);
  }

  get size(): number {
    return this.strings.length;
  }

  /** The value's number, added if new. */
  id(value: string): number {
    const k = this.find(value);
    if (k >= 0) return k;
    const added = this.strings.push(value);
    this.index.add(added);
    this.materialised?.push(value);
    this.lastValue = value;
    this.lastNumber = added;
    return added;
  }

  /** `id` of a value given as UTF-8 bytes [start, end) of `source` (no string is made). */
  idBytes(source: Uint8Array, start: number, end: number): number {
    const k = this.index.findBytes(source, start, end);
    if (k >= 0) return k;
    const added = this.strings.pushBytes(source, start, end);
    this.index.add(added);
    if (this.materialised) this.materialised.push(this.strings.get(added)!);
    return added;
  }

  /** The value's number, or -1 when it was never added. */
  find(value: string): number {
    if (value === this.lastValue) return this.lastNumber;
    const k = this.index.find(value);
    if (k >= 0) {
      this.lastValue = value;
      this.lastNumber = k;
    }
    return k;
  }

  name(k: number): string {
    return this.materialised?.[k] ?? this.strings.get(k)!;
  }

  /** Every value by number, as strings (kept from then on: for a short-lived table that reads them
   *  all, such as a batch job's). */
  names(): readonly string[] {
    if (!this.materialised) {
      this.materialised = [];
      for (let k = 0; k < this.strings.length; k++) this.materialised.push(this.strings.get(k)!);
    }
    return this.materialised;
  }

  get byteLength(): number {
    return this.strings.byteLength + this.index.byteLength;
  }
}

/** Interned strings kept as JavaScript strings, for a short-lived writer that hands them on in
 *  order (a kept dataset's chunks): each distinct value stored once, referred to by its index. */
export class Interned {
  readonly values: string[] = [];
  private readonly index = new Map<string, number>();

  id(value: string): number {
    let i = this.index.get(value);
    if (i === undefined) {
      i = this.values.push(value) - 1;
      this.index.set(value, i);
    }
    return i;
  }
}
