// One booster per channel, trained together: LightGBM trains a single booster over every channel's
// features with one interaction constraint per channel, so that no branch of any tree mixes two
// channels (with disjoint groups, every tree uses one channel only). Its trees are then partitioned
// by channel into one LightGBM model text per channel, with the features renumbered to the
// channel's own. The channel boosters' raw scores add up exactly to the joint booster's, so the
// channels explain each other's residuals instead of each re-learning the shared signal, as
// independently trained boosters would (docs/model.md, why the boosters are trained together).

export interface ChannelGroup {
  name: string;
  features: readonly string[];
}

/** LightGBM's `interaction_constraints` value for consecutive feature groups. A feature named in
 *  `unused` is left out of its group, and LightGBM then never splits on it: a feature outside every
 *  constraint cannot start a branch. */
export function interactionConstraints(groups: readonly ChannelGroup[], unused: ReadonlySet<string> = new Set()): string {
  let offset = 0;
  return groups
    .map((g) => {
      const idx = g.features.flatMap((f, j) => (unused.has(f) ? [] : [offset + j]));
      offset += g.features.length;
      return `[${idx.join(',')}]`;
    })
    .join(',');
}

interface TreeBlock {
  /** Lines after `Tree=<n>`, up to (not including) the blank lines that end the tree. */
  lines: string[];
  splitFeatures: number[];
}

function field(lines: readonly string[], key: string): string | undefined {
  const line = lines.find((l) => l.startsWith(`${key}=`));
  return line === undefined ? undefined : line.slice(key.length + 1);
}

function parse(text: string): { header: string[]; trees: TreeBlock[] } {
  const lines = text.split('\n');
  const firstTree = lines.findIndex((l) => l.startsWith('Tree='));
  const end = lines.indexOf('end of trees');
  if (firstTree < 0 || end < firstTree) throw new Error('partition: the joint booster has no trees');
  const header = lines.slice(0, firstTree).filter((l) => l !== '');
  const trees: TreeBlock[] = [];
  let current: string[] | undefined;
  const close = () => {
    if (!current) return;
    const split = field(current, 'split_feature') ?? '';
    trees.push({ lines: current, splitFeatures: split === '' ? [] : split.split(' ').map(Number) });
  };
  for (const l of lines.slice(firstTree, end)) {
    if (l.startsWith('Tree=')) {
      close();
      current = [];
    } else if (l !== '') current!.push(l);
  }
  close();
  return { header, trees };
}

/** The byte layout LightGBM writes for one tree (its `tree_sizes` entry is this block's length). */
function treeText(index: number, lines: readonly string[]): string {
  return `Tree=${index}\n${lines.join('\n')}\n\n\n`;
}

/** Split a booster trained with `interactionConstraints(groups)` into one model text per group.
 *  Trees without splits (constants) go to the first group. Throws if a tree mixes groups. */
export function partitionByChannel(text: string, groups: readonly ChannelGroup[]): string[] {
  const { header, trees } = parse(text);
  const offsets: number[] = [];
  let total = 0;
  for (const g of groups) {
    offsets.push(total);
    total += g.features.length;
  }
  const infos = (field(header, 'feature_infos') ?? '').split(' ');
  if (infos.length !== total) throw new Error(`partition: the booster has ${infos.length} features, the channels ${total}`);
  const groupOf = (f: number) => {
    let k = -1;
    offsets.forEach((o, g) => {
      k = o <= f ? g : k;
    });
    if (k < 0 || f >= total) throw new Error(`partition: feature ${f} is outside every channel`);
    return k;
  };

  const perGroup: TreeBlock[][] = groups.map(() => []);
  trees.forEach((tree, t) => {
    const owners = new Set(tree.splitFeatures.map(groupOf));
    if (owners.size > 1)
      throw new Error(`partition: tree ${t} mixes channels ${[...owners].map((k) => groups[k]!.name).join(', ')} (train with interaction constraints)`);
    const k = owners.size === 0 ? 0 : [...owners][0]!;
    const local = tree.splitFeatures.map((f) => f - offsets[k]!);
    perGroup[k]!.push({ lines: tree.lines.map((l) => (l.startsWith('split_feature=') ? `split_feature=${local.join(' ')}` : l)), splitFeatures: local });
  });

  return groups.map((g, k) => {
    const own = perGroup[k]!;
    // A channel that received no tree still gets a valid model: one constant tree worth zero.
    if (own.length === 0)
      own.push({
        lines: [
          'num_leaves=1',
          'num_cat=0',
          'split_feature=',
          'split_gain=',
          'threshold=',
          'decision_type=',
          'left_child=',
          'right_child=',
          'leaf_value=0',
          'leaf_weight=0',
          'leaf_count=0',
          'internal_value=',
          'internal_weight=',
          'internal_count=',
          'is_linear=0',
          'shrinkage=1',
        ],
        splitFeatures: [],
      });
    const blocks = own.map((tree, i) => treeText(i, tree.lines));
    const head = header.map((l) => {
      if (l.startsWith('max_feature_idx=')) return `max_feature_idx=${g.features.length - 1}`;
      if (l.startsWith('feature_names=')) return `feature_names=${g.features.join(' ')}`;
      if (l.startsWith('feature_infos=')) return `feature_infos=${infos.slice(offsets[k]!, offsets[k]! + g.features.length).join(' ')}`;
      if (l.startsWith('tree_sizes=')) return `tree_sizes=${blocks.map((b) => Buffer.byteLength(b)).join(' ')}`;
      return l;
    });
    // Split counts per feature, the way LightGBM's own `feature_importances` section lists them.
    const counts = new Map<number, number>();
    for (const tree of own) for (const f of tree.splitFeatures) counts.set(f, (counts.get(f) ?? 0) + 1);
    const importances = [...counts].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([f, n]) => `${g.features[f]}=${n}`);
    return `${head.join('\n')}\n\n${blocks.join('')}end of trees\n\nfeature_importances:\n${importances.map((l) => `${l}\n`).join('')}\nparameters:\n[channel: ${g.name}]\nend of parameters\n\npandas_categorical:null\n`;
  });
}

