//! Engine errors with stable codes. Each code is part of the contract with TypeScript: the bindings
//! put it on the JS error's `code`, the app maps it to an HTTP reason. Codes never change meaning.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// The model text is not a well-formed LightGBM text model (the error names the line).
    ModelMalformed,
    /// A header version other than v3 / v4.
    ModelUnsupportedVersion,
    /// An objective other than binary or regression.
    ModelUnsupportedObjective,
    /// More than one class, or more than one tree per iteration.
    ModelUnsupportedMulticlass,
    /// Linear trees (`linear_tree=true`).
    ModelUnsupportedLinearTree,
    /// Random-forest averaging (`average_output`).
    ModelUnsupportedAverageOutput,
    /// A model file that could not be read.
    ModelIo,
    /// Input rows of the wrong length, or a bad argument.
    InvalidInput,
    /// LightGBM's own C API reported a failure (training, reference prediction).
    LightgbmError,
    /// This build does not link LightGBM (the crate's `lightgbm` feature is off).
    LightgbmUnavailable,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::ModelMalformed => "model_malformed",
            ErrorCode::ModelUnsupportedVersion => "model_unsupported_version",
            ErrorCode::ModelUnsupportedObjective => "model_unsupported_objective",
            ErrorCode::ModelUnsupportedMulticlass => "model_unsupported_multiclass",
            ErrorCode::ModelUnsupportedLinearTree => "model_unsupported_linear_tree",
            ErrorCode::ModelUnsupportedAverageOutput => "model_unsupported_average_output",
            ErrorCode::ModelIo => "model_io",
            ErrorCode::InvalidInput => "invalid_input",
            ErrorCode::LightgbmError => "lightgbm_error",
            ErrorCode::LightgbmUnavailable => "lightgbm_unavailable",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineError {
    pub code: ErrorCode,
    pub message: String,
    /// 1-based line of the model text where parsing failed, when there is one.
    pub line: Option<usize>,
}

impl EngineError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        EngineError { code, message: message.into(), line: None }
    }

    pub fn at_line(code: ErrorCode, line: usize, message: impl Into<String>) -> Self {
        EngineError { code, message: message.into(), line: Some(line) }
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{} (line {})", self.message, line),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for EngineError {}

pub type Result<T> = std::result::Result<T, EngineError>;
