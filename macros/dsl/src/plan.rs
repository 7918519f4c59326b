//! Decides which derived quantities the model's code needs, following the table of
//! "what each integrator needs" in DESIGN.md. Generating only those keeps the macro's cost
//! bounded.

use crate::model::Model;

/// The derived quantities to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// `Hess V`, for the Zhang–Skeel family.
    pub hessian: bool,
    /// `a·V'''·a`, for full Z&S.
    pub third_derivative: bool,
    /// `g` and `G = ∂g/∂q`, for SPOOK and the observers.
    pub constraints: bool,
    /// `W = V + ½ω²|g|²` with gradient, Hessian and third contraction, for Z&S on penalized
    /// constraints (Tao–Owhadi eq. 7).
    pub penalty: bool,
}

impl Plan {
    /// Returns the default plan: what SPOOK, Z&Ss and Z&S need for this model.
    pub fn for_model(model: &Model) -> Plan {
        let constrained = !model.constraints.is_empty();
        Plan {
            hessian: true,
            third_derivative: true,
            constraints: constrained,
            penalty: constrained,
        }
    }
}
