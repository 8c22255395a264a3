//! Everything specific to LightGBM: its text model format (`text`) and the library itself (`capi`).
//!
//! `capi` links LightGBM only with the crate's `lightgbm` feature; without it, the same names are a
//! stand-in (`absent.rs`) whose constructors fail with `lightgbm_unavailable`, so the bindings and
//! their TypeScript types are the same in both builds and serving never compiles LightGBM.

#[cfg(feature = "lightgbm")]
pub mod capi;
#[cfg(not(feature = "lightgbm"))]
#[path = "absent.rs"]
pub mod capi;
pub mod text;

/// What a LightGBM prediction returns (its `C_API_PREDICT_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PredictKind {
    Normal = 0,
    RawScore = 1,
    Contrib = 3,
}
