//! The evaluation form of a model: a forest of binary trees in plain per-tree arrays, checked.
//!
//! Built from the parsed text (`lightgbm::text`), this is the one place that decides whether a model
//! is supported and well formed: every child index in range, every node reached exactly once from the
//! root, every categorical bitset in bounds, every split feature below `num_features`. After
//! `Forest::from_text` succeeds, the evaluators (`predict.rs`, `shap.rs`) can index without checks.
//!
//! Split semantics are LightGBM's (its `Tree::Decision`), restated here in `Tree::go_right`:
//! - numerical, missing type None: NaN is read as 0, then `x <= threshold` goes left;
//! - numerical, missing type Zero: |x| <= 1e-35 (and NaN) take the default direction;
//! - numerical, missing type NaN: NaN takes the default direction;
//! - categorical: NaN, negative values and categories outside the bitset go right.

use crate::error::{EngineError, ErrorCode, Result};
use crate::lightgbm::text::{ModelText, TreeText};

/// LightGBM's `kZeroThreshold` (1e-35 as a float, widened to double).
pub const ZERO_THRESHOLD: f64 = 1e-35_f32 as f64;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Objective {
    /// Probability = 1 / (1 + exp(-sigmoid * raw)).
    Binary { sigmoid: f64 },
    /// The raw score is the prediction.
    Regression,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MissingType {
    None,
    Zero,
    NaN,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    Numerical { missing: MissingType, default_left: bool },
    /// Index into the tree's `cat_boundaries`.
    Categorical { cat_index: u32 },
}

/// A child reference: an internal node or a leaf.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Child {
    Node(u32),
    Leaf(u32),
}

#[derive(Debug, Clone)]
pub struct Tree {
    pub split_feature: Vec<u32>,
    pub threshold: Vec<f64>,
    pub split: Vec<Split>,
    pub left: Vec<Child>,
    pub right: Vec<Child>,
    pub cat_boundaries: Vec<u32>,
    pub cat_threshold: Vec<u32>,
    pub leaf_value: Vec<f64>,
    /// Training rows that reached each leaf / internal node (the covers of TreeSHAP).
    pub leaf_count: Vec<f64>,
    pub internal_count: Vec<f64>,
}

#[derive(Debug, Clone)]
pub struct Forest {
    pub num_features: usize,
    pub feature_names: Vec<String>,
    pub objective: Objective,
    pub trees: Vec<Tree>,
}

/// LightGBM's C API drops values within ±1e-35 when it reads a row, so they arrive as exact zeros.
#[inline(always)]
pub fn normalize_value(x: f64) -> f64 {
    if is_zero(x) {
        0.0
    } else {
        x
    }
}

/// Copies a row, normalising each value (see `normalize_value`).
#[inline]
pub fn normalize_into(src: &[f64], dst: &mut [f64]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = normalize_value(s);
    }
}

/// LightGBM's `IsZero`.
#[inline(always)]
pub fn is_zero(x: f64) -> bool {
    (-ZERO_THRESHOLD..=ZERO_THRESHOLD).contains(&x)
}

/// LightGBM's categorical membership test on a bitset of 32-bit words.
#[inline(always)]
pub fn in_bitset(words: &[u32], x: f64) -> bool {
    if x.is_nan() {
        return false;
    }
    // C++ truncates toward zero (so -0.5 is category 0); values beyond i32 are never in a bitset.
    let v = x as i64;
    if v < 0 || v > i32::MAX as i64 {
        return false;
    }
    let v = v as u64;
    let word = (v / 32) as usize;
    word < words.len() && (words[word] >> (v % 32)) & 1 == 1
}

impl Tree {
    pub fn num_leaves(&self) -> usize {
        self.leaf_value.len()
    }

    pub fn num_internal(&self) -> usize {
        self.split_feature.len()
    }

