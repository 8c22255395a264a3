// A finished job's result files, all written by the job (batch-score.ts): one JSON line per scored
// row; `<result>.idx`, the byte offset of every line and then the file's length (Float64 each), so
// that a page is one read of a byte range however large the file; and the download CSV
// (result-row.ts), streamed as it is: plain RFC 4180, its header the first line. A drift warning
// belongs to the job (its summary) and the dashboard, never inside the file, where every CSV reader
// would take it for the header.

import { createReadStream } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { ResultRow } from './result-row.ts';

/** Where jobs' result files are kept: DATA_DIR/results. */
export function resultsDir(dataDir: string): string {
  return join(dataDir, 'results');
}

/** A job's result lines (`<id>.ndjson`, with `.idx`, `.csv` and, while it runs, `.features` beside). */
export function resultPath(dataDir: string, jobId: string): string {
  if (!/^job_[\w-]+$/.test(jobId)) throw new Error('not a job id');
  return join(resultsDir(dataDir), `${jobId}.ndjson`);
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
    return {
      rows: buf
        .toString('utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as ResultRow),
      total,
    };
  } finally {
    await handle.close();
  }
}

/** The result as CSV (written by the job next to the result lines), streamed as it is. */
export function csvStream(path: string): Readable {
  return createReadStream(`${path}.csv`);
}
