//! `lightgbm::capi` in a build without LightGBM (the crate's `lightgbm` feature off, as `npm ci`
//! builds the serving addon): the same names and signatures, but nothing can be made, because every
//! constructor fails with `lightgbm_unavailable` and a message naming the build that has LightGBM.
//! The types have no values, so their methods cannot be reached.

use crate::error::{EngineError, ErrorCode, Result};
pub use super::PredictKind;
use std::sync::Arc;

fn unavailable<T>() -> Result<T> {
    Err(EngineError::new(
        ErrorCode::LightgbmUnavailable,
        "this addon was built without LightGBM; training and the LightGBM reference use the build from `npm run build:native -- --lightgbm` (needs CMake >= 3.28 and libclang), which `npm run train` makes on first use",
    ))
}


/// A LightGBM training dataset: none can be made without LightGBM.
pub enum Dataset {}

impl Dataset {
    pub fn from_rows(_data: &[f64], _ncol: usize, _labels: &[f64], _params: &str) -> Result<Dataset> {
        unavailable()
    }

    pub fn set_init_scores(&mut self, _scores: &[f64]) -> Result<()> {
        match *self {}
    }
}

/// A LightGBM booster: none can be made without LightGBM.
pub enum Booster {}

impl Booster {
    pub fn train(dataset: &Dataset, _params: &str, _iterations: usize) -> Result<Booster> {
        match *dataset {}
    }

    pub fn from_model_text(_text: &str) -> Result<Booster> {
        unavailable()
    }

    pub fn num_features(&self) -> usize {
        match *self {}
    }

    pub fn model_text(&self) -> Result<String> {
        match *self {}
    }

    pub fn predict(&self, _data: &[f64], _kind: PredictKind) -> Result<Vec<f64>> {
        match *self {}
    }

    pub fn single_row(self: &Arc<Self>, _kind: PredictKind) -> Result<SingleRow> {
        match **self {}
    }
}

/// A prepared single-row predictor: none can be made without LightGBM.
pub enum SingleRow {}

impl SingleRow {
    pub fn width(&self) -> usize {
        match *self {}
    }

    pub fn predict_into(&mut self, _row: &[f64], _out: &mut [f64]) -> Result<()> {
        match *self {}
    }
}
