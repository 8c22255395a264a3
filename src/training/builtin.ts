// The built-in model's training, end to end (`npm run train`, tools/train.ts, is its command line):
// from labelled transactions (a CSV in the dataset format, or the service simulator) to the model
// folder — one LightGBM text file per channel booster, model.json (channels and features, the
// settings chosen and how, stack weights, calibration, thresholds per mode, bands, fingerprints of
// data and code), metrics.json (every figure labelled with its split, every setting the search
// tried) and reference.json (drift). Deterministic: the same inputs write the same bytes. The
// model's id hashes the data, this library's code (its shape: digest.ts) and the recipe, never the
// command's text (docs/model.md).

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { codeFingerprint, sha256 } from './digest.ts';
import { CHANNEL_FEATURES } from '../domain/features/extract.ts';
import { loadModel } from '../addon/addon.ts';
import { buildReference } from './reference.ts';
import { readLabelledCsv } from './dataset-csv.ts';
import type { Transaction } from '../domain/transaction.ts';
import { detectRings } from '../domain/rings.ts';
import { averagePrecision, brier, expectedCalibrationError, logLoss, recallAtFpr, rocAuc } from '../model/metrics.ts';
import { DEFAULT_SIMULATION, simulate, toCsv } from '../domain/simulate.ts';
import { checkThreshold, chooseThresholds, MODES } from './thresholds.ts';
import { applyColdStart, fitColdStart, isColdStart } from './coldstart.ts';
import { precisionRecallCurve, reliabilityCurve, rocCurve, scoreHistograms } from './curves.ts';
import { ablationSingleBooster, baselineAmount, baselineLogistic, type Comparison } from './evaluate.ts';
import { gapIntervals, splitIntervals } from './split-intervals.ts';
import { CHANNELS, DEFAULT_TRAINING, gather, train, type TrainOptions } from './train.ts';

/** What `trainBuiltIn` trains from, and where it writes. */
export interface BuiltInInput {
  /** A labelled CSV in the dataset format; the service simulator when absent. */
  data?: string | undefined;
  out: string;
  seed: number;
  iterations: number;
  settings: number;
  featureGroups: boolean;
}

