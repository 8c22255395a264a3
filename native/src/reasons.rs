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

/// The kinds of value a reason shows, each with the name a reason setup gives it: the one list of
/// them. `Kind` below is made from it, and so is the TypeScript type `ReasonKind` (index.d.ts,
/// bindings/reasons.rs) that src/scoring/explain.ts describes each feature with.
macro_rules! reason_kinds {
    ($then:ident! $($args:tt)*) => {
        $then! { $($args)* [
            /// `toFixed(2)`: "250.00".
            Money "money",
            /// Rounded to a whole number.
            Count "count",
            /// `toFixed(1)` and "×".
            Ratio "ratio",
            /// A fraction as a percentage, `toFixed(1)` and " %".
            Rate "rate",
            /// "yes" from 0.5, else "no".
            Flag "flag",
            /// Hours as "hh:mm".
            Hour "hour",
            /// A weekday's name by its number (0: the first of the setup's weekdays).
            Weekday "weekday",
            /// `ln(1 + seconds)` as seconds, minutes, hours or days.
            SecondsLog "seconds_log",
            /// A payment type's name by its code.
            PaymentType "payment_type",
            /// Whole numbers as they are, others `toFixed(3)`.
            Number "number",
        ] }
    };
}
#[cfg_attr(not(feature = "node"), allow(unused_imports))]
pub(crate) use reason_kinds;

reason_kinds!(named_enum!
    /// How a feature's value is shown in a reason.
    pub enum Kind);

/// Which way a reason moved the risk, as a score response names it: the one list. `Direction` is
/// made from it, and so is the TypeScript type `ReasonDirection` (index.d.ts), whose names
/// src/scoring/explain.ts reads once from the addon (`reasonDirections()`).
macro_rules! reason_directions {
    ($then:ident! $($args:tt)*) => {
        $then! { $($args)* [
            /// The contribution as reported is ≥ 0 (−0 too: it "added 0.00").
            Increases "increases",
            /// The contribution as reported is < 0.
            Decreases "decreases",
        ] }
    };
}
#[cfg_attr(not(feature = "node"), allow(unused_imports))]
pub(crate) use reason_directions;

reason_directions!(named_enum!
    /// Which way a reason moved the risk.
    pub enum Direction);

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

    /// The direction of a reason with this reported contribution (−0 increases: it "added 0.00").
    pub fn direction(reported: f64) -> Direction {
        if reported >= 0.0 {
            Direction::Increases
        } else {
            Direction::Decreases
        }
    }

    /// A reason's sentence into `out` (cleared first), for its reported contribution.
    pub fn text(&self, out: &mut Vec<u8>, r: &Ranked, reported: f64, num: &mut ryu_js::Buffer) {
        let feature = self.feature(r);
        out.clear();
        out.extend_from_slice(feature.display.as_bytes());
        out.extend_from_slice(b" (");
        self.format_value(out, r.value, feature.kind, num);
        let (verb, preposition): (&[u8], &[u8]) = match Reasons::direction(reported) {
            Direction::Increases => (b") added ", b" to the log-odds of fraud"),
            Direction::Decreases => (b") took ", b" from the log-odds of fraud"),
        };
        out.extend_from_slice(verb);
        out.extend_from_slice(num.format_to_fixed(reported.abs(), 2).as_bytes());
        out.extend_from_slice(preposition);
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
