//! Turns the (desugared) syntax tree into an [`Ir`] — a fixed-size [`Model`] or a model with
//! families — reporting every ill-posed part of it at the user's tokens. All checks of a stage run and accumulate; stages are separated by barriers
//! ([`Errors::finish`]), so that later checks only ever see well-formed input.

mod degenerate;
mod inertia;
mod integrators;
mod options;
mod structure;

use std::collections::HashMap;

use mechanism_cas::{Id, Store};
use syn::{Expr, Ident};

use crate::ast::{Mechanism, Named};
use crate::errors::Errors;
use crate::ir::Ir;
use crate::lower::{Context, Lowerer};
use crate::model::{Constraint, Model, NonholonomicRow, Parameter};
use crate::names;
use crate::orientation::Desugared;
use crate::parse::SectionKind;
use crate::sections::{self, ModelKind, Sections};
use crate::symbols::{Name, Symbols};

/// Validates a model of either kind, its orientations desugared
/// ([`orientation::desugar`](crate::orientation::desugar)), into the [`Ir`] that every later
/// stage takes: fixed-size ([`fixed`]) or with families ([`families`]), as
/// [`ModelKind::of`] tells.
pub fn model(desugared: &Desugared) -> syn::Result<Ir> {
    match ModelKind::of(&desugared.ast) {
        ModelKind::Fixed => fixed(desugared).map(|model| Ir::Fixed(Box::new(model))),
        ModelKind::Families => families(&desugared.ast),
    }
}

/// Validates a parsed fixed-size mechanism, after desugaring its orientations: the entry for
/// code that inspects a fixed-size model's symbolic expressions (the root's
/// `generated_vs_interpreter` test, `examples/chains.rs`).
pub fn validate(ast: &Mechanism) -> syn::Result<Model> {
    fixed(&crate::orientation::desugar(ast)?)
}

/// Validates a model with families: resolves its names into kernels
/// ([`family::resolve`](crate::family::resolve)), checks their inertia (the one inertia check
/// of both kinds) and their terms and rows against the default sizes and the integrators
/// ([`family::checks`](crate::family::checks)).
pub fn families(ast: &Mechanism) -> syn::Result<Ir> {
    let model = crate::family::resolve::resolve(ast)?;
    let mut errors = Errors::new();
    inertia::check(inertia::Inertial::Runtime(&model), &mut errors);
    errors.finish()?;
    let bodies = crate::family::checks::terms(&model)?;
    Ok(Ir::Runtime {
        model: Box::new(model),
        bodies,
    })
}

