//! The N-API layer: converts between JavaScript and the engine, nothing else.
//!
//! Inputs are borrowed `Float64Array` views (no copy); batch calls take one flat row-major matrix,
//! so a batch crosses the boundary once, and hand their Rust buffer to V8 (no copy). A single
//! row's SHAP values are copied into a JS-owned buffer instead, which for a few dozen values costs
//! far less than an external buffer and its finalizer. Errors are thrown with the engine's stable
//! code as the JS error's `code` (e.g. `model_malformed`), and the line in the message when known.
//! One file per JS class: `engine`, `reasons`, `result_lines`, `lightgbm`; `allocator` holds the
//! glibc allocator controls. This file has the error conversion they all share, and `noopCall`.

mod allocator;
mod engine;
mod lightgbm;
mod reasons;
mod result_lines;

use crate::error::{EngineError, ErrorCode};
use napi::bindgen_prelude::Float64ArraySlice;
use napi_derive::napi;

fn js_error(e: EngineError) -> napi::Error<String> {
    napi::Error::new(e.code.as_str().to_owned(), e.to_string())
}

fn invalid(message: String) -> napi::Error<String> {
    js_error(EngineError::new(ErrorCode::InvalidInput, message))
}

/// Does nothing with a row: measures the cost of one N-API call with a typed-array argument.
#[napi]
pub fn noop_call(row: Float64ArraySlice) -> f64 {
    row.len() as f64
}
