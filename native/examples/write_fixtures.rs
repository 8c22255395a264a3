//! Writes the model files of `tests/fixtures/` with LightGBM itself, so that the tests that read
//! them (`tests/errors.rs`) run in builds without LightGBM. Deterministic: the same files each run.
//! `cargo run --release --no-default-features --features lightgbm --target-dir target/lightgbm
//! --example write_fixtures` (from native/; that target folder is the one `npm run test:training`'s
//! cargo tests use, so LightGBM is compiled once for both).

#[path = "../tests/common/mod.rs"]
mod common;

use common::{make_data, train, Rng};
use std::path::Path;

const PARAMS: &str = "num_leaves=4 verbose=-1 num_threads=1 deterministic=true";

fn write(name: &str, text: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    std::fs::write(&path, text).expect("write fixture");
    println!("wrote {}", path.display());
}

fn main() {
    // A small binary model: the base the malformed cases break one thing of.
    let data = make_data(&mut Rng::new(11), 500, 4, &[], false, false);
    write("small_binary.txt", &train(&data, &format!("objective=binary {PARAMS}"), "verbose=-1", 3).1);

    let mut data = make_data(&mut Rng::new(12), 600, 4, &[], false, false);
    for (i, l) in data.labels.iter_mut().enumerate() {
        *l = (i % 3) as f64;
    }
    write("multiclass.txt", &train(&data, &format!("objective=multiclass num_class=3 {PARAMS}"), "verbose=-1", 2).1);

    let data = make_data(&mut Rng::new(13), 600, 4, &[], true, false);
    write("linear_tree.txt", &train(&data, &format!("objective=regression linear_tree=true {PARAMS}"), "verbose=-1 linear_tree=true", 2).1);

    let mut data = make_data(&mut Rng::new(14), 600, 4, &[], true, false);
    for l in data.labels.iter_mut() {
        *l = l.abs().round();
    }
    write("poisson.txt", &train(&data, &format!("objective=poisson {PARAMS}"), "verbose=-1", 2).1);

    let data = make_data(&mut Rng::new(15), 600, 4, &[], false, false);
    let rf = format!("objective=binary boosting=rf bagging_fraction=0.8 bagging_freq=1 {PARAMS}");
    write("random_forest.txt", &train(&data, &rf, "verbose=-1", 2).1);
}
