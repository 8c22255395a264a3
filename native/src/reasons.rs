//! A decision's reasons: which features' contributions (TreeSHAP value × the channel's stack
//! weight, exact in stacked log-odds) are reported, in what order, and in what words ("Amount
//! (250.00) added 0.83 to the log-odds of fraud"). This is the only definition of them: the batch
//! job's result lines (lines.rs) and the single-request scorer (through the `Reasons` binding and
//! src/scoring/explain.ts) both rank and word with it, configured from the same per-feature
//! descriptors (display name and kind of value, src/scoring/explain.ts).
//!
//! The text is what JavaScript would make of the same numbers (`toFixed` and `String(x)` through
//! `ryu-js`, `Math.round` halves toward +∞, `list[v]` lookups), so that it reads the same as the
//! rest of the service's JSON.

/// How a feature's value is shown in a reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Money,
    Count,
    Ratio,
    Rate,
    Flag,
    Hour,
    Weekday,
    SecondsLog,
    PaymentType,
    Number,
}

impl Kind {
    pub fn parse(name: &str) -> Option<Kind> {
        Some(match name {
            "money" => Kind::Money,
            "count" => Kind::Count,
            "ratio" => Kind::Ratio,
            "rate" => Kind::Rate,
            "flag" => Kind::Flag,
            "hour" => Kind::Hour,
            "weekday" => Kind::Weekday,
            "seconds_log" => Kind::SecondsLog,
            "payment_type" => Kind::PaymentType,
            "number" => Kind::Number,
            _ => return None,
        })
    }
}

/// One model feature: its name (ties between equal contributions go to the smaller name) and how
/// a person reads it.
pub struct Feature {
    pub name: String,
    pub display: String,
    pub kind: Kind,
}

impl Feature {
    pub fn new(name: &str, display: &str, kind: Kind) -> Feature {
        Feature { name: name.to_owned(), display: display.to_owned(), kind }
    }
}

/// One channel booster: its stack weight and its features in order.
pub struct Channel {
    pub weight: f64,
    pub features: Vec<Feature>,
}

/// A feature being ranked: (channel, index), its value and its contribution (unrounded).
#[derive(Clone, Copy, Debug)]
pub struct Ranked {
    pub channel: usize,
    pub feature: usize,
    pub value: f64,
    pub contribution: f64,
}

/// One reason, owned (for callers outside the hot paths: tests, tools).
#[derive(Clone, Debug, PartialEq)]
pub struct Reason {
    pub feature: String,
    /// The contribution as reported: to 1e-6.
    pub contribution: f64,
    pub text: String,
}

/// Why a row could not be explained (its values disagree with the channels' widths).
#[derive(Debug)]
pub struct ReasonsError(pub String);

impl std::fmt::Display for ReasonsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The channels' features and the names some kinds of value are shown with.
pub struct Reasons {
    channels: Vec<Channel>,
    payment_types: Vec<String>,
    weekdays: Vec<String>,
}

impl Reasons {
    pub fn new(channels: Vec<Channel>, payment_types: Vec<String>, weekdays: Vec<String>) -> Reasons {
        Reasons { channels, payment_types, weekdays }
    }

    pub fn channels(&self) -> &[Channel] {
        &self.channels
    }

    pub fn feature(&self, r: &Ranked) -> &Feature {
        &self.channels[r.channel].features[r.feature]
    }

    /// Values in one row as `rank_row` reads it: per channel, its feature values, then as many
    /// SHAP values.
    pub fn row_width(&self) -> usize {
        self.channels.iter().map(|c| 2 * c.features.len()).sum()
    }

