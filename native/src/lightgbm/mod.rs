//! Everything specific to LightGBM: its text model format (`text`) and the library itself (`capi`).

pub mod capi;
pub mod text;
