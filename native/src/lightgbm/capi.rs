//! LightGBM itself, through its C API (LightGBM 4.7.0 compiled from source by `lightgbm3-sys`).
//!
//! Two jobs: the trainer (dataset from a row-major matrix, boosting, model text out) and the
//! reference that parity tests and benchmarks compare our evaluator with (its batch predict, its
//! fastest single-row predict, and its `predict_contrib`). It is never on the scoring path.
//! Every call's status is checked and LightGBM's last error message is carried into an
//! `EngineError` with code `lightgbm_error`.

use crate::error::{EngineError, ErrorCode, Result};
pub use super::PredictKind;
use lightgbm3_sys as sys;
use std::ffi::{c_void, CStr, CString};
use std::os::raw::c_char;
use std::ptr;
use std::sync::Arc;

const DTYPE_FLOAT32: i32 = 0;
const DTYPE_FLOAT64: i32 = 1;


fn check(status: i32) -> Result<()> {
    if status == 0 {
        return Ok(());
    }
    // SAFETY: LGBM_GetLastError returns a pointer to a thread-local, NUL-terminated buffer.
    let message = unsafe { CStr::from_ptr(sys::LGBM_GetLastError()) }.to_string_lossy().into_owned();
    Err(EngineError::new(ErrorCode::LightgbmError, format!("LightGBM: {message}")))
}

fn c_string(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| EngineError::new(ErrorCode::InvalidInput, "parameters must not contain NUL bytes"))
}

fn check_matrix(data: &[f64], ncol: usize) -> Result<usize> {
    if ncol == 0 || data.len() % ncol != 0 {
        return Err(EngineError::new(
            ErrorCode::InvalidInput,
            format!("a row-major matrix of {ncol} columns cannot have {} values", data.len()),
        ));
    }
    Ok(data.len() / ncol)
}

/// A LightGBM training dataset.
pub struct Dataset {
    handle: sys::DatasetHandle,
    pub num_rows: usize,
    pub num_cols: usize,
}

impl Dataset {
    /// `params` are LightGBM dataset parameters, e.g. `categorical_feature=0,3 max_bin=255`.
    pub fn from_rows(data: &[f64], ncol: usize, labels: &[f64], params: &str) -> Result<Dataset> {
        let nrow = check_matrix(data, ncol)?;
        if labels.len() != nrow {
            return Err(EngineError::new(
                ErrorCode::InvalidInput,
                format!("{} labels for {nrow} rows", labels.len()),
            ));
        }
        let params = c_string(params)?;
        let mut handle: sys::DatasetHandle = ptr::null_mut();
        // SAFETY: data holds nrow*ncol doubles in row-major order; LightGBM copies what it needs.
        check(unsafe {
            sys::LGBM_DatasetCreateFromMat(
                data.as_ptr() as *const c_void,
                DTYPE_FLOAT64,
                nrow as i32,
                ncol as i32,
                1,
                params.as_ptr(),
                ptr::null_mut(),
                &mut handle,
            )
        })?;
        let dataset = Dataset { handle, num_rows: nrow, num_cols: ncol };
        let labels32: Vec<f32> = labels.iter().map(|&v| v as f32).collect();
        let field = c_string("label")?;
        // SAFETY: labels32 has nrow floats.
        check(unsafe {
            sys::LGBM_DatasetSetField(
                dataset.handle,
                field.as_ptr(),
                labels32.as_ptr() as *const c_void,
                nrow as i32,
                DTYPE_FLOAT32,
            )
        })?;
        Ok(dataset)
    }

    /// Each row's initial raw score: the boosting starts from these instead of the labels'
    /// average, so the trees learn what a given model's margins miss. The model text holds only
    /// the new trees; a row's full margin is its initial score plus their raw score.
    pub fn set_init_scores(&mut self, scores: &[f64]) -> Result<()> {
        if scores.len() != self.num_rows {
            return Err(EngineError::new(
                ErrorCode::InvalidInput,
                format!("{} initial scores for {} rows", scores.len(), self.num_rows),
            ));
        }
        let field = c_string("init_score")?;
        // SAFETY: scores has num_rows doubles; LightGBM copies them.
        check(unsafe {
            sys::LGBM_DatasetSetField(self.handle, field.as_ptr(), scores.as_ptr() as *const c_void, self.num_rows as i32, DTYPE_FLOAT64)
        })
    }
}

impl Drop for Dataset {
    fn drop(&mut self) {
        // SAFETY: the handle came from LGBM_DatasetCreateFromMat and is freed once.
        unsafe { sys::LGBM_DatasetFree(self.handle) };
    }
}

/// A LightGBM booster: trained here, or loaded from model text.
pub struct Booster {
    handle: sys::BoosterHandle,
    num_features: usize,
}

// SAFETY: LightGBM boosters guard prediction with their own locks; the handle is an owned pointer.
unsafe impl Send for Booster {}
unsafe impl Sync for Booster {}

impl Booster {
    /// Trains `iterations` rounds with LightGBM parameters such as `objective=binary num_leaves=31`.
    pub fn train(dataset: &Dataset, params: &str, iterations: usize) -> Result<Booster> {
        let params = c_string(params)?;
        let mut handle: sys::BoosterHandle = ptr::null_mut();
        // SAFETY: dataset.handle is live for this call; LightGBM keeps its own reference to the data.
        check(unsafe { sys::LGBM_BoosterCreate(dataset.handle, params.as_ptr(), &mut handle) })?;
        let booster = Booster { handle, num_features: dataset.num_cols };
        for _ in 0..iterations {
            let mut finished = 0;
            // SAFETY: handle is live.
            check(unsafe { sys::LGBM_BoosterUpdateOneIter(booster.handle, &mut finished) })?;
            if finished != 0 {
                break;
            }
        }
        Ok(booster)
    }

