// The channel boosters are one interaction-constrained booster partitioned by channel: each is a
// valid LightGBM model (LightGBM itself loads it and agrees with our engine), every tree stays
// within one channel, and the channels' raw scores add up to the joint booster's on every row.
// Trees boosted from a model's margins append to it (an organization's boosters on top of the
// built-in ones) with a raw score of exactly the sum.

import t from 'tap';
import { loadModel } from '../../src/addon/addon.ts';
import { lightgbmReference, trainLightgbm } from '../../src/addon/lightgbm.ts';
import { appendTrees, interactionConstraints, partitionByChannel, sliceTrees, treeCount, treeSizes } from '../../src/training/partition.ts';
import { logLoss } from '../../src/model/metrics.ts';
import { syntheticMatrix } from '../../src/training/synthetic.ts';

const groups = [
  { name: 'first', features: ['a', 'b', 'c'] },
  { name: 'second', features: ['d', 'e'] },
  { name: 'third', features: ['f', 'g', 'h', 'i'] },
  { name: 'unused', features: ['j'] },
];
const numFeatures = 10;
const data = syntheticMatrix({ seed: 5, numRows: 4000, numFeatures, categorical: [1], missingRate: 0.05 });
const params = { objective: 'binary', num_leaves: 15, learning_rate: 0.1, min_data_in_leaf: 20, seed: 3 };
// Feature 9 alone in the last group gets no tree when it is constant.
for (let i = 0; i < data.numRows; i++) data.rows[i * numFeatures + 9] = 1;
const constrained = trainLightgbm({
  rows: data.rows,
  numFeatures,
  labels: data.labels,
  params: { ...params, interaction_constraints: interactionConstraints(groups) },
  categorical: [1],
  iterations: 60,
});

t.test("the interaction constraint lists each channel's columns", async (t) => {
  t.equal(interactionConstraints(groups), '[0,1,2],[3,4],[5,6,7,8],[9]');
});

t.test('tree sizes are laid out the way LightGBM writes them', async (t) => {
  const line = constrained.split('\n').find((l) => l.startsWith('tree_sizes='))!;
  t.same(treeSizes(constrained), line.slice('tree_sizes='.length).split(' ').map(Number));
});

t.test('channel boosters add up to the joint booster, in our engine and in LightGBM', async (t) => {
  const texts = partitionByChannel(constrained, groups);
  t.equal(texts.length, groups.length);
  const joint = loadModel(constrained).predictRawBatch(data.rows);
  const sum = new Float64Array(data.numRows);
  let offset = 0;
  texts.forEach((text, k) => {
    const width = groups[k]!.features.length;
    const rows = new Float64Array(data.numRows * width);
    for (let i = 0; i < data.numRows; i++) rows.set(data.rows.subarray(i * numFeatures + offset, i * numFeatures + offset + width), i * width);
    offset += width;
    const ours = loadModel(text);
    t.equal(ours.numFeatures, width, `${groups[k]!.name}: ${width} features`);
    const raw = ours.predictRawBatch(rows);
    const reference = lightgbmReference(text).predict(rows, true);
    let worst = 0;
    for (let i = 0; i < data.numRows; i++) {
      worst = Math.max(worst, Math.abs(raw[i]! - reference[i]!));
      sum[i]! += raw[i]!;
    }
    t.ok(worst < 1e-12, `${groups[k]!.name}: our engine matches LightGBM on the partitioned model (${worst})`);
    const sizes = text
      .split('\n')
      .find((l) => l.startsWith('tree_sizes='))!
      .slice('tree_sizes='.length)
      .split(' ')
      .map(Number);
    t.same(sizes, treeSizes(text), `${groups[k]!.name}: tree_sizes consistent`);
  });
  let worst = 0;
  for (let i = 0; i < data.numRows; i++) worst = Math.max(worst, Math.abs(sum[i]! - joint[i]!));
  t.ok(worst < 1e-9, `Σ channel raw = joint raw (max difference ${worst})`);
  t.match(texts[3]!, /leaf_value=0\n/, 'a channel without trees gets one constant zero tree');
});

t.test('a booster trained without the constraint is refused', async (t) => {
  const free = trainLightgbm({ rows: data.rows, numFeatures, labels: data.labels, params, categorical: [1], iterations: 30 });
  t.throws(() => partitionByChannel(free, groups), /mixes channels .* interaction constraints/);
});

t.test('a booster with another number of features is refused', async (t) => {
  t.throws(() => partitionByChannel(constrained, groups.slice(0, 3)), /the booster has 10 features, the channels 9/);
});

t.test("trees boosted from a model's margins, appended to it and scaled, add exactly what they learned", async (t) => {
  const base = trainLightgbm({ rows: data.rows, numFeatures, labels: data.labels, params, categorical: [1], iterations: 10 });
  const baseRaw = loadModel(base).predictRawBatch(data.rows);
  const scale = 0.8;
  const start = baseRaw.map((v) => v / scale);
  const added = trainLightgbm({ rows: data.rows, numFeatures, labels: data.labels, params, categorical: [1], iterations: 20, initScores: start });
  const addedRaw = loadModel(added).predictRawBatch(data.rows);
  const loss = (margin: (i: number) => number) =>
    logLoss(
      Float64Array.from(baseRaw, (_, i) => 1 / (1 + Math.exp(-margin(i)))),
      data.labels,
    );
  t.ok(
    loss((i) => start[i]! + addedRaw[i]!) < loss((i) => start[i]!) - 0.01,
    'the added trees learn what the initial scores miss (they hold only that: no average folded in)',
  );

  const whole = appendTrees(base, added, scale);
  t.equal(treeCount(whole), treeCount(base) + treeCount(added), 'the base trees, then the added ones');
  t.equal(sliceTrees(whole, 0, treeCount(base)), sliceTrees(base, 0, treeCount(base)), 'the base trees unchanged');
  const ours = loadModel(whole).predictRawBatch(data.rows);
  const reference = lightgbmReference(whole).predict(data.rows, true);
  let engine = 0;
  let exact = 0;
  for (let i = 0; i < data.numRows; i++) {
    engine = Math.max(engine, Math.abs(ours[i]! - reference[i]!));
    exact = Math.max(exact, Math.abs(ours[i]! - (baseRaw[i]! + scale * addedRaw[i]!)));
  }
  t.ok(engine < 1e-12, `our engine matches LightGBM on the appended model (${engine})`);
  t.ok(exact < 1e-9, `its raw score is the base's plus scale × the added trees' (${exact})`);
  t.same(
    whole
      .split('\n')
      .find((l) => l.startsWith('tree_sizes='))!
      .slice('tree_sizes='.length)
      .split(' ')
      .map(Number),
    treeSizes(whole),
    'tree_sizes consistent',
  );
  t.throws(() => appendTrees(base, partitionByChannel(constrained, groups)[0]!, 1), /the base has 10 features, the added trees 3/);
  t.throws(() => appendTrees(base, added, 0), /finite non-zero/);
});
