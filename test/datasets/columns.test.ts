// A validated upload keeps its parsed rows next to it for the job (columns.ts): the rows read back
// are exactly what parsing the CSV gives, for the mapping they were kept with only, across many
// chunks; whether the file is in time order is recorded; a file that does not validate keeps none;
// a kept file that is damaged is ignored; a job scores the same bytes streamed from the kept rows,
// holding them, or parsing the CSV; removing the upload removes them.

import t from 'tap';
import { existsSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHUNK_ROWS, columnsPath, KeptColumns, validateAndKeep } from '../../src/datasets/columns.ts';
import { toRecord } from '../../src/jobs/job-rows.ts';
import type { Transaction } from '../../src/domain/transaction.ts';
import { readRows } from '../../src/datasets/csv.ts';
import { DatasetFiles } from '../../src/storage/datasets.ts';
import { scoreDataset } from '../../src/jobs/batch-score.ts';
import { loadModelFolder } from '../../src/model/bundle.ts';
import { isProblem } from '../../src/model/bundle-types.ts';
import { simulate, toCsv } from '../../src/domain/simulate.ts';
import { tempDir } from '../support/temp.ts';

const dir = tempDir('columns-');
let n = 0;
const file = (content: string) => {
  const path = join(dir, `f${n++}.csv`);
  writeFileSync(path, content);
  return path;
};
const limits = { maxRows: 100_000 };

/** The kept rows read back, as records, or undefined when none are kept for `mapping`. */
function keptRows(path: string, mapping = {}): { rows: Transaction[]; timeOrdered: boolean; chunks: number } | undefined {
  const kept = KeptColumns.open(path, mapping);
  if (!kept) return undefined;
  try {
    const rows: Transaction[] = [];
    let chunks = 0;
    for (const c of kept.chunks()) {
      chunks++;
      for (let r = 0; r < c.count; r++) {
        const tx: Transaction = {
          time: c.times[r]!,
          amount: c.amounts[r]!,
          customer_id: kept.entities[c.customers[r]!]!,
          merchant_id: kept.entities[c.merchants[r]!]!,
          location: kept.places[c.locations[r]!]!,
          payment_type: kept.places[c.paymentTypes[r]!]!,
          transaction_id: c.idBytes.toString('utf8', c.idOffsets[r]!, c.idOffsets[r + 1]!),
        };
        if (c.labels[r] === 0 || c.labels[r] === 1) tx.label = c.labels[r] as 0 | 1;
        rows.push(tx);
      }
    }
    return { rows, timeOrdered: kept.timeOrdered, chunks };
  } catch {
    return undefined;
  } finally {
    kept.close();
  }
}

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
  const kept = keptRows(path, mapping);
  t.ok(kept);
  t.same(kept!.rows, await parsedRows(path, mapping), 'row for row, every field (NaN time where the cell is empty)');
  t.equal(kept!.timeOrdered, false, 'a row without a time: not in time order');
  t.equal(keptRows(path, { ...mapping, location: 'Shop' }), undefined, 'another mapping: not used');
  t.equal(keptRows(path, {}), undefined, 'no mapping: not used');
});

t.test('many chunks: every row back, string tables built across chunks, time order recorded', async (t) => {
  const rows = simulate({ seed: 6, customers: 400, merchants: 50, days: 20, rings: 0 });
  t.ok(rows.length > 3 * CHUNK_ROWS, `${rows.length} rows: several chunks`);
  const inOrder = file(toCsv(rows));
  t.equal((await validateAndKeep(inOrder, limits)).valid, true);
  const kept = keptRows(inOrder)!;
  t.equal(kept.chunks, Math.ceil(rows.length / CHUNK_ROWS));
  t.same(kept.rows, await parsedRows(inOrder), 'row for row');
  t.equal(kept.timeOrdered, true, 'the simulator writes in time order');
  const lines = toCsv(rows).trim().split('\n');
  const shuffled = file(`${[lines[0], lines[2], lines[1], ...lines.slice(3)].join('\n')}\n`);
  await validateAndKeep(shuffled, limits);
  t.equal(keptRows(shuffled)!.timeOrdered, false, 'two rows swapped: not in time order');
  const noTimes = file('amount,customer_id,merchant_id\n1,C1,M1\n2,C2,M1\n');
  await validateAndKeep(noTimes, limits);
  t.equal(keptRows(noTimes)!.timeOrdered, true, 'no times at all: file order is the order');
});

