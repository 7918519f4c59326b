//! Checks the model against the integrators it requests: every integrator must be able to
//! treat every feature of the model, and the model must be well posed for it (an invertible
//! mass matrix where `M⁻¹` is needed, independent constraints where full rank is needed); and
//! the constraints must leave the mechanism a degree of freedom. The features and each
//! family's problems with them are measured in [`fit`](crate::integrators::fit); the default
//! set, when none is requested, is chosen there too ([`choose`](crate::integrators::fit::choose)).

use syn::Ident;

use crate::derivatives::hessians_wanted;
use crate::errors::Errors;
use crate::integrators::fit::{
    hessian_kink_problems, holonomic_jacobian, instead, kink_problems, problems, sample_points,
    Features,
};
use crate::integrators::Family;
use crate::model::Model;
use crate::parse::SectionKind;
use crate::sample::independent_rows;
use crate::sections::Sections;

/// Reports, at each requested integrator's name, what it cannot treat in a model with
/// `features`, and at each non-smooth function a derivative it (or `derivatives: [..]`)
/// needs that does not exist.
pub fn check(
    model: &mut Model,
    sections: &Sections,
    requested: Option<&[(Family, Ident)]>,
    features: &Features,
    errors: &mut Errors,
) {
    check_degrees_of_freedom(model, sections, errors);
    for (integrator, ident) in requested.unwrap_or_default() {
        let reasons = problems(*integrator, features);
        if !reasons.is_empty() {
            errors.error_spanned(
                ident,
                format!(
                    "`{}` {}{}",
                    integrator.name(),
                    reasons.join("; it also "),
                    instead(features)
                ),
            );
        }
        for (span, message) in kink_problems(*integrator, features) {
            errors.error_at(span, message);
        }
    }
    if let Some(derivative) = hessians_wanted(&model.derivatives) {
        let what = format!("`derivatives: [{}]`", derivative.name());
        for (span, message) in hessian_kink_problems(&what, features) {
            errors.error_at(span, message);
        }
    }
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
