//! Exact TreeSHAP (path-dependent, the values of LightGBM's `predict_contrib`), computed fast.
//!
//! Each tree is explained, at load, by the fastest exact strategy it allows, one file each; they
//! differ from LightGBM only in the order of floating-point additions:
//! - `whole_tree` (`Strategy::Whole`): a small tree's SHAP vector for every way a row can go
//!   through it, so a row costs n comparisons and d additions;
//! - `table` (`Strategy::Table`): per-leaf tables of a quantity that depends only on the model,
//!   O(L·D) per tree; a leaf too large for a table is computed directly from its path;
//! - `recursive`: the classic algorithm (Lundberg et al. 2018, Algorithm 2), for trees the tables
//!   cannot take, and the second reference of the tests.
//! `scheduler` assigns the strategies and runs single rows and batches through them; this file
//! holds the `Shap` type they all work on. The method and its limits: docs/engine.md.

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
