//! Engine errors with stable codes. Each code is part of the contract with TypeScript: the bindings
//! put it on the JS error's `code`, the app maps it to an HTTP reason. Codes never change meaning.

use std::fmt;

/// The engine's error codes, each with the code JavaScript sees: the one list of them. `ErrorCode`
/// below is made from it, and so is the TypeScript type `EngineErrorCode` (bindings/mod.rs, in
/// index.d.ts) with the addon's `engineErrorCodes()`, from which src/addon/addon.ts knows them.
macro_rules! error_codes {
    ($then:ident! $($args:tt)*) => {
        $then! { $($args)* [
            /// The model text is not a well-formed LightGBM text model (the error names the line).
            ModelMalformed "model_malformed",
            /// A header version other than v3 / v4.
            ModelUnsupportedVersion "model_unsupported_version",
            /// An objective other than binary or regression.
            ModelUnsupportedObjective "model_unsupported_objective",
            /// More than one class, or more than one tree per iteration.
            ModelUnsupportedMulticlass "model_unsupported_multiclass",
            /// Linear trees (`linear_tree=true`).
            ModelUnsupportedLinearTree "model_unsupported_linear_tree",
            /// Random-forest averaging (`average_output`).
            ModelUnsupportedAverageOutput "model_unsupported_average_output",
            /// A model file that could not be read.
            ModelIo "model_io",
            /// Input rows of the wrong length, or a bad argument.
            InvalidInput "invalid_input",
            /// LightGBM's own C API reported a failure (training, reference prediction).
            LightgbmError "lightgbm_error",
            /// This build does not link LightGBM (the crate's `lightgbm` feature is off).
            LightgbmUnavailable "lightgbm_unavailable",
        ] }
    };
}
#[cfg_attr(not(feature = "node"), allow(unused_imports))]
pub(crate) use error_codes;

error_codes!(named_enum!
    /// An engine error's code (`name()`: the JS error's `code`).
    pub enum ErrorCode);

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
