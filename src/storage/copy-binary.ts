// Rows in PostgreSQL's binary COPY format (`COPY … FROM STDIN (FORMAT binary)`), for bulk writes of
// bytes: a history snapshot's pieces go to the server as they are, where a bytea parameter would be
// sent as hex text built on the event loop (twice the bytes, and a copy of each piece as a string).
// The format: a signature and two zero words, then per row its field count and each field as its
// length and bytes (int4 big-endian for int4), then -1. Large values are handed out in slices, so a
// writer can yield between them.

import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
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

/** The COPY data for `rows`, in order: no chunk longer than COPY_SLICE_BYTES plus a row's small
 *  fields; a bytea value's bytes are views of it, never copies. */
export function* copyChunks(columns: readonly CopyColumn[], rows: Iterable<readonly unknown[]>): Generator<Uint8Array> {
  const header = Buffer.alloc(SIGNATURE.length + 8);
  SIGNATURE.copy(header);
  yield header;
  for (const row of rows) {
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
  yield Buffer.from([0xff, 0xff]);
}

/** Writes COPY data to the driver's stream: chunk by chunk, waiting while it is full and taking a
 *  turn of the event loop every millisecond or so, and beyond its first `bytesPerSecond` bytes at
 *  most that many a second; resolves once the server has stored it all, and
 *  rejects when the stream fails (the connection reset, the server refused a row). The stream's
 *  error is listened for from the start: one raised while this waits for a turn must be a
 *  rejection, never an 'error' event nobody hears (which would end the process). */
export async function writeCopy(stream: Writable, chunks: Iterable<Uint8Array>, bytesPerSecond = Number.POSITIVE_INFINITY): Promise<void> {
  const done = finished(stream);
  done.catch(() => {});
  const began = performance.now();
  let sent = 0;
  let since = began;
  for (const chunk of chunks) {
    if (stream.destroyed) break;
    if (!stream.write(chunk)) await Promise.race([once(stream, 'drain'), done]);
    sent += chunk.length;
    // Ahead of the pace: wait until it is caught up (a timer, so the loop answers meanwhile). The
    // first second's worth goes at once: a small write is not held back at all.
    const ahead = ((sent - bytesPerSecond) / bytesPerSecond) * 1000 - (performance.now() - began);
    if (ahead >= 1) {
      await Promise.race([new Promise<void>((resolve) => setTimeout(resolve, ahead)), done]);
      since = performance.now();
    } else if (performance.now() - since >= 1) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      since = performance.now();
    }
  }
  if (!stream.destroyed) stream.end();
  await done;
}
