// Validating uploaded CSVs: real-world encodings (BOM, quoted commas, CRLF), missing columns and a
// mapping that fixes them, bad amounts with row numbers and advice, empty and binary files, the
// row limit; and the rows of a valid file read back as parsed.

import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRows, validateCsv } from '../../src/datasets/csv.ts';
import { tempDir } from '../support/temp.ts';

const dir = tempDir('csv-');
let n = 0;
const file = (content: string | Buffer) => {
  const path = join(dir, `f${n++}.csv`);
  writeFileSync(path, content);
  return path;
};
const limits = { maxRows: 1000 };

t.test('BOM, quoted commas and CRLF', async (t) => {
  const path = file('\uFEFFamount,customer_id,merchant_id,location,label\r\n12.50,C1,"Shop, Inc",Porto,0\r\n3,C2,M2,"Lisbon",1\r\n');
  const r = await validateCsv(path, limits);
  t.equal(r.valid, true);
  t.equal(r.rows, 2);
  t.same(r.columns_found, ['amount', 'customer_id', 'merchant_id', 'location', 'label']);
  t.equal(r.has_labels, true);
  t.same(r.missing_optional, ['transaction_id', 'timestamp', 'payment_type']);
  const rows = [];
  for await (const row of readRows(path)) rows.push(row);
  t.equal(rows[0]!.merchant_id, 'Shop, Inc');
  t.equal(rows[0]!.amount, 12.5);
  t.equal(rows[1]!.label, 1);
  t.equal(rows[1]!.payment_type, 'unknown');
  t.equal(rows[1]!.transaction_id, '2', 'row number when there is no transaction_id');
});

t.test('missing columns, then a mapping that fixes them', async (t) => {
  const path = file('Amount,nameOrig,nameDest\n10,C1,M1\n');
  const r = await validateCsv(path, limits);
  t.equal(r.valid, false);
  t.same(r.missing_required, ['customer_id', 'merchant_id'], 'amount matches case-insensitively');
  const mapped = await validateCsv(path, { ...limits, mapping: { customer_id: 'nameOrig', merchant_id: 'nameDest' } });
  t.equal(mapped.valid, true);
  t.equal(mapped.columns.customer_id, 'nameOrig');
  const rows = [];
  for await (const row of readRows(path, { customer_id: 'nameOrig', merchant_id: 'nameDest' })) rows.push(row);
  t.same([rows[0]!.customer_id, rows[0]!.merchant_id, rows[0]!.amount], ['C1', 'M1', 10]);
  const wrong = await validateCsv(path, { ...limits, mapping: { customer_id: 'no_such_header' } });
  t.ok(wrong.missing_required.includes('customer_id'), 'a mapping to a header that is not there leaves the column missing');
});

t.test('non-numeric and negative amounts: row numbers and advice', async (t) => {
  const path = file('amount,customer_id,merchant_id,timestamp,label\n"$1,200.00",C1,M1,2026-01-01T00:00:00Z,0\n-5,C2,M2,yesterday,2\n7,,M3,1767225600,1\n');
  const r = await validateCsv(path, limits);
  t.equal(r.valid, false);
  const by = (column: string, message: string) => r.problems.find((p) => p.column === column && p.message === message);
  t.same(by('amount', 'is not a number')?.rows, [1]);
  t.match(by('amount', 'is not a number')?.fix, /Remove currency symbols and thousands separators/);
  t.same(by('amount', 'is not a number')?.examples, ['$1,200.00']);
  t.same(by('amount', 'is negative')?.rows, [2]);
  t.same(by('timestamp', 'is not a time')?.rows, [2]);
  t.same(by('label', 'is not 0 or 1')?.rows, [2]);
  t.same(by('customer_id', 'is empty')?.rows, [3]);
});

t.test('empty, header-only and binary files', async (t) => {
  const empty = await validateCsv(file(''), limits);
  t.equal(empty.valid, false);
  t.match(empty.file_problems[0]!.message, /empty/);
  const headerOnly = await validateCsv(file('amount,customer_id,merchant_id\n'), limits);
  t.match(headerOnly.file_problems[0]!.message, /no rows/);
  const binary = await validateCsv(file(Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x00, 0x00, 0x14, 0x00])), limits);
  t.equal(binary.valid, false);
  t.match(binary.file_problems[0]!.message, /not a text CSV/);
  const latin1 = await validateCsv(file(Buffer.from('amount,customer_id,merchant_id\n1,Jos\xe9,M\n', 'latin1')), limits);
  t.match(latin1.file_problems[0]!.message, /not UTF-8/);
});

t.test('too many rows', async (t) => {
  const lines = ['amount,customer_id,merchant_id', ...Array.from({ length: 12 }, (_, i) => `${i},C${i},M`)];
  const r = await validateCsv(file(lines.join('\n')), { maxRows: 10 });
  t.equal(r.valid, false);
  t.equal(r.rows, 12);
  t.equal(r.file_problems[0]!.reason, 'too_many_rows');
});
