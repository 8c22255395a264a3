//! Exact TreeSHAP (path-dependent, the values of LightGBM's `predict_contrib`), computed fast.
//!
//! The method. For one leaf with value `v`, let P be the distinct features on its path, m = |P|,
//! `z_j` the product of cover ratios (child count / parent count) along the path at splits on
//! feature j, and A ⊆ P the features at which the row agrees with every split of the path. The
//! leaf's game is g(S) = v · Π_{j∈S} 1[j∈A] · Π_{j∉S} z_j, and its Shapley values are, with
//! H(B) = Σ_{S⊆B} w_m(|S|) Π_{j∈B∖S} z_j, w_m(k) = k!(m−k−1)!/m!, Q(B) = Π_{j∈P∖B} z_j and
//! T(B) = v · Q(B) · H(B):
//!
//!   φ_i = −T(A)                        for i ∉ A,
//!   φ_i = (1 − z_i)/z_i · T(A ∖ {i})   for i ∈ A.
//!
//! T depends only on the model, so it is tabulated at load time for all 2^m subsets of every leaf
//! (one f64 each). Explaining a row then costs, per tree: one decision at every internal node, one
//! pass that carries the agreement pattern A down to every leaf (a bit cleared where the row leaves
//! the path), and m table reads per leaf: O(L·D) instead of the O(L·D²) of the recursive algorithm.
//! Summed over leaves and trees these are exactly the path-dependent SHAP values LightGBM computes;
//! only the order of floating-point additions differs (agreement is ~1e-15 relative).
//!
//! Trees whose tables would be too large (a path with more than `MAX_TABLE_BITS` distinct
//! features, or more than `MAX_TREE_ENTRIES` entries in all) or that have a zero cover ratio fall
//! back to the classic recursive algorithm (Lundberg et al. 2018, Algorithm 2), which this module
//! also implements and which the tests use as a second reference.
//!
//! Small trees go one step further (`whole_tree`). A tree's SHAP vector depends on the row only
//! through its decision at every internal node, so a tree with n internal nodes has at most 2^n of
//! them. For n ≤ `MAX_WHOLE_TREE_BITS` (9, within a size bound) all are computed at load, by the
//! per-leaf passes above run on decisions taken from the bits of an index, and the per-leaf tables
//! are dropped. Such a tree then costs n comparisons and d additions per row (d = its distinct
//! split features) and needs no per-node state; models made only of them (like the service's
//! built-in ones, ≤ 6 internal nodes per tree) explain a row in a fraction of the time.
//!
//! Strategies, per tree: `Constant` (one leaf), `Whole`, `Table` (per-leaf tables, some leaves
//! possibly direct), `Recursive`. `strategy_counts` reports how many trees use each.

mod whole_tree;

use crate::forest::{normalize_into, Child, Forest, Tree};
use crate::predict::Compiled;
use std::cell::RefCell;
use whole_tree::WholeTrees;

pub use whole_tree::MAX_BITS as MAX_WHOLE_TREE_BITS;

/// Largest number of distinct features on one path that gets a table (2^14 entries, 128 KiB);
/// leaves with more are computed directly (see `leaf_direct`).
pub const MAX_TABLE_BITS: usize = 14;
/// Most table entries for one tree (1 MiB): past it, a tree's largest leaves are computed directly,
/// so that very deep trees cannot blow the model's memory up.
const MAX_TREE_ENTRIES: usize = 1 << 17;
/// Agreement patterns are u32 bitsets: a path with more distinct features uses the recursion.
const MAX_PATTERN_BITS: usize = 32;
/// Multipliers for the branch-free select in `leaf_contributions`.
const SELECT: [f64; 2] = [0.0, 1.0];
/// `LeafTable::table` of a leaf computed directly rather than from a table.
const DIRECT: u32 = u32::MAX;
/// How far ahead (in leaves) a single-row explanation prefetches table entries.
const PREFETCH_LEAVES: usize = 12;
/// Rows explained together per tree in batch mode: each table fetched into cache serves them all.
const ROW_BLOCK: usize = 256;

#[derive(Debug, Clone, Copy)]
struct LeafTable {
    /// Compiled node index of the leaf.
    node: u32,
    /// Offset of its 2^m entries in `Shap::table`, or `DIRECT`.
    table: u32,
    /// Offset of its m features / ratios in `Shap::leaf_features` / `Shap::leaf_ratios`.
    slots: u32,
    m: u32,
}

#[derive(Debug, Clone)]
enum Strategy {
    /// A tree with a single leaf: only the expected value moves.
    Constant,
    /// A small tree with a whole-tree table in `Shap::whole` (see `whole_tree`).
    Whole,
    /// Tabulated: leaves in `Shap::leaves[first..first+count]`, internal nodes (local indices,
    /// breadth-first) in `Shap::internal[inner..inner+inner_count]`.
    Table { first: u32, count: u32, inner: u32, inner_count: u32 },
    /// The recursive algorithm over the source tree.
    Recursive { max_depth: usize },
}

