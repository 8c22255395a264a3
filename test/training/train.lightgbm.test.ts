// Training end to end on simulated data: four channel boosters trained natively (one constrained
// booster, partitioned), stacked and calibrated on validation only; on the untouched test split the
// stack ranks well, stays close to a single booster over all features (within 0.035 average
// precision on this small set; the built-in model is held closer in builtin.lightgbm.test.ts), is
// calibrated, and the whole run is reproducible. The boosters' settings, and the feature groups
// they leave out, are chosen on the validation split only: the test split's labels can change and
// nothing trained changes.

import t from 'tap';
import { averagePrecision, expectedCalibrationError, rocAuc } from '../../src/model/metrics.ts';
import { simulate } from '../../src/domain/simulate.ts';
import { ablationSingleBooster } from '../../src/training/evaluate.ts';
import { CHANNELS, DEFAULT_TRAINING, train } from '../../src/training/train.ts';
import { FEATURE_GROUPS } from '../../src/training/feature-groups.ts';

const rows = simulate({ seed: 41, customers: 1500, merchants: 300, days: 75, rings: 3 });
const OPTIONS = { iterations: 120, settings: 3, featureGroups: true };
const run = await train(rows, OPTIONS);

t.test('splits are time-ordered and separated by the label delay', async (t) => {
  const { train: tr, validation: va, test: te } = run.split.bounds;
  t.ok(tr[1] + 7 * 86_400_000 <= va[0] + 1 && va[1] + 7 * 86_400_000 <= te[0] + 1, 'gaps of the label delay');
  t.ok(run.split.train.length > run.split.test.length && run.split.test.length > 1000);
});

t.test('the stack ranks well on the test split and is calibrated', async (t) => {
  const labels = Float64Array.from(run.split.test, (i) => run.labels[i]!);
  const p = run.scores.test.probability;
  const auc = rocAuc(p, labels);
  const ap = averagePrecision(p, labels);
  const single = ablationSingleBooster(run, { ...DEFAULT_TRAINING, iterations: 120 });
  t.ok(auc > 0.9, `test ROC AUC ${auc.toFixed(3)}`);
  t.ok(ap > 0.5, `test average precision ${ap.toFixed(3)}`);
  t.ok(ap >= single.average_precision - 0.035, `stack AP ${ap.toFixed(3)} vs single booster ${single.average_precision.toFixed(3)}`);
  const ece = expectedCalibrationError(p, labels);
  t.ok(ece < 0.02, `test expected calibration error ${ece.toFixed(4)}`);
  t.equal(run.model.stack.weights.length, CHANNELS.length);
  t.ok(run.model.stack.weights.every(Number.isFinite));
});

t.test('a group of features is left out only when validation AP and AUC are both higher without it, and no tree splits on it', async (t) => {
  const g = run.search!.feature_groups!;
  t.equal(g.trials.length, FEATURE_GROUPS.length, 'every group tried');
  for (const trial of g.trials)
    t.equal(
      trial.passed,
      trial.average_precision > g.all.average_precision && trial.roc_auc > g.all.roc_auc,
      `${trial.group}: ${trial.passed ? 'left out' : 'kept'} (AP ${trial.average_precision.toFixed(4)} against ${g.all.average_precision.toFixed(4)}, AUC ${trial.roc_auc.toFixed(4)} against ${g.all.roc_auc.toFixed(4)})`,
    );
  t.same(
    g.unused,
    FEATURE_GROUPS.filter((x) => g.groups.includes(x.name)).flatMap((x) => x.features),
    "the unused features are those groups' features",
  );
  // Planted: the same data with a group forced out; its features appear in no split.
  const forced = await train(rows, { iterations: 60, settings: null, unusedFeatures: ['hour', 'is_night', 'customer_known_frauds'] });
  for (const b of forced.model.boosters) {
    const names = b.features;
    const used = new Set(
      b.modelText
        .split('\n')
        .filter((l) => l.startsWith('split_feature=') && l.length > 'split_feature='.length)
        .flatMap((l) =>
          l
            .slice('split_feature='.length)
            .split(' ')
            .map((i) => names[Number(i)]!),
        ),
    );
    for (const f of ['hour', 'is_night', 'customer_known_frauds']) t.notOk(used.has(f), `${b.channel}: no tree splits on ${f}`);
    if (b.channel === 'tabular') t.ok(used.has('amount'), 'the others are used');
  }
});

t.test('training is reproducible', async (t) => {
  const again = await train(rows, OPTIONS);
  t.same(
    again.model.boosters.map((b) => b.modelText),
    run.model.boosters.map((b) => b.modelText),
    'identical model files',
  );
  t.same(again.model.stack, run.model.stack);
  t.same(again.model.calibration, run.model.calibration);
  t.same(again.search, run.search, 'the same settings tried, with the same scores');
});

t.test('the settings are searched on validation only, and the best is kept', async (t) => {
  const search = run.search!;
  t.equal(search.settings_tried, 4, 'the defaults and three random draws');
  t.equal(search.trials.length, 4);
  t.ok(search.models_compared >= search.settings_tried);
  const best = Math.max(...search.trials.map((x) => x.score));
  const chosen = search.trials.find((x) => x.score === best)!;
  t.same(
    run.settings,
    { params: chosen.params, iterations: chosen.iterations, unusedFeatures: search.feature_groups!.unused },
    "the boosters have the best trial's setting and trees, and leave out the features the group choice left out",
  );
  t.ok(run.settings.iterations >= 1 && run.settings.iterations <= 120, `${run.settings.iterations} trees, within the cap`);

  // Every test label flipped: what the search saw, and so everything it chose, is unchanged.
  const testRows = new Set(run.split.test);
  const flipped = rows.map((r, i) => (testRows.has(i) ? { ...r, label: r.label === 1 ? (0 as const) : (1 as const) } : r));
  const other = await train(flipped, OPTIONS);
  t.same(other.search, run.search, 'the same trials and scores');
  t.same(
    other.model.boosters.map((b) => b.modelText),
    run.model.boosters.map((b) => b.modelText),
    'the same boosters',
  );
});
