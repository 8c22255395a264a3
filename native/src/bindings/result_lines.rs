//! `ResultLines`: a batch job's JSON and download lines, written in Rust (lines.rs) from the
//! batch's SHAP values in one call per batch, into buffers the caller reuses; and `ResultRow`, the
//! TypeScript type of one JSON line, made from lines.rs's list of a row's fields.

use super::invalid;
use super::reasons::{reasons_from, ReasonSetup};
use crate::lines::{result_fields, Batch, LineFormat};
use napi::bindgen_prelude::{Float64ArraySlice, Int32ArraySlice, Int8ArraySlice, Uint8ArraySlice};
use napi_derive::napi;

/// The TypeScript type of a result line (`ResultRow` in index.d.ts) from lines.rs's list of a
/// row's fields: one property per field, in order, with its key and type. A type and nothing
/// else: no value of it crosses the boundary (the lines are bytes). The fields are gathered one
/// entry at a time, so that an `optional` one is declared `Option<()>` (napi-rs writes `key?:`)
/// before the struct is handed to napi-rs whole.
macro_rules! result_row_type {
    (@fields [$($fields:tt)*]) => {
        #[doc = "One line of a scored dataset's result file, parsed (native/src/lines.rs; its download"]
        #[doc = "has the same fields as columns, in the same order)."]
        #[napi(object, object_to_js = false, object_from_js = false)]
        #[allow(non_snake_case, dead_code)]
        pub struct ResultRow {
            $($fields)*
        }
    };
    (@fields [$($fields:tt)*] $(#[doc = $doc:tt])* $variant:ident $key:tt ($ts:tt optional), $($rest:tt)*) => {
        result_row_type!(@fields [$($fields)* $(#[doc = $doc])* #[napi(js_name = $key, ts_type = $ts)] pub $variant: Option<()>,] $($rest)*);
    };
    (@fields [$($fields:tt)*] $(#[doc = $doc:tt])* $variant:ident $key:tt ($ts:tt), $($rest:tt)*) => {
        result_row_type!(@fields [$($fields)* $(#[doc = $doc])* #[napi(js_name = $key, ts_type = $ts)] pub $variant: (),] $($rest)*);
    };
    ([$($list:tt)*]) => {
        result_row_type!(@fields [] $($list)*);
    };
}

result_fields!(result_row_type!);

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

    /// The download's header line, CRLF-ended: a row's fields in order, one `score_<channel>`
    /// column per `csvChannels` entry and `reason_1` to `reason_<top>`.
    #[napi(getter)]
    pub fn csv_header(&self) -> String {
        self.format.header().to_owned()
    }

    /// Lines of `count` scored rows, numbered from `firstRow`, and each JSON line's start (`base`
    /// + its offset) written into `starts`. Returns the byte lengths of the JSON lines and of the
    /// download lines; when `jsonOut` and `csvOut` can hold them they are copied there, else they
    /// wait for `copyInto` with larger buffers. The caller reuses its buffers: fresh memory for
    /// every batch would cost more in the kernel's page zeroing than making the lines does.
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
