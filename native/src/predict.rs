//! The fast evaluator: a forest compiled into one flat node array for branch-free walks.
//!
//! Each tree is laid out breadth-first with a node's two children side by side ("go right" is
//! `+1`); leaves point at themselves with a NaN threshold, so every tree is walked a fixed number
//! of steps (its depth) with no exit branch to mispredict, and independent walks run interleaved
//! so the CPU overlaps their memory loads. Missing values cost no branch: a row is prepared once
//! into `[hi | lo | raw]` (NaN as +inf, as −inf, as given), and a node reads the copy that sends
//! its NaNs the right way, so an ordinary split is one comparison `x > threshold`; the few splits
//! this cannot express read `raw` through a slower, exact branch. Rows are normalised as
//! LightGBM's C API does, so each leaf choice is LightGBM's. Detail: docs/engine.md.

use crate::forest::{self, Child, Forest, MissingType, Split, Tree};

/// Rows walked together through each tree group in batch mode.
const ROW_BLOCK: usize = 32;
/// Trees walked together for a single row.
pub const TREE_GROUP: usize = 16;

/// Slow split kinds (stored in `Compiled::kinds`; 0 means an ordinary comparison).
const KIND_FAST: u8 = 0;
const KIND_NUMERIC: u8 = 1;
const KIND_ZERO: u8 = 2;
const KIND_CATEGORICAL: u8 = 3;
/// Flag: NaN (numeric) or the default direction (zero-missing) goes right.
const RIGHT: u8 = 0x80;

#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct Node {
    /// Numeric threshold; NaN for leaves; for categorical splits, the bitset's
    /// `(offset << 32) | len` in `Compiled::cat_words`, stored as bits.
    pub threshold: f64,
    /// Left child (right child is `child + 1`); a leaf's own index.
    pub child: u32,
    /// Index into the prepared row: `f` (hi), `nf + f` (lo) or `2·nf + f` (raw).
    pub slot: u32,
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
    /// Split kind per node; all zero (and unread) unless `has_slow_splits`.
    kinds: Vec<u8>,
    /// Leaf value at each leaf node's index (0 for internal nodes).
    pub values: Vec<f64>,
    /// For each compiled node, what it was in the source tree (used to build SHAP tables).
    pub origin: Vec<Child>,
    pub trees: Vec<TreeSpan>,
    /// Trees in groups of `TREE_GROUP`, sorted by depth so a group's walks end together; short
    /// groups are padded with node 0, a zero-valued leaf.
    groups: Vec<([u32; TREE_GROUP], u32)>,
    cat_words: Vec<u32>,
    pub num_features: usize,
    /// Width of a prepared row: 2·nf, or 3·nf when some split reads the raw values.
    pub prepared_width: usize,
    pub has_slow_splits: bool,
}

