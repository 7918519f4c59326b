//! The `mechanism!` procedural macro. All the work happens in `mechanism-dsl`; this crate only
//! converts between the compiler's token streams and `proc_macro2`'s.

use proc_macro::TokenStream;

/// Compiles a mechanical model into a type implementing the runtime's model traits.
///
/// See the `mechanism` crate for the language and examples.
#[proc_macro]
pub fn mechanism(input: TokenStream) -> TokenStream {
    mechanism_dsl::expand(input.into()).into()
}