#[derive(Debug, Clone)]
pub struct Shap {
    strategies: Vec<Strategy>,
    /// Whole-tree tables of the small trees (`Strategy::Whole`), explained before the others.
    whole: WholeTrees,
    /// Internal nodes of tabulated trees, breadth-first, tree after tree.
    internal: Vec<Inner>,
    leaves: Vec<LeafTable>,
    leaf_features: Vec<u32>,
    leaf_ratios: Vec<f64>,
    leaf_z: Vec<f64>,
    table: Vec<f64>,
    /// Shapley weights w_m(k) for every path size m: `weights[m][k]`.
    weights: Vec<Vec<f64>>,
    /// Σ of the trees' expected values, in tree order (LightGBM's last contribution column).
    pub expected_value: f64,
    /// Largest tree, in nodes (sizes the pattern scratch).
    max_tree_len: usize,
    /// Whether some tree uses per-leaf tables or the recursion (else single rows need no state).
    has_rest: bool,
    pub num_features: usize,
}

/// How many trees each strategy explains (single-leaf trees are in none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StrategyCounts {
    /// Small trees read from one whole-tree table row.
    pub whole_tree: usize,
    /// Trees explained leaf by leaf from per-leaf tables (or the direct per-leaf formulas).
    pub leaf_tables: usize,
    /// Trees on the recursive algorithm.
    pub recursive: usize,
}

/// Per-thread working memory of single-row explanations, kept between calls so that a call
/// allocates nothing; sized on first use by the largest model the thread has explained.
#[derive(Default)]
struct RowScratch {
    prepared: Vec<f64>,
    /// Table row of each whole-tree-tabulated tree.
    whole_rows: Vec<u32>,
    normalized: Vec<f64>,
    state: RowState,
    path: Vec<PathElement>,
}

thread_local! {
    static ROW_SCRATCH: RefCell<RowScratch> = RefCell::new(RowScratch::default());
}

impl Shap {
    pub fn new(forest: &Forest, compiled: &Compiled) -> Shap {
        Shap::with_table_bits(forest, compiled, Some(MAX_TABLE_BITS))
    }

    /// As `new` with another table limit, which also caps whole-tree tables (at most `max_bits`
    /// internal nodes): `Some(0)` computes every leaf directly, `None` sends every tree to the
    /// recursive algorithm (both used by tests as references).
    pub fn with_table_bits(forest: &Forest, compiled: &Compiled, max_bits: Option<usize>) -> Shap {
        let whole_bits = max_bits.map_or(0, |b| b.min(MAX_WHOLE_TREE_BITS));
        Shap::with_limits(forest, compiled, max_bits, whole_bits)
    }

    /// As `with_table_bits`, with the whole-tree limit given separately: trees of at most
    /// `whole_tree_bits` internal nodes get whole-tree tables (within `whole_tree`'s size bounds;
    /// 0 disables them). Tests use it to compare the strategies on the same trees.
    pub fn with_limits(forest: &Forest, compiled: &Compiled, max_bits: Option<usize>, whole_tree_bits: usize) -> Shap {
        let mut s = Shap {
            strategies: Vec::with_capacity(forest.trees.len()),
            whole: WholeTrees::default(),
            internal: Vec::new(),
            leaves: Vec::new(),
            leaf_features: Vec::new(),
            leaf_ratios: Vec::new(),
            leaf_z: Vec::new(),
            table: Vec::new(),
            weights: (0..=MAX_PATTERN_BITS).map(shapley_weights).collect(),
            expected_value: forest.expected_value(),
            max_tree_len: compiled.trees.iter().map(|t| t.len as usize).max().unwrap_or(0),
            has_rest: false,
            num_features: forest.num_features,
        };
        let mut scratch = TableScratch::default();
        for (t, tree) in forest.trees.iter().enumerate() {
            let strategy = if tree.num_leaves() == 1 {
                Strategy::Constant
            } else {
                let before = s.internal.len();
                let marks = (s.leaves.len(), s.leaf_features.len(), s.table.len());
                match max_bits.and_then(|bits| s.try_tabulate(tree, compiled, t, &mut scratch, bits)) {
                    Some(Strategy::Table { first, count, inner, inner_count }) => {
                        let span = compiled.trees[t];
                        let inner_nodes = &s.internal[inner as usize..(inner + inner_count) as usize];
                        let leaves = &s.leaves[first as usize..(first + count) as usize];
                        let mut whole = std::mem::take(&mut s.whole);
                        let added = whole.try_add(&s, compiled, span.root as usize, span.len as usize, inner_nodes, leaves, whole_tree_bits, s.num_features);
                        s.whole = whole;
                        if added {
                            // The whole-tree table replaces the per-leaf tables just built.
                            s.internal.truncate(before);
                            s.leaves.truncate(marks.0);
                            s.leaf_features.truncate(marks.1);
                            s.leaf_ratios.truncate(marks.1);
                            s.leaf_z.truncate(marks.1);
                            s.table.truncate(marks.2);
                            Strategy::Whole
                        } else {
                            Strategy::Table { first, count, inner, inner_count }
                        }
                    }
                    Some(other) => other,
                    None => {
                        s.internal.truncate(before);
                        Strategy::Recursive { max_depth: tree.max_depth() }
                    }
                }
            };
            s.strategies.push(strategy);
        }
        s.whole.finish();
        s.has_rest = s.strategies.iter().any(|s| matches!(s, Strategy::Table { .. } | Strategy::Recursive { .. }));
        s
    }

