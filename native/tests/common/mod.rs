//! Shared helpers for the crate's tests: a seeded generator and data with the values that matter
//! to tree evaluation (NaN, exact zeros, near-zeros, negative and out-of-range categories).
#![allow(dead_code)]

use fraud_engine::lightgbm::capi::{Booster, Dataset};

/// SplitMix64: small, seeded, good enough for test data.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn normal(&mut self) -> f64 {
        let u1 = self.uniform().max(1e-300);
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

pub struct Data {
    pub rows: Vec<f64>,
    pub labels: Vec<f64>,
    pub num_features: usize,
}

/// `categorical` lists the columns holding integer categories.
pub fn make_data(rng: &mut Rng, n: usize, nf: usize, categorical: &[usize], regression: bool, special: bool) -> Data {
    let mut rows = Vec::with_capacity(n * nf);
    let mut labels = Vec::with_capacity(n);
    for _ in 0..n {
        let mut signal = 0.0;
        for f in 0..nf {
            let v = if categorical.contains(&f) {
                let c = rng.below(24) as f64;
                signal += if (c as u64) % 3 == 0 { 0.8 } else { -0.2 };
                c
            } else {
                let x = rng.normal() * (1.0 + f as f64 * 0.3);
                signal += x * if f % 2 == 0 { 0.5 } else { -0.3 } / (1.0 + f as f64 * 0.3);
                x
            };
            rows.push(v);
        }
        if special {
            let row = rows.len() - nf;
            for f in 0..nf {
                let r = rng.uniform();
                if r < 0.08 {
                    rows[row + f] = f64::NAN;
                } else if r < 0.16 {
                    rows[row + f] = 0.0;
                } else if r < 0.17 && !categorical.contains(&f) {
                    rows[row + f] = 1e-37 * (rng.uniform() - 0.5);
                }
            }
        }
        let noise = rng.normal() * 0.7;
        labels.push(if regression { signal * 3.0 + noise } else if signal + noise > 0.3 { 1.0 } else { 0.0 });
    }
    Data { rows, labels, num_features: nf }
}

/// Rows that probe edge cases: every special value in every column, plus random rows.
pub fn probe_rows(rng: &mut Rng, nf: usize, categorical: &[usize], random: &Data, count: usize) -> Vec<f64> {
    let specials = [f64::NAN, 0.0, -0.0, 1e-36, -1e-36, 1e300, -1e300, f64::INFINITY, f64::NEG_INFINITY, -1.0, 2.5, -0.5, 1000.0, 3e9];
    let mut rows = Vec::new();
    let n_random = random.rows.len() / nf;
    for i in 0..count {
        let base = rng.below(n_random as u64) as usize * nf;
        let mut row: Vec<f64> = random.rows[base..base + nf].to_vec();
        if i % 2 == 0 {
            for (f, v) in row.iter_mut().enumerate() {
                if rng.uniform() < 0.2 {
                    *v = specials[rng.below(specials.len() as u64) as usize];
                } else if categorical.contains(&f) && rng.uniform() < 0.1 {
                    *v = rng.below(40) as f64;
                }
            }
        }
        rows.extend(row);
    }
    rows
}

pub fn train(data: &Data, params: &str, dataset_params: &str, iterations: usize) -> (Booster, String) {
    let dataset = Dataset::from_rows(&data.rows, data.num_features, &data.labels, dataset_params).expect("dataset");
    let booster = Booster::train(&dataset, params, iterations).expect("train");
    let text = booster.model_text().expect("model text");
    (booster, text)
}

pub fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len(), "lengths differ");
    a.iter()
        .zip(b)
        .map(|(x, y)| if x == y || (x.is_nan() && y.is_nan()) { 0.0 } else if x.is_nan() || y.is_nan() { f64::INFINITY } else { (x - y).abs() })
        .fold(0.0, f64::max)
}
