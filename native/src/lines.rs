//! A scored batch's result lines, written as bytes next to the SHAP values that explain them: for
//! each row its top reasons (ranked and worded by reasons.rs, as the single-request path's are),
//! one JSON line for the result pages and one CSV line for the download.
//!
//! Made here rather than in JavaScript because building and encoding a row's text there is a
//! large part of a job's time (bench/README.md, bench:batch). The lines are byte for byte
//! `JSON.stringify` of the row (`ResultRow`, src/jobs/result-row.ts) and the download's cells in
//! the columns of src/jobs/result-row.ts `downloadColumns(top)`: one reason cell per reason the
//! format keeps (`top`), every cell a spreadsheet would run as a formula defused.

use crate::reasons::{Ranked, Reasons};
use std::io::Write;

/// A string as both files write it: a JSON string literal and a download cell.
struct Cell {
    json: Vec<u8>,
    csv: Vec<u8>,
}

impl Cell {
    fn new(value: &[u8]) -> Cell {
        let mut json = Vec::with_capacity(value.len() + 2);
        json_string(&mut json, value);
        let mut csv = Vec::with_capacity(value.len());
        csv_text(&mut csv, value);
        Cell { json, csv }
    }
}

/// Everything about a job's lines that does not change from row to row.
pub struct LineFormat {
    reasons: Reasons,
    /// Per channel, its features' names as JSON strings.
    feature_keys: Vec<Vec<Vec<u8>>>,
    /// `channel_scores` keys as JSON (`"tabular":`).
    channel_keys: Vec<Vec<u8>>,
    /// The channel in each of the download's score columns (tabular, behavioral, velocity, graph).
    csv_channels: Vec<Option<usize>>,
    bands: Vec<Cell>,
    decisions: Vec<Cell>,
    paths: Vec<Cell>,
    /// Customer and merchant ids, by the index the rows refer to them with.
    entities: Vec<Cell>,
    /// Reasons per row, and so reason cells per download line.
    top: usize,
}

/// Label code of a row whose outcome the file does not give.
pub const NO_LABEL: i8 = -1;

/// A batch of scored rows, row-major where a row has several values.
pub struct Batch<'a> {
    /// Row number (from 1) of the batch's first row.
    pub first_row: u64,
    /// Per channel: the rows' feature values (the channel's width per row).
    pub values: Vec<&'a [f64]>,
    /// Per channel: the rows' SHAP values (width + 1 per row; the last is the expected value).
    pub phi: Vec<&'a [f64]>,
    /// Per row: the risk score, then each channel's score.
    pub scores: &'a [f64],
    /// Per row: band, decision and path, as indices into the format's names.
    pub codes: &'a [u8],
    pub amounts: &'a [f64],
    pub labels: &'a [i8],
    pub customers: &'a [i32],
    pub merchants: &'a [i32],
    /// Transaction ids packed as UTF-8: row j's from `id_offsets[j]` to where row j + 1's starts;
    /// a start stored as `-1 - start` means the row has none (the key is left out).
    pub id_bytes: &'a [u8],
    pub id_offsets: &'a [i32],
}

/// Why a batch could not be written (the caller's arrays disagree with each other or the format).
#[derive(Debug)]
pub struct LinesError(pub String);

