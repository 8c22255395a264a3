//! Runs one engine operation in a loop over a model file, for profilers (perf, callgrind).
//! `cargo run --release --example profile -- MODEL_FILE predict-batch|predict-row|shap-batch|shap-row [rows]`

use fraud_engine::model::Model;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = std::fs::read_to_string(&args[1]).expect("model file");
    let op = args.get(2).map(String::as_str).unwrap_or("predict-batch");
    let n: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(10000);
    let mut model = Model::from_text(&text).expect("model");
    if let Some(bits) = args.get(4).and_then(|s| s.parse::<usize>().ok()) {
        model.shap = fraud_engine::shap::Shap::with_table_bits(&model.forest, &model.compiled, Some(bits));
    }
    let nf = model.num_features();
    let mut state = 12345u64;
    // ROWS=file of little-endian f64 rows (e.g. dumped from the synthetic generator), else uniform.
    let from_file: Option<Vec<f64>> = std::env::var("ROWS").ok().map(|path| {
        let bytes = std::fs::read(path).expect("rows file");
        bytes.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().unwrap())).take(n * nf).collect()
    });
    let rows: Vec<f64> = if let Some(rows) = from_file { rows } else { (0..n * nf)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 6.0
        })
        .collect() };
    let n = rows.len() / nf;
    let mut best = f64::INFINITY;
    let mut sink = 0.0;
    for _ in 0..7 {
    let t = Instant::now();
    match op {
        "predict-batch" => sink += model.predict_raw_batch(&rows).unwrap()[0],
        "predict-row" => {
            for r in 0..n {
                sink += model.predict_raw_row(&rows[r * nf..(r + 1) * nf]).unwrap();
            }
        }
        "shap-batch" => sink += model.shap_batch(&rows).unwrap()[0],
        "shap-row" => {
            for r in 0..n {
                sink += model.shap_row(&rows[r * nf..(r + 1) * nf]).unwrap()[0];
            }
        }
        _ => panic!("unknown op"),
    }
    best = best.min(t.elapsed().as_nanos() as f64 / n as f64);
    }
    let ns = best;
    println!("{op}: {ns:.0} ns per row, memory {} bytes ({sink})", model.memory_bytes());
}
