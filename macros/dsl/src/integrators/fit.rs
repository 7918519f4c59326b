//! Which integrators fit a fixed-size model: the model's [`Features`] (constraints, forces, a
//! singular or varying mass matrix, redundant rows, kinks), measured once at sample points,
//! and for each family of the capability table the problems it has with them. Validation
//! reports a requested integrator's problems ([`problems`], [`kink_problems`]) at its name;
//! [`choose`] picks the default set among the families that fit.

use mechanism_cas::{jacobian, Id};
use proc_macro2::Span;
use syn::Ident;

use crate::errors::Errors;
use crate::integrators::{Capabilities, Family};
use crate::model::Model;
use crate::orientation::{Kind, Orientation};
use crate::sample::{independent_rows, points};
use crate::sections::Sections;

/// The features of a model that decide which integrators can run it.
pub struct Features {
    holonomic: bool,
    nonholonomic: bool,
    rheonomic: bool,
    forces: bool,
    /// `Some(hint)` if the mass matrix is singular at every sample point.
    singular_mass: Option<String>,
    varying_mass: bool,
    /// `Some(what)` if the mass matrix is singular in a direction that no constraint fixes at
    /// every sample point, e.g. "the velocity of `x` appears in no kinetic term and no
    /// constraint fixes `x`".
    undetermined: Option<String>,
    /// A holonomic row that depends linearly on the rows before it at every sample point.
    redundant: Option<Ident>,
    /// Non-smooth functions of the coordinates, where the user wrote them.
    kinks: Kinks,
    /// What to write instead when an orientation makes the mass matrix vary, if one does.
    orientation_varying: Option<String>,
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
pub fn kink_problems(integrator: Family, features: &Features) -> Vec<(Span, String)> {
    let can = integrator.capabilities();
    let name = integrator.name();
    let first_order = Family::list(fitting(features));
    let hint = if first_order.is_empty() {
        "use a smooth approximation (e.g. `sqrt(x.powi(2) + 1e-8)` for `x.abs()`)".to_string()
    } else {
        format!("use a smooth approximation (e.g. `sqrt(x.powi(2) + 1e-8)` for `x.abs()`), or an integrator that needs only first derivatives: {first_order}")
    };
    let mut problems = Vec::new();
    if let Some(need) = energy_need(can) {
        for (span, function) in &features.kinks.energy {
            problems.push((
                *span,
                format!("`{function}` is not differentiable everywhere, but `{name}` needs {need}; {hint}"),
            ));
        }
    }
    if needs_smooth_constraints(can) {
        for (span, function) in &features.kinks.constraints {
            problems.push((
                *span,
                format!("`{function}` is not differentiable everywhere, but `{name}` needs the second derivatives of the constraints; {hint}"),
            ));
        }
    }
    problems
}

/// Returns an error, at each non-smooth function of the energy and of the holonomic rows, for
/// `what` (`derivatives: [hessians]`), which needs the second derivatives of both.
pub fn hessian_kink_problems(what: &str, features: &Features) -> Vec<(Span, String)> {
    let energy = features
        .kinks
        .energy
        .iter()
        .map(|&(span, function)| (span, hessian_kink(what, function, "the energy")));
    let rows = features
        .kinks
        .constraints
        .iter()
        .map(|&(span, function)| (span, hessian_kink(what, function, "the constraints")));
    energy.chain(rows).collect()
}

/// Returns the error at the non-smooth `function` of `of` (the energy, the constraints) whose
/// second derivatives `what` (`derivatives: [hessians]`) needs, for either kind of model.
pub fn hessian_kink(what: &str, function: &str, of: &str) -> String {
    format!(
        "`{function}` is not differentiable everywhere, but {what} needs the second derivatives \
         of {of}; use a smooth approximation (e.g. `sqrt(x.powi(2) + 1e-8)` for `x.abs()`)"
    )
}

/// Which derivative of the energy beyond the first a family needs, if any.
fn energy_need(can: Capabilities) -> Option<&'static str> {
    if can.third_derivative {
        Some("the third derivative of the potential")
    } else if can.hessian || can.discrete_gradients {
        Some("the second derivatives of the energy")
    } else {
        None
    }
}

/// Whether a family differentiates the constraints twice.
fn needs_smooth_constraints(can: Capabilities) -> bool {
    (can.penalty && can.hessian) || can.kinematics || can.discrete_gradients
}

/// Whether `family` can step a model with `features`, non-smooth functions included.
fn fits(family: Family, features: &Features) -> bool {
    let can = family.capabilities();
    let kinks = (!features.kinks.energy.is_empty() && energy_need(can).is_some())
        || (!features.kinks.constraints.is_empty() && needs_smooth_constraints(can));
    problems(family, features).is_empty() && !kinks
}

/// Returns the families that can step a model with `features`: the only ones a hint names.
fn fitting(features: &Features) -> impl Iterator<Item = Family> + '_ {
    Family::ALL.into_iter().filter(|f| fits(*f, features))
}