impl std::fmt::Display for LinesError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl LineFormat {
    /// `channel_names` are the `channel_scores` keys of `reasons`' channels, in the same order.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        reasons: Reasons,
        channel_names: &[String],
        csv_channels: &[&str],
        bands: &[String],
        decisions: &[String],
        paths: &[String],
        entities: &[String],
        top: usize,
    ) -> Result<LineFormat, LinesError> {
        if channel_names.len() != reasons.channels().len() {
            return Err(LinesError(format!("result lines: {} channel names for {} channels", channel_names.len(), reasons.channels().len())));
        }
        let json = |s: &str| {
            let mut out = Vec::new();
            json_string(&mut out, s.as_bytes());
            out
        };
        let channel_keys = channel_names
            .iter()
            .map(|name| {
                let mut key = json(name);
                key.push(b':');
                key
            })
            .collect();
        let feature_keys = reasons.channels().iter().map(|c| c.features.iter().map(|f| json(&f.name)).collect()).collect();
        let csv_channels = csv_channels.iter().map(|name| channel_names.iter().position(|c| c == name)).collect();
        let cells = |names: &[String]| names.iter().map(|n| Cell::new(n.as_bytes())).collect::<Vec<_>>();
        Ok(LineFormat {
            reasons,
            feature_keys,
            channel_keys,
            csv_channels,
            bands: cells(bands),
            decisions: cells(decisions),
            paths: cells(paths),
            entities: cells(entities),
            top,
        })
    }

    /// Reason cells in each download line.
    pub fn top(&self) -> usize {
        self.top
    }

    fn check(&self, b: &Batch, count: usize) -> Result<(), LinesError> {
        let c = self.reasons.channels().len();
        let bad = |what: &str| Err(LinesError(format!("result lines: {what} does not match the batch of {count} rows")));
        if b.values.len() != c || b.phi.len() != c {
            return bad("the number of channels");
        }
        for (k, ch) in self.reasons.channels().iter().enumerate() {
            let w = ch.features.len();
            if b.values[k].len() < count * w {
                return bad("a channel's feature values");
            }
            if b.phi[k].len() < count * (w + 1) {
                return bad("a channel's SHAP values");
            }
        }
        if b.scores.len() < count * (1 + c) {
            return bad("the scores");
        }
        if b.codes.len() < count * 3 || b.amounts.len() < count || b.labels.len() < count || b.customers.len() < count || b.merchants.len() < count {
            return bad("a column");
        }
        if b.id_offsets.len() < count + 1 {
            return bad("the transaction ids");
        }
        for j in 0..count {
            let row = &b.codes[j * 3..j * 3 + 3];
            if row[0] as usize >= self.bands.len() || row[1] as usize >= self.decisions.len() || row[2] as usize >= self.paths.len() {
                return bad("a band, decision or path code");
            }
            for e in [b.customers[j], b.merchants[j]] {
                if e < 0 || e as usize >= self.entities.len() {
                    return bad("a customer or merchant index");
                }
            }
            let (from, end) = (id_start(b.id_offsets[j]), id_start(b.id_offsets[j + 1]));
            if end < from || end as usize > b.id_bytes.len() {
                return bad("a transaction id's offsets");
            }
        }
        Ok(())
    }

    /// Appends the batch's lines to `json` and `csv`, and each JSON line's start (`base` plus its
    /// offset in `json`) to `starts`.
    pub fn write(&self, b: &Batch, count: usize, json: &mut Vec<u8>, csv: &mut Vec<u8>, base: f64, starts: &mut [f64]) -> Result<(), LinesError> {
        self.check(b, count)?;
        if starts.len() < count {
            return Err(LinesError(format!("result lines: room for {} line starts, not {count}", starts.len())));
        }
        let c = self.reasons.channels().len();
        let json_at = json.len();
        let mut num = ryu_js::Buffer::new();
        let mut top: Vec<Ranked> = Vec::with_capacity(self.top + 1);
        let mut texts: Vec<Vec<u8>> = (0..self.top).map(|_| Vec::with_capacity(128)).collect();
        let mut rounded = vec![0.0; self.top];
        let mut numbers = Numbers::default();
        for j in 0..count {
            starts[j] = base + (json.len() - json_at) as f64;
            let scores = &b.scores[j * (1 + c)..(j + 1) * (1 + c)];
            let codes = &b.codes[j * 3..j * 3 + 3];
            let (band, decision, path) = (&self.bands[codes[0] as usize], &self.decisions[codes[1] as usize], &self.paths[codes[2] as usize]);
            let customer = &self.entities[b.customers[j] as usize];
            let merchant = &self.entities[b.merchants[j] as usize];
            let id = match b.id_offsets[j] {
                start if start >= 0 => Some(&b.id_bytes[start as usize..id_start(b.id_offsets[j + 1]) as usize]),
                _ => None,
            };
            let row = (b.first_row + j as u64) as f64;
            // Row, amount, risk and channel scores, formatted once for both lines.
            numbers.clear();
            for x in [row, b.amounts[j]].into_iter().chain(scores.iter().copied()) {
                numbers.put(x, &mut num);
            }
            let rows = self.reasons.channels().iter().enumerate().map(|(k, ch)| {
                let w = ch.features.len();
                (&b.values[k][j * w..(j + 1) * w], &b.phi[k][j * (w + 1)..(j + 1) * (w + 1)])
            });
            self.reasons.rank(rows, self.top, &mut top);
            for (r, ranked) in top.iter().enumerate() {
                rounded[r] = Reasons::reported(ranked);
                self.reasons.text(&mut texts[r], ranked, rounded[r], &mut num);
            }

            // The result line: JSON.stringify of the row (batch-score.ts `ResultRow`).
            json.extend_from_slice(b"{\"row\":");
            numbers.json(json, 0);
            if let Some(id) = id {
                json.extend_from_slice(b",\"transaction_id\":");
                json_string(json, id);
            }
            json.extend_from_slice(b",\"amount\":");
            numbers.json(json, 1);
            json.extend_from_slice(b",\"customer_id\":");
            json.extend_from_slice(&customer.json);
            json.extend_from_slice(b",\"merchant_id\":");
            json.extend_from_slice(&merchant.json);
            json.extend_from_slice(b",\"risk_score\":");
            numbers.json(json, 2);
            json.extend_from_slice(b",\"risk_band\":");
            json.extend_from_slice(&band.json);
            json.extend_from_slice(b",\"decision\":");
            json.extend_from_slice(&decision.json);
            json.extend_from_slice(b",\"path\":");
            json.extend_from_slice(&path.json);
            json.extend_from_slice(b",\"channel_scores\":{");
            for k in 0..c {
                if k > 0 {
                    json.push(b',');
                }
                json.extend_from_slice(&self.channel_keys[k]);
                numbers.json(json, 3 + k);
            }
            json.extend_from_slice(b"},\"top_reasons\":[");
            for (r, ranked) in top.iter().enumerate() {
                if r > 0 {
                    json.push(b',');
                }
                json.extend_from_slice(b"{\"feature\":");
                json.extend_from_slice(&self.feature_keys[ranked.channel][ranked.feature]);
                json.extend_from_slice(b",\"contribution\":");
                json_number(json, rounded[r], &mut num);
                json.extend_from_slice(b",\"text\":");
                json_string(json, &texts[r]);
                json.push(b'}');
            }
            json.extend_from_slice(b"],\"label\":");
            json.extend_from_slice(match b.labels[j] {
                0 => b"0".as_slice(),
                1 => b"1".as_slice(),
                _ => b"null".as_slice(),
            });
            json.extend_from_slice(b"}\n");

            // The download line (result-row.ts `downloadColumns(self.top)`).
            numbers.csv(csv, 0);
            csv.push(b',');
            if let Some(id) = id {
                csv_text(csv, id);
            }
            csv.push(b',');
            numbers.csv(csv, 1);
            csv.push(b',');
            csv.extend_from_slice(&customer.csv);
            csv.push(b',');
            csv.extend_from_slice(&merchant.csv);
            csv.push(b',');
            numbers.csv(csv, 2);
            for cell in [band, decision, path] {
                csv.push(b',');
                csv.extend_from_slice(&cell.csv);
            }
            for k in &self.csv_channels {
                csv.push(b',');
                if let Some(k) = *k {
                    numbers.csv(csv, 3 + k);
                }
            }
            // One cell per reason the format keeps (`texts` holds `self.top`), empty past the row's.
            for (r, text) in texts.iter().enumerate() {
                csv.push(b',');
                if r < top.len() {
                    csv_text(csv, text);
                }
            }
            csv.push(b',');
            match b.labels[j] {
                0 => csv.push(b'0'),
                1 => csv.push(b'1'),
                _ => {}
            }
            csv.extend_from_slice(b"\r\n");
        }
        Ok(())
    }
}

