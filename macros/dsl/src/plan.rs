//! Decides which derived quantities the model's code needs, from the integrators it is compiled
//! for (the table of "what each integrator needs" in DESIGN.md, as data in
//! [`Family::capabilities`]). Generating only those keeps the macro's cost bounded.

use crate::integrators::{Capabilities, Family};
use crate::model::Model;

/// The derived quantities to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// `Hess V`, for the Zhang–Skeel and Newmark families and Newton's method.
    pub hessian: bool,
    /// `a·V'''·a`, for full Z&S.
    pub third_derivative: bool,
    /// `g` and `G = ∂g/∂q`.
    pub constraints: bool,
    /// `W = V + ½ω²|g|²` with the derivatives the penalty integrators need (Tao–Owhadi eq. 7).
    pub penalty: bool,
    /// `Hess ½ω²|g|²` alone, the stiff part of the potential for stiff Z&Ss.
    pub penalty_hessian: bool,
    /// `g_t` and `(G v)_q v + 2 G_t v + g_tt`, for index reduction and rheonomic constraints.
    pub kinematics: bool,
    /// `∂T/∂q`, its derivatives and the constraint Hessians: for discrete gradients and their
    /// Newton Jacobians, and for the velocity terms `∂T/∂q − Ṁ v` of index reduction.
    pub second_order: bool,
    /// `A(q)` and `w(t)`.
    pub nonholonomic: bool,
    /// `∂(A(q) v)/∂q`, for Newton on nonholonomic rows (`dlda`'s Cortés–Martínez variant and
    /// `dlda_midpoint`).
    pub nonholonomic_derivative: bool,
    /// `−∂R/∂v` and its Jacobians.
    pub dissipation: bool,
    /// `f(q, v, t)` and its Jacobians.
    pub forces: bool,
    /// The linear solve `a = −(M + c H)⁻¹ ∇V` of the Zhang–Skeel family, specialized to the
    /// structural nonzeros of `M + c H` (for each Hessian that is generated).
    pub linear_solve: bool,
}

impl Plan {
    /// Returns the plan for the integrators `model` is compiled for.
    pub fn for_model(model: &Model) -> Plan {
        let any = |need: fn(Capabilities) -> bool| {
            model
                .integrators
                .iter()
                .any(|i: &Family| need(i.capabilities()))
        };
        let constrained = !model.constraints.is_empty();
        let penalty = constrained && any(|c| c.penalty);
        let third_derivative = any(|c| c.third_derivative);
        Plan {
            hessian: any(|c| c.hessian) || third_derivative,
            third_derivative,
            constraints: constrained,
            penalty,
            penalty_hessian: penalty && any(|c| c.stiff_penalty),
            // Also without constraints (then `HolonomicKinematics<N, 0>` is empty), so that the
            // index-1 integrators run on unconstrained models too.
            kinematics: any(|c| c.kinematics) || model.rheonomic(),
            // A scheme that steps a varying `M` needs `∂T/∂q` (the midpoint DLA also its
            // derivatives, for Newton).
            second_order: any(|c| c.discrete_gradients || c.kinematics || c.varying_mass),
            nonholonomic: !model.nonholonomic.is_empty(),
            // Also without nonholonomic rows (then `NonholonomicDerivative<N, 0>` is empty), so
            // that both runtime schemes of `dlda` step every model compiled for it.
            nonholonomic_derivative: model.uses(Family::Dlda) || model.uses(Family::DldaMidpoint),
            dissipation: model.dissipation.is_some(),
            forces: model.forces.is_some(),
            linear_solve: any(|c| c.linear_solve),
        }
    }
}
