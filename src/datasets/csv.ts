// Reading an uploaded dataset CSV (the format GET /api/datasets/format describes) without trusting it: the file
// is only ever parsed as text by csv-parser (BOM, quoted commas, CRLF), never executed. A column
// mapping names the file's own headers for our columns. `validateCsv` reads the whole file once
// and answers what a person needs to fix it: columns found and missing, rows, and per-column
// problems with the first row numbers and advice. `readRows` yields the parsed rows of a valid
// file for scoring, and `readRowsWithCells` each with the cells of the organization's fields the
// mapping maps (read as text here; mapped-fields.ts makes values of them). Row numbers count data
// rows from 1 (the header is not a row).

import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import csv from 'csv-parser';
import { UNKNOWN, type TransactionEntities, type TransactionParties } from '../domain/transaction.ts';
import { keptAmount } from '../domain/amount.ts';
import { DATASET_COLUMNS, fieldEntries, OPTIONAL_COLUMNS, REQUIRED_COLUMNS, type ColumnMapping, type DatasetColumn } from './column-names.ts';

export { DATASET_COLUMNS, OPTIONAL_COLUMNS, REQUIRED_COLUMNS, type ColumnMapping, type DatasetColumn };

export interface ColumnProblem {
  column: DatasetColumn;
  /** The file's header the column was read from. */
  header: string;
  count: number;
  /** The first rows with the problem (data rows, from 1). */
  rows: number[];
  examples: string[];
  message: string;
  fix: string;
}

export interface ValidationResult {
  valid: boolean;
  rows: number;
  columns_found: string[];
  /** Our column → the header used, or null when absent. */
  columns: Record<DatasetColumn, string | null>;
  missing_required: DatasetColumn[];
  missing_optional: DatasetColumn[];
  /** Fields the mapping maps onto a header the file does not have (present only when the mapping
   *  maps fields): the file does not validate until each is found or left out. */
  missing_fields?: string[];
  has_labels: boolean;
  problems: ColumnProblem[];
  /** File-level problems (empty, binary, too many rows, ragged lines). */
  file_problems: { reason: 'validation_failed' | 'too_many_rows'; message: string; fix: string }[];
}

/** A CSV row as read: a transaction whose time may be missing (no timestamp column). */
export interface ParsedRow extends TransactionParties, TransactionEntities {
  row: number;
  transaction_id: string;
  /** Epoch milliseconds, or undefined when the file has no timestamp column. */
  time: number | undefined;
  label: 0 | 1 | undefined;
}

const MAX_LISTED_ROWS = 10;

export function parseTimestamp(value: string): number {
  const v = value.trim();
  return /^\d+(\.\d+)?$/.test(v) ? Number(v) * 1000 : Date.parse(v);
}

/** A plain decimal number: digits, one optional decimal point, optional leading minus. */
export const NUMBER = /^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;

/** The file's header a mapping names: that header, else one that differs only in case and
 *  surrounding spaces; null when the file has neither. */
function findHeader(headers: readonly string[], byLower: ReadonlyMap<string, string>, mapped: string): string | null {
  return headers.includes(mapped) ? mapped : (byLower.get(mapped.trim().toLowerCase()) ?? null);
}

const lowerCased = (headers: readonly string[]) => new Map(headers.map((h) => [h.trim().toLowerCase(), h]));

/** Resolves our columns to the file's headers: the mapping first, else a header of the same name
 *  (case and surrounding spaces ignored). */
export function resolveColumns(headers: readonly string[], mapping: ColumnMapping = {}): Record<DatasetColumn, string | null> {
  const byLower = lowerCased(headers);
  return Object.fromEntries(
    DATASET_COLUMNS.map((c) => {
      const mapped = mapping[c];
      if (mapped !== undefined) return [c, findHeader(headers, byLower, mapped)];
      return [c, byLower.get(c) ?? null];
    }),
  ) as Record<DatasetColumn, string | null>;
}

/** The headers of the mapped fields, in the mapping's order (null: not in the file). A field is
 *  read only from the header the mapping names: never from one that merely has its name. */
export function resolveFields(headers: readonly string[], mapping: ColumnMapping): (string | null)[] {
  const byLower = lowerCased(headers);
  return fieldEntries(mapping).map(([, header]) => findHeader(headers, byLower, header));
}