    /// Bytes held by the SHAP tables and their indexes.
    pub fn memory_bytes(&self) -> usize {
        self.whole.memory_bytes()
            + self.table.len() * 8
            + self.leaf_ratios.len() * 8
            + self.leaf_z.len() * 8
            + self.leaf_features.len() * 4
            + self.leaves.len() * std::mem::size_of::<LeafTable>()
            + self.internal.len() * std::mem::size_of::<Inner>()
            + self.strategies.len() * std::mem::size_of::<Strategy>()
    }

    /// Trees explained by each strategy.
    pub fn strategy_counts(&self) -> StrategyCounts {
        let count = |f: fn(&Strategy) -> bool| self.strategies.iter().filter(|s| f(s)).count();
        StrategyCounts {
            whole_tree: count(|s| matches!(s, Strategy::Whole)),
            leaf_tables: count(|s| matches!(s, Strategy::Table { .. })),
            recursive: count(|s| matches!(s, Strategy::Recursive { .. })),
        }
    }

    /// Builds the tables of one tree, or returns None when it should use the recursive algorithm.
    fn try_tabulate(&mut self, tree: &Tree, compiled: &Compiled, t: usize, scratch: &mut TableScratch, max_bits: usize) -> Option<Strategy> {
        let span = compiled.trees[t];
        let inner = self.internal.len() as u32;
        let mut inner_of = vec![u32::MAX; span.len as usize];
        for i in 0..span.len {
            let n = compiled.nodes[(span.root + i) as usize];
            if n.child != span.root + i {
                inner_of[i as usize] = self.internal.len() as u32;
                self.internal.push(Inner { local: i, child: n.child - span.root, feature: 0, slot: 0 });
            }
        }
        let inner_count = self.internal.len() as u32 - inner;
        // Walk the compiled tree depth-first, carrying the path's distinct features and their z.
        struct Frame {
            node: u32,
            path: Vec<(u32, f64)>,
        }
        let mut pending_leaves: Vec<(u32, Vec<(u32, f64)>)> = Vec::new();
        let mut stack = vec![Frame { node: span.root, path: Vec::new() }];
        while let Some(Frame { node, path }) = stack.pop() {
            let n = &compiled.nodes[node as usize];
            if n.child == node {
                pending_leaves.push((node, path));
                continue;
            }
            let feature = tree.split_feature[match compiled.origin[node as usize] {
                Child::Node(k) => k as usize,
                Child::Leaf(_) => unreachable!("internal node"),
            }];
            let slot = path.iter().position(|&(f, _)| f == feature).unwrap_or(path.len());
            if slot >= MAX_PATTERN_BITS {
                return None;
            }
            let record = &mut self.internal[inner_of[(node - span.root) as usize] as usize];
            record.slot = slot as u32;
            record.feature = feature;
            let parent_count = tree.count(compiled.origin[node as usize]);
            for child in [n.child, n.child + 1] {
                let ratio = tree.count(compiled.origin[child as usize]) / parent_count;
                if !(ratio > 0.0) || !ratio.is_finite() {
                    return None;
                }
                let mut p = path.clone();
                if slot < p.len() {
                    p[slot].1 *= ratio;
                } else {
                    p.push((feature, ratio));
                }
                stack.push(Frame { node: child, path: p });
            }
        }

        pending_leaves.sort_by_key(|(node, _)| *node);
        // Tabulate the smallest leaves first, within the tree's budget.
        let mut sizes: Vec<usize> = pending_leaves.iter().map(|(_, p)| p.len()).filter(|&m| m <= max_bits).collect();
        sizes.sort_unstable();
        let mut budget = MAX_TREE_ENTRIES;
        let mut largest_tabulated = 0;
        for m in sizes {
            if (1usize << m) > budget {
                break;
            }
            budget -= 1 << m;
            largest_tabulated = m;
        }
        let max_bits = largest_tabulated;
        let first = self.leaves.len() as u32;
        for (node, path) in &pending_leaves {
            let value = compiled.values[*node as usize];
            let m = path.len();
            let slots = self.leaf_features.len() as u32;
            let table = if m <= max_bits {
                let offset = self.table.len() as u32;
                scratch.fill(path, value, &self.weights[m], &mut self.table);
                offset
            } else {
                DIRECT
            };
            for &(f, z) in path {
                self.leaf_features.push(f);
                self.leaf_ratios.push((1.0 - z) / z);
                self.leaf_z.push(z);
            }
            self.leaves.push(LeafTable { node: *node, table, slots, m: m as u32 });
        }
        Some(Strategy::Table { first, count: pending_leaves.len() as u32, inner, inner_count })
    }

