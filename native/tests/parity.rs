//! Parity with LightGBM itself: models trained here by LightGBM, evaluated by our engine and by
//! LightGBM's `predict` / `predict_contrib`, compared value by value within 1e-9. The SHAP
//! strategies (whole-tree tables, per-leaf tables, direct per-leaf, recursive) are also held to
//! each other within 1e-12 on the same trees, single rows and batches.

mod common;

use common::{make_data, max_abs_diff, probe_rows, train, Rng};
use fraud_engine::lightgbm::capi::PredictKind;
use fraud_engine::model::Model;
use fraud_engine::shap::{Shap, StrategyCounts, MAX_TABLE_BITS, MAX_WHOLE_TREE_BITS};

const TOLERANCE: f64 = 1e-9;
/// Between our own SHAP strategies, relative to the largest value compared.
const STRATEGY_TOLERANCE: f64 = 1e-12;

/// Which trees the default SHAP build should explain from whole-tree tables.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Whole {
    /// Every tree that has a split.
    All,
    /// No tree.
    None,
    /// Some trees, and some others from per-leaf tables.
    Mixed,
}

struct Case {
    name: &'static str,
    seed: u64,
    rows: usize,
    features: usize,
    categorical: &'static [usize],
    regression: bool,
    params: &'static str,
    iterations: usize,
    whole: Whole,
}

/// Rows with values exactly at split thresholds (which go left), taken from the model's own
/// numerical splits, over a background of earlier probe rows.
fn threshold_rows(rng: &mut Rng, model: &Model, background: &[f64], count: usize) -> Vec<f64> {
    let nf = model.num_features();
    let mut at: Vec<Vec<f64>> = vec![Vec::new(); nf];
    for tree in &model.forest.trees {
        for (n, split) in tree.split.iter().enumerate() {
            if matches!(split, fraud_engine::forest::Split::Numerical { .. }) && tree.threshold[n].is_finite() {
                at[tree.split_feature[n] as usize].push(tree.threshold[n]);
            }
        }
    }
    let mut rows = Vec::with_capacity(count * nf);
    for _ in 0..count {
        let base = rng.below((background.len() / nf) as u64) as usize * nf;
        for f in 0..nf {
            let v = background[base + f];
            rows.push(if !at[f].is_empty() && rng.uniform() < 0.6 { at[f][rng.below(at[f].len() as u64) as usize] } else { v });
        }
    }
    rows
}

fn constant_trees(model: &Model) -> usize {
    model.forest.trees.iter().filter(|t| t.num_leaves() == 1).count()
}

fn explain_rows(shap: &Shap, model: &Model, probes: &[f64]) -> Vec<f64> {
    let nf = model.num_features();
    probes.chunks(nf).flat_map(|row| {
        let mut out = vec![0.0; nf + 1];
        shap.explain_row(&model.forest, &model.compiled, row, &mut out);
        out
    }).collect()
}

fn explain_batch(shap: &Shap, model: &Model, probes: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; probes.len() / model.num_features() * (model.num_features() + 1)];
    shap.explain_batch(&model.forest, &model.compiled, probes, &mut out);
    out
}

fn assert_close(name: &str, what: &str, ours: &[f64], reference: &[f64]) {
    let scale = reference.iter().filter(|v| v.is_finite()).fold(1.0f64, |m, v| m.max(v.abs()));
    let d = max_abs_diff(ours, reference);
    assert!(d <= STRATEGY_TOLERANCE * scale, "{name}: {what} differs from the recursive reference by {d} (scale {scale})");
}

/// Whole-tree tables against the other strategies on the same trees: the default build, and
/// builds that force the whole-tree limit down (so the same model runs mixed), all checked against
/// the all-recursive build row by row and in batches, and their strategy counts.
fn check_whole_tree(case: &Case, model: &Model, probes: &[f64], reference: &[f64], theirs: &[f64]) {
    let splitting = model.num_trees() - constant_trees(model);
    let counts = model.shap.strategy_counts();
    assert_eq!(counts.whole_tree + counts.leaf_tables + counts.recursive, splitting, "{}: strategy counts {counts:?}", case.name);
    match case.whole {
        Whole::All => assert_eq!(counts.whole_tree, splitting, "{}: {counts:?}", case.name),
        Whole::None => assert_eq!(counts.whole_tree, 0, "{}: {counts:?}", case.name),
        Whole::Mixed => assert!(counts.whole_tree > 0 && counts.leaf_tables > 0, "{}: {counts:?}", case.name),
    }
    for bits in [0, 1, 3, 6, MAX_WHOLE_TREE_BITS] {
        let shap = Shap::with_limits(&model.forest, &model.compiled, Some(MAX_TABLE_BITS), bits);
        let c = shap.strategy_counts();
        let expected = model.forest.trees.iter().filter(|t| t.num_internal() >= 1 && t.num_internal() <= bits).count();
        assert!(c.whole_tree <= expected, "{}: whole-tree limit {bits}: {c:?}", case.name);
        if bits == 0 {
            assert_eq!(c, StrategyCounts { whole_tree: 0, ..c }, "{}: limit 0 disables whole-tree tables", case.name);
        }
        let batch = explain_batch(&shap, model, probes);
        assert_close(case.name, &format!("batch SHAP with whole-tree limit {bits} ({c:?})"), &batch, reference);
        let d = max_abs_diff(&batch, theirs);
        assert!(d <= TOLERANCE, "{}: batch SHAP with whole-tree limit {bits} differs from LightGBM by {d}", case.name);
        let rows = explain_rows(&shap, model, probes);
        assert_close(case.name, &format!("single-row SHAP with whole-tree limit {bits} ({c:?})"), &rows, reference);
    }
    // The model's own build, row by row and batched.
    assert_close(case.name, "default single-row SHAP", &explain_rows(&model.shap, model, probes), reference);
    assert_close(case.name, "default batch SHAP", &explain_batch(&model.shap, model, probes), reference);
}

