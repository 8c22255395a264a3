//! A loaded model: the checked forest, its compiled node array and its SHAP tables, built once.
//!
//! This is the object the scoring path holds. It is immutable after `Model::from_text`, so one
//! instance is shared (through `registry.rs`) by every thread of the process. Every public entry
//! point checks its input shape and returns an `EngineError` rather than panicking.

use crate::error::{EngineError, ErrorCode, Result};
use crate::forest::{Forest, Objective};
use crate::lightgbm::text;
use crate::predict::Compiled;
use crate::shap::Shap;

pub struct Model {
    pub forest: Forest,
    pub compiled: Compiled,
    pub shap: Shap,
}

impl Model {
    pub fn from_text(model_text: &str) -> Result<Model> {
        Model::with_table_bits(model_text, crate::shap::MAX_TABLE_BITS)
    }

    /// As `from_text`, tabulating SHAP only for leaves with at most `table_bits` distinct path
    /// features (memory against speed: see docs/engine.md).
    pub fn with_table_bits(model_text: &str, table_bits: usize) -> Result<Model> {
        let forest = Forest::from_text(text::parse(model_text)?)?;
        let compiled = Compiled::new(&forest);
        let shap = Shap::with_table_bits(&forest, &compiled, Some(table_bits.min(crate::shap::MAX_TABLE_BITS)));
        Ok(Model { forest, compiled, shap })
    }

    pub fn num_features(&self) -> usize {
        self.forest.num_features
    }

    pub fn num_trees(&self) -> usize {
        self.forest.trees.len()
    }

    pub fn objective_name(&self) -> &'static str {
        match self.forest.objective {
            Objective::Binary { .. } => "binary",
            Objective::Regression => "regression",
        }
    }

    /// Bytes held by the evaluation form, the compiled nodes and the SHAP tables.
    pub fn memory_bytes(&self) -> usize {
        let forest: usize = self
            .forest
            .trees
            .iter()
            .map(|t| {
                t.split_feature.len() * 4
                    + (t.threshold.len() + t.leaf_value.len() + t.leaf_count.len() + t.internal_count.len()) * 8
                    + t.split.len() * std::mem::size_of::<crate::forest::Split>()
                    + (t.left.len() + t.right.len()) * std::mem::size_of::<crate::forest::Child>()
                    + (t.cat_boundaries.len() + t.cat_threshold.len()) * 4
            })
            .sum();
        forest + self.compiled.memory_bytes() + self.shap.memory_bytes()
    }

    /// Number of rows in a row-major matrix, or an `invalid_input` error.
    pub fn rows_in(&self, data: &[f64]) -> Result<usize> {
        let nf = self.num_features();
        if data.len() % nf != 0 {
            return Err(EngineError::new(
                ErrorCode::InvalidInput,
                format!("{} values is not a whole number of rows of {nf} features", data.len()),
            ));
        }
        Ok(data.len() / nf)
    }

    fn check_row(&self, row: &[f64]) -> Result<()> {
        if row.len() != self.num_features() {
            return Err(EngineError::new(
                ErrorCode::InvalidInput,
                format!("a row has {} values, the model has {} features", row.len(), self.num_features()),
            ));
        }
        Ok(())
    }

    pub fn predict_raw_row(&self, row: &[f64]) -> Result<f64> {
        self.check_row(row)?;
        let width = self.compiled.prepared_width;
        let mut stack = [0.0f64; 192];
        let mut heap;
        let prepared: &mut [f64] = if width <= stack.len() {
            &mut stack[..width]
        } else {
            heap = vec![0.0; width];
            &mut heap
        };
        self.compiled.prepare(row, prepared);
        Ok(self.compiled.predict_raw_prepared(prepared))
    }

    pub fn predict_row(&self, row: &[f64]) -> Result<f64> {
        Ok(self.forest.transform(self.predict_raw_row(row)?))
    }

    pub fn predict_raw_batch(&self, rows: &[f64]) -> Result<Vec<f64>> {
        let n = self.rows_in(rows)?;
        let mut out = vec![0.0; n];
        self.compiled.predict_raw_batch(rows, &mut out);
        Ok(out)
    }

    pub fn predict_batch(&self, rows: &[f64]) -> Result<Vec<f64>> {
        let mut out = self.predict_raw_batch(rows)?;
        for v in &mut out {
            *v = self.forest.transform(*v);
        }
        Ok(out)
    }

    /// `num_features` contributions then the expected value (raw-score space).
    pub fn shap_row(&self, row: &[f64]) -> Result<Vec<f64>> {
        let mut out = vec![0.0; self.num_features() + 1];
        self.shap_row_into(row, &mut out)?;
        Ok(out)
    }

    /// SHAP values of one row written into `out`, which must hold `num_features() + 1` values
    /// (overwritten, whatever they were): no allocation, for callers that reuse one buffer.
    pub fn shap_row_into(&self, row: &[f64], out: &mut [f64]) -> Result<()> {
        self.check_row(row)?;
        if out.len() != self.num_features() + 1 {
            return Err(EngineError::new(
                ErrorCode::InvalidInput,
                format!("the output holds {} values, SHAP of this model needs {} (features + expected value)", out.len(), self.num_features() + 1),
            ));
        }
        out.fill(0.0);
        self.shap.explain_row(&self.forest, &self.compiled, row, out);
        Ok(())
    }

    pub fn shap_batch(&self, rows: &[f64]) -> Result<Vec<f64>> {
        let n = self.rows_in(rows)?;
        let mut out = vec![0.0; n * (self.num_features() + 1)];
        self.shap.explain_batch(&self.forest, &self.compiled, rows, &mut out);
        Ok(out)
    }
}
