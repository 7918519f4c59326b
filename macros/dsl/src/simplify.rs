//! Runs the bounded e-graph clean-up of `mechanism-cas` over each group of outputs that is
//! emitted as one function, so that simplification sees what those outputs share.

use mechanism_cas::{simplify, Id, SimplifyLimits, SimplifyReport, Store};

use crate::derive::{Derived, ScalarDerivatives};

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
    reports
}
