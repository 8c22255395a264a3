// The parsed rows of a validated upload, kept next to its file (`<stored>.csv.cols`) so that the
// job that scores it neither parses the CSV a second time (validation reads every row anyway, and
// parsing is a large part of a job: bench/README.md, bench:batch) nor holds the file's rows in
// memory: they are written and read back a chunk at a time. The file is for one column mapping; a
// job whose mapping differs, or that finds the file missing, unfinished, damaged or from another
// version, parses the CSV itself. Written under a temporary name and renamed once the file has
// validated; removed with its upload (storage/datasets.ts).
// Layout: "FRSCOLS2"; chunks; a footer (JSON: mapping key, rows, chunks, whether the rows are in
// time order), its length (u32) and "FRSCOLS2" again. A chunk: five u32 (rows, new customer or
// merchant ids, new locations or payment types, length of those strings as JSON, length of the
// transaction ids' bytes), the JSON, padding to 8 bytes, then the chunk's columns as little-endian
// typed arrays (`COLUMNS` order), the ids' UTF-8 bytes and padding to 8. Strings are numbered in
// the order they first appear in the file, so a chunk refers to those of earlier chunks.

import { closeSync, fstatSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Interned } from '../domain/history/strings.ts';
import { validateCsv, type ColumnMapping, type ParsedRow, type ValidateOptions, type ValidationResult } from './csv.ts';

const MAGIC = Buffer.from('FRSCOLS2');
/** Rows per chunk. */
export const CHUNK_ROWS = 2048;
const NO_LABEL = -1;

/** One chunk's rows, column by column (ids: `idOffsets[r]` is row r's start in `idBytes`, stored
 *  as `-1 - start` when the row has none; row r ends where row r + 1 starts). */
export interface ColumnChunk {
  /** File row index (from 0) of the chunk's first row. */
  start: number;
  count: number;
  times: Float64Array;
  amounts: Float64Array;
  customers: Int32Array;
  merchants: Int32Array;
  locations: Int32Array;
  paymentTypes: Int32Array;
  labels: Int8Array;
  idOffsets: Int32Array;
  idBytes: Buffer;
}

type NumberColumn = 'times' | 'amounts' | 'customers' | 'merchants' | 'locations' | 'paymentTypes' | 'idOffsets' | 'labels';
const COLUMNS: [NumberColumn, Float64ArrayConstructor | Int32ArrayConstructor | Int8ArrayConstructor, number][] = [
  ['times', Float64Array, 0],
  ['amounts', Float64Array, 0],
  ['customers', Int32Array, 0],
  ['merchants', Int32Array, 0],
  ['locations', Int32Array, 0],
  ['paymentTypes', Int32Array, 0],
  ['idOffsets', Int32Array, 1],
  ['labels', Int8Array, 0],
];

interface Footer {
  key: string;
  rows: number;
  chunks: number;
  /** Every row has a time and they never go back, or no row has one: file order is time order. */
  timeOrdered: boolean;
}

export function columnsPath(csvPath: string): string {
  return `${csvPath}.cols`;
}

/** The mapping as the file records it: our columns' entries in a fixed order, unset ones left
 *  out. The mapped fields are not in it: the kept rows hold none of them (a job that reads fields
 *  reads them from the CSV), so mapping a field keeps the rows usable. */
