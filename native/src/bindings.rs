//! The N-API layer: converts between JavaScript and the engine, nothing else.
//!
//! Inputs are borrowed `Float64Array` views (no copy); outputs are new typed arrays. Batch calls
//! take one flat row-major matrix, so a batch crosses the boundary once. Batch outputs hand their
//! Rust buffer to V8 (no copy); a single row's SHAP values are copied into a JS-owned buffer
//! instead, which for a few dozen values costs far less than an external buffer and its
//! finalizer (about 2 µs a call). Errors are thrown with the
//! engine's stable code as the JS error's `code` (e.g. `model_malformed`), and the line in the
//! message when there is one.

use crate::error::{EngineError, ErrorCode};
use crate::lines::{Batch, LineFormat};
use crate::lightgbm::capi::{Booster, Dataset, PredictKind, SingleRow};
use crate::model::Model;
use crate::reasons::{self, Channel, Feature, Kind, Ranked};
use crate::registry;
use napi::bindgen_prelude::{Float64Array, Float64ArraySlice, Int32ArraySlice, Int8ArraySlice, Uint8ArraySlice};
use napi::{Env, JsString};
use napi_derive::napi;
use std::sync::{Arc, Mutex};

fn js_error(e: EngineError) -> napi::Error<String> {
    napi::Error::new(e.code.as_str().to_owned(), e.to_string())
}

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

fn invalid(message: String) -> napi::Error<String> {
    js_error(EngineError::new(ErrorCode::InvalidInput, message))
}

/// One channel booster as reasons see it: its stack weight, its features' names, the names a
/// person reads and how each value is shown (`money`, `count`, `ratio`, `rate`, `flag`, `hour`,
/// `weekday`, `seconds_log`, `payment_type`, `number`).
#[napi(object)]
pub struct ReasonChannel {
    pub weight: f64,
    pub features: Vec<String>,
    pub display: Vec<String>,
    pub kinds: Vec<String>,
}

/// What reasons are ranked and worded from (reasons.rs): the channels, in order, and the names
/// of payment types and weekdays by their codes.
#[napi(object)]
pub struct ReasonSetup {
    pub channels: Vec<ReasonChannel>,
    pub payment_types: Vec<String>,
    pub weekdays: Vec<String>,
}

fn reasons_from(setup: ReasonSetup) -> napi::Result<reasons::Reasons, String> {
    let mut channels = Vec::with_capacity(setup.channels.len());
    for (k, c) in setup.channels.into_iter().enumerate() {
        if c.display.len() != c.features.len() || c.kinds.len() != c.features.len() {
            return Err(invalid(format!("reasons: channel {k} has {} features, {} names and {} kinds", c.features.len(), c.display.len(), c.kinds.len())));
        }
        let mut features = Vec::with_capacity(c.features.len());
        for ((name, display), kind) in c.features.iter().zip(&c.display).zip(&c.kinds) {
            let kind = Kind::parse(kind).ok_or_else(|| invalid(format!("reasons: feature {name} has an unknown kind {kind}")))?;
            features.push(Feature::new(name, display, kind));
        }
        channels.push(Channel { weight: c.weight, features });
    }
    Ok(reasons::Reasons::new(channels, setup.payment_types, setup.weekdays))
}

/// A single row's top reasons (reasons.rs): ranked and worded by the same code as a batch's
/// result lines.
#[napi]
pub struct Reasons {
    reasons: reasons::Reasons,
    /// The ranking, one reason's text and all of them, reused from call to call.
    top: Vec<Ranked>,
    text: Vec<u8>,
    texts: Vec<u8>,
}

#[napi]
impl Reasons {
    #[napi(constructor)]
    pub fn new(setup: ReasonSetup) -> napi::Result<Reasons, String> {
        Ok(Reasons { reasons: reasons_from(setup)?, top: Vec::new(), text: Vec::with_capacity(256), texts: Vec::with_capacity(1024) })
    }

    /// Values in the row `top` takes: per channel, its feature values, then as many SHAP values.
    #[napi(getter)]
    pub fn row_width(&self) -> u32 {
        self.reasons.row_width() as u32
    }