    /// Carries each row's agreement pattern from the root of a tree to every node
    /// (`state.patterns`), noting where the row goes at each internal node (`state.right`).
    ///
    /// Layout, shared by single rows and blocks: node `local` of this tree, row `r`, lives at
    /// `base + local·stride + r`; `columns` holds prepared-row slot `s` of row `r` at
    /// `s·stride + r`. A single row is `stride = 1` (and `base` = the tree's root, so that every
    /// tree keeps its own cells); a block of rows is `stride = ROW_BLOCK`, node-major, so each node's
    /// fields are read once for all the block's rows.
    ///
    /// With `DECIDE = false` the decisions are not computed from `columns` but taken as given in
    /// `state.right` (how `whole_tree` tabulates every decision vector of a tree).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn tree_patterns<const DECIDE: bool>(&self, compiled: &Compiled, root: usize, inner: &[Inner], columns: &[f64], state: &mut RowState, base: usize, stride: usize, count: usize) {
        state.patterns[base..base + count].fill(u32::MAX);
        // Parents precede children in the breadth-first layout, so one forward pass suffices.
        for node in inner {
            let (i, c) = (base + node.local as usize * stride, base + node.child as usize * stride);
            if DECIDE {
                let ci = root as u32 + node.local;
                let slot = compiled.nodes[ci as usize].slot as usize * stride;
                compiled.go_right_many(ci, &columns[slot..slot + count], &mut state.right[i..i + count]);
            }
            let bit = 1u32 << node.slot;
            let (head, tail) = state.patterns.split_at_mut(c);
            let parent = &head[i..i + count];
            let (left, right) = tail.split_at_mut(stride);
            for r in 0..count {
                let go = state.right[i + r];
                // Going left disagrees with the row when it goes right, and vice versa.
                left[r] = parent[r] & !(bit * go);
                right[r] = parent[r] & !(bit * (1 - go));
            }
        }
    }

    /// The contributions −T(A) that each leaf gives the path features the row disagrees with,
    /// summed through the tree instead of leaf by leaf: a leaf disagrees on feature f exactly when
    /// it lies on the side the row does not take at the first f-split that the row (so far) agrees
    /// with. So f receives −(sum of T(A) over that subtree) at each such split. Needs
    /// `state.sums` = T(A) at every leaf; row `r` writes `out[r·width..]`. Layout as in
    /// `tree_patterns`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn tree_negatives(&self, inner: &[Inner], state: &mut RowState, base: usize, stride: usize, count: usize, out: &mut [f64], width: usize) {
        for node in inner.iter().rev() {
            let (i, c) = (base + node.local as usize * stride, base + node.child as usize * stride);
            let f = node.feature as usize;
            for r in 0..count {
                let go = state.right[i + r] as usize;
                let cold = state.sums[c + (1 - go) * stride + r];
                state.sums[i + r] = state.sums[c + r] + state.sums[c + stride + r];
                let agreed = (state.patterns[i + r] >> node.slot) & 1;
                out[r * width + f] -= SELECT[agreed as usize] * cold;
            }
        }
    }

    /// Adds one leaf's contributions to the features the row agrees with (ratio·T(A∖{k}) for k ∈
    /// A) and returns T(A), which the features it disagrees with receive through `tree_negatives`.
    #[inline(always)]
    fn leaf_positives(&self, compiled: &Compiled, leaf: &LeafTable, pattern: u32, out: &mut [f64]) -> f64 {
        let m = leaf.m as usize;
        let a = pattern & ((1u64 << m) - 1) as u32;
        let slots = leaf.slots as usize;
        if leaf.table == DIRECT {
            let z = &self.leaf_z[slots..slots + m];
            let features = &self.leaf_features[slots..slots + m];
            return leaf_direct(compiled.values[leaf.node as usize], a, z, features, &self.weights[m], out);
        }
        let a = a as usize;
        // SAFETY: every offset below was laid out by `try_tabulate` for this leaf: 2^m table
        // entries from `leaf.table`, m features and ratios from `leaf.slots`; a ^ (1 << k) < 2^m;
        // features are split features, checked against num_features (= out.len() - 1) at load.
        unsafe {
            let table = self.table.as_ptr().add(leaf.table as usize);
            let ratios = self.leaf_ratios.as_ptr().add(slots);
            let features = self.leaf_features.as_ptr().add(slots);
            let out = out.as_mut_ptr();
            for k in 0..m {
                // Multiplying by s ∈ {0, 1} instead of branching on k ∈ A: that branch would
                // mispredict half the time (and compilers turn bit-mask selects back into it).
                let s = SELECT[(a >> k) & 1];
                let inside = *ratios.add(k) * *table.add(a ^ (1 << k));
                *out.add(*features.add(k) as usize) += s * inside;
            }
            *table.add(a)
        }
    }

    /// Adds one tabulated leaf's contributions for a run of rows (their patterns at this leaf side
    /// by side) and writes each row's T(A) into `sums`. The path size is fixed at compile time so
    /// the slot loop unrolls and the leaf's ratios and features stay in registers across rows.
    #[inline(always)]
    fn leaf_rows<const M: usize>(&self, leaf: &LeafTable, patterns: &[u32], sums: &mut [f64], out: &mut [f64], width: usize) {
        let slots = leaf.slots as usize;
        let ratios: [f64; M] = std::array::from_fn(|k| self.leaf_ratios[slots + k]);
        let features: [usize; M] = std::array::from_fn(|k| self.leaf_features[slots + k] as usize);
        let table = &self.table[leaf.table as usize..leaf.table as usize + (1 << M)];
        let mask = (1usize << M) - 1;
        let count = patterns.len();
        assert!(sums.len() == count && count * width <= out.len() && features.iter().all(|&f| f < width));
        for r in 0..count {
            // SAFETY: bounds asserted above; a ^ (1 << k) < 2^M = the table's length.
            unsafe {
                let a = *patterns.get_unchecked(r) as usize & mask;
                let o = out.as_mut_ptr().add(r * width);
                for k in 0..M {
                    let s = SELECT[(a >> k) & 1];
                    *o.add(features[k]) += s * (ratios[k] * *table.get_unchecked(a ^ (1 << k)));
                }
                *sums.get_unchecked_mut(r) = *table.get_unchecked(a);
            }
        }
    }

    /// SHAP values of many rows (row-major), `num_features + 1` values per row, written to `out`.
    ///
    /// Rows go in blocks of `ROW_BLOCK`, and everything per block is node-major: the prepared rows
    /// are transposed (one slot's values for all rows side by side) and the per-node state holds
    /// one value per row in a run, so each pass over a tree's nodes and leaves loads a node's
    /// fields once and then streams over the rows. A leaf's table, read by every row in turn,
    /// stays in cache.
    pub fn explain_batch(&self, forest: &Forest, compiled: &Compiled, rows: &[f64], out: &mut [f64]) {
        const B: usize = ROW_BLOCK;
        let nf = self.num_features;
        let width = nf + 1;
        let pw = compiled.prepared_width;
        out.fill(0.0);
        let len = self.max_tree_len + 2;
        let mut row = vec![0.0; pw];
        let mut columns = vec![0.0; pw * B];
        let mut normalized = vec![0.0; B * nf];
        let mut state = RowState { patterns: vec![0; len * B], right: vec![0; len * B], sums: vec![0.0; len * B] };
        let mut path = Vec::new();
        let mut index = vec![0u32; if self.whole.len() > 0 { B } else { 0 }];
        for (chunk, out_chunk) in rows.chunks(B * nf).zip(out.chunks_mut(B * width)) {
            let count = chunk.len() / nf;
            for r in 0..count {
                compiled.prepare(&chunk[r * nf..(r + 1) * nf], &mut row);
                for (s, &v) in row.iter().enumerate() {
                    columns[s * B + r] = v;
                }
            }
            normalize_into(chunk, &mut normalized[..chunk.len()]);
            if self.whole.len() > 0 {
                self.whole.explain_block(compiled, &columns, B, count, &mut index, &mut state.right, out_chunk, width);
            }
            for t in 0..self.strategies.len() {
                match self.strategies[t] {
                    Strategy::Constant | Strategy::Whole => {}
                    Strategy::Table { first, count: leaves, inner, inner_count } => {
                        let root = compiled.trees[t].root as usize;
                        let inner = &self.internal[inner as usize..(inner + inner_count) as usize];
                        self.tree_patterns::<true>(compiled, root, inner, &columns, &mut state, 0, B, count);
                        // Leaves: contributions to agreed features, and T(A) into `sums`.
                        for leaf in &self.leaves[first as usize..(first + leaves) as usize] {
                            let local = (leaf.node as usize - root) * B;
                            let out = &mut out_chunk[..count * width];
                            macro_rules! fixed {
                                ($($m:literal)*) => {
                                    match leaf.m as usize {
                                        $($m if leaf.table != DIRECT => self.leaf_rows::<$m>(leaf, &state.patterns[local..local + count], &mut state.sums[local..local + count], out, width),)*
                                        _ => {
                                            for r in 0..count {
                                                let o = &mut out[r * width..(r + 1) * width];
                                                state.sums[local + r] = self.leaf_positives(compiled, leaf, state.patterns[local + r], o);
                                            }
                                        }
                                    }
                                };
                            }
                            fixed!(1 2 3 4 5 6 7 8 9 10 11 12 13 14);
                        }
                        self.tree_negatives(inner, &mut state, 0, B, count, out_chunk, width);
                    }
                    Strategy::Recursive { max_depth } => {
                        for r in 0..count {
                            let o = &mut out_chunk[r * width..(r + 1) * width];
                            recursive_tree_shap(&forest.trees[t], &normalized[r * nf..(r + 1) * nf], o, &mut path, max_depth);
                        }
                    }
                }
            }
            for r in 0..count {
                out_chunk[r * width + nf] += self.expected_value;
            }
        }
    }

    /// SHAP values of one row, written to `out` (length `num_features + 1`).
    ///
    /// Whole-tree tables first (n decisions and d additions per tree, no per-node state). The
    /// other trees cannot share table reads with other rows, so they are bound by their latency:
    /// they run in two phases over the whole model, first every tree's agreement patterns (cheap,
    /// cache-resident), then every leaf in turn while prefetching the table entries of the leaf
    /// `PREFETCH_LEAVES` ahead, whose addresses the patterns already determine. Working memory is
    /// per thread and reused (`RowScratch`), so a call allocates nothing.
    pub fn explain_row(&self, forest: &Forest, compiled: &Compiled, row: &[f64], out: &mut [f64]) {
        ROW_SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            let RowScratch { prepared, whole_rows, normalized, state, path } = &mut *scratch;
            if prepared.len() != compiled.prepared_width {
                prepared.resize(compiled.prepared_width, 0.0);
            }
            compiled.prepare(row, prepared);
            out.fill(0.0);
            self.whole.explain_row(compiled, prepared, whole_rows, out);
            if self.has_rest {
                self.explain_row_rest(forest, compiled, row, prepared, normalized, state, path, out);
            }
        });
        out[self.num_features] += self.expected_value;
    }

    /// The trees of `explain_row` that have no whole-tree table.
    #[allow(clippy::too_many_arguments)]
    fn explain_row_rest(
        &self,
        forest: &Forest,
        compiled: &Compiled,
        row: &[f64],
        prepared: &[f64],
        normalized: &mut Vec<f64>,
        state: &mut RowState,
        path: &mut Vec<PathElement>,
        out: &mut [f64],
    ) {
        let tables = !self.leaves.is_empty();
        if tables {
            // Cells are written before they are read (patterns and decisions top-down, sums at
            // the leaves then bottom-up), so stale values from an earlier call are harmless.
            let total = compiled.nodes.len() + 2;
            if state.patterns.len() < total {
                *state = RowState { patterns: vec![0; total], right: vec![0; total], sums: vec![0.0; total] };
            }
        }
        let mut normalized_ready = false;
        for (t, strategy) in self.strategies.iter().enumerate() {
            match *strategy {
                Strategy::Constant | Strategy::Whole => {}
                Strategy::Table { inner, inner_count, .. } => {
                    let root = compiled.trees[t].root as usize;
                    let inner = &self.internal[inner as usize..(inner + inner_count) as usize];
                    self.tree_patterns::<true>(compiled, root, inner, prepared, state, root, 1, 1);
                }
                Strategy::Recursive { max_depth } => {
                    if !normalized_ready {
                        normalized.resize(row.len(), 0.0);
                        normalize_into(row, normalized);
                        normalized_ready = true;
                    }
                    recursive_tree_shap(&forest.trees[t], normalized, out, path, max_depth)
                }
            }
        }
        if !tables {
            return;
        }
        let leaves = &self.leaves;
        for (i, leaf) in leaves.iter().enumerate() {
            if let Some(ahead) = leaves.get(i + PREFETCH_LEAVES) {
                self.prefetch_leaf(ahead, state.patterns[ahead.node as usize]);
            }
            state.sums[leaf.node as usize] = self.leaf_positives(compiled, leaf, state.patterns[leaf.node as usize], out);
        }
        for (t, strategy) in self.strategies.iter().enumerate() {
            if let Strategy::Table { inner, inner_count, .. } = *strategy {
                let root = compiled.trees[t].root as usize;
                let inner = &self.internal[inner as usize..(inner + inner_count) as usize];
                self.tree_negatives(inner, state, root, 1, 1, out, self.num_features + 1);
            }
        }
    }

    /// Asks the CPU to bring in the table entries a leaf will read for this pattern.
    #[inline(always)]
    fn prefetch_leaf(&self, leaf: &LeafTable, pattern: u32) {
        #[cfg(target_arch = "x86_64")]
        {
            if leaf.table == DIRECT {
                return;
            }
            let m = leaf.m as usize;
            let a = (pattern & ((1u64 << m) - 1) as u32) as usize;
            // SAFETY: prefetching never faults; the addresses are inside this leaf's table anyway.
            unsafe {
                use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                let table = self.table.as_ptr().add(leaf.table as usize);
                _mm_prefetch::<_MM_HINT_T0>(table.add(a) as *const i8);
                // Entries within a cache line of A (low bits) come with it; prefetch the others.
                for k in 3..m {
                    _mm_prefetch::<_MM_HINT_T0>(table.add(a ^ (1 << k)) as *const i8);
                }
            }
        }
    }
}

