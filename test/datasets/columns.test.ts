// A validated upload keeps its parsed rows next to it for the job (columns.ts): the rows read back
// are exactly what parsing the CSV gives, for the mapping they were kept with only; a file that
// does not validate keeps none; a kept file that is damaged is ignored; a job scores the same
// bytes with and without them; removing the upload removes them.

import t from 'tap';
import { existsSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { columnsPath, loadColumns, toRecord, validateAndKeep } from '../../src/datasets/columns.ts';
import { readRows } from '../../src/datasets/csv.ts';
import { DatasetFiles } from '../../src/datasets/store.ts';
import { scoreDataset } from '../../src/jobs/batch-score.ts';
import { isProblem, loadModelFolder } from '../../src/model/bundle.ts';
import { simulate, toCsv } from '../../src/training/simulate.ts';
import { tempDir } from '../temp.ts';

const dir = tempDir('columns-');
let n = 0;
const file = (content: string) => {
  const path = join(dir, `f${n++}.csv`);
  writeFileSync(path, content);
  return path;
};
const limits = { maxRows: 100_000 };

/** Every row of the file as the job would parse it, as column-store records. */
async function parsedRows(path: string, mapping = {}) {
  const rows = [];
  for await (const row of readRows(path, mapping)) rows.push(toRecord(row));
  return rows;
}

t.test('the kept rows are the parsed rows: BOM, CRLF, quotes, missing optional cells, a mapping', async (t) => {
  const path = file(
    '\uFEFFWhen,Total,Client,Shop,id,fraud\r\n' +
      '2026-01-02T10:00:00Z,12.50,C1,"Shop, Inc",tx-€-1,0\r\n' +
      ',3,C2,M2,,1\r\n' +
      '1767355200,0.1,"C ""quoted""",M2,tx-3,\r\n',
  );
  const mapping = { timestamp: 'When', amount: 'Total', customer_id: 'Client', merchant_id: 'Shop', transaction_id: 'id', label: 'fraud' };
  const r = await validateAndKeep(path, { ...limits, mapping });
  t.equal(r.valid, true);
  t.ok(existsSync(columnsPath(path)), 'kept next to the upload');
  const kept = await loadColumns(path, mapping);
  t.ok(kept);
  const want = await parsedRows(path, mapping);
  t.equal(kept!.length, want.length);
  t.same(Array.from({ length: kept!.length }, (_, i) => kept!.at(i)), want, 'row for row, every field (NaN time where the cell is empty)');
  t.equal(await loadColumns(path, { ...mapping, location: 'Shop' }), undefined, 'another mapping: not used');
  t.equal(await loadColumns(path, {}), undefined, 'no mapping: not used');
});

t.test('a file that does not validate keeps no rows, and an earlier mapping\'s rows go', async (t) => {
  const path = file('total,customer_id,merchant_id\n1,C1,M1\n');
  t.equal((await validateAndKeep(path, { ...limits, mapping: { amount: 'total' } })).valid, true);
  t.ok(existsSync(columnsPath(path)));
  t.equal((await validateAndKeep(path, limits)).valid, false, 'without the mapping the amount is missing');
  t.notOk(existsSync(columnsPath(path)), 'the rows kept for the other mapping are removed');
  const bad = file('amount,customer_id,merchant_id\n$1,C1,M1\n');
  t.equal((await validateAndKeep(bad, limits)).valid, false);
  t.notOk(existsSync(columnsPath(bad)));
});

t.test('damaged kept rows are ignored, and the job scores the same bytes either way', async (t) => {
  const bundle = loadModelFolder('models/builtin');
  if (isProblem(bundle)) throw new Error(bundle.message);
  const rows = simulate({ seed: 5, customers: 80, merchants: 20, days: 6, rings: 0 });
  const path = file(toCsv(rows));
  const v = await validateAndKeep(path, limits);
  t.equal(v.valid, true);
  const score = async (name: string) => {
    const resultPath = join(dir, name);
    const seen: string[] = [];
    await scoreDataset(bundle, { path, mapping: {}, mode: 'balanced', resultPath, expectedRows: v.rows, progress: (s) => seen.push(s) });
    return { result: readFileSync(resultPath), csv: readFileSync(`${resultPath}.csv`), stages: [...new Set(seen)] };
  };
  const withKept = await score('kept.ndjson');
  t.same(withKept.stages, ['parsing', 'features', 'scoring', 'writing'], 'parsing is still a stage (reading the kept rows)');
  const kept = readFileSync(columnsPath(path));

  // Truncated, then with its header's magic changed: each is ignored and the CSV parsed instead.
  truncateSync(columnsPath(path), kept.length - 3);
  t.equal(await loadColumns(path, {}), undefined, 'truncated: not used');
  const parsedAgain = await score('truncated.ndjson');
  const wrongMagic = Buffer.from(kept);
  wrongMagic[0] = 0x58;
  writeFileSync(columnsPath(path), wrongMagic);
  t.equal(await loadColumns(path, {}), undefined, 'another format: not used');
  t.ok(withKept.result.equals(parsedAgain.result), 'the same result lines from the kept rows as from the CSV');
  t.ok(withKept.csv.equals(parsedAgain.csv), 'the same download');
});

t.test('removing an upload removes its kept rows', async (t) => {
  const files = new DatasetFiles(join(dir, 'data'));
  const { Readable } = await import('node:stream');
  const saved = await files.save(Readable.from([Buffer.from('amount,customer_id,merchant_id\n1,C1,M1\n')]), 1 << 20);
  const path = files.path(saved.storedName);
  t.equal((await validateAndKeep(path, limits)).valid, true);
  t.ok(existsSync(columnsPath(path)));
  await files.remove(saved.storedName);
  t.notOk(existsSync(path) || existsSync(columnsPath(path)), 'both gone');
});
