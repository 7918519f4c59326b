//! Validates a lowered model ([`Lowered`]) — every ill-posed part of it reported at the
//! user's tokens — into a [`Validated`] one, from which the integrators are chosen
//! ([`Validated::with_integrators`]) into the [`Ir`] that every later stage takes. All checks
//! of a stage run and accumulate; stages are separated by barriers ([`Errors::finish`]), so
//! that later checks only ever see well-formed input.

mod degenerate;
mod inertia;
mod integrators;
mod structure;

use syn::Ident;

use crate::errors::Errors;
use crate::family::model::FamilyModel;
use crate::integrators::fit::{self, Features};
use crate::integrators::Family;
use crate::ir::Ir;
use crate::lower::{fixed::Fixed, Lowered};
use crate::model::Model;
use crate::sections::Sections;

/// A validated model whose integrators are still to be chosen.
pub enum Validated<'a> {
    /// A fixed-size model, with what the choice of its default integrators needs.
    Fixed(Box<ValidFixed<'a>>),
    /// A model with families, its integrators resolved with its names.
    Families(Ir),
}

/// A validated fixed-size model: its sections (for spans), the requested integrators
/// (already checked against it) and its features, from which the default set is chosen.
pub struct ValidFixed<'a> {
    /// The model; its `integrators` are empty until [`Validated::with_integrators`].
    pub model: Model,
    /// The sections it was read from.
    pub sections: Sections<'a>,
    /// `integrators: [..]` resolved, or `None` when the section is absent.
    pub requested: Option<Vec<(Family, Ident)>>,
    /// What decides which integrators fit it ([`fit`]).
    pub features: Features,
}

impl Validated<'_> {
    /// Chooses the integrators ([`fit::choose`]: the requested ones, or the default set that
    /// fits) and returns the model every later stage takes.
    pub fn with_integrators(self) -> syn::Result<Ir> {
        match self {
            Validated::Fixed(valid) => {
                let ValidFixed {
                    mut model,
                    sections,
                    requested,
                    features,
                } = *valid;
                model.integrators = fit::choose(&model, &sections, requested, &features)?;
                Ok(Ir::Fixed(Box::new(model)))
            }
            Validated::Families(ir) => Ok(ir),
        }
    }
}

/// Validates a lowered model of either kind.
pub fn model(lowered: Lowered<'_>) -> syn::Result<Validated<'_>> {
    match lowered {
        Lowered::Fixed(model) => fixed(*model),
        Lowered::Families(model) => families(*model).map(Validated::Families),
    }
}

/// Lowers, validates and chooses the integrators of a parsed fixed-size mechanism, after
/// importing its robot and desugaring its orientations: the entry for code that inspects a fixed-size model's
/// symbolic expressions (the root's `generated_vs_interpreter` test, `examples/chains.rs`).
pub fn validate(ast: &crate::ast::Mechanism) -> syn::Result<Model> {
    let imported = crate::urdf::import(ast)?;
    let desugared = crate::orientation::desugar(&imported.ast)?;
    let lowered = crate::lower::fixed::fixed(&desugared, imported.robot.as_ref())?;
    match fixed(lowered)?.with_integrators()? {
        Ir::Fixed(model) => Ok(*model),
        Ir::Runtime { model, .. } => Err(syn::Error::new_spanned(
            &model.name,
            "internal: a fixed-size model validated into one with families",
        )),
    }
}

/// Validates a model with families, resolved into kernels
/// ([`family::resolve`](crate::family::resolve)): checks their inertia (the one inertia check
/// of both kinds) and their terms and rows against the default sizes and the integrators
/// ([`family::checks`](crate::family::checks)).
pub fn families(model: FamilyModel) -> syn::Result<Ir> {
    let mut errors = Errors::new();
    inertia::check(inertia::Inertial::Runtime(&model), &mut errors);
    errors.finish()?;
    let bodies = crate::family::checks::terms(&model)?;
    Ok(Ir::Runtime {
        model: Box::new(model),
        bodies,
    })
}

/// Validates a fixed-size model in normal form: each holonomic row depends on the
/// coordinates and the dissipation on the velocities (`structure.rs`); then the inertia
/// (`inertia.rs`) and degenerate rows (`degenerate.rs`); then the requested integrators against
/// the model's features, and the degrees of freedom the rows leave (`integrators.rs`).
pub fn fixed(lowered: Fixed<'_>) -> syn::Result<Validated<'_>> {
    let Fixed {
        mut model,
        sections,
        requested,
        non_smooth,
        orientations,
    } = lowered;
    let mut errors = Errors::new();
    for (row, constraint) in sections
        .holonomic
        .unwrap_or_default()
        .iter()
        .zip(&model.constraints)
    {
        structure::check_constraint(
            &model.store,
            &model.symbols,
            row,
            constraint.expr,
            &mut errors,
        );
    }
    if let (Some(expr), Some(id)) = (sections.dissipation, model.dissipation) {
        structure::check_dissipation(&model.store, &model.symbols, expr, id, &mut errors);
    }
    errors.barrier()?;
    inertia::check(inertia::Inertial::Fixed(&model, &sections), &mut errors);
    degenerate::check(&mut model, &sections, &mut errors);
    errors.barrier()?;
    let features = Features::of(&mut model, &non_smooth, orientations);
    integrators::check(
        &mut model,
        &sections,
        requested.as_deref(),
        &features,
        &mut errors,
    );
    errors.finish()?;
    Ok(Validated::Fixed(Box::new(ValidFixed {
        model,
        sections,
        requested,
        features,
    })))
}