/// An internal node of a tabulated tree, with what the passes over it need in one record.
#[derive(Debug, Clone, Copy)]
struct Inner {
    /// Index within its tree (breadth-first).
    local: u32,
    /// Local index of its left child (the right one is next).
    child: u32,
    feature: u32,
    /// Slot of its feature on the path to it.
    slot: u32,
}

/// Per-row working memory: one tree's nodes from a base index (a block of rows, `stride` apart,
/// in batch mode), or the whole model's nodes by compiled index (single rows).
#[derive(Default)]
struct RowState {
    /// Agreement pattern of the path to each node.
    patterns: Vec<u32>,
    /// 1 where the row goes right at an internal node.
    right: Vec<u32>,
    /// T(A) at leaves; their subtree sums at internal nodes.
    sums: Vec<f64>,
}



/// Reusable buffers for building one leaf's table.
#[derive(Default)]
struct TableScratch {
    /// Elementary symmetric polynomials of the z's of every subset, (m+1) per subset.
    elementary: Vec<f64>,
    /// Π z over every subset.
    products: Vec<f64>,
}

impl TableScratch {
    /// Appends T(B) for all B ⊆ {0..m} to `table` (see the module note).
    fn fill(&mut self, path: &[(u32, f64)], value: f64, weights: &[f64], table: &mut Vec<f64>) {
        let m = path.len();
        let size = 1usize << m;
        let width = m + 1;
        self.elementary.clear();
        self.elementary.resize(size * width, 0.0);
        self.products.clear();
        self.products.resize(size, 0.0);
        self.elementary[0] = 1.0;
        self.products[0] = 1.0;
        for b in 1..size {
            let j = b.trailing_zeros() as usize;
            let prev = b & (b - 1);
            let z = path[j].1;
            self.products[b] = self.products[prev] * z;
            let (before, after) = self.elementary.split_at_mut(b * width);
            let e_prev = &before[prev * width..prev * width + width];
            let e = &mut after[..width];
            e[0] = e_prev[0];
            for r in 1..width {
                e[r] = e_prev[r] + z * e_prev[r - 1];
            }
        }
        let full = size - 1;
        for b in 0..size {
            let bits = b.count_ones() as usize;
            let e = &self.elementary[b * width..b * width + width];
            // H(B) = Σ_k w_m(k) e_{|B|−k}(z_B), k = |S| from 0 to |B| (|B| ≤ m−1 when it matters).
            let mut h = 0.0;
            for k in 0..=bits.min(m - 1) {
                h += weights[k] * e[bits - k];
            }
            table.push(value * self.products[full ^ b] * h);
        }
    }
}

