//! Per-leaf SHAP tables: the main exact strategy, and the passes whole-tree tables are built with.
//!
//! For a leaf with value v, distinct path features P (m = |P|), cover-ratio products z_j and the
//! features A ⊆ P where the row agrees with the path, the Shapley values are φ_i = −T(A) for i ∉ A
//! and φ_i = (1 − z_i)/z_i · T(A ∖ {i}) for i ∈ A, with T(B) = v · Π_{j∈P∖B} z_j · H(B) and
//! H(B) = Σ_{S⊆B} w_m(|S|) Π_{j∈B∖S} z_j (derivation: docs/engine.md). T depends only on the
//! model, so it is tabulated at load for all 2^m subsets of every leaf, and a row costs O(L·D) per
//! tree instead of the recursive algorithm's O(L·D²). A leaf with too many path features for a
//! table is computed from the same formulas (`leaf_direct`). The passes here (`tree_patterns`,
//! `leaf_positives`, `tree_negatives`) serve single rows, blocks of rows and `whole_tree`'s
//! tabulation alike; which trees get tables, and how rows go through them, is `scheduler`'s.

use super::strategy::Strategy;
use super::Shap;
use crate::forest::{Child, Tree};
use crate::predict::Compiled;

/// Largest number of distinct features on one path that gets a table (2^14 entries, 128 KiB);
/// leaves with more are computed directly (see `leaf_direct`).
pub const MAX_TABLE_BITS: usize = 14;
/// Most table entries for one tree (1 MiB): past it, a tree's largest leaves are computed directly,
/// so that very deep trees cannot blow the model's memory up.
const MAX_TREE_ENTRIES: usize = 1 << 17;
/// Agreement patterns are u32 bitsets: a path with more distinct features uses the recursion.
pub(super) const MAX_PATTERN_BITS: usize = 32;
/// Multipliers for the branch-free selects of the per-leaf passes (agreed or not).
const SELECT: [f64; 2] = [0.0, 1.0];
/// `LeafTable::table` of a leaf computed directly rather than from a table.
pub(super) const DIRECT: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
pub(super) struct LeafTable {
    /// Compiled node index of the leaf.
    pub(super) node: u32,
    /// Offset of its 2^m entries in `Shap::table`, or `DIRECT`.
    pub(super) table: u32,
    /// Offset of its m features / ratios in `Shap::leaf_features` / `Shap::leaf_ratios`.
    pub(super) slots: u32,
    pub(super) m: u32,
}

impl Shap {
    /// Builds the tables of one tree, or returns None when it should use the recursive algorithm.
    pub(super) fn try_tabulate(&mut self, tree: &Tree, compiled: &Compiled, t: usize, scratch: &mut TableScratch, max_bits: usize) -> Option<Strategy> {
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
    pub(super) fn tree_patterns<const DECIDE: bool>(&self, compiled: &Compiled, root: usize, inner: &[Inner], columns: &[f64], state: &mut RowState, base: usize, stride: usize, count: usize) {
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
    pub(super) fn tree_negatives(&self, inner: &[Inner], state: &mut RowState, base: usize, stride: usize, count: usize, out: &mut [f64], width: usize) {
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
    pub(super) fn leaf_positives(&self, compiled: &Compiled, leaf: &LeafTable, pattern: u32, out: &mut [f64]) -> f64 {
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
    pub(super) fn leaf_rows<const M: usize>(&self, leaf: &LeafTable, patterns: &[u32], sums: &mut [f64], out: &mut [f64], width: usize) {
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

    /// Asks the CPU to bring in the table entries a leaf will read for this pattern.
    #[inline(always)]
    pub(super) fn prefetch_leaf(&self, leaf: &LeafTable, pattern: u32) {
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
pub(super) struct Inner {
    /// Index within its tree (breadth-first).
    pub(super) local: u32,
    /// Local index of its left child (the right one is next).
    pub(super) child: u32,
    pub(super) feature: u32,
    /// Slot of its feature on the path to it.
    pub(super) slot: u32,
}

/// Per-row working memory: one tree's nodes from a base index (a block of rows, `stride` apart,
/// in batch mode), or the whole model's nodes by compiled index (single rows).
#[derive(Default)]
pub(super) struct RowState {
    /// Agreement pattern of the path to each node.
    pub(super) patterns: Vec<u32>,
    /// 1 where the row goes right at an internal node.
    pub(super) right: Vec<u32>,
    /// T(A) at leaves; their subtree sums at internal nodes.
    pub(super) sums: Vec<f64>,
}

/// Reusable buffers for building one leaf's table.
#[derive(Default)]
pub(super) struct TableScratch {
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
pub(super) fn shapley_weights(m: usize) -> Vec<f64> {
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