    /// Whether the row goes right at internal node `node`, given the value of its split feature.
    #[inline]
    pub fn go_right(&self, node: usize, x: f64) -> bool {
        match self.split[node] {
            Split::Numerical { missing, default_left } => {
                let mut x = x;
                if x.is_nan() && missing != MissingType::NaN {
                    x = 0.0;
                }
                let take_default = match missing {
                    MissingType::Zero => is_zero(x),
                    MissingType::NaN => x.is_nan(),
                    MissingType::None => false,
                };
                if take_default {
                    !default_left
                } else {
                    !(x <= self.threshold[node])
                }
            }
            Split::Categorical { cat_index } => {
                let lo = self.cat_boundaries[cat_index as usize] as usize;
                let hi = self.cat_boundaries[cat_index as usize + 1] as usize;
                !in_bitset(&self.cat_threshold[lo..hi], x)
            }
        }
    }

    pub fn child(&self, node: usize, right: bool) -> Child {
        if right {
            self.right[node]
        } else {
            self.left[node]
        }
    }

    /// Training rows through a child (its cover).
    pub fn count(&self, c: Child) -> f64 {
        match c {
            Child::Node(n) => self.internal_count[n as usize],
            Child::Leaf(l) => self.leaf_count[l as usize],
        }
    }

    /// The leaf a row reaches, by a plain walk from the root (the reference evaluator).
    pub fn leaf_of(&self, row: &[f64]) -> usize {
        if self.num_internal() == 0 {
            return 0;
        }
        let mut node = 0usize;
        loop {
            let right = self.go_right(node, row[self.split_feature[node] as usize]);
            match self.child(node, right) {
                Child::Node(n) => node = n as usize,
                Child::Leaf(l) => return l as usize,
            }
        }
    }

    /// LightGBM's `ExpectedValue`: the cover-weighted mean of the leaf values.
    pub fn expected_value(&self) -> f64 {
        if self.num_leaves() == 1 {
            return self.leaf_value[0];
        }
        let total = self.internal_count[0];
        let mut e = 0.0;
        for (v, c) in self.leaf_value.iter().zip(&self.leaf_count) {
            e += (c / total) * v;
        }
        e
    }

    /// Depth of the deepest leaf (a 1-leaf tree has depth 0).
    pub fn max_depth(&self) -> usize {
        fn walk(t: &Tree, c: Child, d: usize) -> usize {
            match c {
                Child::Leaf(_) => d,
                Child::Node(n) => walk(t, t.left[n as usize], d + 1).max(walk(t, t.right[n as usize], d + 1)),
            }
        }
        if self.num_internal() == 0 {
            0
        } else {
            walk(self, Child::Node(0), 0)
        }
    }
}

impl Forest {
    /// Checks a parsed model and builds the evaluation form.
    pub fn from_text(text: ModelText) -> Result<Forest> {
        let h = &text.header;
        if h.version != "v3" && h.version != "v4" {
            return Err(EngineError::at_line(
                ErrorCode::ModelUnsupportedVersion,
                h.version_line,
                format!("model format version {:?} is not supported (v3 and v4 are)", h.version),
            ));
        }
        if h.num_class != 1 || h.num_tree_per_iteration != 1 {
            return Err(EngineError::new(
                ErrorCode::ModelUnsupportedMulticlass,
                format!(
                    "multiclass models are not supported (num_class={}, num_tree_per_iteration={}); train a binary or regression model",
                    h.num_class, h.num_tree_per_iteration
                ),
            ));
        }
        if h.average_output {
            return Err(EngineError::new(
                ErrorCode::ModelUnsupportedAverageOutput,
                "random-forest models (average_output) are not supported; train with boosting=gbdt",
            ));
        }
        if h.linear_tree || text.trees.iter().any(|t| t.is_linear) {
            let line = text.trees.iter().find(|t| t.is_linear).map(|t| t.line_of("is_linear"));
            let message = "linear trees (linear_tree=true) are not supported; train without linear_tree";
            return Err(match line {
                Some(l) => EngineError::at_line(ErrorCode::ModelUnsupportedLinearTree, l, message),
                None => EngineError::new(ErrorCode::ModelUnsupportedLinearTree, message),
            });
        }
        let objective = parse_objective(&h.objective, h.objective_line)?;
        let num_features = (h.max_feature_idx + 1) as usize;
        let trees = text.trees.iter().map(|t| build_tree(t, num_features)).collect::<Result<Vec<_>>>()?;
        Ok(Forest { num_features, feature_names: text.header.feature_names, objective, trees })
    }