    /// The `n` top reasons of one row (`rowWidth` values: per channel in order, its feature values
    /// then its SHAP values), largest contribution first. Returns their texts one after another;
    /// `out` receives their count, then per reason five numbers: its contribution as reported (to
    /// 1e-6; the text is worded from it), its channel, its feature's index in the channel, where
    /// its text ends in the returned string (in UTF-16 code units, as JavaScript indexes strings)
    /// and 1 if it increases the risk, 0 if it decreases it. Packed so that a call makes one
    /// string: building the reason objects through N-API costs several times what ranking and
    /// wording them does, and src/scoring/explain.ts builds them for a fraction of it.
    #[napi]
    pub fn top<'env>(&mut self, env: &'env Env, row: Float64ArraySlice, n: u32, mut out: Float64ArraySlice) -> napi::Result<JsString<'env>, String> {
        self.reasons.rank_row(&row, n as usize, &mut self.top).map_err(|e| invalid(e.0))?;
        if out.len() < 1 + 5 * self.top.len() {
            return Err(invalid(format!("reasons: room for {} numbers in out, not the {} of {} reasons", out.len(), 1 + 5 * self.top.len(), self.top.len())));
        }
        // SAFETY: the call is synchronous on the JS thread and only `out` is written; the row is
        // read before, so an `out` that shares its memory is at worst read stale.
        let out = unsafe { out.as_mut() };
        out[0] = self.top.len() as f64;
        self.texts.clear();
        let mut num = ryu_js::Buffer::new();
        let mut end = 0;
        for (i, r) in self.top.iter().enumerate() {
            let contribution = reasons::Reasons::reported(r);
            self.reasons.text(&mut self.text, r, contribution, &mut num);
            self.texts.extend_from_slice(&self.text);
            end += utf16_len(&self.text);
            out[1 + 5 * i..1 + 5 * (i + 1)].copy_from_slice(&[contribution, r.channel as f64, r.feature as f64, end as f64, reasons::Reasons::increases(contribution) as u8 as f64]);
        }
        // SAFETY: the texts are whole UTF-8 strings (display names, ASCII and formatted numbers).
        env.create_string(unsafe { std::str::from_utf8_unchecked(&self.texts) }).map_err(|e| napi::Error::new(e.status.as_ref().to_owned(), e.reason))
    }
}

/// Length in UTF-16 code units of valid UTF-8: one per character, two for those beyond the BMP.
fn utf16_len(s: &[u8]) -> usize {
    s.iter().map(|&b| ((b & 0xc0) != 0x80) as usize + (b >= 0xf0) as usize).sum()
}

/// What a job's result lines share from row to row.
#[napi(object)]
pub struct LineSetup {
    /// How each row's reasons are ranked and worded.
    pub reasons: ReasonSetup,
    /// The reasons' channels' names (`channel_scores` keys), in the same order.
    pub channels: Vec<String>,
    /// Channel names of the download's score columns, in order.
    pub csv_channels: Vec<String>,
    pub bands: Vec<String>,
    pub decisions: Vec<String>,
    pub paths: Vec<String>,
    /// Customer and merchant ids, by the index rows refer to them with.
    pub entities: Vec<String>,
    /// Reasons per row, and reason cells per download line.
    pub top: u32,
}

/// A batch job's result lines (lines.rs): one JSON line and one download line per scored row,
/// with its top reasons, made from the batch's SHAP values in one call.
#[napi]
pub struct ResultLines {
    format: LineFormat,
    /// The last batch's lines, kept (and their memory reused, batch after batch) until copied out.
    json: Vec<u8>,
    csv: Vec<u8>,
}

#[napi]
impl ResultLines {
    #[napi(constructor)]
    pub fn new(setup: LineSetup) -> napi::Result<ResultLines, String> {
        let reasons = reasons_from(setup.reasons)?;
        let csv_channels: Vec<&str> = setup.csv_channels.iter().map(String::as_str).collect();
        let format = LineFormat::new(reasons, &setup.channels, &csv_channels, &setup.bands, &setup.decisions, &setup.paths, &setup.entities, setup.top as usize).map_err(|e| invalid(e.0))?;
        Ok(ResultLines { format, json: Vec::new(), csv: Vec::new() })
    }

    /// Reason cells in each download line (the setup's `top`).
    #[napi(getter)]
    pub fn top(&self) -> u32 {
        self.format.top() as u32
    }

