//! The result lines' formatting helpers against values whose JavaScript rendering is known (the
//! whole lines are compared with a plain JavaScript rendering in test/jobs/result-lines.test.ts).

use fraud_engine::lines::{csv_text, json_string};
use fraud_engine::reasons::js_round;

fn json(s: &str) -> String {
    let mut out = Vec::new();
    json_string(&mut out, s.as_bytes());
    String::from_utf8(out).unwrap()
}

fn csv(s: &str) -> String {
    let mut out = Vec::new();
    csv_text(&mut out, s.as_bytes());
    String::from_utf8(out).unwrap()
}

#[test]
fn math_round_takes_halves_toward_positive_infinity() {
    assert_eq!(js_round(2.5), 3.0);
    assert_eq!(js_round(-2.5), -2.0);
    assert_eq!(js_round(0.49999999999999994), 0.0);
    assert_eq!(js_round(-0.4), 0.0);
    assert_eq!(js_round(f64::INFINITY), f64::INFINITY);
    assert!(js_round(f64::NAN).is_nan());
    assert_eq!(js_round(4503599627370497.0), 4503599627370497.0);
}

#[test]
fn json_strings_are_escaped_as_json_stringify_does() {
    assert_eq!(json("plain"), "\"plain\"");
    assert_eq!(json("say \"hi\"\\"), "\"say \\\"hi\\\"\\\\\"");
    assert_eq!(json("\u{8}\u{c}\n\r\t\u{1}\u{1f}"), "\"\\b\\f\\n\\r\\t\\u0001\\u001f\"");
    // Neither DEL nor the line separators are escaped; other text passes through as UTF-8.
    assert_eq!(json("\u{7f}\u{2028}€日本"), "\"\u{7f}\u{2028}€日本\"");
}

#[test]
fn download_cells_are_defused_and_quoted() {
    assert_eq!(csv("plain"), "plain");
    assert_eq!(csv("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
    for lead in ["+1", "-2", "@SUM(A1)", "\tx"] {
        assert_eq!(csv(lead), format!("'{lead}"));
    }
    assert_eq!(csv("\rx"), "\"'\rx\"");
    assert_eq!(csv("a,b"), "\"a,b\"");
    assert_eq!(csv("line\nbreak"), "\"line\nbreak\"");
    assert_eq!(csv(""), "");
}
