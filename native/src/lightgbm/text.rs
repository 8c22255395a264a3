//! Reader of LightGBM's text model format (headers `version=v3` and `v4`).
//!
//! This step only turns text into typed fields and remembers the line each came from; it checks
//! that numbers parse and that array lengths agree with `num_leaves`. Whether the model is one the
//! engine supports, and whether the trees are well formed, is decided by `forest.rs`, which builds
//! the evaluation form from what this returns. Nothing here panics on bad input: every failure is an
//! `EngineError` with code `model_malformed` and the 1-based line where it was found.

use crate::error::{EngineError, ErrorCode, Result};
use std::collections::HashMap;
use std::str::FromStr;

/// The header of a model file, as written.
#[derive(Debug, Clone)]
pub struct Header {
    pub version: String,
    pub num_class: usize,
    pub num_tree_per_iteration: usize,
    pub max_feature_idx: i64,
    /// The whole `objective=` value, e.g. `binary sigmoid:1`.
    pub objective: String,
    pub objective_line: usize,
    pub version_line: usize,
    pub feature_names: Vec<String>,
    pub average_output: bool,
    /// `[linear_tree: 1]` in the parameters section, when present.
    pub linear_tree: bool,
}

/// One `Tree=N` block, as written.
#[derive(Debug, Clone)]
pub struct TreeText {
    /// Line of the `Tree=N` marker.
    pub line: usize,
    pub num_leaves: usize,
    pub num_cat: usize,
    pub split_feature: Vec<i64>,
    pub threshold: Vec<f64>,
    pub decision_type: Vec<i64>,
    pub left_child: Vec<i64>,
    pub right_child: Vec<i64>,
    pub leaf_value: Vec<f64>,
    pub leaf_count: Vec<f64>,
    pub internal_count: Vec<f64>,
    pub cat_boundaries: Vec<i64>,
    pub cat_threshold: Vec<u32>,
    pub is_linear: bool,
    /// Line of each field, for error messages raised by later checks.
    pub field_lines: HashMap<String, usize>,
}

impl TreeText {
    /// The line of a field, or of the tree marker when the field is absent.
    pub fn line_of(&self, field: &str) -> usize {
        self.field_lines.get(field).copied().unwrap_or(self.line)
    }
}

#[derive(Debug, Clone)]
pub struct ModelText {
    pub header: Header,
    pub trees: Vec<TreeText>,
}

fn malformed(line: usize, message: impl Into<String>) -> EngineError {
    EngineError::at_line(ErrorCode::ModelMalformed, line, message)
}

/// Parses one `key=value` field into a number, naming the field and line on failure.
fn scalar<T: FromStr>(value: &str, key: &str, line: usize) -> Result<T> {
    value
        .trim()
        .parse::<T>()
        .map_err(|_| malformed(line, format!("field `{key}` has a value that is not a number: {:?}", clip(value))))
}

/// Parses a space-separated array field of exactly `expected` numbers.
fn array<T: FromStr>(value: &str, key: &str, line: usize, expected: usize) -> Result<Vec<T>> {
    let mut out = Vec::with_capacity(expected);
    for token in value.split_ascii_whitespace() {
        out.push(parse_number::<T>(token).ok_or_else(|| {
            malformed(line, format!("field `{key}` contains a value that is not a number: {:?}", clip(token)))
        })?);
    }
    if out.len() != expected {
        return Err(malformed(
            line,
            format!("field `{key}` has {} values where {expected} were expected", out.len()),
        ));
    }
    Ok(out)
}

/// Numbers as LightGBM writes them: plain decimals, plus `inf`/`-inf`/`nan` spellings.
fn parse_number<T: FromStr>(token: &str) -> Option<T> {
    if let Ok(v) = token.parse::<T>() {
        return Some(v);
    }
    let normalised = match token.to_ascii_lowercase().as_str() {
        "inf" | "+inf" | "infinity" | "1.#inf" => "inf",
        "-inf" | "-infinity" | "-1.#inf" => "-inf",
        "nan" | "-nan" | "nan(ind)" | "-nan(ind)" => "NaN",
        _ => return None,
    };
    normalised.parse::<T>().ok()
}