/// Validates a fixed-size model whose orientations are desugared.
pub fn fixed(desugared: &Desugared) -> syn::Result<Model> {
    let ast = &desugared.ast;
    let mut errors = Errors::new();
    let sections = sections::read(ast, ModelKind::Fixed, &mut errors);

    let coordinates: Vec<Ident> = sections
        .coordinates
        .unwrap_or_default()
        .iter()
        .map(|c| c.name.clone())
        .collect();
    match (
        coordinates.is_empty(),
        sections.values.get(&SectionKind::Coordinates),
    ) {
        (false, _) => {}
        (true, Some(&span)) => sections::empty_coordinates(span, "[x, y]", &mut errors),
        (true, None) => errors.error_spanned(
            &ast.name,
            "a mechanism needs coordinates; add `coordinates: [x, y, …]`",
        ),
    }
    let parameter_rows = sections.parameters.unwrap_or_default();
    let parameter_names: Vec<Ident> = parameter_rows.iter().map(|p| p.name.clone()).collect();
    let names = names::name_table(&coordinates, &parameter_names, &mut errors);
    let holonomic_rows = sections.holonomic.unwrap_or_default();
    let nonholonomic_rows = sections.nonholonomic.unwrap_or_default();
    names::unique_rows(
        &holonomic_rows
            .iter()
            .chain(nonholonomic_rows)
            .map(|r| &r.name)
            .collect::<Vec<_>>(),
        "constraint",
        &mut errors,
    );
    let requested = crate::integrators::requested(
        sections.integrators,
        sections.values.get(&SectionKind::Integrators).copied(),
        ModelKind::Fixed,
        &mut errors,
    );
    let names_are_sound = errors.is_empty();

    let symbols = Symbols::new(&coordinates, &parameter_names);
    let mut store = Store::new();
    let mut lowerer = Lowerer {
        store: &mut store,
        symbols: &symbols,
        names: &names,
        errors: &mut errors,
        uses: Default::default(),
    };
    if !names_are_sound {
        // A name that means two things would mislead the semantic checks (a duplicated
        // coordinate makes every energy look ill-formed), so only report what lowering itself
        // finds — unknown names, unsupported syntax — and stop.
        lower_for_errors(&mut lowerer, &sections);
        return Err(errors.finish().err().unwrap_or_else(|| {
            syn::Error::new_spanned(&ast.name, "internal: name errors vanished")
        }));
    }

    let parameters = lower_parameters(&mut lowerer, parameter_rows);
    let energy = structure::lower_energy(
        &mut lowerer,
        &ast.name,
        sections.kinetic,
        sections.potential,
        sections.lagrangian,
    );
    let energy_uses = lowerer.take_uses();
    reject_time(
        &mut lowerer,
        energy_uses.time,
        "an energy",
        "move time-dependent forcing into `forces`",
    );

    let mut constraint_non_smooth = Vec::new();
    let constraints = lower_holonomic(&mut lowerer, holonomic_rows, &mut constraint_non_smooth);
    let nonholonomic = lower_nonholonomic(&mut lowerer, nonholonomic_rows);
    let dissipation = sections.dissipation.and_then(|expr| {
        let id = lowerer.lower(expr, Context::Dynamic)?;
        let time = lowerer.take_uses().time;
        reject_time(
            &mut lowerer,
            time,
            "the dissipation function",
            "use `forces` for time-dependent forces",
        );
        structure::check_dissipation(lowerer.store, &symbols, expr, id, lowerer.errors);
        Some(id)
    });
    let forces = sections
        .forces
        .map(|rows| lower_forces(&mut lowerer, rows, &names));

    errors.finish()?;
    let energy = energy.ok_or_else(|| {
        syn::Error::new_spanned(&ast.name, "internal: energy missing without an error")
    })?;
    let mut model = Model {
        attrs: ast.attrs.clone(),
        vis: ast.vis.clone(),
        name: ast.name.clone(),
        coordinates,
        parameters,
        constraints,
        nonholonomic,
        dissipation,
        forces,
        integrators: Vec::new(),
        store,
        symbols,
        kinetic: energy.kinetic,
        mass: energy.mass,
        potential: energy.potential,
    };
    let mut errors = Errors::new();
    inertia::check(inertia::Inertial::Fixed(&model, &sections), &mut errors);
    degenerate::check(&mut model, &sections, &mut errors);
    errors.barrier()?;
    let non_smooth = integrators::NonSmooth {
        energy: energy_uses.non_smooth,
        constraints: constraint_non_smooth,
    };
    model.integrators = integrators::check(
        &mut model,
        &sections,
        requested,
        &non_smooth,
        &desugared.orientations,
        &mut errors,
    );
    errors.finish()?;
    Ok(model)
}

/// Lowers every expression of the model only to report lowering errors.
fn lower_for_errors(lowerer: &mut Lowerer, sections: &Sections) {
    for row in sections.parameters.unwrap_or_default() {
        lowerer.lower(&row.value, Context::Constant);
    }
    let single = [
        sections.kinetic,
        sections.potential,
        sections.lagrangian,
        sections.dissipation,
    ];
    let rows = [sections.holonomic, sections.nonholonomic, sections.forces];
    let expressions = single
        .into_iter()
        .flatten()
        .chain(rows.into_iter().flatten().flatten().map(|row| &row.value));
    for expr in expressions {
        lowerer.lower(expr, Context::Dynamic);
    }
}

