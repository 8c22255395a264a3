// `npm run eval:handbook [-- options]` (`--help` lists them): the handbook's protocol
// (handbook-protocol.ts) on our re-implementation of its simulator over several seeds, or on a
// labelled CSV in the dataset format (day 0 is the UTC day of its first transaction). Two models:
// this service (the four channels' point-in-time features, boosters fitted on the protocol's seven
// training days) and the same-data baseline (the handbook's 15 features, handbook-features.ts, one
// booster), so our learner is also compared with the book's tuned XGBoost. Prints AUC ROC, average
// precision and card precision@100 per seed with bootstrap intervals, the spread over seeds beside
// the published rows, and a last line of JSON. Settings are chosen as the book's were, by
// prequential validation (selection.ts, on worker threads: parallel-search.ts), and for this
// service the feature groups its boosters leave out on the same validation weeks (feature-groups.ts,
// as `npm run train -- --feature-groups` does); the test week is used once. The channel boosters
// are summed with unit weights: the protocol leaves no period to fit a stack on, and calibration,
// being monotone, would change none of the figures. Deterministic.

import { commandLine, existingFile, flag, wholeNumber } from '../src/command-line.ts';
import { readLabelledCsv } from '../src/training/dataset-csv.ts';
import { CHANNEL_FEATURES, extractBatch } from '../src/domain/features/extract.ts';
import { TABULAR_CATEGORICAL } from '../src/domain/features/tabular.ts';
import { History } from '../src/domain/history/history.ts';
import { UNKNOWN, type Transaction } from '../src/domain/transaction.ts';
import { loadModel } from '../src/addon/addon.ts';
import { trainLightgbm } from '../src/addon/lightgbm.ts';
import {
  BOOTSTRAP_DEFAULTS,
  averagePrecisionStatistic,
  cardPrecisionStatistic,
  pairedBootstrap,
  rocAucStatistic,
  type Interval,
} from '../src/model/bootstrap.ts';
import { HANDBOOK_FEATURES, handbookFeatures } from '../src/training/handbook-features.ts';
import { simulateHandbook } from '../src/training/handbook.ts';
import { cardPrecisionAtK, HANDBOOK_PROTOCOL, protocolSplit, PUBLISHED } from '../src/training/handbook-protocol.ts';
import { interactionConstraints } from '../src/training/partition.ts';
import { searchOnThreads } from '../src/training/parallel-search.ts';
import { chooseUnusedFeatures, FEATURE_GROUPS, type GroupChoice } from '../src/training/feature-groups.ts';
import {
  DEFAULT_SPACE,
  SEARCH_DEFAULTS,
  SPACE_FIXED,
  type Fold,
  type Params,
  type SearchOptions,
  type Selection,
  type SelectionData,
} from '../src/training/selection.ts';
import { boosterParams, CHANNELS, combinedMatrix, DEFAULT_TRAINING, gather, trainChannelBoosters } from '../src/training/train.ts';

// Every value is checked before the (minutes-long) work starts; defaults that depend on --quick
// are applied after.
const values = commandLine({
  name: 'eval:handbook',
  about: "The handbook's protocol on its simulator (or a CSV), this service beside the published table.",
  options: {
    seed: wholeNumber('first simulator seed (default 0)'),
    seeds: wholeNumber('number of simulator seeds, N .. N+K-1 (default 3; 1 with --quick)', { min: 1, value: 'K' }),
    data: existingFile('FILE.csv', 'a labelled CSV in the dataset format instead of the simulator (one dataset)'),
    settings: wholeNumber(`random settings tried per model, besides the service's defaults (default ${SEARCH_DEFAULTS.settings}; 2 with --quick)`),
    iterations: wholeNumber(`most trees of any setting, early stopping picks fewer (default ${SEARCH_DEFAULTS.maxIterations}; 150 with --quick)`, { min: 1 }),
    resamples: wholeNumber(`bootstrap resamples of the test week (default ${BOOTSTRAP_DEFAULTS.resamples}; 200 with --quick)`, { min: 1 }),
    quick: flag('one seed, a smaller search (under a minute)'),
  },
  check: (v) =>
    v.data !== undefined && (v.seed !== undefined || v.seeds !== undefined) ? '--seed and --seeds choose simulator runs; --data is one dataset' : undefined,
});
const quick = values.quick;
const dataFile = values.data;
const firstSeed = values.seed ?? 0;
const seedCount = dataFile !== undefined ? 1 : (values.seeds ?? (quick ? 1 : 3));
const searchOptions: Partial<SearchOptions> = {
  settings: values.settings ?? (quick ? 2 : SEARCH_DEFAULTS.settings),
  maxIterations: values.iterations ?? (quick ? 150 : SEARCH_DEFAULTS.maxIterations),
  checkpoints: quick ? 10 : SEARCH_DEFAULTS.checkpoints,
};
const resamples = values.resamples ?? (quick ? 200 : BOOTSTRAP_DEFAULTS.resamples);

