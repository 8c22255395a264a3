// A history as bytes and back: what the service keeps in the database of an organization's history
// (storage/history-snapshots.ts), so that a process loads it by copying a few dozen arrays instead
// of interning every id and filing every entry of millions of rows again.
// A history is a small graph of objects (the parts in this folder) holding typed arrays, numbers and
// strings. It is written as it stands: a JSON header naming each object's class and fields, then the
// arrays' bytes, each at a multiple of 8. Nothing here knows a part's fields, so a field added to any
// part is carried without a change here, and one that cannot be written (a function) is refused when
// writing. What the fields mean is the code's: a snapshot is read only by a process whose history
// code hashes the same (`HISTORY_FORMAT`), so a change to this folder makes old snapshots unreadable
// (the service then builds the history from its rows, as before there was one).
// A class instance is read back as one its constructor made, called without arguments, whose fields
// are then set in the order they were written: V8 then gives it the hidden class of a history built
// by its constructors, so scoring code sees one shape per part whichever way each history was made
// (an object made bare and given more than a dozen fields by name would be kept as a hash table,
// and a process holding both kinds would run its scoring code on two shapes of each part). Every
// class of a history must therefore accept being constructed without arguments.

import { History } from './history.ts';
import { codeDigest } from '../code-digest.ts';

/** The code that gives a snapshot's fields their meaning: a hash of this folder's code as it runs
 *  (the TypeScript sources, or the JavaScript compiled from them). */
export const HISTORY_FORMAT = `h1-${codeDigest(import.meta.dirname, 'history.').slice(0, 16)}`;

const MAGIC = 0x48524631; // "FRH1"
/** Bytes copied between two steps of `restoring` (a few milliseconds). */
const COPY_STEP_BYTES = 8 << 20;
/** Pieces of the written form are at most this long (the store keeps each as one value). */
export const SNAPSHOT_PIECE_BYTES = 4 << 20;

type TypedArray = Float64Array | Float32Array | Int32Array | Uint32Array | Int16Array | Uint16Array | Int8Array | Uint8Array;
const VIEWS: Record<string, (b: ArrayBufferLike, offset: number, length: number) => TypedArray> = {
  Float64Array: (b, o, l) => new Float64Array(b, o, l),
  Float32Array: (b, o, l) => new Float32Array(b, o, l),
  Int32Array: (b, o, l) => new Int32Array(b, o, l),
  Uint32Array: (b, o, l) => new Uint32Array(b, o, l),
  Int16Array: (b, o, l) => new Int16Array(b, o, l),
  Uint16Array: (b, o, l) => new Uint16Array(b, o, l),
  Int8Array: (b, o, l) => new Int8Array(b, o, l),
  Uint8Array: (b, o, l) => new Uint8Array(b, o, l),
  Buffer: (b, o, l) => Buffer.from(b, o, l),
};

/** A value in the header: JSON, with what JSON cannot say spelled as a one-key object. */
type Encoded = number | string | boolean | null | Encoded[] | { [key: string]: Encoded };
/** An object of the graph: a class instance or plain object (`c`, `f`), an array (`a`), a map (`m`). */
type Shell = { c: string; f: Record<string, Encoded> } | { a: Encoded[] } | { m: [Encoded, Encoded][] };
interface Header {
  objects: Shell[];
  /** The byte length of each array buffer, in the order their bytes follow the header. */
  buffers: number[];
  root: Encoded;
}

/** The classes a history is made of, by name: those reachable from a fresh one with every part
 *  made (records kept, ids indexed). */
const CLASSES: ReadonlyMap<string, object> = (() => {
  const h = new History().withRecords();
  h.transactions.indexIds();
  const found = new Map<string, object>();
  const seen = new Set<object>();
  const visit = (v: unknown): void => {
    if (typeof v !== 'object' || v === null || seen.has(v) || ArrayBuffer.isView(v)) return;
    seen.add(v);
    if (Array.isArray(v)) {
      v.forEach(visit);
      return;
    }
    if (v instanceof Map) {
      v.forEach((x, k) => {
        visit(k);
        visit(x);
      });
      return;
    }
    const proto = Object.getPrototypeOf(v) as object;
    if (proto !== Object.prototype) found.set((proto as { constructor: { name: string } }).constructor.name, proto);
    for (const x of Object.values(v)) visit(x);
  };
  visit(h);
  return found;
})();

