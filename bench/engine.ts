// bench:engine: our native evaluator against LightGBM's own C API, single thread, same process.
//
// Trains (natively, seeded) a 300-tree, 31-leaf binary model on 30 synthetic features, then times
// through the same N-API boundary: single-row predict (ours vs LightGBM's fastest single-row
// path), batch predict, single-row and batch TreeSHAP (vs predict_contrib), the bare N-API call
// overhead, the model's memory, and the largest difference from LightGBM. The last line printed is
// one JSON object with the figures and ratios.

import { loadModel, noopCall } from '../src/addon/addon.ts';
import { largestDifference as maxDiff, lightgbmReference, trainLightgbm } from '../src/addon/lightgbm.ts';
import { syntheticMatrix } from '../src/training/synthetic.ts';
import { benchmarkCommandLine, compare, fmt, quick, time } from './harness.ts';

benchmarkCommandLine({
  name: 'bench:engine',
  about: "Our native evaluator and TreeSHAP against LightGBM's own C API, single thread, same process.",
  quick: 'fewer probe rows and samples (about 20 s instead of 80 s)',
});

const NUM_FEATURES = 30;
const TREES = 300;

const t0 = performance.now();
const train = syntheticMatrix({ seed: 42, numRows: 20000, numFeatures: NUM_FEATURES, missingRate: 0.02 });
const text = trainLightgbm({
  rows: train.rows,
  numFeatures: NUM_FEATURES,
  labels: train.labels,
  params: { objective: 'binary', num_leaves: 31, learning_rate: 0.05, seed: 42 },
  iterations: TREES,
});
const trainSeconds = (performance.now() - t0) / 1000;
const ours = loadModel(text);
const theirs = lightgbmReference(text);
console.log(`model: ${ours.numTrees} trees, 31 leaves, ${ours.numFeatures} features (trained in ${trainSeconds.toFixed(1)} s)`);
console.log(`SHAP strategy: ${ours.shapStrategy[0]} trees tabulated, ${ours.shapStrategy[1]} recursive\n`);

const probe = syntheticMatrix({ seed: 7, numRows: quick ? 2000 : 10000, numFeatures: NUM_FEATURES, missingRate: 0.02 });
const rows = probe.rows;
const n = probe.numRows;
const singles = Array.from({ length: n }, (_, r) => rows.subarray(r * NUM_FEATURES, (r + 1) * NUM_FEATURES));

// Exactness first, over every probe row.
const diffPredict = maxDiff(ours.predictRawBatch(rows), theirs.predict(rows, true));
const diffShap = maxDiff(ours.shapBatch(rows), theirs.predictContrib(rows));

// 1000 distinct rows (240 KB) in both modes: a request's row is in cache when it is scored; cycling
// through more rows than L2 holds would time input cache misses, not the evaluator.
const singleRows = 1000;
const shapRows = quick ? 300 : 1000;
const shapBatchRows = 1000;
const shapSingles = singles.slice(0, shapRows);
const shapBatch = rows.subarray(0, shapBatchRows * NUM_FEATURES);
let sink = 0;

const predictSingle = compare(
  'predict, single row',
  () => {
    for (let i = 0; i < singleRows; i++) sink += ours.predictRaw(singles[i]!);
  },
  singleRows,
  () => {
    for (let i = 0; i < singleRows; i++) sink += theirs.predictRawSingle(singles[i]!);
  },
  singleRows,
);
const predictBatch = compare(
  'predict, batch',
  () => {
    sink += ours.predictRawBatch(rows)[0]!;
  },
  n,
  () => {
    sink += theirs.predict(rows, true)[0]!;
  },
  n,
);
const shapSingle = compare(
  'TreeSHAP, single row',
  () => {
    for (const r of shapSingles) sink += ours.shap(r)[0]!;
  },
  shapRows,
  () => {
    for (const r of shapSingles) sink += theirs.predictContribSingle(r)[0]!;
  },
  shapRows,
);
const shapBatched = compare(
  'TreeSHAP, batch',
  () => {
    sink += ours.shapBatch(shapBatch)[0]!;
  },
  shapBatchRows,
  () => {
    sink += theirs.predictContrib(shapBatch)[0]!;
  },
  shapBatchRows,
  { samples: quick ? 3 : 7, warmup: 1 },
);
const overhead = time(
  'N-API call overhead (no-op)',
  () => {
    for (let i = 0; i < singleRows; i++) sink += noopCall(singles[i]!);
  },
  singleRows,
);

console.log(`\nmodel memory (trees + compiled nodes + SHAP tables): ${(ours.memoryBytes / 1024 / 1024).toFixed(2)} MiB`);
console.log(`largest difference from LightGBM: predict ${diffPredict.toExponential(2)}, SHAP ${diffShap.toExponential(2)}`);
console.log(`per-tree cost: single-row predict ${fmt(predictSingle.ours.ns / TREES)}, batch ${fmt(predictBatch.ours.ns / TREES)}`);
if (sink === 42) console.log('');

console.log(
  JSON.stringify({
    benchmark: 'engine',
    quick,
    trees: TREES,
    leaves: 31,
    features: NUM_FEATURES,
    predict_single_ns: Math.round(predictSingle.ours.ns),
    lightgbm_predict_single_ns: Math.round(predictSingle.baseline.ns),
    predict_single_speedup: +predictSingle.speedup.toFixed(2),
    predict_batch_ns_per_row: Math.round(predictBatch.ours.ns),
    lightgbm_predict_batch_ns_per_row: Math.round(predictBatch.baseline.ns),
    predict_batch_speedup: +predictBatch.speedup.toFixed(2),
    shap_single_ns: Math.round(shapSingle.ours.ns),
    lightgbm_contrib_single_ns: Math.round(shapSingle.baseline.ns),
    shap_single_speedup: +shapSingle.speedup.toFixed(2),
    shap_batch_ns_per_row: Math.round(shapBatched.ours.ns),
    lightgbm_contrib_batch_ns_per_row: Math.round(shapBatched.baseline.ns),
    shap_batch_speedup: +shapBatched.speedup.toFixed(2),
    napi_call_overhead_ns: Math.round(overhead.ns),
    model_memory_bytes: ours.memoryBytes,
    max_abs_diff_predict: diffPredict,
    max_abs_diff_shap: diffShap,
    shap_trees_tabulated: ours.shapStrategy[0],
  }),
);
