//! How one tree is explained, chosen per tree at load (`scheduler`) and filled in by the
//! algorithm that takes it (`table` for tabulated trees). Apart from both, so that neither imports
//! the other for it.

#[derive(Debug, Clone)]
pub(super) enum Strategy {
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
