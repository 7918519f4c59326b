//! Checks the model against the integrators it is compiled for: every integrator must be able
//! to treat every feature of the model, and the model must be well posed for it (an invertible
//! mass matrix where `M⁻¹` is needed, independent constraints where full rank is needed).

use mechanism_cas::{jacobian, Id};
use proc_macro2::Span;
use syn::Ident;

use super::sample::{independent_rows, points};
use super::Sections;
use crate::errors::Errors;
use crate::integrators::Integrator;
use crate::model::Model;
use crate::parse::SectionKind;

/// The features of a model that decide which integrators can run it.
struct Features {
    nonholonomic: bool,
    rheonomic: bool,
    forces: bool,
    /// `Some(hint)` if the mass matrix is singular at every sample point.
    singular_mass: Option<String>,
    varying_mass: bool,
    /// A holonomic row that depends linearly on the rows before it at every sample point.
    redundant: Option<Ident>,
    /// Non-smooth functions of the coordinates, where the user wrote them.
    kinks: Kinks,
}

/// Non-smooth functions whose arguments depend on the coordinates.
#[derive(Default)]
struct Kinks {
    energy: Vec<(Span, &'static str)>,
    constraints: Vec<(Span, &'static str)>,
}

/// Keeps the recorded non-smooth uses of a part of the model only if the symbolic expressions
/// really contain a kink in the coordinates (a `max(k, 1)` of parameters is smooth in `q`).
fn kinks(model: &Model, non_smooth: &NonSmooth) -> Kinks {
    let store = &model.store;
    let q = &model.symbols.q;
    let energy_kinks = !store.non_smooth_dependencies(model.potential, q).is_empty()
        || !store.non_smooth_dependencies(model.kinetic, q).is_empty();
    let constraint_kinks = model
        .constraints
        .iter()
        .any(|c| !store.non_smooth_dependencies(c.expr, q).is_empty());
    Kinks {
        energy: if energy_kinks {
            non_smooth.energy.clone()
        } else {
            Vec::new()
        },
        constraints: if constraint_kinks {
            non_smooth.constraints.clone()
        } else {
            Vec::new()
        },
    }
}

/// Returns an error, at each non-smooth function, for every derivative `integrator` needs
/// beyond the first.
fn kink_problems(integrator: Integrator, features: &Features) -> Vec<(Span, String)> {
    let can = integrator.capabilities();
    let name = integrator.name();
    let hint = "use a smooth approximation (e.g. `sqrt(x.powi(2) + 1e-8)` for `x.abs()`), or an integrator that needs only first derivatives, such as `spook`";
    let mut problems = Vec::new();
    let energy_need = if can.third_derivative {
        Some("the third derivative of the potential")
    } else if can.hessian || can.discrete_gradients {
        Some("the second derivatives of the energy")
    } else {
        None
    };
    if let Some(need) = energy_need {
        for (span, function) in &features.kinks.energy {
            problems.push((
                *span,
                format!("`{function}` is not differentiable everywhere, but `{name}` needs {need}; {hint}"),
            ));
        }
    }
    let constraint_need = (can.penalty && can.hessian) || can.kinematics || can.discrete_gradients;
    if constraint_need {
        for (span, function) in &features.kinks.constraints {
            problems.push((
                *span,
                format!("`{function}` is not differentiable everywhere, but `{name}` needs the second derivatives of the constraints; {hint}"),
            ));
        }
    }
    problems
}

/// Where the model uses non-smooth functions (`abs`, `signum`, `min`, `max`).
pub struct NonSmooth {
    /// Uses in the kinetic and potential energies or the Lagrangian.
    pub energy: Vec<(Span, &'static str)>,
    /// Uses in holonomic constraints.
    pub constraints: Vec<(Span, &'static str)>,
}

/// Checks the requested integrators (or picks the default set) and returns the ones to compile.
pub fn check(
    model: &mut Model,
    sections: &Sections,
    requested: Option<Vec<(Integrator, Ident)>>,
    non_smooth: &NonSmooth,
    errors: &mut Errors,
) -> Vec<Integrator> {
    let mut features = features(model);
    features.kinks = kinks(model, non_smooth);
    check_degrees_of_freedom(model, sections, errors);
    let model = &*model;
    match requested {
        Some(requested) => {
            for (integrator, ident) in &requested {
                for problem in problems(*integrator, &features) {
                    errors.error_spanned(ident, format!("`{}` {problem}", integrator.name()));
                }
                for (span, message) in kink_problems(*integrator, &features) {
                    errors.error_at(span, message);
                }
            }
            requested.into_iter().map(|(i, _)| i).collect()
        }
        None => {
            let fits = |i: &Integrator| {
                problems(*i, &features).is_empty() && kink_problems(*i, &features).is_empty()
            };
            let mut chosen: Vec<Integrator> =
                Integrator::DEFAULT.into_iter().filter(fits).collect();
            if chosen.is_empty() {
                chosen = [Integrator::Rk, Integrator::Livens, Integrator::Dlda]
                    .into_iter()
                    .filter(fits)
                    .collect();
            }
            if chosen.is_empty() {
                let reasons: Vec<String> = problems(Integrator::Spook, &features);
                errors.error_spanned(
                    &model.name,
                    format!(
                        "no integrator of the default set can run this mechanism (`spook` {}); list the integrators you want in `integrators: [..]`",
                        reasons.join("; ")
                    ),
                );
            }
            chosen
        }
    }
}

/// Returns why `integrator` cannot run a model with `features` (empty when it can).
fn problems(integrator: Integrator, features: &Features) -> Vec<String> {
    let can = integrator.capabilities();
    let mut problems = Vec::new();
    if features.nonholonomic && !can.nonholonomic {
        problems.push(format!(
            "cannot treat nonholonomic constraints (section `nonholonomic`); {}",
            Integrator::use_instead(|c| c.nonholonomic)
        ));
    }
    if features.rheonomic && !can.rheonomic {
        problems.push(format!(
            "does not support time-dependent holonomic constraints (`t` in `holonomic`); {}",
            Integrator::use_instead(|c| c.rheonomic)
        ));
    }
    if features.forces && !can.forces {
        problems.push(format!(
            "cannot use dissipation or generalized forces (sections `dissipation`, `forces`); {}",
            Integrator::use_instead(|c| c.forces)
        ));
    }
    if let (Some(hint), false) = (&features.singular_mass, can.singular_mass) {
        problems.push(format!(
            "needs the inverse of the mass matrix, but the mass matrix is singular for every configuration{hint}; use the Livens/Gonzalez scheme `livens`, or `spook`"
        ));
    }
    if features.varying_mass && !can.varying_mass && features.singular_mass.is_none() {
        problems.push(format!(
            "assumes a constant mass matrix, but this one depends on the coordinates; {}",
            Integrator::use_instead(|c| c.varying_mass)
        ));
    }
    if let (Some(row), true) = (&features.redundant, can.full_rank) {
        problems.push(format!(
            "needs linearly independent constraints, but `{row}` is a linear combination of the rows before it for every configuration; remove it, or use `spook`, which tolerates redundant constraints"
        ));
    }
    problems
}

fn features(model: &mut Model) -> Features {
    let rows = holonomic_jacobian(model);
    let store = &model.store;
    let samples = sample_points(model);

    let mass_ranks: Vec<Vec<bool>> = samples
        .iter()
        .filter_map(|p| p.eval_matrix(store, &model.mass))
        .map(|m| independent_rows(&m))
        .collect();
    let singular = !mass_ranks.is_empty() && mass_ranks.iter().all(|r| r.contains(&false));
    let singular_mass = singular.then(|| {
        let massless: Vec<String> = model
            .mass
            .iter()
            .zip(&model.coordinates)
            .filter(|(row, _)| row.iter().all(|&m| store.is_zero(m)))
            .map(|(_, c)| format!("`{c}`"))
            .collect();
        if massless.is_empty() {
            String::new()
        } else {
            format!(
                " (no kinetic energy involves the velocity of {})",
                massless.join(", ")
            )
        }
    });

    let independence: Vec<Vec<bool>> = samples
        .iter()
        .filter_map(|p| p.eval_matrix(store, &rows))
        .map(|g| independent_rows(&g))
        .collect();
    let redundant = (0..rows.len())
        .find(|&k| !independence.is_empty() && independence.iter().all(|ind| !ind[k]))
        .map(|k| model.constraints[k].name.clone());

    Features {
        nonholonomic: !model.nonholonomic.is_empty(),
        rheonomic: model.rheonomic(),
        forces: model.dissipation.is_some() || model.forces.is_some(),
        singular_mass,
        varying_mass: model.configuration_dependent_mass(),
        redundant,
        kinks: Kinks::default(),
    }
}

/// Returns the sample points of the numeric checks, with parameters at their defaults.
fn sample_points(model: &Model) -> Vec<super::sample::Point> {
    let defaults: Vec<f64> = model.parameters.iter().map(|p| p.default).collect();
    points(&model.symbols, Some(&defaults), 4)
}

/// Returns `G = ∂g/∂q` in the model's store (derivation later reuses the shared nodes).
fn holonomic_jacobian(model: &mut Model) -> Vec<Vec<Id>> {
    let exprs: Vec<Id> = model.constraints.iter().map(|c| c.expr).collect();
    jacobian(&mut model.store, &exprs, &model.symbols.q)
}

/// Reports constraints that leave the mechanism no degree of freedom: as many independent
/// holonomic and nonholonomic rows as coordinates at every sample point.
fn check_degrees_of_freedom(model: &mut Model, sections: &Sections, errors: &mut Errors) {
    let mut rows = holonomic_jacobian(model);
    rows.extend(model.nonholonomic.iter().map(|r| r.matrix.clone()));
    if rows.is_empty() {
        return;
    }
    let n = model.dof();
    let samples = sample_points(model);
    let ranks: Vec<usize> = samples
        .iter()
        .filter_map(|p| p.eval_matrix(&model.store, &rows))
        .map(|g| independent_rows(&g).iter().filter(|&&i| i).count())
        .collect();
    if !ranks.is_empty() && ranks.iter().all(|&r| r >= n) {
        let at = sections
            .keywords
            .get(&SectionKind::Holonomic)
            .or_else(|| sections.keywords.get(&SectionKind::Nonholonomic))
            .map_or_else(|| model.name.span(), |k| k.span());
        errors.error_at(
            at,
            format!(
                "the constraints have {} independent rows for {n} coordinates, which leaves the mechanism no degree of freedom; remove constraints or add coordinates",
                ranks.iter().min().copied().unwrap_or(n)
            ),
        );
    }
}
