//! The compile pipeline behind `mechanism!`, as a normal library so that every stage can be
//! tested without the compiler.
//!
//! ```text
//! tokens ─parse→ ast ─validate→ Model ─plan→ Plan ─derive→ Derived ─simplify→ ─generate→ tokens
//! ```
//!
//! Validation starts by desugaring rigid-body orientations ([`orientation`]) into plain
//! coordinates, constraints and expressions, so that every later stage sees the plain language.
//!
//! Each stage is a plain function on plain data. Validation reports every error of a model at
//! once, at the user's tokens; after an error the expansion is a stub type plus the errors.
#![warn(missing_docs)]

pub mod ast;
pub mod derive;
pub mod errors;
pub mod family;
pub mod generate;
pub mod identity;
pub mod integrators;
pub mod lower;
pub mod model;
pub mod orientation;
pub mod parse;
pub mod plan;
pub mod sample;
pub mod sections;
pub mod simplify;
pub mod symbols;
pub mod validate;

use proc_macro2::TokenStream;

use crate::ast::Mechanism;

/// Expands a `mechanism!` invocation; errors become `compile_error!` plus a stub type.
pub fn expand(input: TokenStream) -> TokenStream {
    let ast: Mechanism = match syn::parse2(input.clone()) {
        Ok(ast) => ast,
        Err(error) => return error.to_compile_error(),
    };
    match expand_model(&ast) {
        Ok(tokens) => {
            let identity = identity::emit(&input, &ast);
            quote::quote!(#tokens #identity)
        }
        Err(error) => generate::fallback(&ast, &error),
    }
}

/// Runs the pipeline after parsing: validate, plan, derive, simplify, generate.
pub fn expand_model(ast: &Mechanism) -> syn::Result<TokenStream> {
    if family::resolve::has_families(ast) {
        return family::expand(ast);
    }
    let mut model = validate::validate(ast)?;
    let plan = plan::Plan::for_model(&model);
    let mut derived = derive::derive(&mut model, &plan);
    simplify::simplify_outputs(&mut model.store, &mut derived, &simplify::limits());
    Ok(generate::generate(&model, &derived))
}