impl Compiled {
    pub fn new(forest: &Forest) -> Compiled {
        let nf = forest.num_features;
        let mut c = Compiled {
            nodes: Vec::new(),
            kinds: Vec::new(),
            values: Vec::new(),
            origin: Vec::new(),
            trees: Vec::with_capacity(forest.trees.len()),
            groups: Vec::new(),
            cat_words: Vec::new(),
            num_features: nf,
            prepared_width: 2 * nf,
            has_slow_splits: false,
        };
        // Node 0: a leaf of value 0 that pads short tree groups.
        c.push_slot(Child::Leaf(0));
        c.nodes[0] = Node { threshold: f64::NAN, child: 0, slot: 0 };
        for tree in &forest.trees {
            c.add_tree(tree);
        }
        if c.has_slow_splits {
            c.prepared_width = 3 * nf;
        }
        let mut order: Vec<usize> = (0..c.trees.len()).collect();
        order.sort_by_key(|&t| c.trees[t].depth);
        for chunk in order.chunks(TREE_GROUP) {
            let mut roots = [0u32; TREE_GROUP];
            for (k, &t) in chunk.iter().enumerate() {
                roots[k] = c.trees[t].root;
            }
            let steps = chunk.iter().map(|&t| c.trees[t].depth).max().unwrap_or(0);
            c.groups.push((roots, steps));
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
                    self.nodes[index as usize] = Node { threshold: f64::NAN, child: index, slot: 0 };
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
                    let (threshold, slot, kind) = self.encode_split(tree, n);
                    self.nodes[index as usize] = Node { threshold, child, slot };
                    self.kinds[index as usize] = kind;
                }
            }
        }
        self.trees.push(TreeSpan { root, len: self.nodes.len() as u32 - root, depth });
    }

    fn push_slot(&mut self, origin: Child) {
        self.nodes.push(Node { threshold: f64::NAN, child: 0, slot: 0 });
        self.kinds.push(KIND_FAST);
        self.values.push(0.0);
        self.origin.push(origin);
    }

    /// (threshold, prepared-row slot, kind) of internal node `n`.
    fn encode_split(&mut self, tree: &Tree, n: usize) -> (f64, u32, u8) {
        let nf = self.num_features as u32;
        let f = tree.split_feature[n];
        let t = tree.threshold[n];
        let raw = 2 * nf + f;
        let numeric = |nan_right: bool| -> (f64, u32, u8) {
            if nan_right && t == f64::INFINITY {
                (t, raw, KIND_NUMERIC | RIGHT) // +inf cannot stand for NaN against a +inf threshold
            } else if nan_right {
                (t, f, KIND_FAST)
            } else {
                (t, nf + f, KIND_FAST)
            }
        };
        let encoded = match tree.split[n] {
            Split::Numerical { missing: MissingType::None, .. } => numeric(0.0 > t),
            Split::Numerical { missing: MissingType::NaN, default_left } => numeric(!default_left),
            Split::Numerical { missing: MissingType::Zero, default_left } => {
                (t, raw, KIND_ZERO | if default_left { 0 } else { RIGHT })
            }
            Split::Categorical { cat_index } => {
                let lo = tree.cat_boundaries[cat_index as usize] as usize;
                let hi = tree.cat_boundaries[cat_index as usize + 1] as usize;
                let offset = self.cat_words.len() as u64;
                self.cat_words.extend_from_slice(&tree.cat_threshold[lo..hi]);
                (f64::from_bits((offset << 32) | (hi - lo) as u64), raw, KIND_CATEGORICAL)
            }
        };
        if encoded.2 != KIND_FAST {
            self.has_slow_splits = true;
        }
        encoded
    }

    /// Bytes held by the compiled form.
    pub fn memory_bytes(&self) -> usize {
        self.nodes.len() * std::mem::size_of::<Node>()
            + self.kinds.len()
            + self.values.len() * 8
            + self.origin.len() * std::mem::size_of::<Child>()
            + self.trees.len() * std::mem::size_of::<TreeSpan>()
            + self.groups.len() * std::mem::size_of::<([u32; TREE_GROUP], u32)>()
            + self.cat_words.len() * 4
    }

    /// Fills `out` (length `prepared_width`) from one row (length `num_features`).
    #[inline]
    pub fn prepare(&self, row: &[f64], out: &mut [f64]) {
        let nf = self.num_features;
        let (hi, rest) = out.split_at_mut(nf);
        let (lo, raw) = rest.split_at_mut(nf);
        for f in 0..nf {
            let x = forest::normalize_value(row[f]);
            let nan = x.is_nan();
            hi[f] = if nan { f64::INFINITY } else { x };
            lo[f] = if nan { f64::NEG_INFINITY } else { x };
        }
        if self.has_slow_splits {
            for f in 0..nf {
                raw[f] = forest::normalize_value(row[f]);
            }
        }
    }

    /// Whether node `i` decides by the single comparison `row[slot] > threshold` (no slow split).
    pub fn is_fast(&self, i: u32) -> bool {
        self.kinds[i as usize] == KIND_FAST
    }

    /// 1 when the prepared row goes right at node `i`, else 0 (always 0 at a leaf).
    #[inline(always)]
    pub fn go_right(&self, i: u32, row: &[f64]) -> u32 {
        if self.has_slow_splits {
            self.go_right_with::<true>(i, row)
        } else {
            self.go_right_with::<false>(i, row)
        }
    }

    #[inline(always)]
    fn go_right_with<const SLOW: bool>(&self, i: u32, row: &[f64]) -> u32 {
        // SAFETY: node indices come from this layout, slots are < prepared_width and prepared rows
        // have exactly prepared_width values (checked by the callers that build them).
        let node = unsafe { self.nodes.get_unchecked(i as usize) };
        let x = unsafe { *row.get_unchecked(node.slot as usize) };
        if SLOW {
            let kind = unsafe { *self.kinds.get_unchecked(i as usize) };
            if kind != KIND_FAST {
                return self.go_right_slow(kind, node, x);
            }
        }
        (x > node.threshold) as u32
    }

    /// Whether node `i` sends a row right, given the value at the node's prepared-row slot, for
    /// every row of a feature-major block: `right[r] = go_right(x[r])`.
    #[inline]
    pub fn go_right_many(&self, i: u32, x: &[f64], right: &mut [u32]) {
        let node = &self.nodes[i as usize];
        let kind = if self.has_slow_splits { self.kinds[i as usize] } else { KIND_FAST };
        if kind == KIND_FAST {
            let t = node.threshold;
            for (r, &v) in right.iter_mut().zip(x) {
                *r = (v > t) as u32;
            }
        } else {
            for (r, &v) in right.iter_mut().zip(x) {
                *r = self.go_right_slow(kind, node, v);
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn go_right_slow(&self, kind: u8, node: &Node, x: f64) -> u32 {
        let flag = (kind & RIGHT != 0) as u32;
        match kind & !RIGHT {
            KIND_NUMERIC => {
                if x.is_nan() {
                    flag
                } else {
                    (x > node.threshold) as u32
                }
            }
            // Rows are normalised, so LightGBM's IsZero is an exact comparison with 0 here.
            KIND_ZERO => {
                if x.is_nan() || x == 0.0 {
                    flag
                } else {
                    (x > node.threshold) as u32
                }
            }
            _ => {
                let bits = node.threshold.to_bits();
                let offset = (bits >> 32) as usize;
                let len = (bits & 0xffff_ffff) as usize;
                (!forest::in_bitset(&self.cat_words[offset..offset + len], x)) as u32
            }
        }
    }

    #[inline(always)]
    fn step<const SLOW: bool>(&self, i: u32, row: &[f64]) -> u32 {
        // SAFETY: see go_right_with.
        unsafe { self.nodes.get_unchecked(i as usize) }.child + self.go_right_with::<SLOW>(i, row)
    }

    /// Raw score of one prepared row: groups of trees walked in lockstep.
    pub fn predict_raw_prepared(&self, row: &[f64]) -> f64 {
        assert_eq!(row.len(), self.prepared_width);
        if self.has_slow_splits {
            self.predict_groups::<true>(row)
        } else {
            self.predict_groups::<false>(row)
        }
    }

    #[inline(always)]
    fn predict_groups<const SLOW: bool>(&self, row: &[f64]) -> f64 {
        let mut sum = 0.0;
        for (roots, steps) in &self.groups {
            let mut n = *roots;
            for _ in 0..*steps {
                for k in 0..TREE_GROUP {
                    n[k] = self.step::<SLOW>(n[k], row);
                }
            }
            for k in 0..TREE_GROUP {
                // SAFETY: n[k] is a node index of this layout.
                sum += unsafe { *self.values.get_unchecked(n[k] as usize) };
            }
        }
        sum
    }

    /// Raw scores of many rows (row-major, `num_features` wide). Needs `out.len()` rows.
    ///
    /// Rows go in blocks of `ROW_BLOCK`, and each tree group walks the whole block before the next
    /// group starts: a group's nodes (`TREE_GROUP` trees) stay in L1 for all the block's rows,
    /// where one row at a time would fetch the whole model's nodes from L2 for every row. Each row
    /// still adds its groups in the same order as `predict_raw_prepared`, so both give identical
    /// results.
    pub fn predict_raw_batch(&self, rows: &[f64], out: &mut [f64]) {
        let nf = self.num_features;
        let w = self.prepared_width;
        assert_eq!(rows.len(), out.len() * nf);
        let mut prepared = vec![0.0; ROW_BLOCK * w];
        for (chunk, out_chunk) in rows.chunks(ROW_BLOCK * nf).zip(out.chunks_mut(ROW_BLOCK)) {
            let count = out_chunk.len();
            for r in 0..count {
                self.prepare(&chunk[r * nf..(r + 1) * nf], &mut prepared[r * w..(r + 1) * w]);
            }
            out_chunk.fill(0.0);
            if self.has_slow_splits {
                self.predict_block::<true>(&prepared[..count * w], out_chunk);
            } else {
                self.predict_block::<false>(&prepared[..count * w], out_chunk);
            }
        }
    }

    #[inline(always)]
    fn predict_block<const SLOW: bool>(&self, prepared: &[f64], out: &mut [f64]) {
        let w = self.prepared_width;
        for (roots, steps) in &self.groups {
            for (r, o) in out.iter_mut().enumerate() {
                let row = &prepared[r * w..(r + 1) * w];
                let mut n = *roots;
                for _ in 0..*steps {
                    for k in 0..TREE_GROUP {
                        n[k] = self.step::<SLOW>(n[k], row);
                    }
                }
                let mut sum = *o;
                for k in 0..TREE_GROUP {
                    // SAFETY: n[k] is a node index of this layout.
                    sum += unsafe { *self.values.get_unchecked(n[k] as usize) };
                }
                *o = sum;
            }
        }
    }
}
