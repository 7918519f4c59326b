//! Runs the bounded e-graph clean-up of `mechanism-cas` over each group of outputs that is
//! emitted as one function, so that simplification sees what those outputs share.

mod limits;

pub use limits::limits;

use mechanism_cas::{simplify, Id, SimplifyLimits, SimplifyReport, Store};

use crate::derive::{Derived, Outputs, ScalarDerivatives};
use crate::ir::Ir;

/// Simplifies the derived quantities of a model of either kind in place: a fixed-size model's
/// in its store, a model with families' kernel by kernel, each in its own
/// ([`FamilyDerived::simplify`](crate::family::derive::FamilyDerived::simplify)).
pub fn simplify_model(model: &mut Ir, outputs: &mut Outputs) {
    match (model, outputs) {
        (Ir::Fixed(model), Outputs::Fixed(derived)) => {
            simplify_outputs(&mut model.store, derived, &limits());
        }
        (_, Outputs::Runtime(derived)) => derived.simplify(),
        (Ir::Runtime { .. }, Outputs::Fixed(_)) => {}
    }
}

/// Simplifies every output group of `derived` in place and returns one report per group.
pub fn simplify_outputs(
    store: &mut Store,
    derived: &mut Derived,
    limits: &SimplifyLimits,
) -> Vec<SimplifyReport> {
    let mut reports = Vec::new();
    let mut run = |ids: Vec<&mut Id>| {
        let roots: Vec<Id> = ids.iter().map(|id| **id).collect();
        let (simplified, report) = simplify(store, &roots, limits);
        for (slot, new) in ids.into_iter().zip(simplified) {
            *slot = new;
        }
        reports.push(report);
    };
    run(derived.mass.iter_mut().flatten().collect());
    run(vec![&mut derived.kinetic]);
    run(derived
        .constraints
        .iter_mut()
        .chain(derived.jacobian.iter_mut().flatten())
        .collect());
    for scalar in std::iter::once(&mut derived.potential).chain(derived.penalized.as_mut()) {
        let ScalarDerivatives {
            value,
            gradient,
            hessian,
            third,
        } = scalar;
        run(vec![value]);
        run(gradient
            .iter_mut()
            .chain(hessian.iter_mut().flatten().flatten())
            .collect());
        if let Some(third) = third {
            run(third.iter_mut().collect());
        }
    }
    if let Some(hessian) = &mut derived.penalty_hessian {
        run(hessian.iter_mut().flatten().collect());
    }
    if let Some(kinematics) = &mut derived.kinematics {
        run(kinematics.time_derivative.iter_mut().collect());
        run(kinematics.acceleration_bias.iter_mut().collect());
        if let Some(derivatives) = &mut kinematics.derivatives {
            run(derivatives
                .bias_q
                .iter_mut()
                .chain(derivatives.bias_p.iter_mut())
                .flatten()
                .collect());
            run(derivatives
                .time_q
                .iter_mut()
                .chain(derivatives.time_p.iter_mut())
                .flatten()
                .collect());
        }
    }
    if let Some(second) = &mut derived.second_order {
        run(second.kinetic_gradient.iter_mut().collect());
        run(second
            .kinetic_qq
            .iter_mut()
            .chain(second.kinetic_qv.iter_mut())
            .flatten()
            .collect());
        run(second
            .constraint_hessians
            .iter_mut()
            .flatten()
            .flatten()
            .collect());
    }
    if let Some(terms) = &mut derived.velocity_terms {
        run(terms
            .dq
            .iter_mut()
            .chain(terms.dv.iter_mut())
            .flatten()
            .collect());
        run(terms.dp.iter_mut().flatten().collect());
    }
    if let Some((matrix, drive)) = &mut derived.nonholonomic {
        run(matrix.iter_mut().flatten().collect());
        run(drive.iter_mut().collect());
    }
    if let Some(jacobian) = &mut derived.nonholonomic_derivative {
        run(jacobian.iter_mut().flatten().collect());
    }
    for vector in [&mut derived.dissipation, &mut derived.forces]
        .into_iter()
        .flatten()
    {
        run(vector.value.iter_mut().collect());
        run(vector
            .dq
            .iter_mut()
            .chain(vector.dv.iter_mut())
            .flatten()
            .collect());
    }
    if let Some(parameters) = &mut derived.parameters {
        run(parameters.mass.iter_mut().flatten().flatten().collect());
        run(parameters
            .potential
            .iter_mut()
            .chain(parameters.potential_gradient.iter_mut())
            .chain(parameters.kinetic_gradient.iter_mut())
            .flatten()
            .collect());
        if let Some(along) = &mut parameters.potential_hessian_along {
            run(along.iter_mut().flatten().collect());
        }
        run(parameters.applied_force.iter_mut().flatten().collect());
        run(parameters.constraints.iter_mut().flatten().collect());
        run(parameters
            .constraint_jacobian
            .iter_mut()
            .flatten()
            .flatten()
            .collect());
        run(parameters
            .nonholonomic_matrix
            .iter_mut()
            .flatten()
            .flatten()
            .collect());
        run(parameters.nonholonomic_drive.iter_mut().flatten().collect());
    }
    reports
}