    /// Raw score by plain walks from the checked trees (no compiled layout): a second reference,
    /// beside LightGBM, that the parity tests hold the fast evaluator to.
    pub fn predict_raw_reference(&self, row: &[f64]) -> f64 {
        let mut normalized = vec![0.0; row.len()];
        normalize_into(row, &mut normalized);
        self.trees.iter().fold(0.0, |acc, t| acc + t.leaf_value[t.leaf_of(&normalized)])
    }

    /// Sum of the trees' expected values, added in tree order as LightGBM does.
    pub fn expected_value(&self) -> f64 {
        self.trees.iter().fold(0.0, |acc, t| acc + t.expected_value())
    }

    /// Turns a raw score into the model's output (a probability for binary models).
    #[inline]
    pub fn transform(&self, raw: f64) -> f64 {
        match self.objective {
            Objective::Binary { sigmoid } => 1.0 / (1.0 + (-sigmoid * raw).exp()),
            Objective::Regression => raw,
        }
    }
}

fn parse_objective(objective: &str, line: usize) -> Result<Objective> {
    let mut tokens = objective.split_ascii_whitespace();
    let name = tokens.next().unwrap_or("");
    let unsupported = |why: String| EngineError::at_line(ErrorCode::ModelUnsupportedObjective, line, why);
    match name {
        "binary" => {
            let mut sigmoid = 1.0;
            for t in tokens {
                if let Some(v) = t.strip_prefix("sigmoid:") {
                    sigmoid = v
                        .parse::<f64>()
                        .ok()
                        .filter(|s| *s > 0.0 && s.is_finite())
                        .ok_or_else(|| EngineError::at_line(ErrorCode::ModelMalformed, line, format!("bad sigmoid parameter {v:?}")))?;
                }
            }
            Ok(Objective::Binary { sigmoid })
        }
        // Objectives whose output is the raw score itself.
        "regression" | "regression_l2" | "regression_l1" | "huber" | "fair" | "quantile" | "mape" => {
            if tokens.any(|t| t == "sqrt") {
                return Err(unsupported(format!(
                    "objective {objective:?} (with `sqrt`, its output is squared) is not supported; train without reg_sqrt"
                )));
            }
            Ok(Objective::Regression)
        }
        "" => Err(unsupported("the model names no objective (custom objective?); binary and regression are supported".into())),
        other => Err(unsupported(format!(
            "objective {other:?} is not supported; binary and regression objectives are"
        ))),
    }
}

