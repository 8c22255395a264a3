// Rows in PostgreSQL's binary COPY format, both ways. Written (`COPY … FROM STDIN (FORMAT binary)`)
// for bulk writes of bytes: a history snapshot's pieces go to the server as they are, where a bytea
// parameter would be sent as hex text built on the event loop (twice the bytes, and a copy of each
// piece as a string); large values are handed out in slices, so a writer can yield between them.
// Read (`COPY (…) TO STDOUT (FORMAT binary)`) for bulk reads: a history's load takes its rows'
// numbers and strings as the bytes they arrive as, with no text to parse and no value made per field.
// The format: a signature, a flags word and an extension length (and its bytes), then per row its
// field count and each field as its length (-1: NULL) and bytes, big-endian, then a count of -1.

import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { setImmediate as turn, setTimeout as wait } from 'node:timers/promises';
import type { CopyColumn } from './db.ts';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
/** Values longer than this are handed out in slices of this size. */
export const COPY_SLICE_BYTES = 256 << 10;

/** The COPY statement that reads what `copyChunks` makes. Names are the caller's own constants. */
export function copyStatement(table: string, columns: readonly CopyColumn[]): string {
  return `COPY ${table} (${columns.map((c) => c.name).join(', ')}) FROM STDIN (FORMAT binary)`;
}

function field(column: CopyColumn, value: unknown): Uint8Array {
  if (value === null || value === undefined) return Buffer.from([0xff, 0xff, 0xff, 0xff]);
  switch (column.type) {
    case 'int4': {
      if (!Number.isInteger(value)) throw new Error(`column ${column.name}: ${String(value)} is not a whole number`);
      const b = Buffer.alloc(8);
      b.writeInt32BE(4, 0);
      b.writeInt32BE(value as number, 4);
      return b;
    }
    case 'text': {
      const text = Buffer.from(String(value), 'utf8');
      const b = Buffer.alloc(4 + text.length);
      b.writeInt32BE(text.length, 0);
      text.copy(b, 4);
      return b;
    }
    case 'bytea': {
      if (!(value instanceof Uint8Array)) throw new Error(`column ${column.name}: bytea needs bytes`);
      const b = Buffer.alloc(4);
      b.writeInt32BE(value.length, 0);
      return b;
    }
  }
}

/** The COPY data of one row: no chunk longer than COPY_SLICE_BYTES plus the row's small fields; a
 *  bytea value's bytes are views of it, never copies. */
function* rowChunks(columns: readonly CopyColumn[], row: readonly unknown[]): Generator<Uint8Array> {
  if (row.length !== columns.length) throw new Error(`a row of ${row.length} values for ${columns.length} columns`);
  const count = Buffer.alloc(2);
  count.writeInt16BE(columns.length);
  let small: Uint8Array[] = [count];
  for (let i = 0; i < columns.length; i++) {
    small.push(field(columns[i]!, row[i]));
    const value = row[i];
    if (columns[i]!.type === 'bytea' && value instanceof Uint8Array) {
      yield Buffer.concat(small);
      small = [];
      for (let at = 0; at < value.length; at += COPY_SLICE_BYTES) yield value.subarray(at, Math.min(value.length, at + COPY_SLICE_BYTES));
    }
  }
  if (small.length) yield Buffer.concat(small);
}

const header = () => {
  const bytes = Buffer.alloc(SIGNATURE.length + 8);
  SIGNATURE.copy(bytes);
  return bytes;
};
const trailer = () => Buffer.from([0xff, 0xff]);

/** The COPY data for `rows`, in order (rowChunks): rows in an array, or read one at a time as they
 *  are sent. */
export async function* copyChunks(
  columns: readonly CopyColumn[],
  rows: Iterable<readonly unknown[]> | AsyncIterable<readonly unknown[]>,
): AsyncGenerator<Uint8Array> {
  yield header();
  for await (const row of rows) yield* rowChunks(columns, row);
  yield trailer();
}

/** Writes COPY data to the driver's stream: chunk by chunk, waiting while it is full and taking a
 *  turn of the event loop every millisecond or so, and beyond its first `bytesPerSecond` bytes at
 *  most that many a second; resolves once the server has stored it all, and
 *  rejects when the stream fails (the connection reset, the server refused a row). The stream's
 *  error is listened for from the start: one raised while this waits for a turn must be a
 *  rejection, never an 'error' event nobody hears (which would end the process). */
