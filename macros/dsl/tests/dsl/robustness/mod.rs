//! Robustness of the expansion function: `mechanism_dsl::expand` never panics. Every input,
//! random token soup or a mutated valid model, yields either a valid expansion or spanned
//! `compile_error!`s (plus a stub type), and in both cases the output parses as a Rust file.
//!
//! The tests do not depend on the exact set of sections the language knows: they only require
//! "no panic" and "the output is Rust", and valid models use only the original sections.
//!
//! The contract every input is checked against is here (`check`, and `messages` for the error
//! messages); the inputs are in one module per kind of input:
//!
//! - [`seeds`]: the valid models the mutations start from;
//! - [`token_soup`]: random token streams, struct bodies, sections and family syntax;
//! - [`expressions`]: well-formed models with random expressions;
//! - [`mutations`]: random mutations of the valid models;
//! - [`edge_cases`]: hand-picked edge cases (non-finite constants, huge powers, deep nesting, …);
//! - [`ill_posed`]: valid models turned into each class of ill-posed model.

use std::panic::{catch_unwind, AssertUnwindSafe};

use mechanism_dsl::ast::Mechanism;
use proc_macro2::TokenStream;
use proptest::prelude::ProptestConfig;

mod edge_cases;
mod expressions;
mod ill_posed;
mod mutations;
mod seeds;
mod token_soup;

// ---------------------------------------------------------------------------------------------
// The property checked on every input.
// ---------------------------------------------------------------------------------------------

/// What an expansion turned out to be.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// A model: no `compile_error!` in the output.
    Expansion,
    /// Spanned errors (and the stub type).
    Errors,
}

/// Runs `expand` on `input` and checks the robustness contract: no panic, non-empty output,
/// output parses as a Rust file, and is either an expansion or contains `compile_error`.
fn check(input: TokenStream) -> Outcome {
    let shown = input.to_string();
    let result = catch_unwind(AssertUnwindSafe(|| mechanism_dsl::expand(input)));
    let output = match result {
        Ok(output) => output,
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "<non-string panic payload>".into());
            panic!("`expand` panicked with {message:?} on input:\n{shown}");
        }
    };
    assert!(
        !output.is_empty(),
        "`expand` returned no tokens for:\n{shown}"
    );
    let text = output.to_string();
    if let Err(error) = syn::parse2::<syn::File>(output) {
        panic!("the output of `expand` is not a Rust file ({error}) for input:\n{shown}\noutput:\n{text}");
    }
    if text.contains("compile_error") {
        Outcome::Errors
    } else {
        Outcome::Expansion
    }
}

/// Expands a model that must be valid, returning the pretty-printed code.
fn expand_valid(tokens: TokenStream) -> String {
    let ast: Mechanism = syn::parse2(tokens.clone()).expect("the model parses");
    let expanded = mechanism_dsl::expand_model(&ast)
        .unwrap_or_else(|e| panic!("the model is valid, got errors {:?}", error_messages(&e)));
    let file: syn::File = syn::parse2(expanded).expect("the expansion is valid Rust");
    assert_eq!(check(tokens), Outcome::Expansion);
    prettyplease::unparse(&file)
}

/// Expands a model through `expand_model`, returning its error messages (empty if valid),
/// after checking the robustness contract of `expand` on it.
fn messages(tokens: TokenStream) -> Vec<String> {
    let outcome = check(tokens.clone());
    let result = syn::parse2::<Mechanism>(tokens).and_then(|ast| mechanism_dsl::expand_model(&ast));
    match result {
        Ok(_) => {
            assert_eq!(outcome, Outcome::Expansion);
            Vec::new()
        }
        Err(error) => {
            assert_eq!(outcome, Outcome::Errors);
            error_messages(&error)
        }
    }
}

fn error_messages(error: &syn::Error) -> Vec<String> {
    error.clone().into_iter().map(|e| e.to_string()).collect()
}

fn cases(n: u32) -> ProptestConfig {
    ProptestConfig {
        cases: n,
        // A panic is the finding; shrinking it would only repeat slow expansions.
        max_shrink_iters: 64,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}