const pad8 = (n: number) => (n + 7) & ~7;

/** A history as its object graph (the header, JSON) and its arrays' buffers, each once: what
 *  `historyBytes` writes, and what a thread that built a history hands over without a copy (the
 *  buffers transferred; `historyFromParts` on the other side). */
export interface HistoryParts {
  header: Header;
  buffers: ArrayBufferLike[];
}

/** The history's parts: its buffers are the history's own, not copies. */
export function historyParts(h: History): HistoryParts {
  const objects: Shell[] = [];
  const ids = new Map<object, number>();
  const buffers: ArrayBufferLike[] = [];
  const bufferIds = new Map<ArrayBufferLike, number>();
  const encode = (v: unknown): Encoded => {
    switch (typeof v) {
      case 'number':
        return Number.isFinite(v) && !Object.is(v, -0) ? v : { n: Object.is(v, -0) ? '-0' : String(v) };
      case 'string':
      case 'boolean':
        return v;
      case 'undefined':
        return { u: 1 };
      case 'object':
        break;
      default:
        throw new Error(`a history cannot be written with a ${typeof v} in it`);
    }
    if (v === null) return null;
    if (ArrayBuffer.isView(v)) {
      const kind = Buffer.isBuffer(v) ? 'Buffer' : v.constructor.name;
      if (!VIEWS[kind]) throw new Error(`a history cannot be written with a ${kind} in it`);
      let b = bufferIds.get(v.buffer);
      if (b === undefined) bufferIds.set(v.buffer, (b = buffers.push(v.buffer) - 1));
      return { t: kind, b, o: v.byteOffset, l: (v as TypedArray).length };
    }
    let id = ids.get(v);
    if (id === undefined) {
      ids.set(v, (id = objects.length));
      objects.push({ a: [] });
      objects[id] = shell(v);
    }
    return { r: id };
  };
  const shell = (v: object): Shell => {
    if (Array.isArray(v)) return { a: v.map(encode) };
    if (v instanceof Map) return { m: [...v].map(([k, x]) => [encode(k), encode(x)] as [Encoded, Encoded]) };
    const proto = Object.getPrototypeOf(v) as object;
    const name = proto === Object.prototype ? 'Object' : (proto as { constructor: { name: string } }).constructor.name;
    if (name !== 'Object' && CLASSES.get(name) !== proto) throw new Error(`a history cannot be written with a ${name} in it`);
    const f: Record<string, Encoded> = {};
    for (const [k, x] of Object.entries(v)) f[k] = encode(x);
    return { c: name, f };
  };
  const root = encode(h);
  return { header: { objects, buffers: buffers.map((b) => b.byteLength), root }, buffers };
}

/** The history as bytes: pieces of at most SNAPSHOT_PIECE_BYTES, in order. They are views of the
 *  history's own arrays, valid until it next changes: copy them before it does. */
export function historyBytes(h: History): Uint8Array[] {
  const { header, buffers } = historyParts(h);
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const head = Buffer.alloc(pad8(8 + json.length));
  head.writeUInt32LE(MAGIC, 0);
  head.writeUInt32LE(json.length, 4);
  json.copy(head, 8);
  const pieces: Uint8Array[] = [head];
  for (const b of buffers) {
    const bytes = new Uint8Array(b);
    for (let at = 0; at < bytes.length; at += SNAPSHOT_PIECE_BYTES) pieces.push(bytes.subarray(at, Math.min(bytes.length, at + SNAPSHOT_PIECE_BYTES)));
    if (pad8(bytes.length) > bytes.length) pieces.push(new Uint8Array(pad8(bytes.length) - bytes.length));
  }
  return pieces;
}