fn clip(s: &str) -> String {
    s.chars().take(40).collect()
}

/// Splits the text into numbered lines, accepting `\n` and `\r\n` endings.
fn numbered_lines(text: &str) -> Vec<(usize, &str)> {
    text.split('\n').enumerate().map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l))).collect()
}

pub fn parse(text: &str) -> Result<ModelText> {
    let lines = numbered_lines(text);
    let mut pos = 0;

    // Skip leading blank lines, then expect the model kind `tree`.
    while pos < lines.len() && lines[pos].1.trim().is_empty() {
        pos += 1;
    }
    match lines.get(pos) {
        Some((_, l)) if l.trim() == "tree" => pos += 1,
        Some((n, l)) => {
            return Err(malformed(*n, format!("expected the model kind `tree` on the first line, found {:?}", clip(l))))
        }
        None => return Err(malformed(1, "the model text is empty")),
    }

    // Header: key=value lines (and bare flags such as `average_output`) until the first `Tree=`.
    let mut header_fields: HashMap<&str, (usize, &str)> = HashMap::new();
    let mut average_output = false;
    while pos < lines.len() {
        let (n, l) = lines[pos];
        if l.starts_with("Tree=") || l.trim() == "end of trees" {
            break;
        }
        pos += 1;
        let l = l.trim();
        if l.is_empty() {
            continue;
        }
        match l.split_once('=') {
            Some((k, v)) => {
                header_fields.insert(k, (n, v));
            }
            None if l == "average_output" => average_output = true,
            None => return Err(malformed(n, format!("header line is not `key=value`: {:?}", clip(l)))),
        }
    }
    let header_end_line = lines.get(pos).map(|x| x.0).unwrap_or(lines.len());
    let need = |key: &str| -> Result<(usize, &str)> {
        header_fields
            .get(key)
            .copied()
            .ok_or_else(|| malformed(header_end_line, format!("the header has no `{key}` field")))
    };

    let (version_line, version) = need("version")?;
    let (l, v) = need("num_class")?;
    let num_class: usize = scalar(v, "num_class", l)?;
    let num_tree_per_iteration: usize = match header_fields.get("num_tree_per_iteration") {
        Some(&(l, v)) => scalar(v, "num_tree_per_iteration", l)?,
        None => num_class,
    };
    let (l, v) = need("max_feature_idx")?;
    let max_feature_idx: i64 = scalar(v, "max_feature_idx", l)?;
    if max_feature_idx < 0 {
        return Err(malformed(l, "`max_feature_idx` is negative"));
    }
    let (objective_line, objective) = header_fields.get("objective").copied().unwrap_or((header_end_line, ""));
    let feature_names = header_fields
        .get("feature_names")
        .map(|(_, v)| v.split_ascii_whitespace().map(str::to_owned).collect())
        .unwrap_or_default();

    // Trees.
    let mut trees = Vec::new();
    let mut saw_end = false;
    while pos < lines.len() {
        let (n, l) = lines[pos];
        let t = l.trim();
        if t.is_empty() {
            pos += 1;
            continue;
        }
        if t == "end of trees" {
            saw_end = true;
            pos += 1;
            break;
        }
        let Some(index) = t.strip_prefix("Tree=") else {
            return Err(malformed(n, format!("expected `Tree=<n>` or `end of trees`, found {:?}", clip(t))));
        };
        let index: usize = scalar(index, "Tree", n)?;
        if index != trees.len() {
            return Err(malformed(n, format!("tree {index} is out of order: expected tree {}", trees.len())));
        }
        pos += 1;
        let mut fields: HashMap<String, (usize, &str)> = HashMap::new();
        while pos < lines.len() {
            let (fl, text) = lines[pos];
            let text = text.trim();
            if text.is_empty() || text.starts_with("Tree=") || text == "end of trees" {
                break;
            }
            pos += 1;
            let Some((k, v)) = text.split_once('=') else {
                return Err(malformed(fl, format!("tree field is not `key=value`: {:?}", clip(text))));
            };
            fields.insert(k.to_owned(), (fl, v));
        }
        trees.push(tree_from_fields(n, &fields)?);
    }
    if !saw_end {
        let last = lines.len().max(1);
        return Err(malformed(last, "the model text ends before `end of trees` (truncated file?)"));
    }

    // Parameters: only `linear_tree` matters here (a header flag in some versions, a parameter in others).
    let mut linear_tree = header_fields.get("linear_tree").map(|(_, v)| v.trim() == "1" || v.trim() == "true").unwrap_or(false);
    for &(_, l) in &lines[pos..] {
        if let Some(v) = l.trim().strip_prefix("[linear_tree: ") {
            let v = v.trim_end_matches(']').trim();
            linear_tree |= v == "1" || v == "true";
        }
    }

    Ok(ModelText {
        header: Header {
            version: version.trim().to_owned(),
            num_class,
            num_tree_per_iteration,
            max_feature_idx,
            objective: objective.trim().to_owned(),
            objective_line,
            version_line,
            feature_names,
            average_output,
            linear_tree,
        },
        trees,
    })
}