export async function writeCopy(stream: Writable, chunks: AsyncIterable<Uint8Array>, bytesPerSecond = Number.POSITIVE_INFINITY): Promise<void> {
  const done = finished(stream);
  done.catch(() => {});
  const began = performance.now();
  let sent = 0;
  let since = began;
  for await (const chunk of chunks) {
    if (stream.destroyed) break;
    if (!stream.write(chunk)) await Promise.race([once(stream, 'drain'), done]);
    sent += chunk.length;
    // Ahead of the pace: wait until it is caught up (a timer, so the loop answers meanwhile). The
    // first second's worth goes at once: a small write is not held back at all.
    const ahead = ((sent - bytesPerSecond) / bytesPerSecond) * 1000 - (performance.now() - began);
    if (ahead >= 1) {
      await Promise.race([wait(ahead), done]);
      since = performance.now();
    } else if (performance.now() - since >= 1) {
      await turn();
      since = performance.now();
    }
  }
  if (!stream.destroyed) stream.end();
  await done;
}

/** A literal for a statement that cannot take parameters (COPY): a finite number as it is, a string
 *  quoted as an escape string (right whatever `standard_conforming_strings` says). */
export function sqlLiteral(value: string | number): string {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`${value} cannot be written as an SQL literal`);
    return String(value);
  }
  if (value.includes('\0')) throw new Error('a string with a NUL cannot be an SQL literal');
  return `E'${value.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/**
 * Reads binary COPY data as it arrives, in chunks cut anywhere: each whole row is handed to `row`
 * with where its fields start (`starts`) and their lengths (`lengths`, -1 for NULL) in `bytes`,
 * valid only during the call. A row cut by a chunk's end waits for the next chunk.
 */
export class CopyReader {
  readonly fields: number;

  readonly starts: Int32Array;
  readonly lengths: Int32Array;
  /** The trailer was read: the data is complete. */
  ended = false;
  #header = false;
  #rest: Buffer | undefined;

  constructor(fields: number) {
    this.fields = fields;
    this.starts = new Int32Array(fields);
    this.lengths = new Int32Array(fields);
  }

  push(chunk: Uint8Array, row: (bytes: Buffer, view: DataView) => void): void {
    if (this.ended) throw new Error('COPY data after its end');
    const bytes = this.#rest ? Buffer.concat([this.#rest, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    this.#rest = undefined;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const end = bytes.length;
    let at = 0;
    if (!this.#header) {
      if (end < SIGNATURE.length + 8) return void (this.#rest = Buffer.from(bytes));
      if (!bytes.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new Error('not binary COPY data (its signature is wrong)');
      const extension = view.getInt32(SIGNATURE.length + 4);
      if (end < SIGNATURE.length + 8 + extension) return void (this.#rest = Buffer.from(bytes));
      at = SIGNATURE.length + 8 + extension;
      this.#header = true;
    }
    const { starts, lengths, fields } = this;
    for (;;) {
      const rowStart = at;
      if (at + 2 > end) break;
      const count = view.getInt16(at);
      at += 2;
      if (count === -1) {
        this.ended = true;
        return;
      }
      if (count !== fields) throw new Error(`a COPY row of ${count} fields where ${fields} were expected`);
      let whole = true;
      for (let f = 0; f < fields; f++) {
        if (at + 4 > end) {
          whole = false;
          break;
        }
        const length = view.getInt32(at);
        at += 4;
        starts[f] = at;
        lengths[f] = length;
        if (length > 0) at += length;
        if (at > end) {
          whole = false;
          break;
        }
      }
      if (!whole) {
        at = rowStart;
        break;
      }
      row(bytes, view);
    }
    // Kept as a copy: the chunk it came from may be reused by the driver.
    if (at < end) this.#rest = Buffer.from(bytes.subarray(at));
  }
}

/** The driver's COPY TO stream as chunks of what is buffered whenever the caller asks (the driver
 *  pushes each row as a chunk of its own: read one at a time they would cost a promise a row). When
 *  the caller stops early, the rest is read and dropped: the connection takes no other statement
 *  until its COPY has ended. A failure of the stream (the connection lost, the server's error) is
 *  thrown. */
export async function* readCopy(stream: Readable): AsyncGenerator<Uint8Array> {
  let ended = false;
  let failure: unknown;
  stream.once('end', () => (ended = true));
  stream.once('error', (e) => (failure = e));
  const change = () =>
    new Promise<void>((resolve) => {
      const settle = () => {
        stream.off('readable', settle);
        stream.off('end', settle);
        stream.off('error', settle);
        resolve();
      };
      stream.on('readable', settle);
      stream.on('end', settle);
      stream.on('error', settle);
    });
  try {
    for (;;) {
      if (failure !== undefined) throw failure;
      const chunk = stream.read() as Buffer | null;
      if (chunk !== null) {
        yield chunk;
        continue;
      }
      if (ended) return;
      await change();
    }
  } finally {
    if (!ended && failure === undefined && !stream.destroyed) {
      stream.on('data', () => {});
      await new Promise<void>((resolve) => {
        stream.once('end', resolve);
        stream.once('error', () => resolve());
      });
    }
  }
}
