//! Lowers a fixed-size model: its sections read once ([`sections::read`]), its names checked
//! ([`names`]), `integrators: [..]` resolved ([`integrators::requested`]), and its expressions
//! lowered into one store in the normal form the later stages take ([`normal_form`]): the
//! mass matrix `M(q)` and `V(q)`, each holonomic row `g(q, t)`, each nonholonomic row
//! `A(q) v − w(t)`, `D(q, v)` and one force per coordinate. What cannot be put in that form
//! (an unknown name, a velocity in a holonomic row, time in an energy, a kinetic energy that
//! is not quadratic in the velocities) is an error of this stage.

use std::collections::HashMap;

use mechanism_cas::{Id, Store};
use syn::{Expr, Ident};

use crate::ast::Named;
use crate::errors::Errors;
use crate::expr::{Context, Lowerer};
use crate::integrators::fit::NonSmooth;
use crate::integrators::{self, Family};
use crate::lower::{normal_form, options};
use crate::model::{Constraint, Model, NonholonomicRow, Parameter};
use crate::names;
use crate::orientation::{Desugared, Orientation};
use crate::parse::SectionKind;
use crate::sections::{self, ModelKind, Sections};
use crate::symbols::{Name, Symbols};
use crate::urdf::{self, Robot};

/// A fixed-size model in normal form, with what validation and the choice of integrators
/// need of its source: the sections (for spans), the requested integrators with the names
/// that requested them, where non-smooth functions were written, and the orientations.
pub struct Fixed<'a> {
    /// The model; its `integrators` are chosen later ([`integrators::fit::choose`]).
    pub model: Model,
    /// The sections it was read from.
    pub sections: Sections<'a>,
    /// `integrators: [..]` resolved, or `None` when the section is absent.
    pub requested: Option<Vec<(Family, Ident)>>,
    /// Where the energies and the holonomic rows use non-smooth functions.
    pub non_smooth: NonSmooth,
    /// The orientations desugared into the model (for the hints of the integrator checks).
    pub orientations: &'a [Orientation],
}

/// Lowers a fixed-size model whose orientations are desugared: reads its sections, checks its
/// names, resolves `integrators: [..]`, and lowers every expression into the model's store in
/// the normal form ([`normal_form`]). Every error of this stage is reported at once; the
/// model is returned only without errors, so that validation sees well-formed parts.
pub fn fixed<'a>(desugared: &'a Desugared, robot: Option<&Robot>) -> syn::Result<Fixed<'a>> {
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
    let requested = integrators::requested(
        sections.integrators,
        sections.values.get(&SectionKind::Integrators).copied(),
        ModelKind::Fixed,
        &mut errors,
    );
    let derivatives = crate::derivatives::requested(
        sections.derivatives,
        sections.values.get(&SectionKind::Derivatives).copied(),
        &mut errors,
    );
    let names_are_sound = errors.is_empty();

    let symbols = Symbols::new(&coordinates, &parameter_names);
    let mut store = Store::new();
    let (imported, builtins) = match robot {
        Some(robot) => {
            let (energy, builtins) = urdf::lowered(robot, &mut store, &symbols, &names);
            (energy, Some(builtins))
        }
        None => (None, None),
    };
    let mut lowerer = Lowerer {
        store: &mut store,
        symbols: &symbols,
        names: &names,
        errors: &mut errors,
        uses: Default::default(),
        robot: builtins.as_ref(),
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
    let energy = normal_form::lower_energy(
        &mut lowerer,
        &ast.name,
        sections.kinetic,
        sections.potential,
        sections.lagrangian,
        imported.as_ref(),
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
        Some(id)
    });
    // In maximal coordinates the joints' damping is a dissipation of the joints' rates.
    let dissipation = match (dissipation, lowerer.joint_damping()) {
        (Some(user), Some(joints)) => Some(lowerer.store.add(user, joints)),
        (user, joints) => user.or(joints),
    };
    let forces = sections
        .forces
        .map(|rows| lower_forces(&mut lowerer, rows, &names));
    let robot = match (robot, builtins.as_ref()) {
        (Some(robot), Some(builtins)) => {
            urdf::outputs::outputs(robot, builtins, &mut lowerer, &coordinates)
        }
        _ => None,
    };

    errors.finish()?;
    let energy = energy.ok_or_else(|| {
        syn::Error::new_spanned(&ast.name, "internal: energy missing without an error")
    })?;
    let model = Model {
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
        derivatives: derivatives.iter().map(|(d, _)| *d).collect(),
        store,
        symbols,
        kinetic: energy.kinetic,
        mass: energy.mass,
        potential: energy.potential,
        robot,
    };
    Ok(Fixed {
        model,
        sections,
        requested,
        non_smooth: NonSmooth {
            energy: energy_uses.non_smooth,
            constraints: constraint_non_smooth,
        },
        orientations: &desugared.orientations,
    })
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
            let (matrix, drive) = normal_form::split_nonholonomic(
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
                        format!(
                            "the force on `{}` is given twice; add the terms into one row",
                            row.name
                        ),
                    );
                }
                if let Some(value) = value {
                    forces[*i] = value;
                }
            }
            _ => {
                // A joint of an imported robot in maximal coordinates: the force does the
                // virtual work `value δθ`.
                let joint =
                    value.and_then(|value| lowerer.joint_force(&row.name.to_string(), value));
                match joint {
                    Some(generalized) => {
                        for (force, term) in forces.iter_mut().zip(generalized) {
                            *force = lowerer.store.add(*force, term);
                        }
                    }
                    None => lowerer.errors.error_spanned(
                        &row.name,
                        format!(
                            "`{}` is not a coordinate; each row of `forces` is named after the coordinate the force acts on (or, with `urdf`, a joint)",
                            row.name
                        ),
                    ),
                }
            }
        }
    }
    forces
}