fn check(case: &Case) {
    let mut rng = Rng::new(case.seed);
    let data = make_data(&mut rng, case.rows, case.features, case.categorical, case.regression, true);
    let objective = if case.regression { "regression" } else { "binary" };
    let params = format!("objective={objective} verbose=-1 num_threads=1 seed={} {}", case.seed, case.params);
    let dataset_params = if case.categorical.is_empty() {
        "verbose=-1".to_string()
    } else {
        let list: Vec<String> = case.categorical.iter().map(|c| c.to_string()).collect();
        format!("verbose=-1 categorical_feature={}", list.join(","))
    };
    let (booster, text) = train(&data, &params, &dataset_params, case.iterations);
    let model = Model::from_text(&text).unwrap_or_else(|e| panic!("{}: our parser refused LightGBM's model: {e}", case.name));
    // LightGBM stops early when no split is possible (the stumps case), never trains more.
    assert!(model.num_trees() >= 1 && model.num_trees() <= case.iterations, "{}: tree count", case.name);

    let mut probes = probe_rows(&mut rng, case.features, case.categorical, &data, 2500);
    probes.extend(threshold_rows(&mut rng, &model, &probes, 300));
    let nf = case.features;
    let n = probes.len() / nf;

    let theirs = booster.predict(&probes, PredictKind::RawScore).unwrap();
    let ours = model.predict_raw_batch(&probes).unwrap();
    let d = max_abs_diff(&ours, &theirs);
    assert!(d <= TOLERANCE, "{}: batch raw score differs by {d}", case.name);
    for r in (0..n).step_by(7) {
        let row = &probes[r * nf..(r + 1) * nf];
        let one = model.predict_raw_row(row).unwrap();
        assert!((one - theirs[r]).abs() <= TOLERANCE, "{}: single-row raw score of row {r}: {one} vs {}", case.name, theirs[r]);
        // The plain walk over the checked trees agrees too (same leaves, same order of sums).
        let plain = model.forest.predict_raw_reference(row);
        assert_eq!(plain, theirs[r], "{}: reference walk of row {r}", case.name);
    }
    let theirs_p = booster.predict(&probes, PredictKind::Normal).unwrap();
    let ours_p = model.predict_batch(&probes).unwrap();
    let d = max_abs_diff(&ours_p, &theirs_p);
    assert!(d <= TOLERANCE, "{}: transformed prediction differs by {d}", case.name);

    let theirs_c = booster.predict(&probes, PredictKind::Contrib).unwrap();
    let ours_c = model.shap_batch(&probes).unwrap();
    let d = max_abs_diff(&ours_c, &theirs_c);
    assert!(d <= TOLERANCE, "{}: SHAP values differ by {d}", case.name);
    // The recursive fallback (used for trees whose tables would be too large) agrees as well.
    let recursive = Shap::with_table_bits(&model.forest, &model.compiled, None);
    assert_eq!(recursive.strategy_counts().recursive + constant_trees(&model), model.num_trees(), "{}: every tree on the recursive path", case.name);
    let mut ours_r = vec![0.0; theirs_c.len()];
    recursive.explain_batch(&model.forest, &model.compiled, &probes, &mut ours_r);
    let d = max_abs_diff(&ours_r, &theirs_c);
    assert!(d <= TOLERANCE, "{}: recursive SHAP values differ by {d}", case.name);
    check_whole_tree(case, &model, &probes, &ours_r, &theirs_c);
    // So does the direct per-leaf computation (used for paths too long to tabulate).
    let direct = Shap::with_table_bits(&model.forest, &model.compiled, Some(0));
    assert_eq!(direct.strategy_counts().whole_tree, 0, "{}: no whole-tree tables at 0 bits", case.name);
    let mut ours_d = vec![0.0; theirs_c.len()];
    direct.explain_batch(&model.forest, &model.compiled, &probes, &mut ours_d);
    let d = max_abs_diff(&ours_d, &theirs_c);
    assert!(d <= TOLERANCE, "{}: direct per-leaf SHAP values differ by {d}", case.name);
    for r in (0..n).step_by(11) {
        let one = model.shap_row(&probes[r * nf..(r + 1) * nf]).unwrap();
        let d = max_abs_diff(&one, &theirs_c[r * (nf + 1)..(r + 1) * (nf + 1)]);
        assert!(d <= TOLERANCE, "{}: single-row SHAP of row {r} differs by {d}", case.name);
        // Efficiency: contributions and expected value add up to the raw score.
        let sum: f64 = one.iter().sum();
        assert!((sum - theirs[r]).abs() <= 1e-8, "{}: SHAP sum {sum} vs raw {}", case.name, theirs[r]);
    }
}