t.test("a file that does not validate keeps no rows, and an earlier mapping's rows go", async (t) => {
  const path = file('total,customer_id,merchant_id\n1,C1,M1\n');
  t.equal((await validateAndKeep(path, { ...limits, mapping: { amount: 'total' } })).valid, true);
  t.ok(existsSync(columnsPath(path)));
  t.equal((await validateAndKeep(path, limits)).valid, false, 'without the mapping the amount is missing');
  t.notOk(existsSync(columnsPath(path)), 'the rows kept for the other mapping are removed');
  const bad = file('amount,customer_id,merchant_id\n$1,C1,M1\n');
  t.equal((await validateAndKeep(bad, limits)).valid, false);
  t.notOk(existsSync(columnsPath(bad)));
});

t.test('damaged kept rows are ignored, and the job scores the same bytes streamed, held or parsed', async (t) => {
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
  t.equal(keptRows(path)!.timeOrdered, true);
  const streamed = await score('streamed.ndjson');
  t.same(streamed.stages, ['parsing', 'features', 'scoring', 'writing'], 'parsing is still a stage (opening the kept rows)');
  const kept = readFileSync(columnsPath(path));

  // The same rows swapped two by two: not in time order, so the job holds them in memory; its
  // lines are the same rows' lines in the swapped order.
  const lines = toCsv(rows).trim().split('\n');
  const swappedLines = [lines[0]!];
  for (let i = 1; i < lines.length; i += 2) swappedLines.push(...(i + 1 < lines.length ? [lines[i + 1]!, lines[i]!] : [lines[i]!]));
  const swapped = file(`${swappedLines.join('\n')}\n`);
  await validateAndKeep(swapped, limits);
  t.equal(keptRows(swapped)!.timeOrdered, false);
  const resultPath = join(dir, 'held.ndjson');
  await scoreDataset(bundle, { path: swapped, mapping: {}, mode: 'balanced', resultPath, expectedRows: v.rows, progress: () => {} });
  const byId = (text: string) =>
    new Map(
      text
        .trim()
        .split('\n')
        .map((l) => [JSON.parse(l).transaction_id as string, JSON.stringify({ ...JSON.parse(l), row: 0 })]),
    );
  t.same(byId(readFileSync(resultPath, 'utf8')), byId(streamed.result.toString('utf8')), 'held in memory: every row scored and explained as when streamed');

  // Truncated, then with its magic changed: each is ignored and the CSV parsed instead.
  truncateSync(columnsPath(path), kept.length - 3);
  t.equal(keptRows(path), undefined, 'truncated: not used');
  const parsedAgain = await score('truncated.ndjson');
  const wrongMagic = Buffer.from(kept);
  wrongMagic[0] = 0x58;
  writeFileSync(columnsPath(path), wrongMagic);
  t.equal(keptRows(path), undefined, 'another format: not used');
  // A chunk damaged inside a file whose ends are whole: the job parses the CSV instead.
  const inside = Buffer.from(kept);
  inside.writeUInt32LE(CHUNK_ROWS * 9, 8);
  writeFileSync(columnsPath(path), inside);
  const damagedInside = await score('damaged-inside.ndjson');
  t.ok(streamed.result.equals(parsedAgain.result), 'the same result lines streamed from the kept rows as parsed from the CSV');
  t.ok(streamed.csv.equals(parsedAgain.csv), 'the same download');
  t.ok(damagedInside.result.equals(parsedAgain.result), 'a chunk damaged inside: the same lines, from the CSV');
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
