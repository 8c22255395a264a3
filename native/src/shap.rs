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

use crate::forest::{Child, Forest, Tree};
use crate::predict::{normalize_into, Compiled};

/// Largest number of distinct features on one path that gets a table (2^16 entries).
pub const MAX_TABLE_BITS: usize = 16;
/// Largest table, in entries, for one tree.
pub const MAX_TREE_ENTRIES: usize = 1 << 17;
/// Rows explained together per tree in batch mode (keeps a tree's tables hot in cache).
const ROW_BLOCK: usize = 32;

#[derive(Debug, Clone, Copy)]
struct LeafTable {
    /// Compiled node index of the leaf.
    node: u32,
    /// Offset of its 2^m entries in `Shap::table`.
    table: u32,
    /// Offset of its m features / ratios in `Shap::leaf_features` / `Shap::leaf_ratios`.
    slots: u32,
    m: u32,
}

#[derive(Debug, Clone)]
enum Strategy {
    /// A tree with a single leaf: only the expected value moves.
    Constant,
    /// Tabulated: leaves in `Shap::leaves[first..first+count]`.
    Table { first: u32, count: u32 },
    /// The recursive algorithm over the source tree.
    Recursive { max_depth: usize },
}

#[derive(Debug, Clone)]
pub struct Shap {
    strategies: Vec<Strategy>,
    /// For each compiled internal node, the slot of its feature on the path to it.
    node_slot: Vec<u8>,
    leaves: Vec<LeafTable>,
    leaf_features: Vec<u32>,
    leaf_ratios: Vec<f64>,
    table: Vec<f64>,
    /// Σ of the trees' expected values, in tree order (LightGBM's last contribution column).
    pub expected_value: f64,
    /// Largest tree, in nodes (sizes the pattern scratch).
    max_tree_len: usize,
    pub num_features: usize,
}

impl Shap {
    pub fn new(forest: &Forest, compiled: &Compiled) -> Shap {
        Shap::with_limits(forest, compiled, MAX_TABLE_BITS, MAX_TREE_ENTRIES)
    }

    /// As `new`, with other table limits (`max_bits = 0` sends every tree to the recursive path).
    pub fn with_limits(forest: &Forest, compiled: &Compiled, max_bits: usize, max_entries: usize) -> Shap {
        let mut s = Shap {
            strategies: Vec::with_capacity(forest.trees.len()),
            node_slot: vec![0; compiled.nodes.len()],
            leaves: Vec::new(),
            leaf_features: Vec::new(),
            leaf_ratios: Vec::new(),
            table: Vec::new(),
            expected_value: forest.expected_value(),
            max_tree_len: compiled.trees.iter().map(|t| t.len as usize).max().unwrap_or(0),
            num_features: forest.num_features,
        };
        let mut scratch = TableScratch::default();
        for (t, tree) in forest.trees.iter().enumerate() {
            let strategy = if tree.num_leaves() == 1 {
                Strategy::Constant
            } else {
                s.try_tabulate(tree, compiled, t, &mut scratch, max_bits, max_entries)
                    .unwrap_or(Strategy::Recursive { max_depth: tree.max_depth() })
            };
            s.strategies.push(strategy);
        }
        s
    }

    /// Bytes held by the SHAP tables and their indexes.
    pub fn memory_bytes(&self) -> usize {
        self.table.len() * 8
            + self.leaf_ratios.len() * 8
            + self.leaf_features.len() * 4
            + self.leaves.len() * std::mem::size_of::<LeafTable>()
            + self.node_slot.len()
            + self.strategies.len() * std::mem::size_of::<Strategy>()
    }

    /// Trees explained by table lookups, and by the recursive fallback.
    pub fn strategy_counts(&self) -> (usize, usize) {
        let tabulated = self.strategies.iter().filter(|s| matches!(s, Strategy::Table { .. })).count();
        let recursive = self.strategies.iter().filter(|s| matches!(s, Strategy::Recursive { .. })).count();
        (tabulated, recursive)
    }