fn tree_from_fields(line: usize, fields: &HashMap<String, (usize, &str)>) -> Result<TreeText> {
    let get = |key: &str| -> Result<(usize, &str)> {
        fields.get(key).copied().ok_or_else(|| malformed(line, format!("tree has no `{key}` field")))
    };
    let (l, v) = get("num_leaves")?;
    let num_leaves: usize = scalar(v, "num_leaves", l)?;
    if num_leaves == 0 {
        return Err(malformed(l, "`num_leaves` is 0"));
    }
    let num_cat: usize = match fields.get("num_cat") {
        Some(&(l, v)) => scalar(v, "num_cat", l)?,
        None => 0,
    };
    let is_linear = match fields.get("is_linear") {
        Some(&(l, v)) => scalar::<i64>(v, "is_linear", l)? != 0,
        None => false,
    };
    let internal = num_leaves - 1;
    let arr_f64 = |key: &str, n: usize| -> Result<Vec<f64>> {
        if n == 0 && !fields.contains_key(key) {
            return Ok(Vec::new());
        }
        let (l, v) = get(key)?;
        array(v, key, l, n)
    };
    let arr_i64 = |key: &str, n: usize| -> Result<Vec<i64>> {
        if n == 0 && !fields.contains_key(key) {
            return Ok(Vec::new());
        }
        let (l, v) = get(key)?;
        array(v, key, l, n)
    };

    let leaf_value = arr_f64("leaf_value", num_leaves)?;
    // Counts are the covers TreeSHAP needs; models from very old versions lack them only for 1-leaf trees.
    let leaf_count = if num_leaves == 1 && !fields.contains_key("leaf_count") {
        vec![0.0]
    } else {
        arr_f64("leaf_count", num_leaves)?
    };
    let (cat_boundaries, cat_threshold) = if num_cat > 0 {
        let boundaries = arr_i64("cat_boundaries", num_cat + 1)?;
        let (l, v) = get("cat_threshold")?;
        let expected = v.split_ascii_whitespace().count();
        (boundaries, array::<u32>(v, "cat_threshold", l, expected)?)
    } else {
        (Vec::new(), Vec::new())
    };

    Ok(TreeText {
        line,
        num_leaves,
        num_cat,
        split_feature: arr_i64("split_feature", internal)?,
        threshold: arr_f64("threshold", internal)?,
        decision_type: arr_i64("decision_type", internal)?,
        left_child: arr_i64("left_child", internal)?,
        right_child: arr_i64("right_child", internal)?,
        leaf_value,
        leaf_count,
        internal_count: arr_f64("internal_count", internal)?,
        cat_boundaries,
        cat_threshold,
        is_linear,
        field_lines: fields.iter().map(|(k, (l, _))| (k.clone(), *l)).collect(),
    })
}