/// Shapley weights w_m(k) = k!(m−k−1)!/m! = 1 / (m · C(m−1, k)), for k in 0..m.
fn shapley_weights(m: usize) -> Vec<f64> {
    let mut weights = vec![0.0; m];
    let mut binom = 1.0f64;
    for (k, w) in weights.iter_mut().enumerate() {
        *w = 1.0 / (m as f64 * binom);
        binom = binom * (m - 1 - k) as f64 / (k + 1) as f64;
    }
    weights
}

/// One leaf computed from the formulas rather than a table, for paths with too many distinct
/// features to tabulate. Adds the contributions to the features in A and returns T(A) (see
/// `leaf_positives`). O(c²) for c = |A|:
/// - e = the elementary symmetric polynomials of the z's in A (coefficients of Π(1 + z_i·t));
/// - H(A) = Σ_k w_m(k)·e_{c−k};
/// - H(A∖{j}) uses e divided by (1 + z_j·t); expanding that division shows H(A∖{j}) = P(−z_j) for
///   one polynomial P with coefficients G_n = Σ_s w_m(c−1−n−s)·e_s, so each j is one Horner pass.
fn leaf_direct(value: f64, a: u32, z: &[f64], features: &[u32], weights: &[f64], out: &mut [f64]) -> f64 {
    let m = z.len();
    assert!(m <= MAX_PATTERN_BITS && weights.len() == m);
    let mut e = [0.0f64; MAX_PATTERN_BITS + 1];
    e[0] = 1.0;
    let mut c = 0;
    // q = v · Q(A) = v · Π_{j∉A} z_j.
    let mut q = value;
    for (j, &zj) in z.iter().enumerate() {
        if a >> j & 1 == 1 {
            c += 1;
            for r in (1..=c).rev() {
                e[r] += zj * e[r - 1];
            }
        } else {
            q *= zj;
        }
    }
    let mut h_a = 0.0;
    for k in 0..=c.min(m - 1) {
        h_a += weights[k] * e[c - k];
    }
    if c > 0 {
        let mut g = [0.0f64; MAX_PATTERN_BITS];
        for n in 0..c {
            let mut sum = 0.0;
            for s in 0..c - n {
                sum += weights[c - 1 - n - s] * e[s];
            }
            g[n] = sum;
        }
        for (j, &zj) in z.iter().enumerate() {
            if a >> j & 1 == 1 {
                let mut h = 0.0;
                for n in (0..c).rev() {
                    h = h * -zj + g[n];
                }
                out[features[j] as usize] += (1.0 - zj) * q * h;
            }
        }
    }
    q * h_a
}