/** `base` followed by the trees of `extra` (a booster over the same features, trained from `base`'s
 *  margins as initial scores) with their leaf and internal values multiplied by `scale`: the
 *  result's raw score is base's plus `scale` × extra's, exactly, for LightGBM and the engine alike.
 *  Used to serve an organization's boosters as the built-in ones plus what they learned on top.
 *  Constant trees worth zero (a channel that learned nothing) are left out. */
export function appendTrees(base: string, extra: string, scale: number): string {
  if (!Number.isFinite(scale) || scale === 0) throw new Error(`appendTrees: the scale must be a finite non-zero number, not ${scale}`);
  const first = parse(base);
  const added = parse(extra);
  const width = (field(first.header, 'feature_names') ?? '').split(' ').length;
  const extraWidth = (field(added.header, 'feature_names') ?? '').split(' ').length;
  if (width !== extraWidth) throw new Error(`appendTrees: the base has ${width} features, the added trees ${extraWidth}`);
  const scaled = (l: string, key: string) =>
    `${key}=${l
      .slice(key.length + 1)
      .split(' ')
      .map((v) => String(Number(v) * scale))
      .join(' ')}`;
  const kept = added.trees
    .filter((t) => !(t.splitFeatures.length === 0 && Number(field(t.lines, 'leaf_value')) === 0))
    .map((t) => ({
      ...t,
      lines: t.lines.map((l) =>
        l.startsWith('leaf_value=') ? scaled(l, 'leaf_value') : l.startsWith('internal_value=') && l !== 'internal_value=' ? scaled(l, 'internal_value') : l,
      ),
    }));
  const trees = [...first.trees, ...kept];
  const blocks = trees.map((tree, i) => treeText(i, tree.lines));
  const head = first.header.map((l) => (l.startsWith('tree_sizes=') ? `tree_sizes=${blocks.map((b) => Buffer.byteLength(b)).join(' ')}` : l));
  const names = (field(first.header, 'feature_names') ?? '').split(' ');
  const counts = new Map<number, number>();
  for (const tree of trees) for (const f of tree.splitFeatures) counts.set(f, (counts.get(f) ?? 0) + 1);
  const importances = [...counts].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([f, n]) => `${names[f]}=${n}\n`);
  const parameters = base.indexOf('\nparameters:\n');
  const tail = parameters < 0 ? '\npandas_categorical:null\n' : base.slice(parameters);
  return `${head.join('\n')}\n\n${blocks.join('')}end of trees\n\nfeature_importances:\n${importances.join('')}${tail}`;
}

/** The `tree_sizes` LightGBM would write for a model text (used to check a partition's layout). */
export function treeSizes(text: string): number[] {
  return parse(text).trees.map((tree, i) => Buffer.byteLength(treeText(i, tree.lines)));
}

/** The model made of trees `from` (inclusive) to `to` (exclusive) of a LightGBM model text, so that
 *  a booster trained once to its maximum can be scored as if it had stopped after `to` trees
 *  (`sliceTrees(text, 0, k)`), or checkpoint by checkpoint with each tree scored once: the raw
 *  scores of consecutive slices add up to the whole model's (LightGBM folds the initial score into
 *  the first tree). Used by selection.ts for early stopping. */
export function sliceTrees(text: string, from: number, to: number): string {
  const { header, trees } = parse(text);
  if (!(Number.isInteger(from) && Number.isInteger(to) && from >= 0 && to > from && to <= trees.length)) {
    throw new Error(`sliceTrees: trees ${from}..${to} are not within the model's ${trees.length}`);
  }
  const blocks = trees.slice(from, to).map((tree, i) => treeText(i, tree.lines));
  const head = header.map((l) => (l.startsWith('tree_sizes=') ? `tree_sizes=${blocks.map((b) => Buffer.byteLength(b)).join(' ')}` : l));
  return `${head.join('\n')}\n\n${blocks.join('')}end of trees\n\nparameters:\n[trees: ${from}..${to}]\nend of parameters\n\npandas_categorical:null\n`;
}

/** The number of trees in a LightGBM model text. */
export function treeCount(text: string): number {
  return parse(text).trees.length;
}
