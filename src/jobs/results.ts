// A finished job's result file: one JSON line per scored row (batch-score.ts), plus an index of
// where each line starts, so that a page is one read of a byte range however large the file, and
// the CSV download is streamed line by line. In the download, every value a spreadsheet would run
// as a formula (leading =, +, -, @, tab or carriage return) is prefixed with an apostrophe.

import { createReadStream } from 'node:fs';
import { open, readFile, writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
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

/** A CSV cell: quoted when needed, and defused when a spreadsheet would run it as a formula. */
export function csvCell(value: unknown): string {
  let s = value === null || value === undefined ? '' : String(value);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export const DOWNLOAD_COLUMNS = ['row', 'transaction_id', 'amount', 'customer_id', 'merchant_id', 'risk_score', 'risk_band', 'decision', 'path', 'score_tabular', 'score_behavioral', 'score_velocity', 'score_graph', 'reason_1', 'reason_2', 'reason_3', 'label'] as const;

function csvLine(r: ResultRow): string {
  const reasons = [0, 1, 2].map((k) => r.top_reasons[k]?.text ?? '');
  const cs = r.channel_scores;
  return [r.row, r.transaction_id, r.amount, r.customer_id, r.merchant_id, r.risk_score, r.risk_band, r.decision, r.path, cs.tabular, cs.behavioral, cs.velocity, cs.graph, ...reasons, r.label ?? ''].map(csvCell).join(',') + '\r\n';
}

/** The result as CSV, streamed. */
export function csvStream(path: string): Readable {
  async function* lines() {
    yield DOWNLOAD_COLUMNS.join(',') + '\r\n';
    const rl = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
    for await (const line of rl) if (line) yield csvLine(JSON.parse(line) as ResultRow);
  }
  return Readable.from(lines());
}
