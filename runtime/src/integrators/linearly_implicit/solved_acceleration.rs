//! The acceleration of Newmark's family at one configuration, with its derivatives: `a` solving
//! `M a + ∇V(y) = 0` at `y = x + c a` (`c = βh²`), shared by the Jacobians of push-forward
//! Newmark (`push_forward_jacobian.rs`) and of Newmark (`newmark_jacobian.rs`).
//!
//! By the implicit function theorem on that equation (Tao–Owhadi 2014, eq. 12 and 14), with
//! `K = M + c ∇²V(y)` (Newton's own matrix) and `M` constant in `x`,
//!
//! ```text
//! A   = ∂a/∂x   = −K⁻¹ ∇²V(y)
//! A_p = ∂a/∂p_j = −K⁻¹ (M_j a + ∂∇V/∂p_j (y))
//! ```
//!
//! and for `c = 0` the explicit `a = −M⁻¹ ∇V(x)` that starts a Newmark step.

use nalgebra::{SMatrix, SVector};

use crate::error::StepError;
use crate::integrators::checks::check_finite;
use crate::integrators::tangent::AccelerationJacobian;
use crate::linalg::SymmetricFactor;
use crate::model::{ConstantMass, ParameterDerivatives, PotentialHessian};

/// A solution `a` of `M a + ∇V(y) = 0`, `y = x + c a`, with what its derivatives need.
pub(super) struct SolvedAcceleration<const N: usize> {
    /// `a`.
    pub(super) a: SVector<f64, N>,
    /// `y = x + c a`.
    y: SVector<f64, N>,
    /// `K = M + c ∇²V(y)`, factored.
    factor: SymmetricFactor<N>,
    /// `A = −K⁻¹ ∇²V(y)`.
    pub(super) state: SMatrix<f64, N, N>,
}

impl<const N: usize> SolvedAcceleration<N> {
    /// Returns `a` (solved already, to the step's tolerance) at `y` with `A = −K⁻¹ ∇²V(y)`,
    /// `K = M + c ∇²V(y)`; fails where `∇²V` is not finite or `K` cannot be factored.
    pub(super) fn at<Model>(
        model: &Model,
        y: SVector<f64, N>,
        a: SVector<f64, N>,
        c: f64,
        t: f64,
    ) -> Result<Self, StepError>
    where
        Model: ConstantMass<N> + PotentialHessian<N>,
    {
        let (mut mass, mut hessian) =
            (SMatrix::<f64, N, N>::zeros(), SMatrix::<f64, N, N>::zeros());
        model.mass_matrix(&y, &mut mass);
        model.potential_hessian(&y, &mut hessian);
        check_finite(&hessian, "potential Hessian", t)?;
        let factor = SymmetricFactor::try_new(&(mass + hessian * c))
            .map_err(StepError::linear_algebra("M + βh² Hess V(x + βh² a)", t))?;
        let state = -factor.solve_columns(&hessian);
        Ok(SolvedAcceleration {
            a,
            y,
            factor,
            state,
        })
    }

    /// `A` without the parameters (`A_p` of no columns).
    pub(super) fn in_state(&self) -> AccelerationJacobian<N, 0> {
        AccelerationJacobian {
            q: self.state,
            p: SMatrix::zeros(),
        }
    }

    /// `A` with `A_p`, column `j` `−K⁻¹ (M_j a + ∂∇V/∂p_j (y))`.
    pub(super) fn with_parameters<Model, const P: usize>(
        &self,
        model: &Model,
        t: f64,
    ) -> Result<AccelerationJacobian<N, P>, StepError>
    where
        Model: ParameterDerivatives<N, 0, 0, P>,
    {
        let mut terms = SMatrix::<f64, N, P>::zeros();
        model.potential_gradient_parameter_jacobian(&self.y, &mut terms);
        let mut masses = [SMatrix::<f64, N, N>::zeros(); P];
        model.mass_parameter_derivatives(&self.y, &mut masses);
        for (j, mass) in masses.iter().enumerate() {
            let column = terms.column(j) + mass * self.a;
            terms.set_column(j, &column);
        }
        check_finite(&terms, "parameter derivatives", t)?;
        let p = -self.factor.solve_columns(&terms);
        Ok(AccelerationJacobian { q: self.state, p })
    }
}
