//! A scored batch's result lines, written as bytes next to the SHAP values that explain them: for
//! each row its top reasons (ranked and worded by reasons.rs, as the single-request path's are),
//! one JSON line for the result pages and one CSV line for the download.
//!
//! Made here rather than in JavaScript because building and encoding a row's text there is a
//! large part of a job's time (bench/README.md, bench:batch). A result row's fields are listed
//! once (`result_fields!`): the JSON line is byte for byte `JSON.stringify` of the row, its keys
//! in that order, and the download has their columns in the same order (`LineFormat::header`: one
//! score column per channel, one reason cell per reason the format keeps), every cell a
//! spreadsheet would run as a formula defused. TypeScript reads the header from the writer and
//! types a result line with `ResultRow`, generated from the same list into index.d.ts.

use crate::reasons::{Ranked, Reasons};
use std::io::Write;

/// A result row's fields, in the order the JSON line writes its keys and the download its
/// columns: the one definition of them. Each has its key, its TypeScript type and, for a key a
/// line may leave out, `optional`. `Field` below is made from it, and so is the TypeScript type
/// `ResultRow` (bindings/result_lines.rs, in index.d.ts). Docs are written as attributes so that
/// napi-rs copies them into index.d.ts (a `///` comment inside a macro reaches it as a raw string).
macro_rules! result_fields {
    ($then:ident! $($args:tt)*) => {
        $then! { $($args)* [
            #[doc = "The row's number in the file, from 1."]
            Row "row" ("number"),
            #[doc = "The row's transaction id; the key is left out when the file has none for the row."]
            TransactionId "transaction_id" ("string" optional),
            Amount "amount" ("number"),
            CustomerId "customer_id" ("string"),
            MerchantId "merchant_id" ("string"),
            RiskScore "risk_score" ("number"),
            RiskBand "risk_band" ("string"),
            Decision "decision" ("string"),
            #[doc = "`COLD_START` when the row's entities had too little history for the model."]
            Path "path" ("'MODEL' | 'COLD_START'"),
            #[doc = "Each channel's score by its name; in the download, one `score_<channel>` column per channel."]
            ChannelScores "channel_scores" ("Record<string, number>"),
            #[doc = "The row's top reasons, largest contribution first; in the download, one `reason_<n>` cell per reason the job keeps (the text)."]
            TopReasons "top_reasons" ("Array<{ feature: string; contribution: number; text: string }>"),
            #[doc = "The row's outcome when the file gives it."]
            Label "label" ("0 | 1 | null"),
        ] }
    };
}
#[cfg_attr(not(feature = "node"), allow(unused_imports))]
pub(crate) use result_fields;

result_fields!(named_enum!
    /// A field of a result row (`name()`: its key).
    pub enum Field);

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
    /// Per field, its key as the JSON line writes it after another: `,"amount":`.
    json_keys: Vec<Vec<u8>>,
    /// The download's header line.
    header: String,
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
        let json_keys = Field::ALL
            .iter()
            .map(|f| {
                let mut key = vec![b','];
                key.extend(json(f.name()));
                key.push(b':');
                key
            })
            .collect();
        let mut columns = Vec::new();
        for &field in Field::ALL {
            match field {
                Field::ChannelScores => columns.extend(csv_channels.iter().map(|c| format!("score_{c}"))),
                Field::TopReasons => columns.extend((1..=top).map(|r| format!("reason_{r}"))),
                _ => columns.push(field.name().to_owned()),
            }
        }
        let header = columns.join(",") + "\r\n";
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
            json_keys,
            header,
        })
    }

    /// Reason cells in each download line.
    pub fn top(&self) -> usize {
        self.top
    }

    /// The download's header line (CRLF-ended): each field's key in order, `channel_scores` as
    /// `score_<channel>` for each of the download's channels and `top_reasons` as `reason_1` to
    /// `reason_<top>`.
    pub fn header(&self) -> &str {
        &self.header
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

            // Both lines, field by field in the list's order: the JSON line is JSON.stringify of
            // the row (a key left out when it has no value); in the download line every cell is
            // followed by a comma, the last one replaced by the line's end.
            json.push(b'{');
            let mut first = true;
            for (i, &field) in Field::ALL.iter().enumerate() {
                let key = &self.json_keys[i];
                match field {
                    Field::Row => {
                        json_key(json, key, &mut first);
                        numbers.json(json, 0);
                        numbers.csv(csv, 0);
                    }
                    Field::TransactionId => {
                        if let Some(id) = id {
                            json_key(json, key, &mut first);
                            json_string(json, id);
                            csv_text(csv, id);
                        }
                    }
                    Field::Amount => {
                        json_key(json, key, &mut first);
                        numbers.json(json, 1);
                        numbers.csv(csv, 1);
                    }
                    Field::CustomerId | Field::MerchantId | Field::RiskBand | Field::Decision | Field::Path => {
                        let cell = match field {
                            Field::CustomerId => customer,
                            Field::MerchantId => merchant,
                            Field::RiskBand => band,
                            Field::Decision => decision,
                            _ => path,
                        };
                        json_key(json, key, &mut first);
                        json.extend_from_slice(&cell.json);
                        csv.extend_from_slice(&cell.csv);
                    }
                    Field::RiskScore => {
                        json_key(json, key, &mut first);
                        numbers.json(json, 2);
                        numbers.csv(csv, 2);
                    }
                    Field::ChannelScores => {
                        json_key(json, key, &mut first);
                        json.push(b'{');
                        for k in 0..c {
                            if k > 0 {
                                json.push(b',');
                            }
                            json.extend_from_slice(&self.channel_keys[k]);
                            numbers.json(json, 3 + k);
                        }
                        json.push(b'}');
                        // The download's score columns, each empty when the model has no such channel.
                        for k in &self.csv_channels {
                            if let Some(k) = *k {
                                numbers.csv(csv, 3 + k);
                            }
                            csv.push(b',');
                        }
                        continue;
                    }
                    Field::TopReasons => {
                        json_key(json, key, &mut first);
                        json.push(b'[');
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
                        json.push(b']');
                        // One cell per reason the format keeps (`texts` holds `self.top`), empty
                        // past the row's.
                        for (r, text) in texts.iter().enumerate() {
                            if r < top.len() {
                                csv_text(csv, text);
                            }
                            csv.push(b',');
                        }
                        continue;
                    }
                    Field::Label => {
                        json_key(json, key, &mut first);
                        let (json_label, csv_label): (&[u8], &[u8]) = match b.labels[j] {
                            0 => (b"0", b"0"),
                            1 => (b"1", b"1"),
                            _ => (b"null", b""),
                        };
                        json.extend_from_slice(json_label);
                        csv.extend_from_slice(csv_label);
                    }
                }
                // The field's one cell.
                csv.push(b',');
            }
            json.extend_from_slice(b"}\n");
            // There is always a cell (the row's number), so always a comma to replace.
            csv.pop();
            csv.extend_from_slice(b"\r\n");
        }
        Ok(())
    }
}

/// A field's key (`,"amount":`) into a JSON line, without its comma when it is the line's first.
fn json_key(json: &mut Vec<u8>, key: &[u8], first: &mut bool) {
    json.extend_from_slice(&key[*first as usize..]);
    *first = false;
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