/// One element of the unique path of the recursive algorithm.
#[derive(Debug, Clone, Copy, Default)]
pub struct PathElement {
    feature: i64,
    zero_fraction: f64,
    one_fraction: f64,
    weight: f64,
}

fn extend_path(path: &mut [PathElement], depth: usize, zero: f64, one: f64, feature: i64) {
    path[depth] = PathElement { feature, zero_fraction: zero, one_fraction: one, weight: if depth == 0 { 1.0 } else { 0.0 } };
    let d1 = (depth + 1) as f64;
    for i in (0..depth).rev() {
        path[i + 1].weight += one * path[i].weight * (i + 1) as f64 / d1;
        path[i].weight = zero * path[i].weight * (depth - i) as f64 / d1;
    }
}

fn unwind_path(path: &mut [PathElement], depth: usize, index: usize) {
    let one = path[index].one_fraction;
    let zero = path[index].zero_fraction;
    let d1 = (depth + 1) as f64;
    let mut next = path[depth].weight;
    for i in (0..depth).rev() {
        if one != 0.0 {
            let previous = path[i].weight;
            path[i].weight = next * d1 / ((i + 1) as f64 * one);
            next = previous - path[i].weight * zero * (depth - i) as f64 / d1;
        } else {
            path[i].weight = path[i].weight * d1 / (zero * (depth - i) as f64);
        }
    }
    for i in index..depth {
        path[i].feature = path[i + 1].feature;
        path[i].zero_fraction = path[i + 1].zero_fraction;
        path[i].one_fraction = path[i + 1].one_fraction;
    }
}