/** Trains the built-in model and writes its folder; returns its id, folder and test figures. */
export async function trainBuiltIn(input: BuiltInInput) {
  const round = (x: number) => (Number.isFinite(x) ? Math.round(x * 1e6) / 1e6 : null);

  let rows: Transaction[];
  let dataDescription: string;
  let dataFingerprint: string;
  if (input.data) {
    rows = await readLabelledCsv(input.data);
    dataDescription = `csv ${input.data}`;
    dataFingerprint = sha256(readFileSync(input.data, 'utf8'));
  } else {
    const simulated = simulate();
    rows = simulated;
    dataDescription = `simulator service, seed ${DEFAULT_SIMULATION.seed}, ${DEFAULT_SIMULATION.customers} customers, ${DEFAULT_SIMULATION.merchants} merchants, ${DEFAULT_SIMULATION.days} days`;
    dataFingerprint = sha256(toCsv(simulated));
  }
  const { seed, iterations, settings, featureGroups } = input;
  const started = performance.now();
  let lastStage = '';
  const log = (stage: string) => process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1)} s] ${stage}\n`);
  const options: TrainOptions = {
    ...DEFAULT_TRAINING,
    seed,
    iterations,
    settings,
    featureGroups,
    progress: (stage, fraction) => {
      if (stage !== lastStage) log(`${stage} (${Math.round(fraction * 100)} %)`);
      lastStage = stage;
    },
  };
  const run = await train(rows, options);

  // Thresholds and cold start, chosen on validation.
  const labelsOf = (idx: number[]) => Float64Array.from(idx, (i) => run.labels[i]!);
  const trainLabels = labelsOf(run.split.train);
  const validationLabels = labelsOf(run.split.validation);
  const testLabels = labelsOf(run.split.test);
  // The cold-start floor, fitted on validation, applies before thresholds: it is part of the score.
  const coldStart = fitColdStart(run.features, run.split.validation, run.labels);
  const validationScored = applyColdStart(run.scores.validation.probability, run.features, run.split.validation, coldStart);
  const testScored = applyColdStart(run.scores.test.probability, run.features, run.split.test, coldStart);
  const trainScored = applyColdStart(run.scores.train.probability, run.features, run.split.train, coldStart);
  const validationP = validationScored.probabilities;
  const testP = testScored.probabilities;
  const thresholds = chooseThresholds(validationP, validationLabels);
  const bands = {
    medium: thresholds.balanced.review,
    high: Math.max(thresholds.balanced.review, thresholds.balanced.block),
    critical: Math.max(thresholds.balanced.block, thresholds.high_precision.block),
  };

  const version = '1.0.0';
  const fingerprint = { data: dataFingerprint, code: codeFingerprint('src/training/builtin.ts') };
  const id = `fraud-${sha256(`${fingerprint.data}${fingerprint.code}${seed}/${iterations}/${settings}${featureGroups ? '/feature-groups' : ''}`).slice(0, 12)}`;
  const out = input.out;
  mkdirSync(out, { recursive: true });
  for (const b of run.model.boosters) writeFileSync(join(out, `${b.channel}.txt`), b.modelText);

  const model = {
    id,
    version,
    data: { description: dataDescription, rows: rows.length, fingerprint: fingerprint.data },
    code_fingerprint: fingerprint.code,
    training: {
      seed,
      iterations: run.settings.iterations,
      params: run.settings.params,
      unused_features: run.settings.unusedFeatures,
      selection: {
        metric: run.search!.metric,
        random_settings: settings,
        max_iterations: iterations,
        settings_tried: run.search!.settings_tried,
        models_compared: run.search!.models_compared,
      },
      label_delay_ms: DEFAULT_TRAINING.labelDelay,
      split_bounds: run.split.bounds,
    },
    channels: CHANNELS.map((c) => {
      const b = run.model.boosters.find((x) => x.channel === c)!;
      return { name: c, file: `${c}.txt`, features: CHANNEL_FEATURES[c], categorical: b.categorical };
    }),
    stack: { bias: run.model.stack.bias, weights: Object.fromEntries(CHANNELS.map((c, k) => [c, run.model.stack.weights[k]])) },
    calibration: { method: 'platt', bias: run.model.calibration.bias, slope: run.model.calibration.weights[0] },
    cold_start: coldStart,
    thresholds,
    bands,
  };
  writeFileSync(join(out, 'model.json'), `${JSON.stringify(model, null, 2)}\n`);

  // The drift reference (training/reference.ts; read by model/drift.ts): the validation split's
  // feature distributions and categories, each feature's importance (its mean absolute contribution
  // to the stacked log-odds on validation), and evenly spaced validation rows' raw channel scores.
  log('drift reference');
  const importance = CHANNELS.map((c, k) => {
    const width = CHANNEL_FEATURES[c].length;
    const engine = loadModel(run.model.boosters[k]!.modelText);
    const phi = engine.shapBatch(gather(run.features[c], width, run.split.validation));
    const sums = new Array<number>(width).fill(0);
    for (let i = 0; i < run.split.validation.length; i++) for (let j = 0; j < width; j++) sums[j]! += Math.abs(phi[i * (width + 1) + j]!);
    const w = Math.abs(run.model.stack.weights[k]!);
    return sums.map((s) => (w * s) / run.split.validation.length);
  });
  const sampled = Math.min(2000, run.split.validation.length);
  const sampleRows = Array.from({ length: sampled }, (_, k) => Math.floor((k * run.split.validation.length) / sampled));
  const reference = buildReference({
    modelId: id,
    channels: CHANNELS.map((c) => ({ name: c, features: CHANNEL_FEATURES[c] })),
    features: run.features,
    referenceRows: run.split.validation,
    rangeRows: [...run.split.train, ...run.split.validation],
    categories: { payment_type: run.split.validation.map((i) => run.rows[i]!.payment_type), location: run.split.validation.map((i) => run.rows[i]!.location) },
    importance,
    sample: {
      raw: sampleRows.map((k) => CHANNELS.map((c) => run.scores.validation.raw[c][k]!)),
      cold: sampleRows.map((k) => (isColdStart(run.features, run.split.validation[k]!, coldStart.min_prior) ? 1 : 0)),
    },
  });
  writeFileSync(join(out, 'reference.json'), `${JSON.stringify(reference)}\n`);

  /** A split's ranking and calibration figures, rounded. */
  function headline(scores: Float64Array, labels: Float64Array) {
    return {
      roc_auc: round(rocAuc(scores, labels)),
      average_precision: round(averagePrecision(scores, labels)),
      recall_at_1pct_fpr: round(recallAtFpr(scores, labels, 0.01)),
      expected_calibration_error: round(expectedCalibrationError(scores, labels)),
    };
  }
  // Each figure with its 95 % bootstrap interval over the split's rows (split-intervals.ts).
  const splitMetrics = (scores: Float64Array, labels: Float64Array) => {
    const h = headline(scores, labels);
    return {
      rows: labels.length,
      fraud_rate: round(labels.reduce((a, b) => a + b, 0) / labels.length),
      roc_auc: h.roc_auc,
      average_precision: h.average_precision,
      brier: round(brier(scores, labels)),
      log_loss: round(logLoss(scores, labels)),
      expected_calibration_error: h.expected_calibration_error,
      recall_at_1pct_fpr: h.recall_at_1pct_fpr,
      intervals: { level: 0.95, method: 'percentile bootstrap over rows, 1,000 resamples', ...splitIntervals(scores, labels, seed) },
    };
  };
  log('intervals');
  const metrics = {
    model_id: id,
    splits: {
      train: {
        ...splitMetrics(trainScored.probabilities, trainLabels),
        cold_start_rows: trainScored.cold,
        note: 'what the boosters were fitted on: a gap to validation and test is over-fitting or drift',
      },
      validation: {
        ...splitMetrics(validationP, validationLabels),
        cold_start_rows: validationScored.cold,
        note: 'stack fitted on its first half, calibration on its second half, the cold-start floor on all of it',
      },
      test: { ...splitMetrics(testP, testLabels), cold_start_rows: testScored.cold },
    },
    channel_auc: {
      validation: Object.fromEntries(CHANNELS.map((c) => [c, round(rocAuc(run.scores.validation.raw[c], validationLabels))])),
      test: Object.fromEntries(CHANNELS.map((c) => [c, round(rocAuc(run.scores.test.raw[c], testLabels))])),
    },
    modes: {
      split: 'test',
      ...Object.fromEntries(
        MODES.map((m) => {
          const c = checkThreshold(testP, testLabels, thresholds[m]);
          return [
            m,
            {
              review: thresholds[m].review,
              block: thresholds[m].block,
              target: thresholds[m].target,
              review_rate: round(c.review_rate),
              block_rate: round(c.block_rate),
              precision: round(c.precision),
              recall: round(c.recall),
              f1: round(c.f1),
              fraud_caught_per_1000: round(c.fraud_caught_per_1000),
              review_warning: c.warning,
              measured: round(c.measured),
              meets_target: c.meets_target,
            },
          ];
        }),
      ),
    },
  };
  log('ablation and baselines');
  const rounded = (c: Comparison) => ({ roc_auc: round(c.roc_auc), average_precision: round(c.average_precision) });
  const ablation = ablationSingleBooster(run, options);
  const comparisons = {
    split: 'test',
    stack: { roc_auc: metrics.splits.test.roc_auc, average_precision: metrics.splits.test.average_precision },
    ablation_single_booster_all_features: rounded(ablation),
    // The stack minus the ablation on the same test rows, with a paired 95 % interval.
    stack_minus_ablation: gapIntervals(testP, ablation.scores, testLabels, seed),
    baseline_amount_only: rounded(baselineAmount(run)),
    baseline_logistic_regression: rounded(baselineLogistic(run)),
  };
  // Rings: detected over the whole period; scored against the simulator's true rings when known.
  log('rings');
  const last = rows[rows.length - 1]!.time;
  const rings = detectRings(rows, last + 1);
  const truth = rows.some((r) => r.customer_id.startsWith('R') && r.merchant_id.startsWith('R'));
  const ringOf = (customers: string[]) => {
    const mules = customers.filter((c) => /^R\d+C/.test(c));
    return mules.length > customers.length / 2 ? mules[0]!.split('C')[0]! : undefined;
  };
  const trueRings = new Set(rows.filter((r) => /^R\d+C/.test(r.customer_id)).map((r) => r.customer_id.split('C')[0]!));
  const matched = rings.map((r) => ringOf(r.customers));
  const ringMetrics = {
    windows: 'weekly, published one label delay after they close',
    flagged_groups: rings.length,
    ...(truth
      ? {
          precision: round(rings.length ? matched.filter((m) => m !== undefined).length / rings.length : Number.NaN),
          recall: round(trueRings.size ? new Set(matched.filter((m) => m !== undefined)).size / trueRings.size : Number.NaN),
          true_rings: trueRings.size,
          note: "a flagged group matches a simulated ring when most of its customers are that ring's mules",
        }
      : { note: 'no ground truth for rings in this data' }),
  };
  const charts = {
    split: 'test',
    roc: rocCurve(testP, testLabels),
    precision_recall: precisionRecallCurve(testP, testLabels),
    reliability: reliabilityCurve(testP, testLabels),
    score_histograms: scoreHistograms(testP, testLabels),
  };
  const limitations = [
    input.data
      ? `Trained and evaluated on ${input.data} only.`
      : 'Trained and evaluated on simulated payments: the model knows only the fraud the simulator makes, and real fraud differs.',
    'Labels are taken as complete once older than the seven-day delay; real chargebacks arrive later and some never do.',
    `The boosters' settings and number of trees were chosen on the validation split (${run.search!.settings_tried} settings, ${run.search!.models_compared} models compared), as were the stack, calibration and thresholds: validation figures flatter the model, test does not.`,
    'One time split: the intervals are over the rows of each split, not over other periods; the seed spread (simulator data only) re-runs the pipeline on two other seeds. Drift is measured per dataset job and per week of live traffic against the validation split (reference.json), not here.',
    'Five per cent of the training rows have their location and (independently) their payment type left out, as a client omitting them would send them; validation and test have every field.',
    'Thresholds are chosen on validation; a target that held there can fail on test (see modes.*.meets_target).',
    'Hours of the day are UTC; no customer time zone is known.',
    "Ring precision and recall use the simulator's ground truth and do not transfer to real data.",
  ];
  // The same pipeline on the simulator with other seeds (data and training), for the spread a single
  // run hides: each run's test figures, and their range. Not for a CSV, which has one sample.
  const SPREAD_SEEDS = [1, 2];
  let seedSpread: Record<string, unknown> | undefined;
  if (!input.data) {
    const runs = [{ data_seed: DEFAULT_SIMULATION.seed, training_seed: seed, ...headline(testP, testLabels) }];
    for (const k of SPREAD_SEEDS) {
      log(`seed spread: simulator seed ${DEFAULT_SIMULATION.seed + k}, training seed ${seed + k}`);
      // The settings the main run chose, not a search of their own (it would triple the time).
      const other = await train(simulate({ seed: DEFAULT_SIMULATION.seed + k }), {
        ...options,
        seed: seed + k,
        settings: null,
        params: run.settings.params,
        iterations: run.settings.iterations,
        unusedFeatures: run.settings.unusedFeatures,
        progress: () => {},
      });
      const cold = fitColdStart(other.features, other.split.validation, other.labels);
      const p = applyColdStart(other.scores.test.probability, other.features, other.split.test, cold).probabilities;
      runs.push({
        data_seed: DEFAULT_SIMULATION.seed + k,
        training_seed: seed + k,
        ...headline(
          p,
          Float64Array.from(other.split.test, (i) => other.labels[i]!),
        ),
      });
    }
    const range = (key: keyof ReturnType<typeof headline>) => {
      const xs = runs.map((r) => r[key]).filter((x): x is number => x !== null);
      return { min: Math.min(...xs), max: Math.max(...xs), mean: round(xs.reduce((a, b) => a + b, 0) / xs.length) };
    };
    seedSpread = {
      split: 'test',
      note: 'the whole pipeline (simulation, training, stack, calibration, cold start) with other simulator and training seeds, with the settings the first run chose; the served model is the first run',
      runs,
      roc_auc: range('roc_auc'),
      average_precision: range('average_precision'),
      recall_at_1pct_fpr: range('recall_at_1pct_fpr'),
      expected_calibration_error: range('expected_calibration_error'),
    };
  }
  // Every setting the search tried, for the Evaluation page and anyone auditing the choice.
  const selection = {
    split: 'validation',
    ...run.search!,
    trials: run.search!.trials.map((t) => ({ ...t, score: round(t.score) })),
    chosen: { params: run.settings.params, iterations: run.settings.iterations, unused_features: run.settings.unusedFeatures },
    note: 'the defaults are tried first; the more models compared, the more the best validation score flatters the choice: judge it on test',
  };
  writeFileSync(
    join(out, 'metrics.json'),
    `${JSON.stringify(
      { ...metrics, selection, comparisons, ...(seedSpread ? { seed_spread: seedSpread } : {}), rings: ringMetrics, charts, limitations },
      null,
      2,
    )}\n`,
  );
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1)} s] wrote ${out}\n`);
  process.stderr.write(`LightGBM's own answers for its boosters, which npm test holds the engine to: npm run golden -- --model ${out}\n`);
  return { model_id: id, out, test: metrics.splits.test, comparisons };
}