#[test]
fn binary_numeric_with_nans_and_zeros() {
    check(&Case { name: "binary", seed: 1, rows: 4000, features: 12, categorical: &[], regression: false, params: "num_leaves=31", iterations: 120, whole: Whole::None });
}

#[test]
fn regression_with_categoricals() {
    check(&Case {
        name: "regression+categorical",
        seed: 2,
        rows: 4000,
        features: 10,
        categorical: &[0, 3, 7],
        regression: true,
        params: "num_leaves=31 min_data_per_group=5 cat_smooth=1 max_cat_to_onehot=4",
        iterations: 80,
        whole: Whole::None,
    });
}

#[test]
fn binary_zero_as_missing() {
    check(&Case { name: "zero_as_missing", seed: 3, rows: 3000, features: 8, categorical: &[2], regression: false, params: "num_leaves=15 zero_as_missing=true", iterations: 60, whole: Whole::None });
}

#[test]
fn binary_without_missing_handling() {
    // use_missing=false gives splits of missing type None: NaN is read as zero.
    check(&Case { name: "use_missing=false", seed: 4, rows: 3000, features: 8, categorical: &[], regression: false, params: "num_leaves=15 use_missing=false", iterations: 60, whole: Whole::None });
}

#[test]
fn deep_trees_up_to_depth_15() {
    check(&Case {
        name: "depth 15",
        seed: 5,
        rows: 6000,
        features: 20,
        categorical: &[1],
        regression: false,
        params: "num_leaves=400 max_depth=15 min_data_in_leaf=2 min_sum_hessian_in_leaf=0 learning_rate=0.2",
        iterations: 12,
        whole: Whole::None,
    });
}

#[test]
fn single_tree() {
    check(&Case { name: "1 tree", seed: 6, rows: 2000, features: 6, categorical: &[], regression: false, params: "num_leaves=31", iterations: 1, whole: Whole::None });
}

#[test]
fn five_hundred_trees() {
    check(&Case { name: "500 trees", seed: 7, rows: 3000, features: 10, categorical: &[4], regression: true, params: "num_leaves=7 learning_rate=0.05", iterations: 500, whole: Whole::All });
}

#[test]
fn constant_trees_only() {
    // min_data_in_leaf above the row count: no split is possible, every tree is a single leaf.
    check(&Case { name: "stumps", seed: 8, rows: 200, features: 4, categorical: &[], regression: true, params: "min_data_in_leaf=500 min_data_in_bin=1", iterations: 3, whole: Whole::None });
}

#[test]
fn small_trees_with_nans_and_zeros() {
    check(&Case { name: "small binary", seed: 9, rows: 3000, features: 12, categorical: &[], regression: false, params: "num_leaves=8", iterations: 80, whole: Whole::All });
}

#[test]
fn small_trees_categorical_zero_as_missing() {
    check(&Case {
        name: "small categorical+zero_as_missing",
        seed: 10,
        rows: 3000,
        features: 8,
        categorical: &[1, 4],
        regression: true,
        params: "num_leaves=6 zero_as_missing=true min_data_per_group=5 cat_smooth=1 max_cat_to_onehot=4",
        iterations: 60,
        whole: Whole::All,
    });
}

#[test]
fn small_trees_without_missing_handling() {
    check(&Case { name: "small use_missing=false", seed: 11, rows: 3000, features: 8, categorical: &[3], regression: false, params: "num_leaves=5 use_missing=false", iterations: 60, whole: Whole::All });
}

#[test]
fn ten_leaf_trees() {
    // 9 internal nodes, the most a whole-tree table takes: the trees that split on 9 distinct
    // features (9·2^9 entries) are past its size bound and keep per-leaf tables.
    check(&Case { name: "10 leaves", seed: 12, rows: 3000, features: 12, categorical: &[5], regression: false, params: "num_leaves=10", iterations: 40, whole: Whole::Mixed });
}

#[test]
fn small_and_large_trees_in_one_model() {
    // Few rows and a large minimum gain: the first trees have 31 leaves, the last 2 to 10.
    check(&Case {
        name: "mixed sizes",
        seed: 13,
        rows: 1500,
        features: 10,
        categorical: &[2],
        regression: false,
        params: "num_leaves=31 min_data_in_leaf=10 min_gain_to_split=2 learning_rate=0.3",
        iterations: 60,
        whole: Whole::Mixed,
    });
}
