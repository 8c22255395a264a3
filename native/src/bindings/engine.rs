//! `Engine`: one loaded model's predictions and SHAP values, for single rows and row-major batches.
//!
//! Loads go through the process-wide registry (registry.rs), so that worker threads loading the
//! same model text share one copy; `liveModels` counts those copies.

use super::js_error;
use crate::error::{EngineError, ErrorCode};
use crate::model::Model;
use crate::registry;
use napi::bindgen_prelude::{Float64Array, Float64ArraySlice};
use napi::Env;
use napi_derive::napi;
use std::sync::Arc;

/// A model loaded for evaluation and explanation. Loading the same model text again anywhere in
/// the process (any worker thread) returns the same underlying copy.
#[napi]
pub struct Engine {
    model: Arc<Model>,
    reused: bool,
}

#[napi]
impl Engine {
    /// Loads a LightGBM text model (v3/v4 header; binary or regression objective).
    /// `shapTableBits` (0 to 14, default 14) caps the leaves whose SHAP values are tabulated:
    /// lower uses less memory and computes more leaves directly.
    #[napi(factory)]
    pub fn from_text(text: String, shap_table_bits: Option<u32>) -> napi::Result<Engine, String> {
        let bits = shap_table_bits.map(|b| b as usize).unwrap_or(crate::shap::MAX_TABLE_BITS);
        let (model, reused) = registry::load(&text, bits).map_err(js_error)?;
        Ok(Engine { model, reused })
    }

    /// Number of input features (row width).
    #[napi(getter)]
    pub fn num_features(&self) -> u32 {
        self.model.num_features() as u32
    }

    #[napi(getter)]
    pub fn num_trees(&self) -> u32 {
        self.model.num_trees() as u32
    }

    /// `binary` or `regression`.
    #[napi(getter)]
    pub fn objective(&self) -> String {
        self.model.objective_name().to_owned()
    }

    #[napi(getter)]
    pub fn feature_names(&self) -> Vec<String> {
        self.model.forest.feature_names.clone()
    }

    /// Bytes held by the model: trees, compiled nodes and SHAP tables.
    #[napi(getter)]
    pub fn memory_bytes(&self) -> f64 {
        self.model.memory_bytes() as f64
    }

    /// The SHAP expected value (the last value of every explanation).
    #[napi(getter)]
    pub fn expected_value(&self) -> f64 {
        self.model.shap.expected_value
    }

    /// True when this handle reuses a copy another load in this process had already made.
    #[napi(getter)]
    pub fn shared(&self) -> bool {
        self.reused
    }

    /// Identity of the underlying copy: equal across handles (and threads) that share it.
    #[napi(getter)]
    pub fn instance_id(&self) -> f64 {
        Arc::as_ptr(&self.model) as usize as f64
    }

    /// Trees explained from precomputed tables (of either kind), by the recursive fallback, and
    /// how many of the tabulated ones use a whole-tree table: `[tabulated, recursive, wholeTree]`.
    #[napi(getter)]
    pub fn shap_strategy(&self) -> Vec<u32> {
        let c = self.model.shap.strategy_counts();
        vec![(c.whole_tree + c.leaf_tables) as u32, c.recursive as u32, c.whole_tree as u32]
    }

    /// Raw score (log-odds for binary models) of one row.
    #[napi]
    pub fn predict_raw(&self, row: Float64ArraySlice) -> napi::Result<f64, String> {
        self.model.predict_raw_row(&row).map_err(js_error)
    }

    /// Model output (probability for binary models) of one row.
    #[napi]
    pub fn predict(&self, row: Float64ArraySlice) -> napi::Result<f64, String> {
        self.model.predict_row(&row).map_err(js_error)
    }

    /// Raw scores of a row-major matrix of `numFeatures`-wide rows.
    #[napi]
    pub fn predict_raw_batch(&self, rows: Float64ArraySlice) -> napi::Result<Float64Array, String> {
        self.model.predict_raw_batch(&rows).map(Float64Array::new).map_err(js_error)
    }

    /// Model outputs of a row-major matrix.
    #[napi]
    pub fn predict_batch(&self, rows: Float64ArraySlice) -> napi::Result<Float64Array, String> {
        self.model.predict_batch(&rows).map(Float64Array::new).map_err(js_error)
    }

    /// SHAP values of one row: `numFeatures` contributions, then the expected value.
    #[napi(ts_return_type = "Float64Array")]
    pub fn shap<'env>(&self, env: &'env Env, row: Float64ArraySlice) -> napi::Result<Float64ArraySlice<'env>, String> {
        let values = self.model.shap_row(&row).map_err(js_error)?;
        Float64ArraySlice::copy_from(env, values).map_err(|e| napi::Error::new(e.status.as_ref().to_owned(), e.reason))
    }

    /// SHAP values of one row written into `out` (`numFeatures + 1` values, overwritten): the
    /// single-request path reuses one buffer per model instead of allocating a result per call.
    #[napi]
    pub fn shap_into(&self, row: Float64ArraySlice, mut out: Float64ArraySlice) -> napi::Result<(), String> {
        // One buffer passed as both would be read and written through at once: refused.
        let (r, o) = (row.as_ptr() as usize, out.as_ptr() as usize);
        if r < o + out.len() * 8 && o < r + row.len() * 8 {
            return Err(js_error(EngineError::new(ErrorCode::InvalidInput, "shapInto's output overlaps its row: pass a separate Float64Array".to_owned())));
        }
        // SAFETY: the call is synchronous on the JS thread; nothing else touches `out` meanwhile,
        // and it does not overlap `row` (checked above).
        let out = unsafe { out.as_mut() };
        self.model.shap_row_into(&row, out).map_err(js_error)
    }

    /// SHAP values of a row-major matrix: `numFeatures + 1` values per row.
    #[napi]
    pub fn shap_batch(&self, rows: Float64ArraySlice) -> napi::Result<Float64Array, String> {
        self.model.shap_batch(&rows).map(Float64Array::new).map_err(js_error)
    }
}

/// Models alive in this process (shared by all its threads).
#[napi]
pub fn live_models() -> u32 {
    registry::live_models() as u32
}
