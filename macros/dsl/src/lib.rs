//! The compile pipeline behind `mechanism!`, as a normal library so that every stage can be
//! tested without the compiler.
//!
//! ```text
//! tokens ─parse→ ast ─import→ ast ─desugar→ ast ─lower→ Lowered ─validate→ Validated ─choose→ Ir
//!        ─plan→ Plan ─derive→ Outputs ─simplify→ ─generate→ tokens
//! ```
//!
//! Every model runs these stages, with or without families: [`lower::Lowered`],
//! [`validate::Validated`] and [`ir::Ir`] hold a fixed-size
//! model or one whose sizes are known at `new`, and each stage dispatches on it inside.
//! Importing reads a robot's URDF file ([`urdf`]) into coordinates, rows and, in lowering,
//! energies. Desugaring turns rigid-body orientations ([`orientation`]) into plain coordinates,
//! constraints and expressions, so that every later stage sees the plain language.
//!
//! Each stage is a plain function on plain data, and each reports every error it finds at
//! once, at the user's tokens: lowering what cannot be put in the normal form ([`lower`]),
//! validation what is ill-posed in it ([`validate`]), the choice of integrators a model that
//! no default integrator can step ([`integrators::fit::choose`]). After an error the
//! expansion is a stub type plus the errors.
#![warn(missing_docs)]

pub mod ast;
pub mod derivatives;
pub mod derive;
pub mod errors;
pub mod expr;
pub mod family;
pub mod generate;
pub mod identity;
pub mod integrators;
pub mod ir;
pub mod lower;
pub mod model;
pub mod names;
pub mod orientation;
pub mod parse;
pub mod plan;
pub mod sample;
pub mod sections;
pub mod simplify;
pub mod symbols;
pub mod urdf;
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

/// Runs the pipeline after parsing, the same for every model: import a URDF robot, desugar the orientations,
/// lower, validate, choose the integrators, plan, derive, simplify, generate. A fixed-size model and a model with families
/// differ in the data of [`ir::Ir`], which each stage dispatches on.
pub fn expand_model(ast: &Mechanism) -> syn::Result<TokenStream> {
    let imported = urdf::import(ast)?;
    let desugared = orientation::desugar(&imported.ast)?;
    let lowered = lower::model(&desugared, imported.robot.as_ref())?;
    let mut model = validate::model(lowered)?.with_integrators()?;
    let plan = model.plan();
    let mut derived = derive::outputs(&mut model, &plan);
    simplify::simplify_model(&mut model, &mut derived);
    let tokens = generate::generate(&model, &derived)?;
    let tracking = imported.tracking();
    Ok(quote::quote!(#tokens #tracking))
}