/// Returns "; use `x` or `y` instead" with the families that can step the model, or nothing.
pub fn instead(features: &Features) -> String {
    let names = Family::list(fitting(features));
    if names.is_empty() {
        String::new()
    } else {
        format!("; use {names} instead")
    }
}

/// Where the model uses non-smooth functions (`abs`, `signum`, `min`, `max`).
pub struct NonSmooth {
    /// Uses in the kinetic and potential energies or the Lagrangian.
    pub energy: Vec<(Span, &'static str)>,
    /// Uses in holonomic constraints.
    pub constraints: Vec<(Span, &'static str)>,
}

/// Returns why `integrator` cannot step a model with `features` (empty when it can), without
/// hints: the caller adds the families that can.
pub fn problems(integrator: Family, features: &Features) -> Vec<String> {
    let can = integrator.capabilities();
    let mut problems = Vec::new();
    if features.holonomic && !can.holonomic {
        problems.push("cannot treat holonomic constraints (section `holonomic`)".to_string());
    }
    if features.nonholonomic && !can.nonholonomic {
        problems.push("cannot treat nonholonomic constraints (section `nonholonomic`)".to_string());
    }
    if features.rheonomic && !can.rheonomic {
        problems.push(
            "does not support time-dependent holonomic constraints (`t` in `holonomic`)"
                .to_string(),
        );
    }
    if features.forces && !can.forces {
        problems.push(
            "cannot use dissipation or generalized forces (sections `dissipation`, `forces`)"
                .to_string(),
        );
    }
    if let Some(hint) = &features.singular_mass {
        if !can.singular_mass {
            problems.push(format!(
                "needs the inverse of the mass matrix, but the mass matrix is singular for every configuration{hint}"
            ));
        } else if let (Some(undetermined), false) =
            (&features.undetermined, can.massless_coordinates)
        {
            problems.push(format!(
                "needs a constraint for every direction without inertia, but {undetermined}"
            ));
        }
    }
    if features.varying_mass && !can.varying_mass {
        problems.push(match &features.orientation_varying {
            Some(hint) => format!("assumes a constant mass matrix, but {hint}"),
            None => "assumes a constant mass matrix, but this one depends on the coordinates"
                .to_string(),
        });
    }
    if let (Some(row), true) = (&features.redundant, can.full_rank) {
        problems.push(format!(
            "needs linearly independent constraints, but `{row}` is a linear combination of the rows before it for every configuration (remove it)"
        ));
    }
    problems
}

impl Features {
    /// Measures the features of `model` at its sample points: the non-smooth functions
    /// written where `non_smooth` says (kept only where they really kink in `q`), with hints
    /// for the `orientations` that make the mass matrix vary or singular.
    pub fn of(model: &mut Model, non_smooth: &NonSmooth, orientations: &[Orientation]) -> Features {
        let mut features = features(model);
        features.kinks = kinks(model, non_smooth);
        orientation_hints(model, orientations, &mut features);
        features
    }
}

/// Returns the integrators to compile: the requested ones, which validation has checked
/// against the model's `features`, or else the default set — the primary families of
/// [`Family::DEFAULT`] that fit, or the fallback ones if none does. A model no family of the
/// default set can step, or whose motion no inertia or constraint determines, is an error at
/// its energy or name, with the families that would fit.
pub fn choose(
    model: &Model,
    sections: &Sections,
    requested: Option<Vec<(Family, Ident)>>,
    features: &Features,
) -> syn::Result<Vec<Family>> {
    if let Some(requested) = requested {
        return Ok(requested.into_iter().map(|(family, _)| family).collect());
    }
    let mut errors = Errors::new();
    if let Some(undetermined) = &features.undetermined {
        let potential = Family::list(fitting(features));
        let livens = if potential.is_empty() {
            String::new()
        } else {
            format!(", or, if the potential alone determines it, list `integrators: [..]` with {potential}")
        };
        sections.error_at_energy(
            &model.name,
            &mut errors,
            format!("{undetermined}, so no integrator of the default set can step this mechanism; give it kinetic energy, add a constraint that fixes it{livens}"),
        );
        errors.barrier()?;
    }
    let primary = &Family::DEFAULT[..Family::DEFAULT_COUNT];
    let fallback = &Family::DEFAULT[Family::DEFAULT_COUNT..];
    let mut chosen: Vec<Family> = primary
        .iter()
        .copied()
        .filter(|f| fits(*f, features))
        .collect();
    if chosen.is_empty() {
        chosen = fallback
            .iter()
            .copied()
            .filter(|f| fits(*f, features))
            .collect();
    }
    if chosen.is_empty() {
        let reasons: Vec<String> = problems(Family::Spook, features);
        errors.error_spanned(
            &model.name,
            format!(
                "no integrator of the default set can step this mechanism (`spook` {}); list the integrators you want in `integrators: [..]`",
                reasons.join("; it also ")
            ),
        );
    }
    errors.finish()?;
    Ok(chosen)
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

    let undetermined = singular_mass
        .as_ref()
        .and_then(|_| undetermined(model, &rows, &samples));
    Features {
        undetermined,
        holonomic: !model.constraints.is_empty(),
        nonholonomic: !model.nonholonomic.is_empty(),
        rheonomic: model.rheonomic(),
        forces: model.dissipation.is_some() || model.forces.is_some(),
        singular_mass,
        varying_mass: model.configuration_dependent_mass(),
        redundant,
        kinks: Kinks::default(),
        orientation_varying: None,
    }
}

/// Says what to write instead when an orientation is why the mass matrix varies or is
/// singular: a quaternion's mass matrix `4EᵀIE + c q qᵀ` depends on `q`, and without the
/// completion `c q qᵀ` it is singular; a matrix's is constant only in the `rigid_kinetic` form.
fn orientation_hints(model: &Model, orientations: &[Orientation], features: &mut Features) {
    let store = &model.store;
    let moves_mass = |orientation: &Orientation| {
        let names: Vec<String> = orientation
            .coordinates()
            .iter()
            .map(|c| c.to_string())
            .collect();
        model
            .coordinates
            .iter()
            .zip(&model.symbols.q)
            .filter(|(c, _)| names.contains(&c.to_string()))
            .any(|(_, &q)| model.mass.iter().flatten().any(|&m| store.depends_on(m, q)))
    };
    let Some(orientation) = orientations.iter().find(|o| moves_mass(o)) else {
        return;
    };
    let name = &orientation.name;
    features.orientation_varying = Some(match orientation.kind {
        Kind::Quaternion => format!(
            "the quaternion orientation `{name}` makes it depend on the coordinates; declare `{name}: matrix` in `orientations` and write its kinetic energy with `rigid_kinetic({name}, ..)`, whose mass matrix is constant"
        ),
        Kind::Matrix => format!(
            "the kinetic energy of the matrix orientation `{name}` makes it depend on the coordinates; write it with `rigid_kinetic({name}, i1, i2, i3)`, whose mass matrix is constant"
        ),
    });
    if let (Some(singular), Kind::Quaternion) = (&mut features.singular_mass, orientation.kind) {
        singular.push_str(&format!(
            " (a quaternion's `½ ΩᵀIΩ` is blind to `{name}` growing in length: add `completion({name}, c)`, which vanishes on `|{name}| = 1`, or write the energy with `rigid_kinetic`)"
        ));
    }
}

/// Describes a direction without inertia that no constraint fixes, if the stacked matrix
/// `[M; G; A]` has a null space at every sample point (then `ker M ∩ ker G ∩ ker A ≠ 0`, and
/// the SPOOK matrix `M + Gᵀ Σ⁻¹ G` is singular).
fn undetermined(
    model: &Model,
    rows: &[Vec<Id>],
    samples: &[crate::sample::Point],
) -> Option<String> {
    let store = &model.store;
    let mut stacked: Vec<Vec<Id>> = model.mass.clone();
    stacked.extend(rows.iter().cloned());
    stacked.extend(model.nonholonomic.iter().map(|r| r.matrix.clone()));
    let n = model.dof();
    let ranks: Vec<usize> = samples
        .iter()
        .filter_map(|p| p.eval_matrix(store, &stacked))
        .map(|m| independent_rows(&m).iter().filter(|&&i| i).count())
        .collect();
    if ranks.is_empty() || ranks.iter().any(|&r| r >= n) {
        return None;
    }
    let fixed = |i: usize| {
        rows.iter()
            .chain(model.nonholonomic.iter().map(|r| &r.matrix))
            .any(|row| !store.is_zero(row[i]))
    };
    let free: Vec<String> = (0..n)
        .filter(|&i| model.mass[i].iter().all(|&m| store.is_zero(m)) && !fixed(i))
        .map(|i| format!("`{}`", model.coordinates[i]))
        .collect();
    Some(match free.as_slice() {
        [] => "the mass matrix is singular in a direction that no constraint fixes".to_string(),
        [one] => format!(
            "the velocity of {one} appears in no kinetic term and no constraint fixes {one}"
        ),
        _ => format!(
            "the velocities of {} appear in no kinetic term and no constraint fixes them",
            free.join(", ")
        ),
    })
}

/// Returns the sample points of the numeric checks, with parameters at their defaults.
pub fn sample_points(model: &Model) -> Vec<crate::sample::Point> {
    let defaults: Vec<f64> = model.parameters.iter().map(|p| p.default).collect();
    points(&model.symbols, Some(&defaults), 4)
}

/// Returns `G = ∂g/∂q` in the model's store (derivation later reuses the shared nodes).
pub fn holonomic_jacobian(model: &mut Model) -> Vec<Vec<Id>> {
    let exprs: Vec<Id> = model.constraints.iter().map(|c| c.expr).collect();
    jacobian(&mut model.store, &exprs, &model.symbols.q)
}