/// Where a packed id starts: stored as `-1 - start` when the row has none (records.ts).
fn id_start(offset: i32) -> i32 {
    if offset < 0 {
        -1 - offset
    } else {
        offset
    }
}

/// A number as `JSON.stringify` writes it (`null` when not finite).
fn json_number(out: &mut Vec<u8>, x: f64, num: &mut ryu_js::Buffer) {
    if x.is_finite() {
        out.extend_from_slice(num.format_finite(x).as_bytes());
    } else {
        out.extend_from_slice(b"null");
    }
}

/// A string as `JSON.stringify` writes it (valid UTF-8 in, so no lone surrogates to escape).
pub fn json_string(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    // Most strings need no escape: one pass that the compiler vectorises, then one copy.
    if !s.iter().fold(false, |any, &c| any | (c < 0x20) | (c == b'"') | (c == b'\\')) {
        out.extend_from_slice(s);
        out.push(b'"');
        return;
    }
    let mut from = 0;
    for (i, &c) in s.iter().enumerate() {
        let escape: &[u8] = match c {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&s[from..i]);
        if escape.is_empty() {
            let _ = write!(out, "\\u{c:04x}");
        } else {
            out.extend_from_slice(escape);
        }
        from = i + 1;
    }
    out.extend_from_slice(&s[from..]);
    out.push(b'"');
}

