//! LightGBM itself, through its C API: training (`lightgbmTrain`) and its own predictor
//! (`LightGbm`), the reference that parity tests and benchmarks hold the engine to.

use super::js_error;
use crate::lightgbm::capi::{Booster, Dataset, PredictKind, SingleRow};
use napi::bindgen_prelude::{Float64Array, Float64ArraySlice};
use napi_derive::napi;
use std::sync::{Arc, Mutex};

/// LightGBM's own training: a row-major matrix with labels in, model text out.
/// `params` and `datasetParams` are LightGBM parameter strings (`key=value` separated by spaces),
/// e.g. `objective=binary num_leaves=31` and `categorical_feature=0,3`. `initScores`, when given,
/// is each row's starting raw score (boosting on from another model's margins).
#[napi]
pub fn lightgbm_train(
    data: Float64ArraySlice,
    num_features: u32,
    labels: Float64ArraySlice,
    params: String,
    dataset_params: String,
    iterations: u32,
    init_scores: Option<Float64ArraySlice>,
) -> napi::Result<String, String> {
    let mut dataset = Dataset::from_rows(&data, num_features as usize, &labels, &dataset_params).map_err(js_error)?;
    if let Some(scores) = init_scores {
        dataset.set_init_scores(&scores).map_err(js_error)?;
    }
    let booster = Booster::train(&dataset, &params, iterations as usize).map_err(js_error)?;
    booster.model_text().map_err(js_error)
}

/// LightGBM's own predictor over a model: the reference for parity tests and benchmarks.
#[napi]
pub struct LightGbm {
    booster: Arc<Booster>,
    single_raw: Mutex<Option<SingleRow>>,
    single_contrib: Mutex<Option<SingleRow>>,
}

fn single_row_into(booster: &Arc<Booster>, slot: &Mutex<Option<SingleRow>>, kind: PredictKind, row: &[f64], out: &mut [f64]) -> napi::Result<(), String> {
    let mut guard = slot.lock().unwrap_or_else(|e| e.into_inner());
    if guard.is_none() {
        *guard = Some(booster.single_row(kind).map_err(js_error)?);
    }
    guard.as_mut().expect("initialised above").predict_into(row, out).map_err(js_error)
}

#[napi]
impl LightGbm {
    #[napi(factory)]
    pub fn from_text(text: String) -> napi::Result<LightGbm, String> {
        let booster = Arc::new(Booster::from_model_text(&text).map_err(js_error)?);
        Ok(LightGbm { booster, single_raw: Mutex::new(None), single_contrib: Mutex::new(None) })
    }

    #[napi(getter)]
    pub fn num_features(&self) -> u32 {
        self.booster.num_features() as u32
    }

    /// Batch prediction (`raw`: raw scores, else transformed), single-threaded.
    #[napi]
    pub fn predict(&self, rows: Float64ArraySlice, raw: bool) -> napi::Result<Float64Array, String> {
        let kind = if raw { PredictKind::RawScore } else { PredictKind::Normal };
        self.booster.predict(&rows, kind).map(Float64Array::new).map_err(js_error)
    }

    /// Batch `predict_contrib`: `numFeatures + 1` values per row.
    #[napi]
    pub fn predict_contrib(&self, rows: Float64ArraySlice) -> napi::Result<Float64Array, String> {
        self.booster.predict(&rows, PredictKind::Contrib).map(Float64Array::new).map_err(js_error)
    }

    /// Raw score of one row through LightGBM's fastest single-row path.
    #[napi]
    pub fn predict_raw_single(&self, row: Float64ArraySlice) -> napi::Result<f64, String> {
        let mut out = [0.0];
        single_row_into(&self.booster, &self.single_raw, PredictKind::RawScore, &row, &mut out)?;
        Ok(out[0])
    }

    /// `predict_contrib` of one row through the single-row path.
    #[napi]
    pub fn predict_contrib_single(&self, row: Float64ArraySlice) -> napi::Result<Float64Array, String> {
        let mut out = vec![0.0; self.booster.num_features() + 1];
        single_row_into(&self.booster, &self.single_contrib, PredictKind::Contrib, &row, &mut out)?;
        Ok(Float64Array::new(out))
    }
}