    /// Lines of `count` scored rows, numbered from `firstRow`, and each JSON line's start (`base`
    /// + its offset) written into `starts`. Returns the byte lengths of the JSON lines and of the
    /// download lines; when `jsonOut` and `csvOut` can hold them they are copied there, else they
    /// wait for `copyInto` with larger buffers. The caller reuses its buffers: fresh memory for
    /// every batch cost more in the kernel's page zeroing than making the lines did.
    /// Per channel, `values` and `phi` are the batch's feature and SHAP matrices; `scores` holds
    /// per row the risk then each channel's score; `codes` band, decision and path indices;
    /// `idOffsets` the transaction ids' starts in `idBytes` (count + 1 of them, negative: none).
    #[napi(ts_return_type = "[number, number]")]
    #[allow(clippy::too_many_arguments)]
    pub fn write(
        &mut self,
        first_row: f64,
        count: u32,
        values: Vec<Float64ArraySlice>,
        phi: Vec<Float64ArraySlice>,
        scores: Float64ArraySlice,
        codes: Uint8ArraySlice,
        amounts: Float64ArraySlice,
        labels: Int8ArraySlice,
        customers: Int32ArraySlice,
        merchants: Int32ArraySlice,
        id_bytes: Uint8ArraySlice,
        id_offsets: Int32ArraySlice,
        base: f64,
        mut starts: Float64ArraySlice,
        json_out: Uint8ArraySlice,
        csv_out: Uint8ArraySlice,
    ) -> napi::Result<Vec<u32>, String> {
        let count = count as usize;
        let batch = Batch {
            first_row: first_row as u64,
            values: values.iter().map(|v| &v[..]).collect(),
            phi: phi.iter().map(|v| &v[..]).collect(),
            scores: &scores,
            codes: &codes,
            amounts: &amounts,
            labels: &labels,
            customers: &customers,
            merchants: &merchants,
            id_bytes: &id_bytes,
            id_offsets: &id_offsets,
        };
        self.json.clear();
        self.csv.clear();
        // SAFETY: the call is synchronous on the JS thread and `starts` is only written here; the
        // inputs are read-only, so an input that shares memory with it is at worst read stale.
        let starts = unsafe { starts.as_mut() };
        self.format.write(&batch, count, &mut self.json, &mut self.csv, base, starts).map_err(|e| invalid(e.0))?;
        let lengths = vec![self.json.len() as u32, self.csv.len() as u32];
        if self.json.len() <= json_out.len() && self.csv.len() <= csv_out.len() {
            self.copy_into(json_out, csv_out)?;
        }
        Ok(lengths)
    }

    /// Copies the last batch's JSON and download lines to the start of `jsonOut` and `csvOut`.
    #[napi]
    pub fn copy_into(&self, mut json_out: Uint8ArraySlice, mut csv_out: Uint8ArraySlice) -> napi::Result<(), String> {
        if self.json.len() > json_out.len() || self.csv.len() > csv_out.len() {
            return Err(invalid(format!("result lines: {} and {} bytes do not fit buffers of {} and {}", self.json.len(), self.csv.len(), json_out.len(), csv_out.len())));
        }
        // SAFETY: synchronous on the JS thread; only the targets are written, from our own bytes.
        let (json_target, csv_target) = unsafe { (json_out.as_mut(), csv_out.as_mut()) };
        json_target[..self.json.len()].copy_from_slice(&self.json);
        csv_target[..self.csv.len()].copy_from_slice(&self.csv);
        Ok(())
    }
}

/// Models alive in this process (shared by all its threads).
#[napi]
pub fn live_models() -> u32 {
    registry::live_models() as u32
}

/// Does nothing with a row: measures the cost of one N-API call with a typed-array argument.
#[napi]
pub fn noop_call(row: Float64ArraySlice) -> f64 {
    row.len() as f64
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" {
    fn malloc_trim(pad: usize) -> i32;
    fn mallopt(param: i32, value: i32) -> i32;
}

/// Hands memory that the C allocator holds free back to the operating system, in every arena
/// (glibc's `malloc_trim`), and returns whether any was released. Start-up (reading the history,
/// compiling hot code on V8's helper threads) leaves tens of megabytes free but resident in
/// malloc arenas that glibc only trims from their top; the service calls this once it is ready.
/// Elsewhere than glibc it does nothing and returns false.
#[napi]
pub fn release_free_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: malloc_trim only returns free pages to the kernel; it takes the arenas' locks.
        unsafe { malloc_trim(0) != 0 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// Fixes glibc's mmap and trim thresholds at 128 KiB (its initial values), and returns whether it
/// could. By default glibc raises both each time a large block is freed (up to 32 MiB), after
/// which the main heap keeps that much free memory resident for good: a long-running server that
/// once read a large result then sits tens of megabytes above what it uses. Elsewhere than glibc
/// it does nothing and returns false.
#[napi]
pub fn fix_allocator_thresholds() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        const M_TRIM_THRESHOLD: i32 = -1;
        const M_MMAP_THRESHOLD: i32 = -3;
        const THRESHOLD: i32 = 128 * 1024;
        // SAFETY: mallopt only changes the allocator's tuning parameters.
        unsafe { mallopt(M_MMAP_THRESHOLD, THRESHOLD) == 1 && mallopt(M_TRIM_THRESHOLD, THRESHOLD) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// LightGBM's own training: a row-major matrix with labels in, model text out.
/// `params` and `datasetParams` are LightGBM parameter strings (`key=value` separated by spaces),
/// e.g. `objective=binary num_leaves=31` and `categorical_feature=0,3`.
#[napi]
pub fn lightgbm_train(
    data: Float64ArraySlice,
    num_features: u32,
    labels: Float64ArraySlice,
    params: String,
    dataset_params: String,
    iterations: u32,
) -> napi::Result<String, String> {
    let dataset = Dataset::from_rows(&data, num_features as usize, &labels, &dataset_params).map_err(js_error)?;
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