/** Reads bytes in order from a list of pieces, however they were cut. */
class PieceReader {
  private readonly pieces: readonly Uint8Array[];

  private piece = 0;
  private at = 0;
  constructor(pieces: readonly Uint8Array[]) {
    this.pieces = pieces;
  }

  /** Copies the next `into.length` bytes into `into`. */
  read(into: Uint8Array): void {
    let done = 0;
    while (done < into.length) {
      const p = this.pieces[this.piece];
      if (!p) throw new Error('a history snapshot ends early');
      const n = Math.min(p.length - this.at, into.length - done);
      into.set(p.subarray(this.at, this.at + n), done);
      done += n;
      this.at += n;
      if (this.at === p.length) {
        this.piece++;
        this.at = 0;
      }
    }
  }

  skip(n: number): void {
    if (n > 0) this.read(new Uint8Array(n));
  }
}

/** The history written by `historyBytes`, from its pieces (cut anywhere); its arrays are copies, so
 *  the pieces can be dropped. Throws on bytes that are not a snapshot of this code's history. */
export function historyFromBytes(pieces: readonly Uint8Array[]): History {
  const steps = restoring(pieces);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** `historyFromBytes` in steps: it yields after every few megabytes copied (a caller can let other
 *  work run between them) and returns the history. */
export function* restoring(pieces: readonly Uint8Array[]): Generator<void, History> {
  const reader = new PieceReader(pieces);
  const start = new Uint8Array(8);
  reader.read(start);
  const view = new DataView(start.buffer);
  if (view.getUint32(0, true) !== MAGIC) throw new Error('not a history snapshot');
  const json = new Uint8Array(view.getUint32(4, true));
  reader.read(json);
  reader.skip(pad8(8 + json.length) - 8 - json.length);
  const header = JSON.parse(Buffer.from(json.buffer).toString('utf8')) as Header;
  const buffers: ArrayBuffer[] = [];
  for (const n of header.buffers) {
    const b = new ArrayBuffer(n);
    const bytes = new Uint8Array(b);
    for (let at = 0; at < n; at += COPY_STEP_BYTES) {
      reader.read(bytes.subarray(at, Math.min(n, at + COPY_STEP_BYTES)));
      yield;
    }
    reader.skip(pad8(n) - n);
    buffers.push(b);
  }
  return historyFromParts({ header, buffers });
}

/** The history whose parts these are: its arrays are views of `buffers` (not copies). Throws on
 *  parts that are not of this code's history. */
export function historyFromParts({ header, buffers }: HistoryParts): History {
  const made = header.objects.map((s): object => {
    if ('a' in s) return [];
    if ('m' in s) return new Map();
    if (s.c === 'Object') return {};
    const proto = CLASSES.get(s.c) as { constructor: new () => object } | undefined;
    if (!proto) throw new Error(`a history snapshot holds a ${s.c}, which this code does not have`);
    return new proto.constructor();
  });
  const decode = (e: Encoded): unknown => {
    if (typeof e !== 'object' || e === null) return e;
    if (Array.isArray(e)) throw new Error('a history snapshot has an array out of place');
    if ('r' in e) return made[e.r as number];
    if ('n' in e) return e.n === '-0' ? -0 : Number(e.n);
    if ('u' in e) return undefined;
    if ('t' in e) return VIEWS[e.t as string]!(buffers[e.b as number]!, e.o as number, e.l as number);
    throw new Error('a history snapshot has a value it cannot read');
  };
  header.objects.forEach((s, i) => {
    const o = made[i]!;
    if ('a' in s) for (const x of s.a) (o as unknown[]).push(decode(x));
    else if ('m' in s) for (const [k, x] of s.m) (o as Map<unknown, unknown>).set(decode(k), decode(x));
    else for (const [k, x] of Object.entries(s.f)) (o as Record<string, unknown>)[k] = decode(x);
  });
  const root = decode(header.root);
  if (!(root instanceof History)) throw new Error('a history snapshot does not hold a history');
  return root;
}
