//! `Reasons`: a single row's top reasons, ranked and worded in Rust (reasons.rs).
//!
//! The reason setup as JavaScript passes it (`ReasonSetup`) is converted here for this class and
//! for `ResultLines` alike, so that a single request and a batch word their reasons identically.

use super::invalid;
use crate::reasons::{self, reason_directions, reason_kinds, Channel, Direction, Feature, Kind, Ranked};
use napi::bindgen_prelude::Float64ArraySlice;
use napi::{Env, JsString};
use napi_derive::napi;

reason_kinds!(js_string_enum!
    #[doc = "How a reason shows a feature's value (native/src/reasons.rs `Kind`)."]
    ReasonKind from Kind);

reason_directions!(js_string_enum!
    #[doc = "Which way a reason moved the risk (native/src/reasons.rs `Direction`)."]
    ReasonDirection from Direction,
    #[doc = "The directions' names by the number `Reasons.top` gives a reason's direction."]
    fn reason_directions);

/// One channel booster as reasons see it: its stack weight, its features' names, the names a
/// person reads and how each value is shown (a `ReasonKind`; checked here, so that an unknown one
/// is an `invalid_input` error naming the feature).
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

pub(super) fn reasons_from(setup: ReasonSetup) -> napi::Result<reasons::Reasons, String> {
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
    /// and its direction's index in `reasonDirections()`. Packed so that a call makes one
    /// string: building the reason objects through N-API costs far more than ranking and
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
            out[1 + 5 * i..1 + 5 * (i + 1)].copy_from_slice(&[contribution, r.channel as f64, r.feature as f64, end as f64, reasons::Reasons::direction(contribution) as u8 as f64]);
        }
        // SAFETY: the texts are whole UTF-8 strings (display names, ASCII and formatted numbers).
        env.create_string(unsafe { std::str::from_utf8_unchecked(&self.texts) }).map_err(|e| napi::Error::new(e.status.as_ref().to_owned(), e.reason))
    }
}

/// Length in UTF-16 code units of valid UTF-8: one per character, two for those beyond the BMP.
fn utf16_len(s: &[u8]) -> usize {
    s.iter().map(|&b| ((b & 0xc0) != 0x80) as usize + (b >= 0xf0) as usize).sum()
}
