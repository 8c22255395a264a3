//! Whole-tree SHAP tables: a small tree's SHAP vector for every way a row can go through it.
//!
//! Path-dependent TreeSHAP of one tree depends on the row only through its decision at every
//! internal node (the covers are constants), so a tree with n internal nodes has at most 2^n SHAP
//! vectors, each nonzero only on its d distinct split features. For small trees they are all
//! tabulated at load by the per-leaf machinery of `table`, with the decisions taken from the bits
//! of the index; a row then costs n decisions, one n-bit index and d additions from one contiguous
//! table row, with no per-node state. Memory is 2^n · d f64 per tree, bounded per tree
//! (`MAX_TREE_ENTRIES`) and per model (`MAX_MODEL_ENTRIES`); trees past either bound keep the
//! per-leaf tables, and trees that have none (a zero cover ratio) stay on the recursive algorithm.

use super::table::{Inner, LeafTable, RowState};
use super::Shap;
use crate::predict::Compiled;

/// Largest number of internal nodes of a tree that gets a whole-tree table.
pub const MAX_BITS: usize = 9;
/// Most entries (2^n · d) of one whole-tree table: 4096 f64 = 32 KiB, so n = 9 needs d ≤ 8; the
/// built-in models' trees (n ≤ 6, d ≤ 6) take at most 384 entries (3 KiB).
const MAX_TREE_ENTRIES: usize = 1 << 12;
/// Most entries of all whole-tree tables of one model (32 MiB); later trees keep per-leaf tables.
const MAX_MODEL_ENTRIES: usize = 1 << 22;

/// One tabulated tree: offsets of its records in the `WholeTrees` arrays.
#[derive(Debug, Clone, Copy)]
struct WholeTree {
    /// Its n internal nodes in `WholeTrees::nodes[nodes..nodes + n]`.
    nodes: u32,
    n: u32,
    /// Bit k set when its k-th node is a slow split (categorical, zero-as-missing…: see
    /// `predict`), which the plain comparison gets wrong and `Compiled::go_right` decides.
    slow: u32,
    /// Its d split features in `WholeTrees::features[features..features + d]`.
    features: u32,
    d: u32,
    /// Its 2^n rows of d values in `WholeTrees::table[table..]`, row `index` at `table + index·d`.
    table: u32,
}

/// An internal node of a tabulated tree: a copy of its compiled split, so that the decisions of
/// one tree read one contiguous run of memory.
#[derive(Debug, Clone, Copy)]
struct Split {
    threshold: f64,
    /// Prepared-row slot.
    slot: u32,
    /// Compiled node index (slow splits decide through `Compiled::go_right`).
    compiled: u32,
}

#[derive(Debug, Clone, Default)]
pub(super) struct WholeTrees {
    trees: Vec<WholeTree>,
    nodes: Vec<Split>,
    features: Vec<u32>,
    table: Vec<f64>,
}

impl WholeTrees {
    pub(super) fn len(&self) -> usize {
        self.trees.len()
    }

    /// Orders the trees by (n, d) once all are added: the per-tree loops then run the same
    /// number of times for long runs of trees, so their exits are predicted (the order of the
    /// additions into a row's values does not matter beyond rounding).
    pub(super) fn finish(&mut self) {
        self.trees.sort_by_key(|t| (t.n, t.d));
    }

    pub(super) fn memory_bytes(&self) -> usize {
        self.trees.len() * std::mem::size_of::<WholeTree>() + self.nodes.len() * std::mem::size_of::<Split>() + self.features.len() * 4 + self.table.len() * 8
    }

