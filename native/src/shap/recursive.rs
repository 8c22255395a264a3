//! The classic recursive TreeSHAP (Lundberg et al. 2018, Algorithm 2), over a source tree.
//!
//! O(L·D²) per tree and row, against the tables' O(L·D): the fallback for the trees the tables
//! cannot take (a path with more distinct features than an agreement pattern holds, or a zero
//! cover ratio), and the independent second reference the tests hold the other strategies to.

use crate::forest::{Child, Tree};

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
