//! Decides which derived quantities the model's code needs, from the integrators it is compiled
//! for (the table of "what each integrator needs" in DESIGN.md, as data in
//! [`Family::capabilities`]). Generating only those keeps the macro's cost bounded.

use crate::derivatives::{hessians_wanted, Derivative};
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
    /// The derivatives of the velocity terms `c(q, v) = ∂T/∂q − Ṁ v` in `q`, `v` and the
    /// parameters (third derivatives of `T`), for the step Jacobians of the index-1 methods
    /// (`rk`) on a model whose `M` depends on `q`.
    pub velocity_terms: bool,
    /// `A(q)` and `w(t)`.
    pub nonholonomic: bool,
    /// `∂(A(q) v)/∂q`, for Newton on nonholonomic rows (`dlda`'s Cortés–Martínez variant and
    /// `dlda_midpoint`).
    pub nonholonomic_derivative: bool,
    /// The derivatives of `M`, `∇V`, the applied force, the rows and the drives with respect
    /// to the run-time parameters, for a step's parameter Jacobian (`step_jacobians`).
    pub parameter_derivatives: bool,
    /// `−∂R/∂v` and its Jacobians.
    pub dissipation: bool,
    /// `f(q, v, t)` and its Jacobians.
    pub forces: bool,
    /// The linear solve `a = −(M + c H)⁻¹ ∇V` of the Zhang–Skeel family, specialized to the
    /// structural nonzeros of `M + c H` (for each Hessian that is generated).
    pub linear_solve: bool,
}

/// What a model is, as far as its plan depends on it besides its integrators.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shape {
    /// It has holonomic rows.
    pub constrained: bool,
    /// A holonomic row depends on time.
    pub rheonomic: bool,
    /// It has nonholonomic rows.
    pub nonholonomic: bool,
    /// It has a dissipation function.
    pub dissipation: bool,
    /// It has explicit forces.
    pub forces: bool,
}

impl Plan {
    /// Returns the plan for the integrators `model` is compiled for, with what its
    /// `derivatives: [..]` asks for besides ([`Derivative`]).
    pub fn for_model(model: &Model) -> Plan {
        let mut plan = Plan::new(
            &model.integrators,
            Shape {
                constrained: !model.constraints.is_empty(),
                rheonomic: model.rheonomic(),
                nonholonomic: !model.nonholonomic.is_empty(),
                dissipation: model.dissipation.is_some(),
                forces: model.forces.is_some(),
            },
        );
        if hessians_wanted(&model.derivatives).is_some() {
            plan.hessian = true;
            plan.second_order = true;
        }
        if model.derivatives.contains(&Derivative::StepJacobians) {
            plan.add_step_jacobians(&model.integrators);
            plan.nonholonomic_derivative = true;
            // The index-1 variational equations differentiate the velocity terms of a varying
            // `M` (zero, and not derived, for a constant one).
            plan.velocity_terms =
                model.integrators.contains(&Family::Rk) && model.configuration_dependent_mass();
        }
        plan
    }

    /// Adds what `derivatives: [step_jacobians]` asks for on either tier: every derivative in
    /// the parameters, and for the Zhang–Skeel methods the third derivative of `V`.
    pub fn add_step_jacobians(&mut self, integrators: &[Family]) {
        self.parameter_derivatives = true;
        // Z&Ss differentiates `−(M + βh² Hess V)⁻¹ ∇V`, whose derivative holds `V‴` along the
        // acceleration (from the contraction `a·V‴·a`, by polarization). Stiff Z&Ss
        // differentiates `−(M + βh² ε⁻¹∇²V1)⁻¹ ∇V` into `V1‴` along `a`, which the runtime
        // takes as `W‴ − V‴` of a penalized model (both contractions).
        if integrators.contains(&Family::Zss) || integrators.contains(&Family::ZssStiff) {
            self.third_derivative = true;
            self.hessian = true;
        }
    }

    /// Returns the plan for a model of shape `shape` compiled for `integrators`: a fixed-size
    /// model ([`Plan::for_model`]) or a model with families (holonomic rows only).
    pub fn new(integrators: &[Family], shape: Shape) -> Plan {
        let any = |need: fn(Capabilities) -> bool| {
            integrators.iter().any(|i: &Family| need(i.capabilities()))
        };
        let constrained = shape.constrained;
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
            kinematics: any(|c| c.kinematics) || shape.rheonomic,
            // A scheme that steps a varying `M` needs `∂T/∂q` (the midpoint DLA also its
            // derivatives, for Newton).
            second_order: any(|c| c.discrete_gradients || c.kinematics || c.varying_mass),
            velocity_terms: false,
            nonholonomic: shape.nonholonomic,
            // Also without nonholonomic rows (then `NonholonomicDerivative<N, 0>` is empty), so
            // that both runtime schemes of `dlda` step every model compiled for it.
            nonholonomic_derivative: integrators.contains(&Family::Dlda)
                || integrators.contains(&Family::DldaMidpoint),
            parameter_derivatives: false,
            dissipation: shape.dissipation,
            forces: shape.forces,
            linear_solve: any(|c| c.linear_solve),
        }
    }
}
