// Reads a labelled CSV in the dataset format (GET /api/datasets/format) for the command-line tools
// (`npm run train -- --data`, `npm run eval:handbook -- --data`): parsed by csv-parser (quotes, BOM,
// CRLF), `timestamp` as ISO 8601 or epoch seconds, rows sorted by time (stable: file order breaks
// ties). Every problem names its line and what to do. The HTTP upload path has its own validator
// with column mapping (src/datasets/csv.ts); this one is for trusted files on the operator's disk.

import { createReadStream } from 'node:fs';
import csv from 'csv-parser';
import { UNKNOWN, type Transaction } from '../domain/transaction.ts';

export interface LabelledRow extends Transaction {
  label: 0 | 1;
  transaction_id: string;
}

export function parseTimestamp(value: string): number {
  const v = value.trim();
  return /^\d+(\.\d+)?$/.test(v) ? Number(v) * 1000 : Date.parse(v);
}

export async function readLabelledCsv(path: string): Promise<LabelledRow[]> {
  const rows: LabelledRow[] = [];
  let line = 1;
  let checked = false;
  const stream = createReadStream(path).pipe(csv({ mapHeaders: ({ header }) => header.replace(/^\uFEFF/, '').trim() }));
  for await (const record of stream as AsyncIterable<Record<string, string>>) {
    line++;
    if (!checked) {
      for (const need of ['timestamp', 'amount', 'customer_id', 'merchant_id', 'label']) {
        if (!(need in record)) throw new Error(`${path}: column \`${need}\` is required here (found: ${Object.keys(record).join(', ')})`);
      }
      checked = true;
    }
    const time = parseTimestamp(record.timestamp!);
    const amount = Number(record.amount);
    const label = record.label!.trim();
    if (!Number.isFinite(time)) throw new Error(`${path}:${line}: timestamp ${JSON.stringify(record.timestamp)} is neither ISO 8601 nor epoch seconds`);
    if (!Number.isFinite(amount) || amount < 0)
      throw new Error(
        `${path}:${line}: amount ${JSON.stringify(record.amount)} is not a non-negative number (remove currency symbols and thousands separators)`,
      );
    if (label !== '0' && label !== '1') throw new Error(`${path}:${line}: label ${JSON.stringify(record.label)} must be 0 or 1`);
    rows.push({
      transaction_id: record.transaction_id?.trim() || String(rows.length),
      time,
      amount,
      customer_id: record.customer_id!.trim(),
      merchant_id: record.merchant_id!.trim(),
      location: record.location?.trim() || UNKNOWN,
      payment_type: record.payment_type?.trim() || UNKNOWN,
      label: label === '1' ? 1 : 0,
    });
  }
  if (rows.length === 0) throw new Error(`${path}: no data rows`);
  return rows
    .map((r, i) => [r, i] as const)
    .sort((a, b) => a[0].time - b[0].time || a[1] - b[1])
    .map(([r]) => r);
}
