//! The one inertia check of every model: the kinetic energy describes inertia — not
//! identically zero, and positive semidefinite (no motion with negative kinetic energy) at the
//! sample points, with the parameters at their defaults. For a model with families, each term
//! is checked in its local slots, and every body's block of the mass matrix must be positive
//! definite, as SPOOK, RATTLE and SHAKE need `M⁻¹`.

use mechanism_cas::hessian;

use crate::errors::Errors;
use crate::family::model::{FamilyModel, Slot};
use crate::model::Model;
use crate::sample::{indefinite, points};
use crate::sections::Sections;

/// A model whose inertia is checked, with what the check needs of it.
pub enum Inertial<'a> {
    /// A fixed-size model, with its sections (the errors are reported at `kinetic`).
    Fixed(&'a Model, &'a Sections<'a>),
    /// A model with families (the errors are reported at the term or the declaration).
    Runtime(&'a FamilyModel),
}

/// Reports every inertia error of `model` into `errors`.
pub fn check(model: Inertial<'_>, errors: &mut Errors) {
    match model {
        Inertial::Fixed(model, sections) => fixed(model, sections, errors),
        Inertial::Runtime(model) => {
            if let Err(error) = runtime(model) {
                errors.push(error);
            }
        }
    }
}

/// Reports a kinetic energy that is identically zero or not positive semidefinite, at the
/// `kinetic` (or `lagrangian`) expression.
fn fixed(model: &Model, sections: &Sections, errors: &mut Errors) {
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

/// Reports a model with families' kinetic energy terms that are not positive semidefinite, and
/// bodies whose mass block is singular (a family or scalar coordinate without inertia).
fn runtime(model: &FamilyModel) -> syn::Result<()> {
    let mut errors = Errors::new();
    let defaults: Vec<f64> = model.parameters.iter().map(|p| p.default).collect();
    // Per group (and the scalars, as group `None`), the summed block at one sample point per
    // term: its size is the group's width.
    let width = |group: Option<usize>| match group {
        None => model.scalars.len(),
        Some(g) => model.groups[g].families.len(),
    };
    let mut blocks: Vec<(Option<usize>, Vec<Vec<f64>>)> = Vec::new();
    for term in &model.kinetic {
        let kernel = &term.kernel;
        let mut store = kernel.store.clone();
        let h = hessian(&mut store, kernel.values[0], &kernel.symbols.v);
        if h.iter().flatten().all(|&e| store.is_zero(e)) {
            errors.error_spanned(
                &term.source,
                "this kinetic energy term does not depend on the velocities; write each body's kinetic energy in terms of `dot(..)` of its coordinates",
            );
            continue;
        }
        // The scalar parameters' defaults, then those of the parameter family members read.
        let defaults: Vec<f64> = defaults
            .iter()
            .copied()
            .chain(
                kernel
                    .parameter_slots
                    .iter()
                    .map(|p| model.parameter_families[p.family].default),
            )
            .collect();
        let samples = points(&kernel.symbols, Some(&defaults), 8);
        if samples
            .iter()
            .any(|p| p.eval_matrix(&store, &h).is_some_and(|m| indefinite(&m)))
        {
            errors.error_spanned(
                &term.source,
                "this kinetic energy term is not positive semidefinite: some velocities give it a negative value; check the signs of the masses and of the terms in `dot(..)`",
            );
            continue;
        }
        let Some(values) = samples.first().and_then(|p| p.eval_matrix(&store, &h)) else {
            continue;
        };
        // Add the term's block into its body's (slots with velocities share one body, as
        // `generate` checks).
        for (a, row) in values.iter().enumerate() {
            for (b, &value) in row.iter().enumerate() {
                if value == 0.0 {
                    continue;
                }
                let (group, la) = locate(model, &kernel.slots[a]);
                let (_, lb) = locate(model, &kernel.slots[b]);
                let index = match blocks.iter().position(|(g, _)| *g == group) {
                    Some(i) => i,
                    None => {
                        let n = width(group);
                        blocks.push((group, vec![vec![0.0; n]; n]));
                        blocks.len() - 1
                    }
                };
                blocks[index].1[la][lb] += value;
            }
        }
    }
    errors.barrier()?;
    let groups = (!model.scalars.is_empty())
        .then_some(None)
        .into_iter()
        .chain((0..model.groups.len()).map(Some));
    for group in groups {
        let block = blocks.iter().find(|(g, _)| *g == group).map(|(_, b)| b);
        for k in (0..width(group)).filter(|&k| block.is_none_or(|b| b[k][k] <= 0.0)) {
            let (declared, shown) = match group {
                None => (&model.scalars[k], model.scalars[k].to_string()),
                Some(g) => {
                    let family = &model.families[model.groups[g].families[k]].name;
                    (family, format!("{family}[…]"))
                }
            };
            errors.error_spanned(
                declared,
                format!(
                    "`{shown}` has no inertia: the kinetic energy has no `dot(..)` of it, so the mass matrix is singular and SPOOK, RATTLE and SHAKE cannot solve for its acceleration; add its kinetic energy"
                ),
            );
        }
    }
    errors.finish()
}

/// Returns a slot's body group (`None` for the scalars) and its position in the body's block.
fn locate(model: &FamilyModel, slot: &Slot) -> (Option<usize>, usize) {
    match slot {
        Slot::Scalar(k) => (None, *k),
        Slot::Member { family, .. } => {
            let f = &model.families[*family];
            (Some(f.group), f.position)
        }
    }
}