    /// The `n` largest contributions into `top`, largest magnitude first, ties by feature name;
    /// zero contributions are never reasons. `rows` gives per channel its feature values and SHAP
    /// values (at least as many as it has features; the expected value after them is not read).
    pub fn rank<'a>(&self, rows: impl Iterator<Item = (&'a [f64], &'a [f64])>, n: usize, top: &mut Vec<Ranked>) {
        top.clear();
        for ((k, ch), (values, phi)) in self.channels.iter().enumerate().zip(rows) {
            for (f, (&value, &p)) in values.iter().zip(&phi[..ch.features.len()]).enumerate() {
                let candidate = Ranked { channel: k, feature: f, value, contribution: ch.weight * p };
                if candidate.contribution == 0.0 {
                    continue;
                }
                // Before the first it ranks ahead of (after any it ties with), if within the top.
                let at = top.iter().position(|t| self.ranks_before(&candidate, t)).unwrap_or(top.len());
                if at < n {
                    top.insert(at, candidate);
                    top.truncate(n);
                }
            }
        }
    }

    /// `rank` over one row laid out as `row_width` says.
    pub fn rank_row(&self, row: &[f64], n: usize, top: &mut Vec<Ranked>) -> Result<(), ReasonsError> {
        if row.len() != self.row_width() {
            return Err(ReasonsError(format!("reasons: a row of {} values, not the {} of the channels' features and SHAP values", row.len(), self.row_width())));
        }
        let mut at = 0;
        let rows = self.channels.iter().map(|c| {
            let w = c.features.len();
            at += 2 * w;
            (&row[at - 2 * w..at - w], &row[at - w..at])
        });
        self.rank(rows, n, top);
        Ok(())
    }

    /// Larger magnitude first; equal magnitudes by feature name.
    fn ranks_before(&self, a: &Ranked, b: &Ranked) -> bool {
        let d = a.contribution.abs() - b.contribution.abs();
        d > 0.0 || (d == 0.0 && self.feature(a).name < self.feature(b).name)
    }

    /// The contribution a reason reports: rounded to 1e-6 (`Math.round(c * 1e6) / 1e6`). The
    /// text and the direction are those of this rounded value.
    pub fn reported(r: &Ranked) -> f64 {
        js_round(r.contribution * 1e6) / 1e6
    }

    /// Whether a reason with this reported contribution increases the risk (−0 does: it "added
    /// 0.00").
    pub fn increases(reported: f64) -> bool {
        reported >= 0.0
    }

    /// A reason's sentence into `out` (cleared first), for its reported contribution.
    pub fn text(&self, out: &mut Vec<u8>, r: &Ranked, reported: f64, num: &mut ryu_js::Buffer) {
        let feature = self.feature(r);
        out.clear();
        out.extend_from_slice(feature.display.as_bytes());
        out.extend_from_slice(b" (");
        self.format_value(out, r.value, feature.kind, num);
        let up = Reasons::increases(reported);
        out.extend_from_slice(if up { b") added " } else { b") took " });
        out.extend_from_slice(num.format_to_fixed(reported.abs(), 2).as_bytes());
        out.extend_from_slice(if up { b" to the log-odds of fraud" } else { b" from the log-odds of fraud" });
    }

    /// The top `n` reasons of one row (`rank_row`'s layout), owned.
    pub fn explain(&self, row: &[f64], n: usize) -> Result<Vec<Reason>, ReasonsError> {
        let mut top = Vec::with_capacity(n + 1);
        self.rank_row(row, n, &mut top)?;
        let mut num = ryu_js::Buffer::new();
        let mut text = Vec::new();
        Ok(top
            .iter()
            .map(|r| {
                let contribution = Reasons::reported(r);
                self.text(&mut text, r, contribution, &mut num);
                Reason { feature: self.feature(r).name.clone(), contribution, text: String::from_utf8_lossy(&text).into_owned() }
            })
            .collect())
    }

    /// A feature's value for a person.
    fn format_value(&self, out: &mut Vec<u8>, v: f64, kind: Kind, num: &mut ryu_js::Buffer) {
        if v.is_nan() {
            // A flag or a payment type is missing when the request left its field out (or gave a
            // payment type the model does not code); anything else, when there was no history.
            out.extend_from_slice(if matches!(kind, Kind::Flag | Kind::PaymentType) { b"not given" } else { b"no history" });
            return;
        }
        match kind {
            Kind::Money => out.extend_from_slice(num.format_to_fixed(v, 2).as_bytes()),
            Kind::Count => out.extend_from_slice(num.format(js_round(v)).as_bytes()),
            Kind::Ratio => {
                out.extend_from_slice(num.format_to_fixed(v, 1).as_bytes());
                out.extend_from_slice("×".as_bytes());
            }
            Kind::Rate => {
                out.extend_from_slice(num.format_to_fixed(v * 100.0, 1).as_bytes());
                out.extend_from_slice(b" %");
            }
            Kind::Flag => out.extend_from_slice(if v >= 0.5 { b"yes" } else { b"no" }),
            Kind::Hour => {
                let h = v.floor();
                pad2(out, num.format(h));
                out.push(b':');
                pad2(out, num.format(js_round((v - h) * 60.0)));
            }
            Kind::Weekday => match index_of(v, self.weekdays.len()) {
                Some(i) => out.extend_from_slice(self.weekdays[i].as_bytes()),
                None => out.extend_from_slice(num.format(v).as_bytes()),
            },
            Kind::PaymentType => match index_of(v, self.payment_types.len()) {
                Some(i) => out.extend_from_slice(self.payment_types[i].as_bytes()),
                None => out.extend_from_slice(b"unknown"),
            },
            Kind::SecondsLog => {
                let s = v.exp_m1();
                let (amount, unit): (f64, &[u8]) = if s < 120.0 {
                    (s, b" s")
                } else if s < 7200.0 {
                    (s / 60.0, b" min")
                } else if s < 172_800.0 {
                    (s / 3600.0, b" h")
                } else {
                    (s / 86_400.0, b" days")
                };
                out.extend_from_slice(num.format(js_round(amount)).as_bytes());
                out.extend_from_slice(unit);
            }
            Kind::Number => {
                if v.is_finite() && v.trunc() == v {
                    out.extend_from_slice(num.format(v).as_bytes());
                } else {
                    out.extend_from_slice(num.format_to_fixed(v, 3).as_bytes());
                }
            }
        }
    }
}

/// `Math.round`: the nearest integer, halves toward +∞.
pub fn js_round(x: f64) -> f64 {
    let f = x.floor();
    // Exact for every finite double; NaN for ±∞, which then stay as they are.
    if x - f >= 0.5 {
        f + 1.0
    } else if x.is_finite() {
        f
    } else {
        x
    }
}

/// The index an array lookup `list[v]` would find: `v` an integer (−0 included) within the list.
fn index_of(v: f64, len: usize) -> Option<usize> {
    (v.trunc() == v && v >= 0.0 && v < len as f64).then_some(v as usize)
}

/// `String(x).padStart(2, '0')`.
fn pad2(out: &mut Vec<u8>, s: &str) {
    if s.len() < 2 {
        out.resize(out.len() + 2 - s.len(), b'0');
    }
    out.extend_from_slice(s.as_bytes());
}
