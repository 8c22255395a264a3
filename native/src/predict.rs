//! The fast evaluator: a forest compiled into one flat node array for branch-free walks.
//!
//! Layout. Each tree is laid out breadth-first with the two children of a node side by side, so a
//! node stores one child index and "go right" is `+1`. Leaves are nodes too: they point at
//! themselves with a NaN threshold, so a walk that has reached a leaf stays there. That lets every
//! tree be walked a fixed number of steps (its depth) with no loop-exit branch to mispredict, and lets
//! several independent walks (four trees of one row, or one tree over many rows) run interleaved so
//! the CPU overlaps their memory loads.
//!
//! Split semantics are `forest::Tree::go_right`, folded per node at compile time:
//! - numerical None/NaN missing types: `go_right = x > t || (isnan(x) && nan_right)`, where
//!   `nan_right` is `0 > t` for None (NaN reads as 0) and `!default_left` for NaN;
//! - numerical Zero missing type and categorical splits take a slower, still exact, branch.
//!
//! Rows are normalised first as LightGBM's C API does (|x| <= 1e-35 becomes 0), so the numbers
//! match LightGBM's own `predict` bit for bit on each leaf choice.

use crate::forest::{self, Child, Forest, MissingType, Split, Tree};

const FEATURE_MASK: u32 = (1 << 28) - 1;
const KIND_SHIFT: u32 = 28;
const KIND_MASK: u32 = 3 << KIND_SHIFT;
const KIND_NUMERIC: u32 = 0;
const KIND_ZERO: u32 = 1 << KIND_SHIFT;
const KIND_CATEGORICAL: u32 = 2 << KIND_SHIFT;
/// NaN goes right (numeric), or the default direction is right (zero-missing).
const RIGHT_BIT: u32 = 1 << 31;

/// Rows evaluated together per tree in batch mode.
const ROW_BLOCK: usize = 16;
/// Trees walked together for a single row.
const TREE_GROUP: usize = 4;

#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct Node {
    /// Numeric threshold; NaN for leaves; for categorical splits, the bitset's
    /// `(offset << 32) | len` in `Compiled::cat_words`, stored as bits.
    pub threshold: f64,
    /// Left child (right child is `child + 1`); a leaf's own index.
    pub child: u32,
    /// Feature index (low 28 bits), split kind (2 bits), right-direction flag (top bit).
    pub meta: u32,
}

impl Node {
    #[inline(always)]
    pub fn feature(&self) -> usize {
        (self.meta & FEATURE_MASK) as usize
    }
}

#[derive(Debug, Clone, Copy)]
pub struct TreeSpan {
    /// Index of the root in `Compiled::nodes`.
    pub root: u32,
    /// Number of nodes (internal and leaves) of this tree.
    pub len: u32,
    /// Steps from the root to the deepest leaf.
    pub depth: u32,
}

#[derive(Debug, Clone)]
pub struct Compiled {
    pub nodes: Vec<Node>,
    /// Leaf value at each leaf node's index (0 for internal nodes).
    pub values: Vec<f64>,
    /// For each compiled node, what it was in the source tree (used to build SHAP tables).
    pub origin: Vec<Child>,
    pub trees: Vec<TreeSpan>,
    pub cat_words: Vec<u32>,
    pub num_features: usize,
    /// True when some split is a zero-missing or categorical one (the slower branch exists).
    pub has_slow_splits: bool,
}

impl Compiled {
    pub fn new(forest: &Forest) -> Compiled {
        let mut c = Compiled {
            nodes: Vec::new(),
            values: Vec::new(),
            origin: Vec::new(),
            trees: Vec::with_capacity(forest.trees.len()),
            cat_words: Vec::new(),
            num_features: forest.num_features,
            has_slow_splits: false,
        };
        for tree in &forest.trees {
            c.add_tree(tree);
        }
        c
    }