const started = performance.now();
const log = (what: string) => process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1)} s] ${what}\n`);
const p = HANDBOOK_PROTOCOL;
const lastDay = p.trainStart + p.trainDays + p.delayDays + p.testDays;
const DAY = 86_400_000;
const FIGURES = ['roc_auc', 'average_precision', 'card_precision_at_100'] as const;
type Figure = (typeof FIGURES)[number];
const TUNED = PUBLISHED.find((m) => m.model === 'XGBoost, tuned (prequential)')!;

/** The service's own settings (train.ts), tried first in every search. */
const SERVICE_DEFAULTS: Params = Object.fromEntries(
  Object.keys(DEFAULT_SPACE).flatMap((k) => (k in boosterParams(DEFAULT_TRAINING) ? [[k, boosterParams(DEFAULT_TRAINING)[k]!]] : [])),
);

interface ModelResult {
  selection: Selection;
  /** Ours only: the feature groups left out on validation (feature-groups.ts). */
  groups?: GroupChoice;
  intervals: Record<Figure, Interval>;
  cardPrecisionPerDay: number[];
}

interface SeedRun {
  seed: number | undefined;
  transactions: number;
  train: { rows: number; fraud: number };
  test: { rows: number; fraud: number };
  ours: ModelResult;
  baseline: ModelResult;
  difference: Record<Figure, Interval>;
}

async function load(seed: number | undefined): Promise<{ rows: Transaction[]; days: number[] }> {
  if (dataFile !== undefined) {
    log(`reading ${dataFile}`);
    const all = await readLabelledCsv(dataFile);
    const first = Math.floor(all[0]!.time / DAY) * DAY;
    const dayOf = (time: number) => Math.floor((time - first) / DAY);
    const rows = all.filter((r) => dayOf(r.time) < lastDay);
    return { rows, days: rows.map((r) => dayOf(r.time)) };
  }
  log(`simulating (handbook preset, seed ${seed})`);
  const simulated = simulateHandbook({ seed }).filter((r) => r.day < lastDay);
  return {
    rows: simulated.map((r) => ({
      time: r.time,
      amount: r.amount,
      customer_id: r.customer_id,
      merchant_id: r.terminal_id,
      location: UNKNOWN,
      payment_type: UNKNOWN,
      label: r.label,
    })),
    days: simulated.map((r) => r.day),
  };
}

const progress = (what: string) => (done: number, total: number, best: { score: number; iterations: number }) => {
  if (done === total || done % 10 === 0) log(`${what}: ${done}/${total} settings, best validation AP ${best.score.toFixed(3)} at ${best.iterations} trees`);
};

async function runSeed(seed: number | undefined): Promise<SeedRun> {
  const { rows, days } = await load(seed);
  const protocolRows = rows.map((r, i) => ({ day: days[i]!, customer_id: r.customer_id, label: r.label! }));
  const labels = Float64Array.from(rows, (r) => r.label!);
  const split = protocolSplit(protocolRows, p);
  // Prequential validation: the protocol one and two weeks earlier; its test week is the validation.
  const folds: Fold[] = [1, 2]
    .map((weeks) => protocolSplit(protocolRows, { ...p, trainStart: p.trainStart - 7 * weeks }))
    .map((s) => ({ train: s.train, validation: s.test }));
  const testLabels = Float64Array.from(split.test, (i) => labels[i]!);
  const trainFraud = split.train.reduce((n, i) => n + labels[i]!, 0);
  log(
    `${rows.length.toLocaleString('en')} transactions; training ${split.train.length.toLocaleString('en')} (${trainFraud} fraud), test ${split.test.length.toLocaleString('en')} (${testLabels.reduce((a, b) => a + b, 0)} fraud)`,
  );

  // This service: every channel's features, one interaction-constrained booster per setting.
  log(`features for ${rows.length.toLocaleString('en')} transactions (every one from its older history only)`);
  const { features } = extractBatch(rows, new History(p.delayDays * DAY));
  const groups = CHANNELS.map((name) => ({ name, features: CHANNEL_FEATURES[name] }));
  const oursData: SelectionData = {
    matrix: (r) => combinedMatrix(features, [...r]).matrix,
    width: CHANNELS.reduce((w, c) => w + CHANNEL_FEATURES[c].length, 0),
    labels,
    categorical: TABULAR_CATEGORICAL, // the tabular channel comes first
  };
  const oursBase = { ...boosterParams(DEFAULT_TRAINING), interaction_constraints: interactionConstraints(groups) };
  log(
    `this service: choosing settings by prequential validation (${(searchOptions.settings ?? 0) + 1} settings × ${folds.length} earlier weeks, up to ${searchOptions.maxIterations} trees)`,
  );
  const oursChoice = await searchOnThreads(oursData, folds, oursBase, { ...searchOptions, start: [SERVICE_DEFAULTS], progress: progress('this service') });
  log(`this service: chosen ${JSON.stringify(oursChoice.params)}, ${oursChoice.iterations} trees`);
  log(`this service: feature groups the boosters may leave out (${FEATURE_GROUPS.length}, each alone, on the same validation weeks)`);
  const groupChoice = await chooseUnusedFeatures(oursData, folds, groups, { ...boosterParams(DEFAULT_TRAINING), ...oursChoice.params }, oursChoice.iterations);
  log(`this service: ${groupChoice.groups.length ? `left out ${groupChoice.groups.join(', ')}` : 'every feature kept'}`);
  const boosters = trainChannelBoosters(features, labels, split.train, {
    ...DEFAULT_TRAINING,
    iterations: oursChoice.iterations,
    params: oursChoice.params,
    unusedFeatures: groupChoice.unused,
  });
  const oursScores = new Float64Array(split.test.length);
  boosters.forEach((b, k) => {
    const channel = CHANNELS[k]!;
    const raw = loadModel(b.modelText).predictRawBatch(gather(features[channel], CHANNEL_FEATURES[channel].length, split.test));
    for (let i = 0; i < raw.length; i++) oursScores[i]! += raw[i]!;
  });

  // The same-data baseline: the handbook's 15 features, one booster, its own search.
  log("same-data baseline: the handbook's own features");
  const baselineRows = rows.map((r) => ({ time: r.time, amount: r.amount, customer_id: r.customer_id, terminal_id: r.merchant_id, label: r.label! }));
  const needed = [...new Set([...split.train, ...split.test, ...folds.flatMap((f) => [...f.train, ...f.validation])])].sort((a, b) => a - b);
  const position = new Map(needed.map((i, k) => [i, k]));
  const w = HANDBOOK_FEATURES.length;
  const handbookMatrix = handbookFeatures(baselineRows, needed);
  const baselineData: SelectionData = {
    matrix: (r) =>
      gather(
        handbookMatrix,
        w,
        r.map((i) => position.get(i)!),
      ),
    width: w,
    labels,
  };
  const baselineBase = boosterParams(DEFAULT_TRAINING);
  log(`baseline: choosing settings by prequential validation (${(searchOptions.settings ?? 0) + 1} settings × ${folds.length} earlier weeks)`);
  const baselineChoice = await searchOnThreads(baselineData, folds, baselineBase, {
    ...searchOptions,
    start: [SERVICE_DEFAULTS],
    progress: progress('baseline'),
  });
  log(`baseline: chosen ${JSON.stringify(baselineChoice.params)}, ${baselineChoice.iterations} trees`);
  const baselineModel = trainLightgbm({
    rows: baselineData.matrix(split.train),
    numFeatures: w,
    labels: Float64Array.from(split.train, (i) => labels[i]!),
    params: { ...baselineBase, ...baselineChoice.params },
    iterations: baselineChoice.iterations,
  });
  const baselineScores = loadModel(baselineModel).predictRawBatch(baselineData.matrix(split.test));

  // 95 % intervals: rows resampled for AUC and AP, cards for card precision@100; both models on the
  // same resamples, so their difference has its own (paired) interval.
  log(`bootstrap (${resamples} resamples of the test week)`);
  const cards = split.test.map((i) => rows[i]!.customer_id);
  const units = split.test.length;
  const o = { resamples };
  const auc = pairedBootstrap(units, rocAucStatistic(oursScores, testLabels), rocAucStatistic(baselineScores, testLabels), o);
  const ap = pairedBootstrap(units, averagePrecisionStatistic(oursScores, testLabels), averagePrecisionStatistic(baselineScores, testLabels), o);
  const cpOurs = cardPrecisionStatistic(cards, split.testDay, oursScores, testLabels, 100);
  const cpBaseline = cardPrecisionStatistic(cards, split.testDay, baselineScores, testLabels, 100);
  const cp = pairedBootstrap(cpOurs.units, cpOurs.statistic, cpBaseline.statistic, o);
  return {
    seed,
    transactions: rows.length,
    train: { rows: split.train.length, fraud: trainFraud },
    test: { rows: split.test.length, fraud: testLabels.reduce((a, b) => a + b, 0) },
    ours: {
      selection: oursChoice,
      groups: groupChoice,
      intervals: { roc_auc: auc.a, average_precision: ap.a, card_precision_at_100: cp.a },
      cardPrecisionPerDay: cardPrecisionAtK(cards, split.testDay, oursScores, testLabels, 100).perDay,
    },
    baseline: {
      selection: baselineChoice,
      intervals: { roc_auc: auc.b, average_precision: ap.b, card_precision_at_100: cp.b },
      cardPrecisionPerDay: cardPrecisionAtK(cards, split.testDay, baselineScores, testLabels, 100).perDay,
    },
    difference: { roc_auc: auc.difference, average_precision: ap.difference, card_precision_at_100: cp.difference },
  };
}

const seeds = dataFile !== undefined ? [undefined] : Array.from({ length: seedCount }, (_, k) => firstSeed + k);
const runs: SeedRun[] = [];
for (const seed of seeds) runs.push(await runSeed(seed));

// Mean over seeds with the spread (min–max and standard deviation).
interface Spread {
  mean: number;
  min: number;
  max: number;
  sd: number;
}
function spread(xs: number[]): Spread {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = xs.length > 1 ? Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1)) : 0;
  return { mean, min: Math.min(...xs), max: Math.max(...xs), sd };
}
const summarize = (pick: (r: SeedRun) => Record<Figure, Interval>) =>
  Object.fromEntries(FIGURES.map((f) => [f, spread(runs.map((r) => pick(r)[f].value))])) as Record<Figure, Spread>;
const oursSummary = summarize((r) => r.ours.intervals);
const baselineSummary = summarize((r) => r.baseline.intervals);
const matches = Object.fromEntries(FIGURES.map((f) => [f, baselineSummary[f].mean >= TUNED[f]])) as Record<Figure, boolean>;
const beats = Object.fromEntries(FIGURES.map((f) => [f, PUBLISHED.every((m) => oursSummary[f].mean > m[f])])) as Record<Figure, boolean>;

const r3 = (x: number) => x.toFixed(3);
const withInterval = (i: Interval) => `${r3(i.value)} [${r3(i.low)}, ${r3(i.high)}]`;
const signed = (i: Interval) => `${i.value >= 0 ? '+' : ''}${r3(i.value)} [${r3(i.low)}, ${r3(i.high)}]`;
const withSpread = (s: Spread) => (runs.length > 1 ? `${r3(s.mean)} (${r3(s.min)}–${r3(s.max)})` : r3(s.mean));
const row = (name: string, cells: string[], width = 22) => `${name.padEnd(46)} ${cells.map((c) => c.padStart(width)).join(' ')}`;
const header = (width = 22) => row('model (test split)', ['AUC ROC', 'AP', 'CP@100'], width);
const BASELINE_NAME = "handbook's 15 features, our learner";
const OURS_NAME = 'this service (four channel boosters)';
const describe = (s: Selection) =>
  `${s.settingsTried} settings, ${s.modelsCompared} (setting, trees) pairs compared; chose ${Object.entries(s.params)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')}, ${s.iterations} trees (validation AP ${r3(s.score)})`;

console.log(
  `\nHandbook protocol: train ${p.trainDays} days from day ${p.trainStart} (2018-07-25), ${p.delayDays}-day delay, test ${p.testDays} days; known compromised cards removed.`,
);
console.log(
  `Settings by prequential validation (the protocol 1 and 2 weeks back), a seeded random search with early stopping; 95 % bootstrap intervals over the test week (${resamples} resamples: rows for AUC and AP, cards for CP@100).`,
);
for (const r of runs) {
  console.log(
    `\n${r.seed === undefined ? dataFile : `Simulator seed ${r.seed}`}: ${r.transactions.toLocaleString('en')} transactions; training ${r.train.rows.toLocaleString('en')} (${r.train.fraud} fraud), test ${r.test.rows.toLocaleString('en')} (${r.test.fraud} fraud)`,
  );
  console.log(`  baseline: ${describe(r.baseline.selection)}`);
  console.log(`  ours:     ${describe(r.ours.selection)}`);
  const g = r.ours.groups!;
  console.log(
    `            features left out: ${g.groups.length ? g.groups.join(', ') : 'none'} (validation AP / AUC with all ${r3(g.all.average_precision)} / ${r3(g.all.roc_auc)}; ${
      g.trials
        .filter((t) => t.passed)
        .map((t) => `without ${t.group} ${r3(t.average_precision)} / ${r3(t.roc_auc)}`)
        .join('; ') || 'no group beats that on both'
    })`,
  );
  console.log(header(24));
  console.log(
    row(
      BASELINE_NAME,
      FIGURES.map((f) => withInterval(r.baseline.intervals[f])),
      24,
    ),
  );
  console.log(
    row(
      OURS_NAME,
      FIGURES.map((f) => withInterval(r.ours.intervals[f])),
      24,
    ),
  );
  console.log(
    row(
      '  difference (ours − baseline, paired)',
      FIGURES.map((f) => signed(r.difference[f])),
      24,
    ),
  );
}
const source = dataFile ?? `this re-implementation's data, ${runs.length === 1 ? `seed ${seeds[0]}` : `mean (min–max) over seeds ${seeds.join(', ')}`}`;
console.log(`\nPublished rows: the handbook, on its own simulated data. Below the line: ${source}.`);
console.log(header());
for (const m of PUBLISHED)
  console.log(
    row(
      `${m.model} (published)`,
      FIGURES.map((f) => r3(m[f])),
    ),
  );
console.log('-'.repeat(46 + 3 * 23));
console.log(
  row(
    BASELINE_NAME,
    FIGURES.map((f) => withSpread(baselineSummary[f])),
  ),
);
console.log(
  row(
    OURS_NAME,
    FIGURES.map((f) => withSpread(oursSummary[f])),
  ),
);
const yes = (b: boolean) => (b ? 'yes' : 'no');
console.log(
  `our learner on the 15 features matches the tuned XGBoost (${FIGURES.map((f) => r3(TUNED[f])).join(' / ')}): ${FIGURES.map((f) => `${f === 'roc_auc' ? 'AUC' : f === 'average_precision' ? 'AP' : 'CP@100'} ${yes(matches[f])} (${baselineSummary[f].mean >= TUNED[f] ? '+' : ''}${r3(baselineSummary[f].mean - TUNED[f])})`).join(', ')}`,
);
console.log(
  `this service better than every published row: AUC ${yes(beats.roc_auc)}, AP ${yes(beats.average_precision)}, CP@100 ${yes(beats.card_precision_at_100)}`,
);
log('done');

const round = (x: number) => Math.round(x * 1e4) / 1e4;
const roundAll = <T extends object>(o: T) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, round(v as number)]));
const modelJson = (m: ModelResult) => ({
  settings_tried: m.selection.settingsTried,
  models_compared: m.selection.modelsCompared,
  chosen: { params: m.selection.params, iterations: m.selection.iterations, validation_average_precision: round(m.selection.score) },
  ...(m.groups
    ? {
        feature_groups_left_out: m.groups.groups,
        feature_group_trials: m.groups.trials.map((t) => ({ ...t, average_precision: round(t.average_precision), roc_auc: round(t.roc_auc) })),
        validation_with_every_feature: roundAll(m.groups.all),
      }
    : {}),
  ...Object.fromEntries(FIGURES.map((f) => [f, roundAll(m.intervals[f])])),
  card_precision_per_day: m.cardPrecisionPerDay,
});
console.log(
  JSON.stringify({
    split: 'test',
    data: dataFile ?? 'handbook simulator',
    seeds: dataFile === undefined ? seeds : [],
    selection: {
      by: 'mean average precision on the protocol shifted 1 and 2 weeks back (validation weeks only)',
      feature_groups: 'this service: a group of features is left out only when both validation average precision and ROC AUC are higher without it',
      search: 'seeded random search, the service defaults first; trees by early stopping',
      random_settings: searchOptions.settings,
      max_iterations: searchOptions.maxIterations,
      space: DEFAULT_SPACE,
      fixed: SPACE_FIXED,
    },
    bootstrap: { level: BOOTSTRAP_DEFAULTS.level, resamples, units: { roc_auc: 'rows', average_precision: 'rows', card_precision_at_100: 'cards' } },
    runs: runs.map((r) => ({
      seed: r.seed ?? null,
      transactions: r.transactions,
      train: r.train,
      test: r.test,
      ours: modelJson(r.ours),
      same_data_baseline: modelJson(r.baseline),
      difference: Object.fromEntries(FIGURES.map((f) => [f, roundAll(r.difference[f])])),
    })),
    summary: {
      ours: Object.fromEntries(FIGURES.map((f) => [f, roundAll(oursSummary[f])])),
      same_data_baseline: Object.fromEntries(FIGURES.map((f) => [f, roundAll(baselineSummary[f])])),
    },
    published: PUBLISHED,
    baseline_matches_tuned_xgboost: matches,
    better_than_every_published: beats,
    seconds: Math.round((performance.now() - started) / 100) / 10,
  }),
);