/** Whether the file looks like text: no NUL byte and valid UTF-8 in its first 64 KiB. */
async function looksLikeText(path: string): Promise<boolean> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(65_536);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const head = buffer.subarray(0, bytesRead);
    if (head.includes(0)) return false;
    // Cut at a character boundary before checking UTF-8 (a multi-byte character may straddle the end).
    let end = head.length;
    while (end > 0 && end > head.length - 4 && (head[end - 1]! & 0xc0) === 0x80) end--;
    if (end > 0 && head[end - 1]! >= 0xc0) end--;
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, end));
      return true;
    } catch {
      return false;
    }
  } finally {
    await handle.close();
  }
}

function parser() {
  return csv({ mapHeaders: ({ header, index }) => (index === 0 ? header.replace(/^\uFEFF/, '') : header), strict: false });
}

export interface ValidateOptions {
  mapping?: ColumnMapping;
  maxRows: number;
  /** Called with each row within `maxRows`, parsed as `readRows` parses it (columns.ts keeps
   *  them; test/datasets/columns.test.ts holds the two to the same rows). */
  collect?: (row: ParsedRow) => void;
}

export async function validateCsv(path: string, o: ValidateOptions): Promise<ValidationResult> {
  const result: ValidationResult = {
    valid: false,
    rows: 0,
    columns_found: [],
    columns: Object.fromEntries(DATASET_COLUMNS.map((c) => [c, null])) as Record<DatasetColumn, string | null>,
    missing_required: [],
    missing_optional: [],
    has_labels: false,
    problems: [],
    file_problems: [],
  };
  if (!(await looksLikeText(path))) {
    result.file_problems.push({
      reason: 'validation_failed',
      message: 'The file is not a text CSV (it contains binary data or is not UTF-8).',
      fix: 'Export the data as CSV (UTF-8, comma-separated) and upload that file.',
    });
    return result;
  }
  const problems = new Map<string, ColumnProblem>();
  const note = (column: DatasetColumn, header: string, row: number, value: string, message: string, fix: string) => {
    const key = `${column}:${message}`;
    let p = problems.get(key);
    if (!p) problems.set(key, (p = { column, header, count: 0, rows: [], examples: [], message, fix }));
    p.count++;
    if (p.rows.length < MAX_LISTED_ROWS) p.rows.push(row);
    if (p.examples.length < 3 && !p.examples.includes(value)) p.examples.push(value.slice(0, 40));
  };
  let headersSeen = false;
  let tooMany = false;
  const stream = createReadStream(path).pipe(parser());
  stream.on('headers', (headers: string[]) => {
    headersSeen = true;
    result.columns_found = headers;
    result.columns = resolveColumns(headers, o.mapping);
    if (o.mapping?.fields) {
      const found = resolveFields(headers, o.mapping);
      result.missing_fields = fieldEntries(o.mapping)
        .filter((_, i) => found[i] === null)
        .map(([name]) => name);
    }
  });
  for await (const record of stream as AsyncIterable<Record<string, string>>) {
    const row = ++result.rows;
    if (row > o.maxRows) {
      tooMany = true;
      continue; // keep counting, stop checking
    }
    const c = result.columns;
    const value = (col: DatasetColumn) => (c[col] === null ? undefined : (record[c[col]!] ?? ''));
    // The timestamp is parsed once, for its check and for the parsed row.
    const amount = value('amount');
    const amountText = amount?.trim();
    if (amount !== undefined) {
      if (!NUMBER.test(amountText!))
        note(
          'amount',
          c.amount!,
          row,
          amount,
          'is not a number',
          'Remove currency symbols and thousands separators: write 1234.50, not $1,234.50 or 1.234,50.',
        );
      else if (Number(amountText) < 0)
        note('amount', c.amount!, row, amount, 'is negative', 'Amounts must not be negative; leave refunds and reversals out of the file.');
    }
    for (const col of ['customer_id', 'merchant_id'] as const) {
      const v = value(col);
      if (v !== undefined && v.trim() === '') note(col, c[col]!, row, v, 'is empty', `Every row needs a ${col}.`);
    }
    const ts = value('timestamp');
    const tsText = ts?.trim() ?? '';
    const time = tsText === '' ? undefined : parseTimestamp(tsText);
    if (time !== undefined && !Number.isFinite(time))
      note('timestamp', c.timestamp!, row, ts!, 'is not a time', 'Write times as ISO 8601 (2026-01-31T14:05:00Z) or epoch seconds, or leave the cell empty.');
    const label = value('label');
    const labelText = label?.trim() ?? '';
    if (label !== undefined && labelText !== '0' && labelText !== '1' && labelText !== '')
      note('label', c.label!, row, label, 'is not 0 or 1', 'Use 1 for fraud and 0 for legitimate (leave the cell empty when unknown).');
    o.collect?.(rowOf((col) => value(col)?.trim() ?? '', row, time));
  }
  if (!headersSeen) {
    result.file_problems.push({
      reason: 'validation_failed',
      message: 'The file is empty.',
      fix: 'Upload a CSV whose first line names the columns, followed by at least one row.',
    });
    return result;
  }
  result.missing_required = REQUIRED_COLUMNS.filter((col) => result.columns[col] === null);
  result.missing_optional = OPTIONAL_COLUMNS.filter((col) => result.columns[col] === null);
  result.has_labels = result.columns.label !== null;
  result.problems = [...problems.values()];
  if (result.rows === 0)
    result.file_problems.push({
      reason: 'validation_failed',
      message: 'The file has a header but no rows.',
      fix: 'Upload a file with at least one transaction.',
    });
  if (tooMany)
    result.file_problems.push({
      reason: 'too_many_rows',
      message: `The file has ${result.rows} rows; this server scores at most ${o.maxRows}.`,
      fix: `Split the file into parts of at most ${o.maxRows} rows.`,
    });
  result.valid = result.missing_required.length === 0 && !result.missing_fields?.length && result.problems.length === 0 && result.file_problems.length === 0;
  return result;
}