    fn add_tree(&mut self, tree: &Tree) {
        let root = self.nodes.len() as u32;
        let root_child = if tree.num_internal() == 0 { Child::Leaf(0) } else { Child::Node(0) };
        // Breadth-first: a node's children are appended together when the node is placed.
        let mut queue = std::collections::VecDeque::new();
        self.push_slot(root_child);
        queue.push_back((root, root_child, 0u32));
        let mut depth = 0;
        while let Some((index, source, d)) = queue.pop_front() {
            depth = depth.max(d);
            match source {
                Child::Leaf(l) => {
                    self.nodes[index as usize] = Node { threshold: f64::NAN, child: index, meta: 0 };
                    self.values[index as usize] = tree.leaf_value[l as usize];
                }
                Child::Node(n) => {
                    let n = n as usize;
                    let child = self.nodes.len() as u32;
                    let (l, r) = (tree.left[n], tree.right[n]);
                    self.push_slot(l);
                    self.push_slot(r);
                    queue.push_back((child, l, d + 1));
                    queue.push_back((child + 1, r, d + 1));
                    let (threshold, meta) = self.encode_split(tree, n);
                    self.nodes[index as usize] = Node { threshold, child, meta };
                }
            }
        }
        self.trees.push(TreeSpan { root, len: self.nodes.len() as u32 - root, depth });
    }

    fn push_slot(&mut self, origin: Child) {
        self.nodes.push(Node { threshold: f64::NAN, child: 0, meta: 0 });
        self.values.push(0.0);
        self.origin.push(origin);
    }

    fn encode_split(&mut self, tree: &Tree, n: usize) -> (f64, u32) {
        let feature = tree.split_feature[n];
        assert!(feature <= FEATURE_MASK, "feature index beyond 2^28");
        match tree.split[n] {
            Split::Numerical { missing: MissingType::None, .. } => {
                let t = tree.threshold[n];
                let nan_right = if 0.0 > t { RIGHT_BIT } else { 0 };
                (t, feature | KIND_NUMERIC | nan_right)
            }
            Split::Numerical { missing: MissingType::NaN, default_left } => {
                (tree.threshold[n], feature | KIND_NUMERIC | if default_left { 0 } else { RIGHT_BIT })
            }
            Split::Numerical { missing: MissingType::Zero, default_left } => {
                self.has_slow_splits = true;
                (tree.threshold[n], feature | KIND_ZERO | if default_left { 0 } else { RIGHT_BIT })
            }
            Split::Categorical { cat_index } => {
                self.has_slow_splits = true;
                let lo = tree.cat_boundaries[cat_index as usize] as usize;
                let hi = tree.cat_boundaries[cat_index as usize + 1] as usize;
                let offset = self.cat_words.len() as u64;
                self.cat_words.extend_from_slice(&tree.cat_threshold[lo..hi]);
                let bits = (offset << 32) | (hi - lo) as u64;
                (f64::from_bits(bits), feature | KIND_CATEGORICAL)
            }
        }
    }

    /// Bytes held by the compiled form.
    pub fn memory_bytes(&self) -> usize {
        self.nodes.len() * std::mem::size_of::<Node>()
            + self.values.len() * 8
            + self.origin.len() * std::mem::size_of::<Child>()
            + self.trees.len() * std::mem::size_of::<TreeSpan>()
            + self.cat_words.len() * 4
    }

    /// Whether the row goes right at `node` (1) or left (0). Also correct on leaves (always 0).
    #[inline(always)]
    pub fn go_right(&self, node: &Node, row: &[f64]) -> u32 {
        // SAFETY: feature indices were checked against num_features when the forest was built, and
        // rows are checked to have num_features values before any walk.
        let x = unsafe { *row.get_unchecked(node.feature()) };
        if node.meta & KIND_MASK == KIND_NUMERIC {
            (x > node.threshold) as u32 | ((x.is_nan() as u32) & (node.meta >> 31))
        } else {
            self.go_right_slow(node, x)
        }
    }