fn unwound_sum(path: &[PathElement], depth: usize, index: usize) -> f64 {
    let one = path[index].one_fraction;
    let zero = path[index].zero_fraction;
    let d1 = (depth + 1) as f64;
    let mut next = path[depth].weight;
    let mut total = 0.0;
    for i in (0..depth).rev() {
        if one != 0.0 {
            let t = next * d1 / ((i + 1) as f64 * one);
            total += t;
            next = path[i].weight - t * zero * (depth - i) as f64 / d1;
        } else {
            total += path[i].weight / zero / ((depth - i) as f64 / d1);
        }
    }
    total
}

/// The recursive TreeSHAP of one tree over a normalised row, added into `phi`.
pub fn recursive_tree_shap(tree: &Tree, row: &[f64], phi: &mut [f64], path: &mut Vec<PathElement>, max_depth: usize) {
    if tree.num_internal() == 0 {
        return;
    }
    let len = (max_depth + 2) * (max_depth + 3) / 2;
    if path.len() < len {
        path.resize(len, PathElement::default());
    }
    recurse(tree, row, phi, Child::Node(0), path, 0, 0, 1.0, 1.0, -1);
}

/// One level of the recursion. This level's path lives at `storage[parent_start + depth..]`, a copy
/// of the parent's `depth` elements extended by one; children put theirs right after it.
#[allow(clippy::too_many_arguments)]
fn recurse(tree: &Tree, row: &[f64], phi: &mut [f64], node: Child, storage: &mut [PathElement], parent_start: usize, depth: usize, zero: f64, one: f64, feature: i64) {
    let start = parent_start + depth;
    storage.copy_within(parent_start..parent_start + depth, start);
    let path = &mut storage[start..];
    extend_path(path, depth, zero, one, feature);
    match node {
        Child::Leaf(l) => {
            let value = tree.leaf_value[l as usize];
            for i in 1..=depth {
                let w = unwound_sum(path, depth, i);
                let e = path[i];
                phi[e.feature as usize] += w * (e.one_fraction - e.zero_fraction) * value;
            }
        }
        Child::Node(n) => {
            let n = n as usize;
            let split_feature = tree.split_feature[n] as i64;
            let right = tree.go_right(n, row[split_feature as usize]);
            let (hot, cold) = if right { (tree.right[n], tree.left[n]) } else { (tree.left[n], tree.right[n]) };
            let w = tree.internal_count[n];
            let hot_zero = tree.count(hot) / w;
            let cold_zero = tree.count(cold) / w;
            let mut incoming_zero = 1.0;
            let mut incoming_one = 1.0;
            let mut depth = depth;
            // A feature already on the path is undone here and redone with the combined fractions.
            if let Some(index) = (0..=depth).find(|&i| path[i].feature == split_feature) {
                incoming_zero = path[index].zero_fraction;
                incoming_one = path[index].one_fraction;
                unwind_path(path, depth, index);
                depth -= 1;
            }
            recurse(tree, row, phi, hot, storage, start, depth + 1, hot_zero * incoming_zero, incoming_one, split_feature);
            recurse(tree, row, phi, cold, storage, start, depth + 1, cold_zero * incoming_zero, 0.0, split_feature);
        }
    }
}
