// A finished job's result files: one JSON line per scored row (batch-score.ts), an index of where
// each line starts, so that a page is one read of a byte range however large the file, and the
// download CSV written by the job (csv-out.ts), streamed as it is.

import { createReadStream } from 'node:fs';
import { open, readFile, writeFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { ResultRow } from './batch-score.ts';

/** Writes `<result>.idx`: the byte offset of every line, then the file's length (Float64 each). */
export async function indexResult(path: string): Promise<number> {
  const offsets: number[] = [];
  let position = 0;
  for await (const chunk of createReadStream(path)) {
    const buf = chunk as Buffer;
    let from = 0;
    if (offsets.length === 0 && buf.length > 0) offsets.push(0);
    for (let i = buf.indexOf(10, from); i !== -1; i = buf.indexOf(10, from)) {
      offsets.push(position + i + 1);
      from = i + 1;
    }
    position += buf.length;
  }
  // The last entry is the end of the file (after the final newline), so lines = entries − 1.
  if (offsets.length === 0) offsets.push(0);
  await writeFile(`${path}.idx`, Buffer.from(Float64Array.from(offsets).buffer));
  return offsets.length - 1;
}

export async function readPage(path: string, page: number, pageSize: number): Promise<{ rows: ResultRow[]; total: number }> {
  const idx = new Float64Array(new Uint8Array(await readFile(`${path}.idx`)).buffer);
  const total = idx.length - 1;
  const first = (page - 1) * pageSize;
  if (first >= total) return { rows: [], total };
  const last = Math.min(total, first + pageSize);
  const start = idx[first]!;
  const length = idx[last]! - start;
  const handle = await open(path, 'r');
  try {
    const buf = Buffer.alloc(length);
    await handle.read(buf, 0, length, start);
    return { rows: buf.toString('utf8').trim().split('\n').map((l) => JSON.parse(l) as ResultRow), total };
  } finally {
    await handle.close();
  }
}

/** The result as CSV (written by the job next to the result lines), streamed. */
export function csvStream(path: string): Readable {
  return createReadStream(`${path}.csv`);
}
