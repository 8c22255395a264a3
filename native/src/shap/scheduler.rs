//! Which strategy explains each tree, and how rows go through them.
//!
//! At load (`Shap::with_limits`) each tree gets the cheapest strategy it allows: a whole-tree table
//! when it is small enough, else per-leaf tables, else the recursion. At run time a single row is
//! bound by latency, so it goes through the whole model in phases with prefetching
//! (`explain_row`); a batch goes tree by tree over blocks of rows, so that every table brought into
//! cache serves the whole block (`explain_batch`).

use super::strategy::Strategy;
use super::recursive::{recursive_tree_shap, PathElement};
use super::table::{shapley_weights, RowState, TableScratch, DIRECT, MAX_PATTERN_BITS};
use super::whole_tree::WholeTrees;
use super::Shap;
use crate::forest::{normalize_into, Forest};
use crate::predict::Compiled;
use std::cell::RefCell;

/// How far ahead (in leaves) a single-row explanation prefetches table entries.
const PREFETCH_LEAVES: usize = 12;
/// Rows explained together per tree in batch mode: each table fetched into cache serves them all.
const ROW_BLOCK: usize = 256;


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
}