/// A text cell of the download: defused when a spreadsheet would run it as a formula (leading
/// `=`, `+`, `-`, `@`, tab or carriage return, prefixed with an apostrophe), quoted when it holds
/// a comma, quote or line break (result-row.ts).
pub fn csv_text(out: &mut Vec<u8>, s: &[u8]) {
    let formula = matches!(s.first(), Some(b'=' | b'+' | b'-' | b'@' | b'\t' | b'\r'));
    let quoted = s.iter().fold(false, |any, &c| any | (c == b'"') | (c == b',') | (c == b'\n') | (c == b'\r'));
    if quoted {
        out.push(b'"');
    }
    if formula {
        out.push(b'\'');
    }
    if quoted {
        for &c in s {
            if c == b'"' {
                out.push(b'"');
            }
            out.push(c);
        }
        out.push(b'"');
    } else {
        out.extend_from_slice(s);
    }
}

/// A row's numbers as `String(x)`, each written to both lines from one formatting.
#[derive(Default)]
struct Numbers {
    values: Vec<f64>,
    text: Vec<u8>,
    /// Where each number's text ends in `text`.
    ends: Vec<usize>,
}

impl Numbers {
    fn clear(&mut self) {
        self.values.clear();
        self.text.clear();
        self.ends.clear();
    }

    fn put(&mut self, x: f64, num: &mut ryu_js::Buffer) {
        self.values.push(x);
        self.text.extend_from_slice(num.format(x).as_bytes());
        self.ends.push(self.text.len());
    }

    fn text(&self, i: usize) -> &[u8] {
        &self.text[if i == 0 { 0 } else { self.ends[i - 1] }..self.ends[i]]
    }

    /// As `JSON.stringify` writes it: `null` when not finite.
    fn json(&self, out: &mut Vec<u8>, i: usize) {
        if self.values[i].is_finite() {
            out.extend_from_slice(self.text(i));
        } else {
            out.extend_from_slice(b"null");
        }
    }

    /// As a download cell: defused like text when negative (or NaN, which is text).
    fn csv(&self, out: &mut Vec<u8>, i: usize) {
        if self.values[i] >= 0.0 {
            out.extend_from_slice(self.text(i));
        } else {
            csv_text(out, self.text(i));
        }
    }
}
