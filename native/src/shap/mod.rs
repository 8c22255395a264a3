//! Exact TreeSHAP (path-dependent, the values of LightGBM's `predict_contrib`), computed fast.
//!
//! Each tree is explained by the fastest exact algorithm it allows, one file each; summed over
//! leaves and trees they all give the path-dependent SHAP values LightGBM computes, only the order
//! of floating-point additions differs (agreement is ~1e-15 relative):
//!
//! - `table`: per-leaf tables of a quantity that depends only on the model, built at load, so a row
//!   costs O(L·D) per tree instead of the O(L·D²) of the recursive algorithm (the method is there);
//! - `whole_tree`: a small tree's SHAP vector for every way a row can go through it;
//! - `recursive`: the classic recursive algorithm.
//!
//! `scheduler` gives each tree its strategy at load and runs single rows and batches through them.
//! This file holds the `Shap` type they all work on and what the rest of the crate and the tests
//! use from the module.
//!
//! A leaf whose table would be too large (a path with more than `MAX_TABLE_BITS` distinct
//! features, or a tree past `MAX_TREE_ENTRIES` entries in all) is computed directly from its path
//! (`table::leaf_direct`). Trees with a path of more than 32 distinct features, or a zero cover
//! ratio, use the classic recursive algorithm (Lundberg et al. 2018, Algorithm 2), which the tests
//! also use as a second reference.
//!
//! Small trees go one step further (`whole_tree`). A tree's SHAP vector depends on the row only
//! through its decision at every internal node, so a tree with n internal nodes has at most 2^n of
//! them. For n ≤ `MAX_WHOLE_TREE_BITS` (9, within a size bound) all are computed at load, by the
//! per-leaf passes of `table` run on decisions taken from the bits of an index, and the per-leaf
//! tables are dropped. Such a tree then costs n comparisons and d additions per row (d = its
//! distinct split features) and needs no per-node state; models made only of them (like the
//! service's built-in ones, ≤ 6 internal nodes per tree) explain a row in a fraction of the time.
//!
//! Strategies, per tree: `Constant` (one leaf), `Whole`, `Table` (per-leaf tables, some leaves
//! possibly direct), `Recursive`. `strategy_counts` reports how many trees use each.

mod recursive;
mod scheduler;
mod strategy;
mod table;
mod whole_tree;

use crate::forest::Forest;
use crate::predict::Compiled;
use strategy::Strategy;
use table::{Inner, LeafTable};
use whole_tree::WholeTrees;

pub use recursive::{recursive_tree_shap, PathElement};
pub use table::MAX_TABLE_BITS;
pub use whole_tree::MAX_BITS as MAX_WHOLE_TREE_BITS;

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

    // `with_limits`, `explain_row` and `explain_batch` are in `scheduler`.

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
}