    /// Tabulates a tree whose per-leaf tables `shap` has just built (its internal nodes are
    /// `inner`, its leaves `leaves`, compiled root `root`), if it is small enough. Returns whether
    /// it did; the caller then drops the per-leaf tables.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn try_add(&mut self, shap: &Shap, compiled: &Compiled, root: usize, len: usize, inner: &[Inner], leaves: &[LeafTable], max_bits: usize, num_features: usize) -> bool {
        let n = inner.len();
        if n == 0 || n > max_bits.min(MAX_BITS) {
            return false;
        }
        let mut features: Vec<u32> = Vec::with_capacity(n);
        for node in inner {
            if !features.contains(&node.feature) {
                features.push(node.feature);
            }
        }
        let d = features.len();
        let size = (1usize << n) * d;
        if size > MAX_TREE_ENTRIES || self.table.len() + size > MAX_MODEL_ENTRIES {
            return false;
        }
        let compiled_index = |node: &Inner| root as u32 + node.local;
        let record = WholeTree {
            nodes: self.nodes.len() as u32,
            n: n as u32,
            slow: inner.iter().enumerate().filter(|(_, node)| !compiled.is_fast(compiled_index(node))).fold(0, |m, (k, _)| m | 1 << k),
            features: self.features.len() as u32,
            d: d as u32,
            table: self.table.len() as u32,
        };
        self.nodes.extend(inner.iter().map(|node| {
            let i = compiled_index(node);
            let c = compiled.nodes[i as usize];
            Split { threshold: c.threshold, slot: c.slot, compiled: i }
        }));
        self.features.extend_from_slice(&features);
        // One decision vector at a time, through the same passes a row takes (stride 1, the tree's
        // nodes by local index), with `state.right` set from the index bits instead of a row.
        let mut state = RowState { patterns: vec![0; len + 2], right: vec![0; len + 2], sums: vec![0.0; len + 2] };
        let mut phi = vec![0.0; num_features + 1];
        for index in 0..1usize << n {
            for (k, node) in inner.iter().enumerate() {
                state.right[node.local as usize] = (index >> k) as u32 & 1;
            }
            shap.tree_patterns::<false>(compiled, root, inner, &[], &mut state, 0, 1, 1);
            for leaf in leaves {
                let local = leaf.node as usize - root;
                state.sums[local] = shap.leaf_positives(compiled, leaf, state.patterns[local], &mut phi);
            }
            shap.tree_negatives(inner, &mut state, 0, 1, 1, &mut phi, num_features + 1);
            for &f in &features {
                self.table.push(phi[f as usize]);
                phi[f as usize] = 0.0;
            }
        }
        self.trees.push(record);
        true
    }

    /// Adds every tabulated tree's contributions for one prepared row into `out`, in two passes:
    /// first each tree's table row (its n decisions), prefetched and noted in `rows`, then the
    /// additions. The model's tables are too large for L1, so the reads would otherwise wait on
    /// cache misses one tree at a time; this way they overlap.
    #[inline]
    pub(super) fn explain_row(&self, compiled: &Compiled, prepared: &[f64], rows: &mut Vec<u32>, out: &mut [f64]) {
        assert!(prepared.len() == compiled.prepared_width && out.len() > compiled.num_features);
        rows.resize(self.trees.len(), 0);
        for (t, row) in self.trees.iter().zip(rows.iter_mut()) {
            let nodes = &self.nodes[t.nodes as usize..(t.nodes + t.n) as usize];
            // Every node by the plain comparison first (trees are sorted by n, so this dispatch is
            // predicted; each arm is unrolled), then the few slow splits redone exactly.
            macro_rules! fixed {
                ($($n:literal)*) => {
                    match nodes.len() {
                        $($n => decide::<$n>(nodes, prepared),)*
                        _ => unreachable!("at most MAX_BITS internal nodes"),
                    }
                };
            }
            let mut index = fixed!(1 2 3 4 5 6 7 8 9);
            let mut slow = t.slow;
            while slow != 0 {
                let k = slow.trailing_zeros();
                index = (index & !(1 << k)) | compiled.go_right(nodes[k as usize].compiled, prepared) << k;
                slow &= slow - 1;
            }
            *row = t.table + index * t.d;
            prefetch(&self.table, *row as usize);
        }
        for (t, &row) in self.trees.iter().zip(rows.iter()) {
            let d = t.d as usize;
            // SAFETY: the index has n bits, so its row of d values is inside the tree's 2^n·d
            // table entries; features are split features (< num_features < out.len(), checked
            // at load and asserted above).
            unsafe {
                let values = self.table.as_ptr().add(row as usize);
                let features = self.features.as_ptr().add(t.features as usize);
                let out = out.as_mut_ptr();
                for j in 0..d {
                    *out.add(*features.add(j) as usize) += *values.add(j);
                }
            }
        }
    }

    /// Adds every tabulated tree's contributions for a block of rows: `columns` holds prepared-row
    /// slot `s` of row `r` at `s·stride + r` (as in the parent's batch layout), row `r` writes
    /// `out[r·width..]`. `index` and `right` are scratch of at least `count` values.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn explain_block(&self, compiled: &Compiled, columns: &[f64], stride: usize, count: usize, index: &mut [u32], right: &mut [u32], out: &mut [f64], width: usize) {
        let (index, right) = (&mut index[..count], &mut right[..count]);
        assert!(count * width <= out.len());
        for t in &self.trees {
            index.fill(0);
            let nodes = &self.nodes[t.nodes as usize..(t.nodes + t.n) as usize];
            for (k, node) in nodes.iter().enumerate() {
                let slot = node.slot as usize * stride;
                compiled.go_right_many(node.compiled, &columns[slot..slot + count], right);
                for (x, &go) in index.iter_mut().zip(right.iter()) {
                    *x |= go << k;
                }
            }
            let d = t.d as usize;
            let features = &self.features[t.features as usize..t.features as usize + d];
            let table = &self.table[t.table as usize..t.table as usize + (d << t.n)];
            assert!(features.iter().all(|&f| (f as usize) < width));
            for (r, &x) in index.iter().enumerate() {
                // SAFETY: x < 2^n, so its row x·d..x·d + d is inside `table`; features < width
                // (asserted) and r < count with count·width <= out.len() (asserted).
                unsafe {
                    let values = table.as_ptr().add(x as usize * d);
                    let o = out.as_mut_ptr().add(r * width);
                    for j in 0..d {
                        *o.add(*features.get_unchecked(j) as usize) += *values.add(j);
                    }
                }
            }
        }
    }
}

/// Asks the CPU to bring `table[at]` (the start of a table row) into cache.
#[inline(always)]
fn prefetch(table: &[f64], at: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching never faults; `at` is inside the table anyway.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(table.as_ptr().add(at) as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (table, at);
}

/// The n-bit decision index of a tree by plain comparisons: bit k is `x[slot_k] > threshold_k`
/// (right for every split but the slow ones, whose bits the caller redoes).
#[inline(always)]
fn decide<const N: usize>(nodes: &[Split], prepared: &[f64]) -> u32 {
    let nodes: &[Split; N] = nodes.try_into().expect("N nodes");
    let mut index = 0u32;
    for (k, node) in nodes.iter().enumerate() {
        // SAFETY: slots are compiled prepared-row slots, < prepared_width = prepared.len()
        // (asserted by the caller).
        let x = unsafe { *prepared.get_unchecked(node.slot as usize) };
        index |= ((x > node.threshold) as u32) << k;
    }
    index
}
