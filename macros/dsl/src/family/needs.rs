//! What the integrators of a model with families need derived (the family pipeline's share of
//! [`crate::plan::Plan`], read from the same capability table).

use crate::family::model::FamilyModel;
use crate::integrators::Capabilities;

/// The derived quantities the integrators of the model need (the family pipeline's share of
/// [`crate::plan::Plan`], read from the same capability table).
pub struct Needs {
    /// `Hess V` on a pattern (`SparsePotentialHessian`), for the Zhang–Skeel family.
    pub hessian: bool,
    /// `a·V‴·a` (and `a·W‴·a` with a penalty), for full Z&S.
    pub third_derivative: bool,
    /// `W = V + ½ω²|g|²` with its gradient and Hessian, for the penalty integrators on a
    /// constrained model (Tao–Owhadi 2014, eq. 7).
    pub penalty: bool,
    /// `Hess ½ω²|g|²` alone, the stiff part for stiff Z&Ss (eq. 19).
    pub penalty_hessian: bool,
    /// `g_t` and `vᵀ Hess g_k v`, for the index-1 formulation of the stabilized Runge–Kutta
    /// methods.
    pub kinematics: bool,
}

impl Needs {
    /// Returns what the integrators listed in `model` need.
    pub fn for_model(model: &FamilyModel) -> Needs {
        let any = |need: fn(Capabilities) -> bool| {
            model.integrators.iter().any(|i| need(i.capabilities()))
        };
        let penalty = !model.rows.is_empty() && any(|c| c.penalty);
        let third_derivative = any(|c| c.third_derivative);
        Needs {
            hessian: any(|c| c.hessian) || third_derivative,
            third_derivative,
            penalty,
            penalty_hessian: penalty && any(|c| c.stiff_penalty),
            kinematics: any(|c| c.kinematics),
        }
    }
}
