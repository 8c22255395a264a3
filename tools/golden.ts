// `npm run golden [-- --model DIR] [-- --out FILE]` (`--help` lists them): writes a model folder's
// golden file (training/golden.ts): LightGBM's own raw scores and `predict_contrib` for each of its
// boosters on fixed rows, which `npm test` holds our engine to without LightGBM. Run it after
// retraining a shipped model (`npm run train` says so). It needs the LightGBM-enabled addon, built
// on first use (src/addon/lightgbm.ts). The same model makes the same file.

import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { commandLine, outputFile, text } from '../src/command-line.ts';
import { lightgbmReference } from '../src/addon/lightgbm.ts';
import { ModelFileSchema } from '../src/model/bundle-types.ts';
import { sha256 } from '../src/training/digest.ts';
import { goldenRows, goldenText, toJsonRows, type Golden } from '../src/training/golden.ts';

const values = commandLine({
  name: 'golden',
  about: "Writes LightGBM's own answers on fixed rows for a model folder's boosters (a golden file npm test checks the engine against).",
  options: {
    model: text('DIR', 'the model folder (default models/builtin)', { default: 'models/builtin' }),
    out: outputFile('FILE', 'where to write it (default test/fixtures/golden/<folder name>.json)'),
  },
});

const dir = values.model;
const model = ModelFileSchema.parse(JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8')));
const golden: Golden = {
  model: dir,
  written_by: 'LightGBM 4.7.0 (C API: LGBM_BoosterPredictForMat, raw scores and predict_contrib), npm run golden',
  boosters: model.channels.map((c) => {
    const modelText = readFileSync(join(dir, c.file), 'utf8');
    const reference = lightgbmReference(modelText);
    const nf = reference.numFeatures;
    const rows = goldenRows(modelText, nf, c.categorical);
    const raw = reference.predict(rows, true);
    const contrib = reference.predictContrib(rows);
    return {
      channel: c.name,
      file: c.file,
      sha256: sha256(modelText),
      num_features: nf,
      rows: toJsonRows(rows, nf),
      raw: Array.from(raw),
      contrib: Array.from({ length: raw.length }, (_, r) => Array.from(contrib.subarray(r * (nf + 1), (r + 1) * (nf + 1)))),
    };
  }),
};
const out = values.out ?? join('test', 'fixtures', 'golden', `${basename(dir)}.json`);
writeFileSync(out, goldenText(golden));
process.stderr.write(`wrote ${out}: ${golden.boosters.map((b) => `${b.channel} ${b.rows.length} rows`).join(', ')}\n`);
