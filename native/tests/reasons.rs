//! Reasons (reasons.rs) as both paths get them: a single row through `explain`, a batch through
//! the result lines, ranked and worded by the same code. The wording of every kind of value against
//! JavaScript's own rendering is in test/jobs/result-lines.test.ts.

use fraud_engine::lines::{Batch, LineFormat, NO_LABEL};
use fraud_engine::reasons::{Channel, Feature, Kind, Reason, Reasons};

fn setup() -> Reasons {
    let channel = |weight: f64, features: &[(&str, &str, Kind)]| Channel { weight, features: features.iter().map(|(n, d, k)| Feature::new(n, d, *k)).collect() };
    Reasons::new(
        vec![
            channel(1.0, &[("amount", "Amount", Kind::Money), ("hour", "Hour of day (UTC)", Kind::Hour), ("weekday", "Day of week", Kind::Weekday)]),
            channel(-2.0, &[("payment_type", "Payment type", Kind::PaymentType), ("b_count", "Earlier payments", Kind::Count)]),
        ],
        vec!["card".into(), "wallet".into()],
        vec!["Sunday".into(), "Monday".into()],
    )
}

/// One row in `explain`'s layout: per channel, values then SHAP values.
const ROW: [f64; 10] = [250.0, 12.5, 1.0, 0.415, 0.0, -0.25, 1.0, 3.4, 0.125, -0.0000004];

#[test]
fn a_row_s_reasons_are_ranked_by_magnitude_then_name_and_worded() {
    let reasons = setup().explain(&ROW, 5).unwrap();
    let texts: Vec<&str> = reasons.iter().map(|r| r.text.as_str()).collect();
    // amount 0.415; weekday -0.25 and payment_type -2 × 0.125, a tie the smaller name wins;
    // b_count -2 × -4e-7, reported as 1e-6; hour's zero is no reason.
    assert_eq!(
        texts,
        [
            "Amount (250.00) added 0.41 to the log-odds of fraud",
            "Payment type (wallet) took 0.25 from the log-odds of fraud",
            "Day of week (Monday) took 0.25 from the log-odds of fraud",
            "Earlier payments (3) added 0.00 to the log-odds of fraud",
        ]
    );
    let contributions: Vec<f64> = reasons.iter().map(|r| r.contribution).collect();
    assert_eq!(contributions, [0.415, -0.25, -0.25, 0.000001]);
    assert_eq!(setup().explain(&ROW, 2).unwrap(), reasons[..2].to_vec());
    assert!(setup().explain(&ROW, 0).unwrap().is_empty());
}

#[test]
fn a_row_of_the_wrong_width_is_refused() {
    assert_eq!(setup().row_width(), 10);
    assert!(setup().explain(&ROW[..9], 3).is_err());
}

#[test]
fn a_batch_row_s_reasons_are_the_single_row_s_and_the_download_has_top_cells() {
    for top in [1, 3, 5] {
        let format = LineFormat::new(setup(), &["a".into(), "b".into()], &["a", "b"], &["low".into()], &["approve".into()], &["MODEL".into()], &["C".into()], top).unwrap();
        // The batch's matrices: the same row, SHAP values with the expected value after them.
        let (values, phi): (Vec<Vec<f64>>, Vec<Vec<f64>>) = (vec![ROW[0..3].to_vec(), ROW[6..8].to_vec()], vec![[&ROW[3..6], &[-1.0][..]].concat(), [&ROW[8..10], &[-1.0][..]].concat()]);
        let batch = Batch {
            first_row: 1,
            values: values.iter().map(|v| &v[..]).collect(),
            phi: phi.iter().map(|v| &v[..]).collect(),
            scores: &[0.5, 0.5, 0.5],
            codes: &[0, 0, 0],
            amounts: &[1.0],
            labels: &[NO_LABEL],
            customers: &[0],
            merchants: &[0],
            id_bytes: b"",
            id_offsets: &[-1, -1],
        };
        let (mut json, mut csv, mut starts) = (Vec::new(), Vec::new(), [0.0]);
        format.write(&batch, 1, &mut json, &mut csv, 0.0, &mut starts).unwrap();
        let json = String::from_utf8(json).unwrap();
        let single: Vec<Reason> = setup().explain(&ROW, top).unwrap();
        let listed: String = single.iter().map(|r| format!("{{\"feature\":\"{}\",\"contribution\":{},\"text\":\"{}\"}}", r.feature, r.contribution, r.text)).collect::<Vec<_>>().join(",");
        assert!(json.contains(&format!("\"top_reasons\":[{listed}]")), "top {top}: {json}");
        // 9 fixed cells, 2 score cells, `top` reason cells, the label.
        let csv = String::from_utf8(csv).unwrap();
        let cells = csv.trim_end().split(',').count();
        assert_eq!(cells, 9 + 2 + top + 1, "top {top}: {csv}");
        assert_eq!(format.header().trim_end().split(',').count(), cells, "top {top}: as many columns in the header");
    }
}

#[test]
fn the_download_header_names_a_row_s_fields_in_order() {
    let format = LineFormat::new(setup(), &["a".into(), "b".into()], &["a", "x", "b"], &["low".into()], &["approve".into()], &["MODEL".into()], &["C".into()], 2).unwrap();
    assert_eq!(format.header(), "row,transaction_id,amount,customer_id,merchant_id,risk_score,risk_band,decision,path,score_a,score_x,score_b,reason_1,reason_2,label\r\n");
    let none = LineFormat::new(setup(), &["a".into(), "b".into()], &[], &["low".into()], &["approve".into()], &["MODEL".into()], &["C".into()], 0).unwrap();
    assert_eq!(none.header(), "row,transaction_id,amount,customer_id,merchant_id,risk_score,risk_band,decision,path,label\r\n");
}