fn build_tree(t: &TreeText, num_features: usize) -> Result<Tree> {
    let internal = t.num_leaves - 1;
    let bad = |field: &str, message: String| EngineError::at_line(ErrorCode::ModelMalformed, t.line_of(field), message);

    let mut split_feature = Vec::with_capacity(internal);
    for &f in &t.split_feature {
        if f < 0 || f as usize >= num_features {
            return Err(bad("split_feature", format!("split feature {f} is outside 0..{num_features}")));
        }
        split_feature.push(f as u32);
    }

    let cat_boundaries: Vec<u32> = {
        let mut prev = 0i64;
        let mut out = Vec::with_capacity(t.cat_boundaries.len());
        for (i, &b) in t.cat_boundaries.iter().enumerate() {
            if b < 0 || (i == 0 && b != 0) || b < prev || b as usize > t.cat_threshold.len() {
                return Err(bad("cat_boundaries", format!("cat_boundaries value {b} is out of order or out of range")));
            }
            prev = b;
            out.push(b as u32);
        }
        out
    };

    let mut split = Vec::with_capacity(internal);
    for (i, &dt) in t.decision_type.iter().enumerate() {
        if !(0..=15).contains(&dt) {
            return Err(bad("decision_type", format!("decision_type {dt} is not a valid LightGBM decision type")));
        }
        let dt = dt as u8;
        if dt & 1 == 1 {
            let thr = t.threshold[i];
            if !(thr >= 0.0) || thr.fract() != 0.0 || thr as usize >= t.num_cat {
                return Err(bad("threshold", format!("categorical split {i} points to bitset {thr}, but the tree has {}", t.num_cat)));
            }
            split.push(Split::Categorical { cat_index: thr as u32 });
        } else {
            let missing = match (dt >> 2) & 3 {
                0 => MissingType::None,
                1 => MissingType::Zero,
                2 => MissingType::NaN,
                _ => return Err(bad("decision_type", format!("decision_type {dt} has an unknown missing type"))),
            };
            split.push(Split::Numerical { missing, default_left: dt & 2 != 0 });
        }
    }

    let child = |c: i64, field: &str| -> Result<Child> {
        if c >= 0 {
            if c as usize >= internal {
                return Err(bad(field, format!("child {c} is outside the tree's {internal} internal nodes")));
            }
            Ok(Child::Node(c as u32))
        } else {
            let leaf = !c;
            if leaf as usize >= t.num_leaves {
                return Err(bad(field, format!("child {c} names leaf {leaf}, but the tree has {} leaves", t.num_leaves)));
            }
            Ok(Child::Leaf(leaf as u32))
        }
    };
    let left = t.left_child.iter().map(|&c| child(c, "left_child")).collect::<Result<Vec<_>>>()?;
    let right = t.right_child.iter().map(|&c| child(c, "right_child")).collect::<Result<Vec<_>>>()?;

    // Every node and leaf must be reached exactly once from the root: no cycles, no orphans.
    if internal > 0 {
        let mut seen_nodes = vec![false; internal];
        let mut seen_leaves = vec![false; t.num_leaves];
        let mut stack = vec![0u32];
        seen_nodes[0] = true;
        while let Some(n) = stack.pop() {
            for c in [left[n as usize], right[n as usize]] {
                let seen = match c {
                    Child::Node(m) => &mut seen_nodes[m as usize],
                    Child::Leaf(l) => &mut seen_leaves[l as usize],
                };
                if *seen {
                    return Err(bad("left_child", "the tree's child links form a cycle or share a node".into()));
                }
                *seen = true;
                if let Child::Node(m) = c {
                    stack.push(m);
                }
            }
        }
        if seen_nodes.iter().chain(&seen_leaves).any(|s| !s) {
            return Err(bad("left_child", "some nodes or leaves are not reachable from the root".into()));
        }
    }

    for (field, values) in [("leaf_value", &t.leaf_value), ("threshold", &t.threshold)] {
        if values.iter().any(|v| v.is_nan()) {
            return Err(bad(field, format!("field `{field}` contains NaN")));
        }
    }
    for (field, values) in [("leaf_count", &t.leaf_count), ("internal_count", &t.internal_count)] {
        if values.iter().any(|v| !(*v >= 0.0) || v.is_infinite()) {
            return Err(bad(field, format!("field `{field}` contains a negative or non-finite count")));
        }
    }

    Ok(Tree {
        split_feature,
        threshold: t.threshold.clone(),
        split,
        left,
        right,
        cat_boundaries,
        cat_threshold: t.cat_threshold.clone(),
        leaf_value: t.leaf_value.clone(),
        leaf_count: t.leaf_count.clone(),
        internal_count: t.internal_count.clone(),
    })
}
