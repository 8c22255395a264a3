// Scoring a whole labelled file with the built-in model: one result line per row in file order,
// progress reported by each stage and never backwards, the same score a row gets through the
// single-scoring code, and the metrics on the file when it has labels.

import t from 'tap';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { validateCsv } from '../../src/datasets/csv.ts';
import { extractOne } from '../../src/domain/features/extract.ts';
import { History } from '../../src/domain/history/history.ts';
import { scoreDataset } from '../../src/jobs/batch-score.ts';
import type { ResultRow } from '../../src/jobs/result-row.ts';
import { readPage } from '../../src/jobs/results.ts';
import { loadModelFolder } from '../../src/model/bundle.ts';
import { isProblem } from '../../src/model/bundle-types.ts';
import { combine } from '../../src/model/combine.ts';
import { simulate, toCsv } from '../../src/domain/simulate.ts';
import { tempDir } from '../support/temp.ts';

const bundle = loadModelFolder('models/builtin');
if (isProblem(bundle)) throw new Error(bundle.message);
const dir = tempDir('batch-');
const rows = simulate({ seed: 99, customers: 300, merchants: 60, days: 30, rings: 1 });
const csv = join(dir, 'data.csv');
// File order differs from time order: the last day first.
const text = toCsv(rows).split('\n');
const header = text[0]!;
const body = text.slice(1).filter(Boolean);
const cut = Math.floor(body.length * 0.9);
writeFileSync(csv, `${[header, ...body.slice(cut), ...body.slice(0, cut)].join('\n')}\n`);

t.test('many small batches: both output files keep flowing (no lost drain event)', async (t) => {
  const validation = await validateCsv(csv, { maxRows: 1e6 });
  const resultPath = join(dir, 'small-batches.ndjson');
  const summary = await scoreDataset(bundle, {
    path: csv,
    mapping: {},
    mode: 'balanced',
    resultPath,
    expectedRows: validation.rows,
    progress: () => {},
    batchSize: 16,
  });
  t.equal(readFileSync(resultPath, 'utf8').trim().split('\n').length, summary.rows);
  t.equal(readFileSync(`${resultPath}.csv`, 'utf8').trim().split('\r\n').length, summary.rows + 1);

  // Features wait on disk between the time-ordered replay and file-ordered scoring: any chunking
  // gives every row the same score, and the feature file is gone afterwards.
  const largePath = join(dir, 'large-batches.ndjson');
  await scoreDataset(bundle, {
    path: csv,
    mapping: {},
    mode: 'balanced',
    resultPath: largePath,
    expectedRows: validation.rows,
    progress: () => {},
    batchSize: 1000,
  });
  const scores = (path: string) =>
    readFileSync(path, 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as ResultRow).risk_score);
  t.same(scores(resultPath), scores(largePath), 'the same scores in chunks of 16 and of 1,000 rows');
  t.notOk(existsSync(`${resultPath}.features`) || existsSync(`${largePath}.features`), 'no feature file left behind');
});

t.test('the job writes the index of its result lines: every page is read from the right bytes', async (t) => {
  // Transaction ids with multi-byte characters, so that bytes and characters differ.
  const [head, ...lines] = toCsv(rows.slice(0, 600)).trim().split('\n');
  const idColumn = head!.split(',').indexOf('transaction_id');
  const unicode = lines.map((l, k) => {
    const cells = l.split(',');
    cells[idColumn] = k % 3 === 0 ? `tx-€-${k}` : k % 3 === 1 ? `tx-日本-${k}` : `tx-${k}`;
    return cells.join(',');
  });
  const file = join(dir, 'unicode.csv');
  writeFileSync(file, `${[head, ...unicode].join('\n')}\n`);
  const resultPath = join(dir, 'unicode.ndjson');
  const summary = await scoreDataset(bundle, { path: file, mapping: {}, mode: 'balanced', resultPath, expectedRows: 600, progress: () => {}, batchSize: 7 });
  const bytes = readFileSync(resultPath);
  const idx = new Float64Array(new Uint8Array(readFileSync(`${resultPath}.idx`)).buffer);
  t.equal(idx.length, summary.rows + 1, 'one start per line, then the file length');
  t.equal(idx[idx.length - 1], bytes.length);
  const starts = [0];
  for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) starts.push(i + 1);
  t.same([...idx], starts, 'each entry is where a line starts');
  const page = await readPage(resultPath, 3, 50);
  t.equal(page.total, 600);
  t.same(
    page.rows.map((r) => r.row),
    Array.from({ length: 50 }, (_, k) => 101 + k),
  );
  t.same(
    page.rows.slice(0, 3).map((r) => r.transaction_id),
    ['tx-日本-100', 'tx-101', 'tx-€-102'],
    'the rows of that page, ids intact',
  );
});