/** A row from its trimmed cells ('' for a column the file lacks) and its parsed timestamp
 *  (unknown optional values as in the score request). */
function rowOf(get: (col: DatasetColumn) => string, row: number, time: number | undefined): ParsedRow {
  const label = get('label');
  return {
    row,
    transaction_id: get('transaction_id') || String(row),
    time,
    amount: keptAmount(Number(get('amount'))),
    customer_id: get('customer_id'),
    merchant_id: get('merchant_id'),
    location: get('location') || UNKNOWN,
    payment_type: get('payment_type') || UNKNOWN,
    label: label === '1' ? 1 : label === '0' ? 0 : undefined,
  };
}

/** One record of the file as a row. */
function parseRecord(record: Record<string, string>, c: Record<DatasetColumn, string | null>, row: number): ParsedRow {
  const get = (col: DatasetColumn) => (c[col] === null ? '' : (record[c[col]!] ?? '').trim());
  const ts = get('timestamp');
  return rowOf(get, row, ts === '' ? undefined : parseTimestamp(ts));
}

/** A few values from the top of the file for each header, as written (distinct, non-empty, cut to
 *  40 characters): what the mapping editor shows beside each header. Read from the file on
 *  request, never stored, so they go when the file does. */
export async function sampleValues(path: string, o: { rows: number; perHeader: number }): Promise<Record<string, string[]>> {
  const samples: Record<string, string[]> = {};
  const file = createReadStream(path);
  const stream = file.pipe(parser());
  stream.on('headers', (headers: string[]) => {
    for (const h of headers) samples[h] = [];
  });
  let row = 0;
  for await (const record of stream as AsyncIterable<Record<string, string>>) {
    for (const [h, values] of Object.entries(samples)) {
      const v = (record[h] ?? '').trim().slice(0, 40);
      if (v !== '' && values.length < o.perHeader && !values.includes(v)) values.push(v);
    }
    if (++row >= o.rows) break;
  }
  file.destroy();
  return samples;
}

/** The rows of a file that validated, parsed. */
export async function* readRows(path: string, mapping: ColumnMapping = {}): AsyncGenerator<ParsedRow> {
  let columns: Record<DatasetColumn, string | null> | undefined;
  const stream = createReadStream(path).pipe(parser());
  stream.on('headers', (headers: string[]) => (columns = resolveColumns(headers, mapping)));
  let row = 0;
  for await (const record of stream as AsyncIterable<Record<string, string>>) yield parseRecord(record, columns!, ++row);
}

/** A row with the trimmed cells of its mapped fields, in the mapping's order ('' for an empty cell,
 *  or for a header the file does not have: validation refuses such a mapping). */
export interface RowWithCells {
  row: ParsedRow;
  cells: string[];
}

/** The rows of a file that validated, parsed, each with its mapped fields' cells. */
export async function* readRowsWithCells(path: string, mapping: ColumnMapping): AsyncGenerator<RowWithCells> {
  let columns: Record<DatasetColumn, string | null> | undefined;
  let fields: (string | null)[] = [];
  const stream = createReadStream(path).pipe(parser());
  stream.on('headers', (headers: string[]) => {
    columns = resolveColumns(headers, mapping);
    fields = resolveFields(headers, mapping);
  });
  let row = 0;
  for await (const record of stream as AsyncIterable<Record<string, string>>) {
    const cells = fields.map((h) => (h === null ? '' : (record[h] ?? '').trim()));
    yield { row: parseRecord(record, columns!, ++row), cells };
  }
}