    #[cold]
    #[inline(never)]
    fn go_right_slow(&self, node: &Node, x: f64) -> u32 {
        if node.meta & KIND_MASK == KIND_ZERO {
            // Rows are normalised, so LightGBM's IsZero is an exact comparison with 0 here.
            if x.is_nan() || x == 0.0 {
                node.meta >> 31
            } else {
                (x > node.threshold) as u32
            }
        } else {
            let bits = node.threshold.to_bits();
            let offset = (bits >> 32) as usize;
            let len = (bits & 0xffff_ffff) as usize;
            (!forest::in_bitset(&self.cat_words[offset..offset + len], x)) as u32
        }
    }

    #[inline(always)]
    fn step(&self, index: u32, row: &[f64]) -> u32 {
        // SAFETY: every child index was produced by `add_tree` inside `nodes`.
        let node = unsafe { self.nodes.get_unchecked(index as usize) };
        node.child + self.go_right(node, row)
    }

    /// The leaf node index a row reaches in tree `t` (rows must be normalised).
    #[inline]
    pub fn leaf_index(&self, t: usize, row: &[f64]) -> u32 {
        let span = self.trees[t];
        let mut n = span.root;
        for _ in 0..span.depth {
            n = self.step(n, row);
        }
        n
    }

    /// Raw score of one normalised row, walking groups of trees in lockstep.
    pub fn predict_raw_normalized(&self, row: &[f64]) -> f64 {
        let mut sum = 0.0;
        let mut groups = self.trees.chunks_exact(TREE_GROUP);
        for g in &mut groups {
            let mut n = [g[0].root, g[1].root, g[2].root, g[3].root];
            let steps = g[0].depth.max(g[1].depth).max(g[2].depth).max(g[3].depth);
            for _ in 0..steps {
                for k in 0..TREE_GROUP {
                    n[k] = self.step(n[k], row);
                }
            }
            for k in 0..TREE_GROUP {
                // SAFETY: n[k] is a node index of this tree.
                sum += unsafe { *self.values.get_unchecked(n[k] as usize) };
            }
        }
        for span in groups.remainder() {
            let mut n = span.root;
            for _ in 0..span.depth {
                n = self.step(n, row);
            }
            sum += self.values[n as usize];
        }
        sum
    }

    /// Raw scores of a block of normalised rows (row-major, `num_features` wide), added into `out`.
    fn predict_block(&self, rows: &[f64], out: &mut [f64]) {
        let nf = self.num_features;
        let count = out.len();
        let mut idx = [0u32; ROW_BLOCK];
        for span in &self.trees {
            idx[..count].fill(span.root);
            for _ in 0..span.depth {
                for r in 0..count {
                    idx[r] = self.step(idx[r], &rows[r * nf..(r + 1) * nf]);
                }
            }
            for r in 0..count {
                // SAFETY: idx[r] is a node index of this tree.
                out[r] += unsafe { *self.values.get_unchecked(idx[r] as usize) };
            }
        }
    }

    /// Raw scores of many rows (row-major). The caller checks `rows.len() % num_features == 0`.
    pub fn predict_raw_batch(&self, rows: &[f64], out: &mut [f64]) {
        let nf = self.num_features;
        let mut block = vec![0.0; ROW_BLOCK * nf];
        for (chunk, out_chunk) in rows.chunks(ROW_BLOCK * nf).zip(out.chunks_mut(ROW_BLOCK)) {
            normalize_into(chunk, &mut block[..chunk.len()]);
            out_chunk.fill(0.0);
            self.predict_block(&block[..chunk.len()], out_chunk);
        }
    }
}

/// Copies rows, turning LightGBM's near-zeros into zeros (see the module note).
#[inline]
pub fn normalize_into(src: &[f64], dst: &mut [f64]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = forest::normalize_value(s);
    }
}
