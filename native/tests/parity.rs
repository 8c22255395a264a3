//! Parity with LightGBM itself: models trained here by LightGBM, evaluated by our engine and by
//! LightGBM's `predict` / `predict_contrib`, compared value by value within 1e-9.

mod common;

use common::{make_data, max_abs_diff, probe_rows, train, Rng};
use fraud_engine::lightgbm::capi::PredictKind;
use fraud_engine::model::Model;
use fraud_engine::shap::Shap;

const TOLERANCE: f64 = 1e-9;

struct Case {
    name: &'static str,
    seed: u64,
    rows: usize,
    features: usize,
    categorical: &'static [usize],
    regression: bool,
    params: &'static str,
    iterations: usize,
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

    let probes = probe_rows(&mut rng, case.features, case.categorical, &data, 2500);
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
    assert_eq!(recursive.strategy_counts().0, 0, "{}: every tree on the recursive path", case.name);
    let mut ours_r = vec![0.0; theirs_c.len()];
    recursive.explain_batch(&model.forest, &model.compiled, &probes, &mut ours_r);
    let d = max_abs_diff(&ours_r, &theirs_c);
    assert!(d <= TOLERANCE, "{}: recursive SHAP values differ by {d}", case.name);
    // So does the direct per-leaf computation (used for paths too long to tabulate).
    let direct = Shap::with_table_bits(&model.forest, &model.compiled, Some(0));
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
    check(&Case { name: "binary", seed: 1, rows: 4000, features: 12, categorical: &[], regression: false, params: "num_leaves=31", iterations: 120 });
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
    });
}

#[test]
fn binary_zero_as_missing() {
    check(&Case { name: "zero_as_missing", seed: 3, rows: 3000, features: 8, categorical: &[2], regression: false, params: "num_leaves=15 zero_as_missing=true", iterations: 60 });
}

#[test]
fn binary_without_missing_handling() {
    // use_missing=false gives splits of missing type None: NaN is read as zero.
    check(&Case { name: "use_missing=false", seed: 4, rows: 3000, features: 8, categorical: &[], regression: false, params: "num_leaves=15 use_missing=false", iterations: 60 });
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
    });
}

#[test]
fn single_tree() {
    check(&Case { name: "1 tree", seed: 6, rows: 2000, features: 6, categorical: &[], regression: false, params: "num_leaves=31", iterations: 1 });
}

#[test]
fn five_hundred_trees() {
    check(&Case { name: "500 trees", seed: 7, rows: 3000, features: 10, categorical: &[4], regression: true, params: "num_leaves=7 learning_rate=0.05", iterations: 500 });
}

#[test]
fn constant_trees_only() {
    // min_data_in_leaf above the row count: no split is possible, every tree is a single leaf.
    check(&Case { name: "stumps", seed: 8, rows: 200, features: 4, categorical: &[], regression: true, params: "min_data_in_leaf=500 min_data_in_bin=1", iterations: 3 });
}
