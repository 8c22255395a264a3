//! Malformed and unsupported model files: each refused with its own stable code, never a panic.
//! Unsupported models are real files written by LightGBM (tests/fixtures/, written by
//! `examples/write_fixtures.rs`, so this runs without LightGBM); malformed ones are a real model
//! with one thing broken.

use fraud_engine::error::ErrorCode;
use fraud_engine::model::Model;

fn small_model() -> String {
    include_str!("fixtures/small_binary.txt").to_owned()
}

fn refused(text: &str) -> fraud_engine::error::EngineError {
    match Model::from_text(text) {
        Ok(_) => panic!("model was accepted"),
        Err(e) => e,
    }
}

fn line_of(text: &str, prefix: &str) -> usize {
    text.lines().position(|l| l.starts_with(prefix)).expect("line present") + 1
}

#[test]
fn accepts_the_untouched_model() {
    assert!(Model::from_text(&small_model()).is_ok());
}

#[test]
fn truncated_file_is_malformed() {
    let text = small_model();
    let cut = &text[..text.find("end of trees").unwrap() - 30];
    let e = refused(cut);
    assert_eq!(e.code, ErrorCode::ModelMalformed);
    assert!(e.line.is_some(), "names a line");
}

#[test]
fn non_number_names_its_line() {
    let text = small_model().replacen("leaf_value=", "leaf_value=abc ", 1);
    let e = refused(&text);
    assert_eq!(e.code, ErrorCode::ModelMalformed);
    assert_eq!(e.line, Some(line_of(&text, "leaf_value=")));
    assert!(e.message.contains("leaf_value"), "{}", e.message);
}

#[test]
fn wrong_array_length_is_malformed() {
    let text = small_model();
    let line = text.lines().find(|l| l.starts_with("threshold=")).unwrap();
    let broken = text.replacen(line, &format!("{line} 1.5"), 1);
    let e = refused(&broken);
    assert_eq!(e.code, ErrorCode::ModelMalformed);
    assert_eq!(e.line, Some(line_of(&broken, "threshold=")));
}

#[test]
fn child_out_of_range_is_malformed() {
    let text = small_model();
    let line = text.lines().find(|l| l.starts_with("left_child=")).unwrap();
    let broken = text.replacen(line, "left_child=99 -1 -2", 1);
    let e = refused(&broken);
    assert_eq!(e.code, ErrorCode::ModelMalformed);
    assert_eq!(e.line, Some(line_of(&broken, "left_child=")));
}

#[test]
fn cycle_is_malformed() {
    let text = small_model();
    let line = text.lines().find(|l| l.starts_with("left_child=")).unwrap();
    let broken = text.replacen(line, "left_child=0 -1 -2", 1);
    assert_eq!(refused(&broken).code, ErrorCode::ModelMalformed);
}

#[test]
fn split_feature_out_of_range_is_malformed() {
    let text = small_model();
    let line = text.lines().find(|l| l.starts_with("split_feature=")).unwrap();
    let broken = text.replacen(line, "split_feature=0 40 1", 1);
    assert_eq!(refused(&broken).code, ErrorCode::ModelMalformed);
}

#[test]
fn garbage_and_empty_are_malformed() {
    assert_eq!(refused("").code, ErrorCode::ModelMalformed);
    assert_eq!(refused("hello\nworld").code, ErrorCode::ModelMalformed);
    assert_eq!(refused("tree\nversion=v4\n").code, ErrorCode::ModelMalformed);
    let bytes: String = (0..2000u32).map(|i| char::from_u32(32 + (i * 7919) % 90).unwrap()).collect();
    assert_eq!(refused(&bytes).code, ErrorCode::ModelMalformed);
}

#[test]
fn every_prefix_is_refused_or_accepted_without_panic() {
    let text = small_model();
    let mut cut = 0;
    while cut < text.len() {
        let _ = Model::from_text(&text[..cut]);
        cut += 37;
    }
}

#[test]
fn unknown_version_is_unsupported() {
    let text = small_model().replacen("version=v4", "version=v2", 1);
    let e = refused(&text);
    assert_eq!(e.code, ErrorCode::ModelUnsupportedVersion);
    assert_eq!(e.line, Some(line_of(&text, "version=")));
    let v3 = small_model().replacen("version=v4", "version=v3", 1);
    assert!(Model::from_text(&v3).is_ok(), "v3 headers are accepted");
}

#[test]
fn multiclass_is_unsupported() {
    let text = include_str!("fixtures/multiclass.txt");
    assert_eq!(refused(&text).code, ErrorCode::ModelUnsupportedMulticlass);
}

#[test]
fn linear_trees_are_unsupported() {
    let text = include_str!("fixtures/linear_tree.txt");
    assert_eq!(refused(&text).code, ErrorCode::ModelUnsupportedLinearTree);
}

#[test]
fn other_objectives_are_unsupported() {
    let text = include_str!("fixtures/poisson.txt");
    let e = refused(&text);
    assert_eq!(e.code, ErrorCode::ModelUnsupportedObjective);
    assert_eq!(e.line, Some(line_of(&text, "objective=")));
}

#[test]
fn random_forest_averaging_is_unsupported() {
    let text = include_str!("fixtures/random_forest.txt");
    assert_eq!(refused(&text).code, ErrorCode::ModelUnsupportedAverageOutput);
}

#[test]
fn wrong_row_width_is_invalid_input() {
    let model = Model::from_text(&small_model()).unwrap();
    assert_eq!(model.predict_raw_row(&[1.0, 2.0]).unwrap_err().code, ErrorCode::InvalidInput);
    assert_eq!(model.shap_batch(&[1.0; 7]).unwrap_err().code, ErrorCode::InvalidInput);
    assert_eq!(model.predict_raw_batch(&[]).unwrap().len(), 0);
}
