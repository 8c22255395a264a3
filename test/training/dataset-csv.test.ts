// The command-line tools' CSV reader: real CSV (BOM, quoted commas, CRLF), both timestamp forms,
// rows put in time order, and every bad value named with its line and a fix.

import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readLabelledCsv } from '../../src/training/dataset-csv.ts';
import { tempDir } from '../support/temp.ts';

const dir = tempDir('csv-');
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

t.test('reads BOM, quotes and CRLF, sorts by time', async (t) => {
  const path = file(
    'ok.csv',
    '\uFEFFtimestamp,amount,customer_id,merchant_id,location,label\r\n' + '2024-01-02T00:00:00Z,12.5,C1,"M, Inc",Porto,0\r\n' + '1704067200,3,C2,M2,,1\r\n',
  );
  const rows = await readLabelledCsv(path);
  t.equal(rows.length, 2);
  t.equal(rows[0]!.customer_id, 'C2', 'epoch seconds 2024-01-01 comes first');
  t.equal(rows[0]!.time, Date.parse('2024-01-01T00:00:00Z'));
  t.equal(rows[0]!.location, 'unknown', 'empty optional value → unknown');
  t.equal(rows[1]!.merchant_id, 'M, Inc', 'quoted comma kept');
  t.equal(rows[1]!.label, 0);
});

t.test('names the problem, the line and the fix', async (t) => {
  const head = 'timestamp,amount,customer_id,merchant_id,label\n';
  await t.rejects(readLabelledCsv(file('a.csv', `${head}2024-01-01,"$1,200",C,M,0\n`)), /a\.csv:2: amount .*remove currency symbols/);
  await t.rejects(readLabelledCsv(file('b.csv', `${head}2024-01-01,5,C,M,yes\n`)), /b\.csv:2: label "yes" must be 0 or 1/);
  await t.rejects(readLabelledCsv(file('c.csv', `${head}soon,5,C,M,1\n`)), /c\.csv:2: timestamp "soon"/);
  await t.rejects(readLabelledCsv(file('d.csv', 'amount,customer_id\n5,C\n')), /column `timestamp` is required/);
  await t.rejects(readLabelledCsv(file('e.csv', head)), /no data rows/);
});