    /// Builds the tables of one tree, or returns None when it should use the recursive algorithm.
    fn try_tabulate(&mut self, tree: &Tree, compiled: &Compiled, t: usize, scratch: &mut TableScratch, max_bits: usize, max_entries: usize) -> Option<Strategy> {
        let span = compiled.trees[t];
        // Walk the compiled tree depth-first, carrying the path's distinct features and their z.
        struct Frame {
            node: u32,
            path: Vec<(u32, f64)>,
        }
        let mut pending_leaves: Vec<(u32, Vec<(u32, f64)>)> = Vec::new();
        let mut stack = vec![Frame { node: span.root, path: Vec::new() }];
        let mut entries = 0usize;
        while let Some(Frame { node, path }) = stack.pop() {
            let n = &compiled.nodes[node as usize];
            if n.child == node {
                if path.len() > max_bits {
                    return None;
                }
                entries += 1 << path.len();
                if entries > max_entries {
                    return None;
                }
                pending_leaves.push((node, path));
                continue;
            }
            let feature = n.feature() as u32;
            let slot = path.iter().position(|&(f, _)| f == feature).unwrap_or(path.len());
            if slot > u8::MAX as usize {
                return None;
            }
            self.node_slot[node as usize] = slot as u8;
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
        let first = self.leaves.len() as u32;
        for (node, path) in &pending_leaves {
            let value = compiled.values[*node as usize];
            let m = path.len();
            let table = self.table.len() as u32;
            let slots = self.leaf_features.len() as u32;
            scratch.fill(path, value, &mut self.table);
            for &(f, z) in path {
                self.leaf_features.push(f);
                self.leaf_ratios.push((1.0 - z) / z);
            }
            self.leaves.push(LeafTable { node: *node, table, slots, m: m as u32 });
        }
        Some(Strategy::Table { first, count: pending_leaves.len() as u32 })
    }

    /// SHAP values of one row: `num_features` contributions then the expected value, added to `out`
    /// (length `num_features + 1`). The row must already be normalised.
    fn explain_normalized(&self, forest: &Forest, compiled: &Compiled, row: &[f64], out: &mut [f64], patterns: &mut [u32], path: &mut Vec<PathElement>) {
        for (t, strategy) in self.strategies.iter().enumerate() {
            match strategy {
                Strategy::Constant => {}
                Strategy::Table { first, count } => {
                    self.explain_tree_table(compiled, t, *first, *count, row, out, patterns);
                }
                Strategy::Recursive { max_depth } => {
                    recursive_tree_shap(&forest.trees[t], row, out, path, *max_depth);
                }
            }
        }
        out[self.num_features] += self.expected_value;
    }

    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn explain_tree_table(&self, compiled: &Compiled, t: usize, first: u32, count: u32, row: &[f64], out: &mut [f64], patterns: &mut [u32]) {
        let span = compiled.trees[t];
        let root = span.root as usize;
        let len = span.len as usize;
        let nodes = &compiled.nodes[root..root + len];
        let slots = &self.node_slot[root..root + len];
        patterns[0] = u32::MAX;
        // Parents precede children in the breadth-first layout, so one forward pass suffices.
        for i in 0..len {
            let n = &nodes[i];
            let local_child = (n.child as usize).wrapping_sub(root);
            if local_child == i {
                continue; // a leaf
            }
            let right = compiled.go_right(n, row);
            let p = patterns[i];
            let bit = 1u32 << slots[i];
            // Going left disagrees with the row when it goes right, and vice versa.
            patterns[local_child] = p & !(bit * right);
            patterns[local_child + 1] = p & !(bit * (1 - right));
        }
        for leaf in &self.leaves[first as usize..(first + count) as usize] {
            let m = leaf.m as usize;
            let a = (patterns[leaf.node as usize - root] & ((1u32 << m) - 1)) as usize;
            let table = &self.table[leaf.table as usize..leaf.table as usize + (1 << m)];
            let features = &self.leaf_features[leaf.slots as usize..leaf.slots as usize + m];
            let ratios = &self.leaf_ratios[leaf.slots as usize..leaf.slots as usize + m];
            let t_a = table[a];
            for k in 0..m {
                let bit = 1usize << k;
                let contribution = if a & bit != 0 { ratios[k] * table[a ^ bit] } else { -t_a };
                // SAFETY: leaf features are split features, checked against num_features at load.
                unsafe { *out.get_unchecked_mut(features[k] as usize) += contribution };
            }
        }
    }

    /// SHAP values of many rows (row-major), `num_features + 1` values per row, written to `out`.
    pub fn explain_batch(&self, forest: &Forest, compiled: &Compiled, rows: &[f64], out: &mut [f64]) {
        let nf = self.num_features;
        let width = nf + 1;
        out.fill(0.0);
        let mut block = vec![0.0; ROW_BLOCK * nf];
        let mut patterns = vec![0u32; self.max_tree_len.max(1)];
        let mut path = Vec::new();
        for (chunk, out_chunk) in rows.chunks(ROW_BLOCK * nf).zip(out.chunks_mut(ROW_BLOCK * width)) {
            let count = chunk.len() / nf;
            normalize_into(chunk, &mut block[..chunk.len()]);
            // Tree-major within the block, so each tree's tables stay in cache across its rows.
            for (t, strategy) in self.strategies.iter().enumerate() {
                for r in 0..count {
                    let row = &block[r * nf..(r + 1) * nf];
                    let o = &mut out_chunk[r * width..(r + 1) * width];
                    match strategy {
                        Strategy::Constant => {}
                        Strategy::Table { first, count } => {
                            self.explain_tree_table(compiled, t, *first, *count, row, o, &mut patterns)
                        }
                        Strategy::Recursive { max_depth } => {
                            recursive_tree_shap(&forest.trees[t], row, o, &mut path, *max_depth)
                        }
                    }
                }
            }
            for r in 0..count {
                out_chunk[r * width + nf] += self.expected_value;
            }
        }
    }

    /// SHAP values of one row (not normalised), written to `out` (length `num_features + 1`).
    pub fn explain_row(&self, forest: &Forest, compiled: &Compiled, row: &[f64], out: &mut [f64]) {
        let mut normalized = [0.0f64; 64];
        let mut heap;
        let row_n: &mut [f64] = if row.len() <= normalized.len() {
            &mut normalized[..row.len()]
        } else {
            heap = vec![0.0; row.len()];
            &mut heap
        };
        normalize_into(row, row_n);
        out.fill(0.0);
        let mut patterns_stack = [0u32; 256];
        let mut patterns_heap;
        let patterns: &mut [u32] = if self.max_tree_len <= patterns_stack.len() {
            &mut patterns_stack
        } else {
            patterns_heap = vec![0u32; self.max_tree_len];
            &mut patterns_heap
        };
        let mut path = Vec::new();
        self.explain_normalized(forest, compiled, row_n, out, patterns, &mut path);
    }
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
    fn fill(&mut self, path: &[(u32, f64)], value: f64, table: &mut Vec<f64>) {
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
        // w_m(k) = k!(m−k−1)!/m! = 1 / (m · C(m−1, k)).
        let mut weights = vec![0.0; m];
        let mut binom = 1.0f64;
        for (k, w) in weights.iter_mut().enumerate() {
            *w = 1.0 / (m as f64 * binom);
            binom = binom * (m - 1 - k) as f64 / (k + 1) as f64;
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