function mappingKey(mapping: ColumnMapping): string {
  return JSON.stringify(
    Object.entries(mapping)
      .filter(([k, v]) => k !== 'fields' && v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );
}

const pad8 = (n: number) => (8 - (n % 8)) % 8;

/** Writes rows as they are parsed, a chunk at a time, to `<path>.partial`; `finish` names the file. */
class ColumnsWriter {
  private readonly path: string;

  private readonly fd: number;
  /** Strings numbered in the order they first appear; a chunk carries those new since the last. */
  private readonly entities = new Interned();
  private readonly places = new Interned();
  private entitiesWritten = 0;
  private placesWritten = 0;
  private readonly chunk = {
    times: new Float64Array(CHUNK_ROWS),
    amounts: new Float64Array(CHUNK_ROWS),
    customers: new Int32Array(CHUNK_ROWS),
    merchants: new Int32Array(CHUNK_ROWS),
    locations: new Int32Array(CHUNK_ROWS),
    paymentTypes: new Int32Array(CHUNK_ROWS),
    idOffsets: new Int32Array(CHUNK_ROWS + 1),
    labels: new Int8Array(CHUNK_ROWS),
  };
  private ids = Buffer.allocUnsafe(1 << 16);
  private idUsed = 0;
  private count = 0;
  private rows = 0;
  private chunks = 0;
  private position = 0;
  private lastTime = -Infinity;
  private timed = 0;
  private ordered = true;

  constructor(path: string) {
    this.path = path;
    this.fd = openSync(`${path}.partial`, 'w', 0o600);
    this.write(MAGIC);
  }

  push(row: ParsedRow): void {
    const k = this.count++;
    const c = this.chunk;
    const time = row.time ?? Number.NaN;
    if (Number.isNaN(time)) this.ordered &&= this.timed === 0;
    else {
      this.ordered &&= this.timed === this.rows && time >= this.lastTime;
      this.lastTime = time;
      this.timed++;
    }
    c.times[k] = time;
    c.amounts[k] = row.amount;
    c.customers[k] = this.entities.id(row.customer_id);
    c.merchants[k] = this.entities.id(row.merchant_id);
    c.locations[k] = this.places.id(row.location);
    c.paymentTypes[k] = this.places.id(row.payment_type);
    c.labels[k] = row.label ?? NO_LABEL;
    const need = this.idUsed + Buffer.byteLength(row.transaction_id, 'utf8');
    if (need > this.ids.length) {
      const wider = Buffer.allocUnsafe(Math.max(need, this.ids.length * 2));
      this.ids.copy(wider, 0, 0, this.idUsed);
      this.ids = wider;
    }
    c.idOffsets[k] = this.idUsed;
    this.idUsed += this.ids.write(row.transaction_id, this.idUsed, 'utf8');
    this.rows++;
    if (this.count === CHUNK_ROWS) this.flush();
  }

  private write(bytes: Uint8Array): void {
    for (let done = 0; done < bytes.length; ) done += writeSync(this.fd, bytes, done, bytes.length - done, this.position + done);
    this.position += bytes.length;
  }

  private flush(): void {
    const n = this.count;
    if (n === 0) return;
    const c = this.chunk;
    c.idOffsets[n] = this.idUsed;
    const newEntities = this.entities.values.slice(this.entitiesWritten);
    const newPlaces = this.places.values.slice(this.placesWritten);
    const strings = Buffer.from(JSON.stringify([newEntities, newPlaces]));
    const head = Buffer.alloc(20);
    [n, newEntities.length, newPlaces.length, strings.length, this.idUsed].forEach((v, i) => {
      head.writeUInt32LE(v, i * 4);
    });
    this.write(head);
    this.write(strings);
    this.write(Buffer.alloc(pad8(this.position)));
    for (const [name, , extra] of COLUMNS) {
      const a = c[name].subarray(0, n + extra);
      this.write(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
    }
    this.write(this.ids.subarray(0, this.idUsed));
    this.write(Buffer.alloc(pad8(this.position)));
    this.entitiesWritten = this.entities.values.length;
    this.placesWritten = this.places.values.length;
    this.count = 0;
    this.idUsed = 0;
    this.chunks++;
  }

  /** Writes the last chunk and the footer, and gives the file its name. */
  finish(mapping: ColumnMapping): void {
    this.flush();
    const footer: Footer = { key: mappingKey(mapping), rows: this.rows, chunks: this.chunks, timeOrdered: this.ordered };
    const json = Buffer.from(JSON.stringify(footer));
    const length = Buffer.alloc(4);
    length.writeUInt32LE(json.length);
    this.write(json);
    this.write(length);
    this.write(MAGIC);
    closeSync(this.fd);
    renameSync(`${this.path}.partial`, this.path);
  }

  abandon(): void {
    try {
      closeSync(this.fd);
    } catch {
      // already closed
    }
    rmSync(`${this.path}.partial`, { force: true });
  }
}

/** A kept file, read chunk by chunk in file order. Customer and merchant ids and places are
 *  numbered across the file; `entities` and `places` hold those of the chunks read so far. */
export class KeptColumns {
  private readonly fd: number;
  readonly rows: number;
  readonly chunkCount: number;
  readonly timeOrdered: boolean;

  readonly entities: string[] = [];
  readonly places: string[] = [];

  private constructor(fd: number, rows: number, chunkCount: number, timeOrdered: boolean) {
    this.fd = fd;
    this.rows = rows;
    this.chunkCount = chunkCount;
    this.timeOrdered = timeOrdered;
  }

  /** The rows kept for `mapping` at validation, or undefined when there are none to use (no file,
   *  another mapping or version, or a file not finished). */
  static open(csvPath: string, mapping: ColumnMapping): KeptColumns | undefined {
    let fd: number;
    try {
      fd = openSync(columnsPath(csvPath), 'r');
    } catch {
      return undefined;
    }
    try {
      const size = fstatSync(fd).size;
      const tail = Buffer.alloc(12);
      if (size < MAGIC.length * 2 + 4 || readAt(fd, tail, size - 12) !== 12 || !tail.subarray(4).equals(MAGIC)) throw new Error('no footer');
      const footerLength = tail.readUInt32LE(0);
      const footerBytes = Buffer.alloc(footerLength);
      const end = size - 12 - footerLength;
      const head = Buffer.alloc(MAGIC.length);
      if (end < MAGIC.length || readAt(fd, footerBytes, end) !== footerLength || readAt(fd, head, 0) !== MAGIC.length || !head.equals(MAGIC))
        throw new Error('damaged');
      const footer = JSON.parse(footerBytes.toString('utf8')) as Footer;
      if (footer.key !== mappingKey(mapping)) throw new Error('another mapping');
      // The chunks' headers, end to end: they must add up to the rows and the bytes the footer has.
      const chunkHead = Buffer.alloc(20);
      let at = MAGIC.length;
      let rows = 0;
      for (let k = 0; k < footer.chunks; k++) {
        if (readAt(fd, chunkHead, at) !== 20) throw new Error('cut short');
        const extent = chunkExtent(chunkHead, at);
        if (extent.count === 0 || extent.count > CHUNK_ROWS) throw new Error('damaged');
        rows += extent.count;
        at += extent.total;
      }
      if (at !== end || rows !== footer.rows) throw new Error('damaged');
      return new KeptColumns(fd, footer.rows, footer.chunks, footer.timeOrdered);
    } catch {
      closeSync(fd);
      return undefined;
    }
  }

  /** The chunks in file order (each call reads the file again from its start); throws when the
   *  file does not read back whole (its chunks' sizes were checked when it was opened). */
  *chunks(): Generator<ColumnChunk> {
    let at = MAGIC.length;
    let start = 0;
    let entitiesSeen = 0;
    let placesSeen = 0;
    const head = Buffer.alloc(20);
    for (let k = 0; k < this.chunkCount; k++) {
      const extent = readAt(this.fd, head, at) === 20 ? chunkExtent(head, at) : undefined;
      const bytes = Buffer.alloc(extent?.total ?? 0);
      if (!extent || readAt(this.fd, bytes, at) !== extent.total) throw new Error('kept rows: a chunk is cut short');
      const { count } = extent;
      const [entities, places] = JSON.parse(bytes.toString('utf8', 20, 20 + extent.stringsLength)) as [string[], string[]];
      // Names are added on the first pass over the file; a later pass finds them there already.
      if (this.entities.length === entitiesSeen) this.entities.push(...entities);
      if (this.places.length === placesSeen) this.places.push(...places);
      entitiesSeen += entities.length;
      placesSeen += places.length;
      if (
        entities.length !== extent.newEntities ||
        places.length !== extent.newPlaces ||
        this.entities.length < entitiesSeen ||
        this.places.length < placesSeen
      ) {
        throw new Error('kept rows: string tables out of step');
      }
      let p = extent.body;
      const chunk = { start, count } as ColumnChunk;
      for (const [name, Type, extra] of COLUMNS) {
        const length = (count + extra) * Type.BYTES_PER_ELEMENT;
        // Sliced into an ArrayBuffer of its own: aligned for its type whatever the offset.
        (chunk as unknown as Record<string, unknown>)[name] = new Type(bytes.buffer.slice(bytes.byteOffset + p, bytes.byteOffset + p + length) as ArrayBuffer);
        p += length;
      }
      chunk.idBytes = bytes.subarray(p, p + extent.idLength);
      if (
        !within(chunk.customers, entitiesSeen) ||
        !within(chunk.merchants, entitiesSeen) ||
        !within(chunk.locations, placesSeen) ||
        !within(chunk.paymentTypes, placesSeen)
      ) {
        throw new Error('kept rows: an index past its string table');
      }
      yield chunk;
      at += extent.total;
      start += count;
    }
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** A chunk's header fields, where its columns start and its length in bytes, both counted from
 *  `at`, the file offset of its header (padding is to file offsets that are multiples of 8). */
function chunkExtent(
  head: Buffer,
  at: number,
): { count: number; newEntities: number; newPlaces: number; stringsLength: number; idLength: number; body: number; total: number } {
  const [count, newEntities, newPlaces, stringsLength, idLength] = [0, 1, 2, 3, 4].map((i) => head.readUInt32LE(i * 4)) as [
    number,
    number,
    number,
    number,
    number,
  ];
  const bodyStart = at + 20 + stringsLength + pad8(at + 20 + stringsLength);
  const columnBytes = COLUMNS.reduce((sum, [, Type, extra]) => sum + (count + extra) * Type.BYTES_PER_ELEMENT, 0);
  const chunkEnd = bodyStart + columnBytes + idLength;
  return { count, newEntities, newPlaces, stringsLength, idLength, body: bodyStart - at, total: chunkEnd + pad8(chunkEnd) - at };
}

function within(a: Int32Array, size: number): boolean {
  for (let i = 0; i < a.length; i++) if (a[i]! < 0 || a[i]! >= size) return false;
  return true;
}

function readAt(fd: number, into: Buffer, position: number): number {
  let done = 0;
  while (done < into.length) {
    const n = readSync(fd, into, done, into.length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}

/** Removes an upload's kept rows, if any. */
export async function dropColumns(csvPath: string): Promise<void> {
  await rm(columnsPath(csvPath), { force: true });
  await rm(`${columnsPath(csvPath)}.partial`, { force: true });
}

/** Validates an upload (csv.ts) and, when it can be scored, keeps its parsed rows for the job;
 *  a file that does not validate keeps none (an earlier mapping's rows are removed). Failing to
 *  write them costs the job a parse, nothing else. */
export async function validateAndKeep(csvPath: string, options: ValidateOptions): Promise<ValidationResult> {
  let writer: ColumnsWriter | undefined;
  try {
    writer = new ColumnsWriter(columnsPath(csvPath));
  } catch {
    writer = undefined;
  }
  let keeping = writer !== undefined;
  const collect = (row: ParsedRow) => {
    if (!keeping) return;
    try {
      writer!.push(row);
    } catch {
      keeping = false;
    }
  };
  let result: ValidationResult;
  try {
    result = await validateCsv(csvPath, { ...options, collect });
  } catch (e) {
    writer?.abandon();
    throw e;
  }
  if (result.valid && keeping) {
    try {
      writer!.finish(options.mapping ?? {});
      return result;
    } catch {
      // fall through: no rows kept
    }
  }
  writer?.abandon();
  await dropColumns(csvPath);
  return result;
}
