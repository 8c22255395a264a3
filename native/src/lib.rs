//! The fraud-risk scoring engine: LightGBM models evaluated and explained (exact TreeSHAP).
//!
//! Parse (`lightgbm::text`) → represent (`forest`) → compile and evaluate (`predict`, `shap`),
//! held together by `model` and shared per process by `registry`. `lightgbm::capi` links LightGBM
//! itself, for training and as the reference in tests and benchmarks. `reasons` ranks and words a
//! decision's reasons (for single requests and batches alike); `lines` writes a scored batch's
//! result lines with them. `bindings` is the N-API layer and only converts.

pub mod error;
pub mod forest;
pub mod lightgbm;
pub mod lines;
pub mod model;
pub mod predict;
pub mod reasons;
pub mod registry;
pub mod shap;

#[cfg(feature = "node")]
mod bindings;
