//! The N-API layer: converts between JavaScript and the engine, nothing else.
//!
//! Inputs are borrowed `Float64Array` views (no copy); batch calls take one flat row-major matrix,
//! so a batch crosses the boundary once, and hand their Rust buffer to V8 (no copy). A single
//! row's SHAP values are copied into a JS-owned buffer instead, which for a few dozen values costs
//! far less than an external buffer and its finalizer. Errors are thrown with the engine's stable
//! code as the JS error's `code` (e.g. `model_malformed`), and the line in the message when known.
//! One file per JS class: `engine`, `reasons`, `result_lines`, `lightgbm`; `allocator` holds the
//! glibc allocator controls. This file has the error conversion they all share, the error codes'
//! TypeScript type and list (`EngineErrorCode`, `engineErrorCodes`), and `noopCall`.
//!
//! What TypeScript shares with the engine is typed from the engine's own lists (lib.rs): a list
//! becomes a string enum, which the build writes into index.d.ts as a union of its names
//! (scripts/build-native.mjs passes `--no-const-enum`), with a function that returns its names, so
//! that TypeScript reads them once at start instead of spelling them again.

/// A string enum for JavaScript (its type in index.d.ts: the union of the names) made from an
/// engine list (lib.rs `named_enum!`), converted from the engine's enum `$from`, and, when named,
/// a function `$list` returning every name in the list's order. The variants' docs stay with the
/// engine's enum (a union has nowhere to show them).
macro_rules! js_string_enum {
    ($(#[$doc:meta])* $js:ident from $from:ident $(, $(#[$ldoc:meta])* fn $list:ident)? [ $( $(#[doc = $vdoc:tt])* $variant:ident $text:tt $(($($more:tt)*))?, )* ]) => {
        $(#[$doc])*
        #[napi_derive::napi(string_enum)]
        pub enum $js {
            $( #[napi(value = $text)] $variant, )*
        }

        impl From<$from> for $js {
            fn from(v: $from) -> $js {
                match v {
                    $($from::$variant => $js::$variant,)*
                }
            }
        }

        $(
            $(#[$ldoc])*
            #[napi_derive::napi]
            pub fn $list() -> Vec<$js> {
                $from::ALL.iter().map(|&v| v.into()).collect()
            }
        )?
    };
}

mod allocator;
mod engine;
mod lightgbm;
mod reasons;
mod result_lines;

use crate::error::{error_codes, EngineError, ErrorCode};
use napi::bindgen_prelude::Float64ArraySlice;
use napi_derive::napi;

// Docs written as attributes: a `///` comment inside a macro's input reaches napi-rs as a raw
// string, which it would copy into index.d.ts with its `r"`.
error_codes!(js_string_enum!
    #[doc = "A code the engine's errors carry (native/src/error.rs): stable, part of the contract"]
    #[doc = "with the app's error mapping."]
    EngineErrorCode from ErrorCode,
    #[doc = "Every code the engine's errors carry, in native/src/error.rs's order."]
    fn engine_error_codes);

fn js_error(e: EngineError) -> napi::Error<String> {
    napi::Error::new(e.code.name().to_owned(), e.to_string())
}

fn invalid(message: String) -> napi::Error<String> {
    js_error(EngineError::new(ErrorCode::InvalidInput, message))
}

/// Does nothing with a row: measures the cost of one N-API call with a typed-array argument.
#[napi]
pub fn noop_call(row: Float64ArraySlice) -> f64 {
    row.len() as f64
}