/// Reports every use of `t` (at `spans`) in an expression that must not depend on time.
fn reject_time(lowerer: &mut Lowerer, spans: Vec<proc_macro2::Span>, what: &str, hint: &str) {
    for span in spans {
        lowerer
            .errors
            .error_at(span, format!("{what} may not depend on time `t`; {hint}"));
    }
}

fn lower_parameters(lowerer: &mut Lowerer, rows: &[Named<Expr>]) -> Vec<Parameter> {
    rows.iter()
        .filter_map(|row| {
            let value = lowerer.lower(&row.value, Context::Constant)?;
            match mechanism_cas::eval(lowerer.store, value, &|_| None) {
                Ok(default) if default.is_finite() => Some(Parameter {
                    attrs: row.attrs.clone(),
                    name: row.name.clone(),
                    default,
                }),
                _ => {
                    lowerer.errors.error_spanned(
                        &row.value,
                        format!(
                            "the default of parameter `{}` is not a finite number",
                            row.name
                        ),
                    );
                    None
                }
            }
        })
        .collect()
}

fn lower_holonomic(
    lowerer: &mut Lowerer,
    rows: &[Named<Expr>],
    non_smooth: &mut Vec<(proc_macro2::Span, &'static str)>,
) -> Vec<Constraint> {
    rows.iter()
        .filter_map(|row| {
            let options = options::row_options(&row.attrs, &["epsilon", "tau", "tau_steps"], lowerer);
            lowerer.take_uses();
            let expr = lowerer.lower(&row.value, Context::Dynamic)?;
            let uses = lowerer.take_uses();
            non_smooth.extend(uses.non_smooth);
            for span in uses.velocities {
                lowerer.errors.error_at(
                    span,
                    format!(
                        "holonomic constraint `{}` depends on velocities; a holonomic constraint is a function of the coordinates (and time) only — velocity constraints belong in `nonholonomic`",
                        row.name
                    ),
                );
            }
            structure::check_constraint(lowerer.store, lowerer.symbols, row, expr, lowerer.errors);
            Some(Constraint {
                docs: options.docs,
                name: row.name.clone(),
                expr,
                epsilon: options.epsilon,
                tau: options.tau,
            })
        })
        .collect()
}

fn lower_nonholonomic(lowerer: &mut Lowerer, rows: &[Named<Expr>]) -> Vec<NonholonomicRow> {
    rows.iter()
        .filter_map(|row| {
            let options = options::row_options(&row.attrs, &["gamma"], lowerer);
            let expr = lowerer.lower(&row.value, Context::Dynamic)?;
            lowerer.take_uses();
            let (matrix, drive) = structure::split_nonholonomic(
                lowerer.store,
                lowerer.symbols,
                row,
                expr,
                lowerer.errors,
            )?;
            Some(NonholonomicRow {
                docs: options.docs,
                name: row.name.clone(),
                matrix,
                drive,
                gamma: options.gamma,
            })
        })
        .collect()
}

/// Lowers `forces: { coordinate: f, … }` into one entry per coordinate (zero where absent).
fn lower_forces(
    lowerer: &mut Lowerer,
    rows: &[Named<Expr>],
    names: &HashMap<String, Name>,
) -> Vec<Id> {
    let zero = lowerer.store.num(0.0);
    let mut forces = vec![zero; lowerer.symbols.q.len()];
    let mut seen = vec![false; forces.len()];
    for row in rows {
        let value = lowerer.lower(&row.value, Context::Dynamic);
        lowerer.take_uses();
        match names.get(&row.name.to_string()) {
            Some(Name::Coordinate(i)) => {
                if std::mem::replace(&mut seen[*i], true) {
                    lowerer.errors.error_spanned(
                        &row.name,
                        format!("the force on `{}` is given twice; add the terms into one row", row.name),
                    );
                }
                if let Some(value) = value {
                    forces[*i] = value;
                }
            }
            _ => lowerer.errors.error_spanned(
                &row.name,
                format!(
                    "`{}` is not a coordinate; each row of `forces` is named after the coordinate the force acts on",
                    row.name
                ),
            ),
        }
    }
    forces
}
