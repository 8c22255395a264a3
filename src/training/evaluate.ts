// What the design is measured against, on the same splits as the model: an ablation (one booster
// over all four channels' features together, trained on the same train split with the settings and
// number of trees the model's search chose) and simple baselines (the amount alone as a score; a
// logistic regression over all features, standardised, missing values as zero with an indicator).
// Only the train split fits anything here; scores are reported on test.

import { loadModel } from '../addon/addon.ts';
import { trainLightgbm } from '../addon/lightgbm.ts';
import { CHANNEL_FEATURES } from '../domain/features/extract.ts';
import { TABULAR_CATEGORICAL } from '../domain/features/tabular.ts';
import { fitLogistic } from './logistic.ts';
import { averagePrecision, rocAuc } from '../model/metrics.ts';
import { boosterParams, combinedMatrix, type TrainingRun, type TrainOptions } from './train.ts';

export interface Comparison {
  roc_auc: number;
  average_precision: number;
}

function compare(scores: ArrayLike<number>, labels: ArrayLike<number>): Comparison {
  return { roc_auc: rocAuc(scores, labels), average_precision: averagePrecision(scores, labels) };
}

/** The ablation's figures on test, and its raw scores there (indexed like `run.split.test`). */
export function ablationSingleBooster(run: TrainingRun, options: TrainOptions): Comparison & { scores: Float64Array } {
  const train = combinedMatrix(run.features, run.split.train);
  const text = trainLightgbm({
    rows: train.matrix,
    numFeatures: train.width,
    labels: Float64Array.from(run.split.train, (i) => run.labels[i]!),
    params: { ...boosterParams(options), ...run.settings.params },
    categorical: TABULAR_CATEGORICAL, // the tabular channel comes first
    iterations: run.settings.iterations,
  });
  const test = combinedMatrix(run.features, run.split.test);
  const scores = loadModel(text).predictRawBatch(test.matrix);
  return {
    ...compare(
      scores,
      Float64Array.from(run.split.test, (i) => run.labels[i]!),
    ),
    scores,
  };
}

export function baselineAmount(run: TrainingRun): Comparison {
  const amount = CHANNEL_FEATURES.tabular.indexOf('amount');
  const width = CHANNEL_FEATURES.tabular.length;
  return compare(
    Float64Array.from(run.split.test, (i) => run.features.tabular[i * width + amount]!),
    Float64Array.from(run.split.test, (i) => run.labels[i]!),
  );
}

/** Logistic regression over every feature (fitted on at most `sample` evenly spaced train rows). */
export function baselineLogistic(run: TrainingRun, sample = 20_000): Comparison {
  const step = Math.max(1, Math.floor(run.split.train.length / sample));
  const fitRows = run.split.train.filter((_, k) => k % step === 0);
  const fit = combinedMatrix(run.features, fitRows);
  const w = fit.width;
  // Standardise with train statistics; NaN → 0 after standardising, plus one "any missing" column.
  const mean = new Float64Array(w);
  const sd = new Float64Array(w);
  const n = fitRows.length;
  for (let j = 0; j < w; j++) {
    let s = 0;
    let s2 = 0;
    let c = 0;
    for (let i = 0; i < n; i++) {
      const v = fit.matrix[i * w + j]!;
      if (Number.isNaN(v)) continue;
      s += v;
      s2 += v * v;
      c++;
    }
    mean[j] = c ? s / c : 0;
    sd[j] = c ? Math.sqrt(Math.max(s2 / c - mean[j]! ** 2, 0)) || 1 : 1;
  }
  const design = (m: Float64Array, rows: number) => {
    const x = new Float64Array(rows * (w + 1));
    for (let i = 0; i < rows; i++) {
      let missing = 0;
      for (let j = 0; j < w; j++) {
        const v = m[i * w + j]!;
        if (Number.isNaN(v)) missing = 1;
        x[i * (w + 1) + j] = Number.isNaN(v) ? 0 : (v - mean[j]!) / sd[j]!;
      }
      x[i * (w + 1) + w] = missing;
    }
    return x;
  };
  const model = fitLogistic(
    design(fit.matrix, n),
    w + 1,
    Float64Array.from(fitRows, (i) => run.labels[i]!),
    1e-3,
    25,
  );
  const test = combinedMatrix(run.features, run.split.test);
  const x = design(test.matrix, run.split.test.length);
  const scores = Float64Array.from({ length: run.split.test.length }, (_, i) => {
    let z = model.bias;
    for (let j = 0; j <= w; j++) z += model.weights[j]! * x[i * (w + 1) + j]!;
    return z;
  });
  return compare(
    scores,
    Float64Array.from(run.split.test, (i) => run.labels[i]!),
  );
}
