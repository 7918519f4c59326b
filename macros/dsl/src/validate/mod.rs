//! Turns the syntax tree into a [`Model`], reporting every ill-posed part of it at the user's
//! tokens. All checks run and accumulate; the stage ends with one barrier.

mod names;
mod structure;

use std::collections::HashMap;

use mechanism_cas::Store;
use syn::{Expr, Ident};

use crate::ast::{Mechanism, Named, SectionBody};
use crate::errors::Errors;
use crate::lower::{Context, Lowerer, Symbols};
use crate::model::{Constraint, Model, Parameter};
use crate::parse::SectionKind;

/// The sections of a model, sorted by kind, each at most once.
#[derive(Default)]
struct Sections<'a> {
    coordinates: Option<&'a [Named<()>]>,
    parameters: Option<&'a [Named<Expr>]>,
    kinetic: Option<&'a Expr>,
    potential: Option<&'a Expr>,
    lagrangian: Option<&'a Expr>,
    holonomic: Option<&'a [Named<Expr>]>,
}

/// Validates a parsed mechanism.
pub fn validate(ast: &Mechanism) -> syn::Result<Model> {
    let mut errors = Errors::new();
    let sections = sort_sections(ast, &mut errors);

    let coordinates: Vec<Ident> = sections
        .coordinates
        .unwrap_or_default()
        .iter()
        .map(|c| c.name.clone())
        .collect();
    if coordinates.is_empty() {
        errors.error_spanned(
            &ast.name,
            "a mechanism needs coordinates; add `coordinates: [x, y, …]`",
        );
    }
    let parameter_rows = sections.parameters.unwrap_or_default();
    let parameter_names: Vec<Ident> = parameter_rows.iter().map(|p| p.name.clone()).collect();
    let names = names::name_table(&coordinates, &parameter_names, &mut errors);
    let constraint_rows = sections.holonomic.unwrap_or_default();
    names::unique_rows(
        &constraint_rows.iter().map(|r| &r.name).collect::<Vec<_>>(),
        "constraint",
        &mut errors,
    );

    let symbols = Symbols::new(&coordinates, &parameter_names);
    let mut store = Store::new();
    let mut lowerer = Lowerer {
        store: &mut store,
        symbols: &symbols,
        names: &names,
        errors: &mut errors,
    };

    let parameters: Vec<Parameter> = parameter_rows
        .iter()
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
        .collect();

    let energy = structure::lower_energy(
        &mut lowerer,
        &ast.name,
        sections.kinetic,
        sections.potential,
        sections.lagrangian,
    );
    let constraints: Vec<Constraint> = constraint_rows
        .iter()
        .filter_map(|row| {
            let expr = lowerer.lower(&row.value, Context::Dynamic)?;
            structure::check_constraint(lowerer.store, &symbols, row, expr, lowerer.errors);
            Some(Constraint {
                attrs: row.attrs.clone(),
                name: row.name.clone(),
                expr,
            })
        })
        .collect();

    errors.finish()?;
    let energy = energy.ok_or_else(|| {
        syn::Error::new_spanned(&ast.name, "internal: energy missing without an error")
    })?;
    Ok(Model {
        attrs: ast.attrs.clone(),
        vis: ast.vis.clone(),
        name: ast.name.clone(),
        coordinates,
        parameters,
        constraints,
        store,
        symbols,
        kinetic: energy.kinetic,
        mass: energy.mass,
        potential: energy.potential,
    })
}

/// Sorts sections by kind, reporting unknown and repeated ones.
fn sort_sections<'a>(ast: &'a Mechanism, errors: &mut Errors) -> Sections<'a> {
    let mut sections = Sections::default();
    let mut seen: HashMap<SectionKind, &Ident> = HashMap::new();
    for section in &ast.sections {
        let Some(kind) = SectionKind::from_keyword(&section.keyword) else {
            let known: Vec<&str> = SectionKind::ALL.iter().map(|k| k.keyword()).collect();
            errors.error_spanned(
                &section.keyword,
                format!(
                    "unknown section `{}`; expected one of: {}",
                    section.keyword,
                    known.join(", ")
                ),
            );
            continue;
        };
        if seen.insert(kind, &section.keyword).is_some() {
            errors.error_spanned(
                &section.keyword,
                format!(
                    "section `{}` is given twice; merge them into one",
                    section.keyword
                ),
            );
            continue;
        }
        match (kind, &section.body) {
            (SectionKind::Coordinates, SectionBody::Names(names)) => {
                sections.coordinates = Some(names)
            }
            (SectionKind::Parameters, SectionBody::Assignments(rows)) => {
                sections.parameters = Some(rows)
            }
            (SectionKind::Holonomic, SectionBody::Rows(rows)) => sections.holonomic = Some(rows),
            (SectionKind::Kinetic, SectionBody::Expr(e)) => sections.kinetic = Some(e),
            (SectionKind::Potential, SectionBody::Expr(e)) => sections.potential = Some(e),
            (SectionKind::Lagrangian, SectionBody::Expr(e)) => sections.lagrangian = Some(e),
            _ => errors.error_spanned(
                &section.keyword,
                "internal: section parsed with the wrong shape",
            ),
        }
    }
    sections
}
