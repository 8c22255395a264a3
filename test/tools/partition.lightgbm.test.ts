// The channel boosters are one interaction-constrained booster partitioned by channel: each is a
// valid LightGBM model (LightGBM itself loads it and agrees with our engine), every tree stays
// within one channel, and the channels' raw scores add up to the joint booster's on every row.

import t from 'tap';
import { loadModel } from '../../src/addon/addon.ts';
import { lightgbmReference, trainLightgbm } from '../../tools/lightgbm.ts';
import { interactionConstraints, partitionByChannel, treeSizes } from '../../tools/training/partition.ts';
import { syntheticMatrix } from '../../tools/training/synthetic.ts';

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
const constrained = trainLightgbm({ rows: data.rows, numFeatures, labels: data.labels, params: { ...params, interaction_constraints: interactionConstraints(groups) }, categorical: [1], iterations: 60 });

t.test('the interaction constraint lists each channel\'s columns', async (t) => {
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
    const sizes = text.split('\n').find((l) => l.startsWith('tree_sizes='))!.slice('tree_sizes='.length).split(' ').map(Number);
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