    pub fn from_model_text(text: &str) -> Result<Booster> {
        let text = c_string(text)?;
        let mut handle: sys::BoosterHandle = ptr::null_mut();
        let mut iterations = 0;
        // SAFETY: text is NUL-terminated; LightGBM parses it into a new booster.
        check(unsafe { sys::LGBM_BoosterLoadModelFromString(text.as_ptr(), &mut iterations, &mut handle) })?;
        let mut booster = Booster { handle, num_features: 0 };
        let mut n = 0;
        // SAFETY: handle is live.
        check(unsafe { sys::LGBM_BoosterGetNumFeature(booster.handle, &mut n) })?;
        booster.num_features = n as usize;
        Ok(booster)
    }

    pub fn num_features(&self) -> usize {
        self.num_features
    }

    /// The model in LightGBM's text format (all iterations).
    pub fn model_text(&self) -> Result<String> {
        let mut len: i64 = 0;
        // SAFETY: a zero-length buffer asks only for the needed length.
        check(unsafe { sys::LGBM_BoosterSaveModelToString(self.handle, 0, -1, 0, 0, &mut len, ptr::null_mut()) })?;
        let mut buf = vec![0u8; len as usize];
        // SAFETY: buf has len bytes.
        check(unsafe {
            sys::LGBM_BoosterSaveModelToString(self.handle, 0, -1, 0, len, &mut len, buf.as_mut_ptr() as *mut c_char)
        })?;
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        buf.truncate(end);
        String::from_utf8(buf).map_err(|_| EngineError::new(ErrorCode::LightgbmError, "LightGBM wrote non-UTF-8 model text"))
    }

    fn output_width(&self, kind: PredictKind) -> usize {
        if kind == PredictKind::Contrib {
            self.num_features + 1
        } else {
            1
        }
    }

    /// LightGBM's batch prediction over a row-major matrix, single-threaded.
    pub fn predict(&self, data: &[f64], kind: PredictKind) -> Result<Vec<f64>> {
        let nrow = check_matrix(data, self.num_features)?;
        let mut out = vec![0.0; nrow * self.output_width(kind)];
        let mut out_len: i64 = 0;
        let params = c_string("num_threads=1")?;
        // SAFETY: data has nrow*ncol doubles; out is sized for the requested kind.
        check(unsafe {
            sys::LGBM_BoosterPredictForMat(
                self.handle,
                data.as_ptr() as *const c_void,
                DTYPE_FLOAT64,
                nrow as i32,
                self.num_features as i32,
                1,
                kind as i32,
                0,
                -1,
                params.as_ptr(),
                &mut out_len,
                out.as_mut_ptr(),
            )
        })?;
        out.truncate(out_len as usize);
        Ok(out)
    }

    /// LightGBM's fastest single-row path (`PredictForMatSingleRowFast`), set up once.
    pub fn single_row(self: &Arc<Self>, kind: PredictKind) -> Result<SingleRow> {
        let params = c_string("num_threads=1")?;
        let mut config: sys::FastConfigHandle = ptr::null_mut();
        // SAFETY: handle is live; the fast config refers to it and is freed before it (see SingleRow).
        check(unsafe {
            sys::LGBM_BoosterPredictForMatSingleRowFastInit(
                self.handle,
                kind as i32,
                0,
                -1,
                DTYPE_FLOAT64,
                self.num_features as i32,
                params.as_ptr(),
                &mut config,
            )
        })?;
        Ok(SingleRow { config, width: self.output_width(kind), num_features: self.num_features, _booster: Arc::clone(self) })
    }
}

impl Drop for Booster {
    fn drop(&mut self) {
        // SAFETY: the handle is owned and freed once.
        unsafe { sys::LGBM_BoosterFree(self.handle) };
    }
}

/// A prepared single-row predictor. It holds its booster alive: the fast config points into it, and
/// `Drop` frees the config before the booster reference is released.
pub struct SingleRow {
    config: sys::FastConfigHandle,
    width: usize,
    num_features: usize,
    _booster: Arc<Booster>,
}

// SAFETY: owned handle; LightGBM's fast config is used by one caller at a time (&mut self).
unsafe impl Send for SingleRow {}

impl SingleRow {
    pub fn width(&self) -> usize {
        self.width
    }

    /// Predicts one row into `out` (length `width()`).
    pub fn predict_into(&mut self, row: &[f64], out: &mut [f64]) -> Result<()> {
        if row.len() != self.num_features || out.len() < self.width {
            return Err(EngineError::new(
                ErrorCode::InvalidInput,
                format!("a row has {} values, the model has {} features", row.len(), self.num_features),
            ));
        }
        let mut out_len: i64 = 0;
        // SAFETY: row has num_features doubles; out has room for width values.
        check(unsafe {
            sys::LGBM_BoosterPredictForMatSingleRowFast(
                self.config,
                row.as_ptr() as *const c_void,
                &mut out_len,
                out.as_mut_ptr(),
            )
        })
    }
}

impl Drop for SingleRow {
    fn drop(&mut self) {
        // SAFETY: the config is owned and freed once.
        unsafe { sys::LGBM_FastConfigFree(self.config) };
    }
}