t.test('scores every row, in file order, with metrics on the labelled file', async (t) => {
  const validation = await validateCsv(csv, { maxRows: 1e6 });
  t.equal(validation.valid, true);
  const seen: [string, number][] = [];
  const resultPath = join(dir, 'result.ndjson');
  const summary = await scoreDataset(bundle, {
    path: csv,
    mapping: {},
    mode: 'balanced',
    resultPath,
    expectedRows: validation.rows,
    progress: (stage, f) => seen.push([stage, f]),
  });
  t.equal(summary.rows, body.length);
  const lines = readFileSync(resultPath, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as ResultRow);
  t.equal(lines.length, body.length);
  t.same(
    lines.slice(0, 3).map((l) => l.row),
    [1, 2, 3],
    'file order',
  );
  t.ok(lines.every((l) => l.risk_score >= 0 && l.risk_score <= 1 && l.top_reasons.length <= 3));
  t.equal(summary.decisions.approve + summary.decisions.review + summary.decisions.block, body.length);
  t.ok(summary.metrics, 'metrics, since the file has labels');
  t.ok(summary.metrics!.roc_auc > 0.8, `ROC AUC on the file ${summary.metrics!.roc_auc.toFixed(3)}`);
  const stages = [...new Set(seen.map(([s]) => s))];
  t.same(stages, ['parsing', 'features', 'scoring', 'writing'], 'stages in order');
  for (const s of stages) {
    const fs = seen.filter(([x]) => x === s).map(([, f]) => f);
    t.same(
      fs,
      [...fs].sort((a, b) => a - b),
      `${s}: progress never goes backwards`,
    );
  }

  // The same row through the single-scoring path: features from its strictly older rows.
  const ordered = [...rows].sort((a, b) => a.time - b.time);
  const history = new History(bundle.file.training.label_delay_ms);
  const target = ordered[Math.floor(ordered.length / 2)]!;
  for (const r of ordered) {
    if (r.time >= target.time) break;
    history.add(r);
  }
  const f = extractOne(target, history);
  const single = combine(
    bundle,
    bundle.channels.map((c) => c.engine.predictRaw(f[c.name])),
    false,
    'balanced',
  );
  const batch = lines.find((l) => l.transaction_id === target.transaction_id)!;
  t.ok(Math.abs(batch.risk_score - single.risk) < 1e-12, `batch ${batch.risk_score} = single ${single.risk}`);
});

/** Cells in a download line (quoted cells may hold commas). */
function cellCount(line: string): number {
  let cells = 1;
  let quoted = false;
  for (const ch of line) {
    if (ch === '"') quoted = !quoted;
    else if (ch === ',' && !quoted) cells++;
  }
  return cells;
}

t.test('the download has one reason column per reason a row keeps: 3 by default, else as the job says', async (t) => {
  const validation = await validateCsv(csv, { maxRows: 1e6 });
  for (const reasons of [undefined, 2, 5]) {
    const resultPath = join(dir, `reasons-${reasons ?? 'default'}.ndjson`);
    await scoreDataset(bundle, {
      path: csv,
      mapping: {},
      mode: 'balanced',
      resultPath,
      expectedRows: validation.rows,
      progress: () => {},
      batchSize: 500,
      ...(reasons === undefined ? {} : { reasons }),
    });
    const [header, ...lines] = readFileSync(`${resultPath}.csv`, 'utf8').split('\r\n').slice(0, -1);
    const top = reasons ?? 3;
    if (reasons === undefined) {
      t.equal(
        header,
        'row,transaction_id,amount,customer_id,merchant_id,risk_score,risk_band,decision,path,score_tabular,score_behavioral,score_velocity,score_graph,reason_1,reason_2,reason_3,label',
        'the default header, as it has always been',
      );
    }
    t.equal(header!.split(',').filter((c) => c.startsWith('reason_')).length, top, `${top} reason columns`);
    t.same([...new Set(lines.map(cellCount))], [cellCount(header!)], `${top} reasons: as many cells in each of the ${lines.length} lines as in the header`);
    const rows = readFileSync(resultPath, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as ResultRow);
    t.ok(rows.every((r) => r.top_reasons.length <= top) && rows.some((r) => r.top_reasons.length === top), `result rows with up to ${top} reasons`);
  }
});

t.test('a job that fails part way rejects with its reason, throws nothing elsewhere and leaves no feature file', async (t) => {
  const validation = await validateCsv(csv, { maxRows: 1e6 });
  for (const failing of ['features', 'scoring'] as const) {
    const resultPath = join(dir, `fails-in-${failing}.ndjson`);
    // Progress that cannot be reported (say, the runner's port is gone) fails the job.
    const progress = (stage: string, fraction: number) => {
      if (stage === failing && fraction > 0.3) throw new Error(`reporting ${failing} failed`);
    };
    await t.rejects(scoreDataset(bundle, { path: csv, mapping: {}, mode: 'balanced', resultPath, expectedRows: validation.rows, progress, batchSize: 64 }), {
      message: `reporting ${failing} failed`,
    });
    t.notOk(existsSync(`${resultPath}.features`), 'no feature file left behind');
  }
  // An output that cannot be written (here the result file is already there; a full disk is the
  // same): the job rejects with the error instead of its stream throwing in the worker thread.
  const taken = join(dir, 'taken.ndjson');
  writeFileSync(taken, 'an earlier result\n');
  await t.rejects(scoreDataset(bundle, { path: csv, mapping: {}, mode: 'balanced', resultPath: taken, expectedRows: validation.rows, progress: () => {} }), {
    code: 'EEXIST',
  });
  t.equal(readFileSync(taken, 'utf8'), 'an earlier result\n', 'the file that was there is untouched');
  t.notOk(existsSync(`${taken}.features`), 'no feature file left behind');
});
