//! Checks that the kinetic energy describes inertia: not identically zero, and positive
//! semidefinite (no motion with negative kinetic energy) at the sample points, with the
//! parameters at their defaults.

use crate::errors::Errors;
use crate::model::Model;
use crate::sample::{indefinite, points};
use crate::sections::Sections;

/// Reports a kinetic energy that is identically zero or not positive semidefinite, at the
/// `kinetic` (or `lagrangian`) expression.
pub fn check(model: &Model, sections: &Sections, errors: &mut Errors) {
    let store = &model.store;
    if model.mass.iter().flatten().all(|&m| store.is_zero(m)) {
        sections.error_at_energy(
            &model.name,
            errors,
            "the kinetic energy is identically zero, so nothing has inertia and the motion is undetermined; write it in terms of the velocities, e.g. `0.5 * m * dot(x).powi(2)`".to_string(),
        );
        return;
    }
    let defaults: Vec<f64> = model.parameters.iter().map(|p| p.default).collect();
    let negative = points(&model.symbols, Some(&defaults), 8)
        .into_iter()
        .find(|p| {
            p.eval_matrix(store, &model.mass)
                .is_some_and(|m| indefinite(&m))
        });
    if let Some(point) = negative {
        let at_q: Vec<String> = model
            .coordinates
            .iter()
            .zip(&model.symbols.q)
            .map(|(c, &q)| format!("{c} = {:.3}", point.get(q)))
            .collect();
        sections.error_at_energy(
            &model.name,
            errors,
            format!(
                "the kinetic energy is not positive semidefinite: at {} (parameters at their defaults) some velocities give it a negative value; check the signs of the masses and of the terms in `dot(..)`",
                at_q.join(", ")
            ),
        );
    }
}
