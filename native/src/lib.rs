//! The fraud-risk scoring engine: LightGBM models evaluated and explained (exact TreeSHAP).
//!
//! Parse (`lightgbm::text`) → represent (`forest`) → compile and evaluate (`predict`, `shap`),
//! held together by `model` and shared per process by `registry`. `lightgbm::capi` links LightGBM
//! itself, for training and as the reference in tests and benchmarks. `reasons` ranks and words a
//! decision's reasons (for single requests and batches alike); `lines` writes a scored batch's
//! result lines with them. `bindings` is the N-API layer and only converts.
//!
//! What TypeScript shares with the engine (the error codes, the kinds of value and the directions
//! of a reason, a result row's fields) is written once, here, as a list macro beside the code that
//! uses it (`error_codes!`, `reason_kinds!`, `reason_directions!`, `result_fields!`): the engine
//! makes its enum from the list with `named_enum!`, and `bindings` makes from the same list the
//! types napi-rs writes into index.d.ts, so that TypeScript never spells them again.

/// An enum whose variants each have a name, made from a list `[ Variant "name", … ]` (an entry may
/// carry more in parentheses, for other users of the list, ignored here): `ALL` in list order,
/// `name()` and `parse()`.
macro_rules! named_enum {
    ($(#[doc = $doc:tt])* $vis:vis enum $name:ident [ $( $(#[doc = $vdoc:tt])* $variant:ident $text:tt $(($($more:tt)*))?, )* ]) => {
        $(#[doc = $doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $name {
            $( $(#[doc = $vdoc])* $variant, )*
        }

        impl $name {
            /// Every variant, in the list's order (a variant's index here is its discriminant).
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// The variant's name, as JavaScript sees it.
            pub const fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }

            /// The variant of this name.
            pub fn parse(text: &str) -> Option<$name> {
                match text {
                    $($text => Some($name::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

pub mod error;
pub mod forest;
pub mod lightgbm;
pub mod lines;
pub mod model;
pub mod predict;
pub mod reasons;
pub mod registry;
pub mod shap;

#[cfg(feature = "node")]
mod bindings;
