//! After an error: the spanned `compile_error!`s plus a stub type, so that code using the model
//! does not drown the real error in follow-up errors (thiserror's `fallback.rs` idea).

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::Mechanism;

/// Returns the errors followed by a stub of the model's type with its parameters as fields.
pub fn fallback(ast: &Mechanism, error: &syn::Error) -> TokenStream {
    let errors = error.to_compile_error();
    let (attrs, vis, name) = (&ast.attrs, &ast.vis, &ast.name);
    quote! {
        #errors
        #(#attrs)*
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        #vis struct #name {}
    }
}
