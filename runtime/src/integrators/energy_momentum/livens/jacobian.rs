//! The exact state Jacobian of a Livens step for a constant mass matrix (Kinon–Betsch eq. 30).
//!
//! With `M` constant, `D̄₁T = 0` and `D̄₂T = M v^{n+½} = M Δq/h`, and the carried momentum is
//! `p^n = M v^n` (Proposition 5.5: `p = M v` when `M` is constant), so the step is a function
//! of `(q^n, v^n)` alone. It solves, for `(q^{n+1}, λ)`,
//!
//! ```text
//! R = (2/h) M (q^{n+1} − q^n) − 2 M v^n + h D̄V(q^n, q^{n+1}) + h D̄G(q^n, q^{n+1})ᵀ λ = 0
//! g(q^{n+1}) = 0,        v^{n+1} = 2 (q^{n+1} − q^n)/h − v^n
//! ```
//!
//! By the implicit function theorem on these equations at the converged `(q^{n+1}, λ)` (not
//! through Newton's iterates), with `∂₂D̄` the derivative of a discrete gradient in its second
//! argument,
//!
//! ```text
//! [ K   h D̄Gᵀ ] [ δq^{n+1} ]     [ (2/h M − h ∂₁D̄V − h Σ_k λ_k ∂₁D̄g_k) δq^n + 2 M δv^n ]
//! [ G   0     ] [ δλ       ]  =  [ 0                                                   ]
//! K = (2/h) M + h ∂₂D̄V + h Σ_k λ_k ∂₂D̄g_k,       G = ∂g/∂q (q^{n+1})
//! ```
//!
//! `K` is the step's Newton matrix. Gonzalez's discrete gradient is symmetric,
//! `D̄V(x, y) = D̄V(y, x)` (also with the dependency masks), so `∂₁D̄V(q^n, q^{n+1}) =
//! ∂₂D̄V(q^{n+1}, q^n)`: the same Jacobians the step's Newton iteration evaluates, with the
//! points swapped. The block system is solved as the step solves it (`K` augmented by
//! `α D̄Gᵀ G`, exact on the rows' solution set, which a singular `M` needs; then the
//! `M × M` Schur complement), for all `2N` directions at once; `δv^{n+1} = 2 (δq^{n+1} −
//! δq^n)/h − δv^n`.
//!
//! A configuration-dependent `M` is not covered: its carried momentum `p^n` differs from
//! `M(q^n) v^n`, so its step maps `(q, v, p)`, not `(q, v)`. The parameter Jacobian would need
//! `∂V/∂p` (in `D̄V`'s difference quotient), which `mechanism!` does not generate.

use nalgebra::SMatrix;

use super::{max_abs, Livens};
use crate::discrete_gradient::{
    ConstraintDiscreteGradient, ConstraintDiscreteGradientJacobians,
    PotentialDiscreteGradientJacobian,
};
use crate::error::StepError;
use crate::integrators::checks::check_finite;
use crate::integrators::jacobian::step_and_differentiate;
use crate::integrators::{DifferentiableStep, Integrator, StepJacobian, StepReport};
use crate::linalg::Lu;
use crate::model::{ConstantMass, HolonomicHessians, PotentialHessian};
use crate::state::State;

impl<Model, const N: usize, const M: usize> DifferentiableStep<Model, N> for Livens<N, M>
where
    Model: ConstantMass<N> + PotentialHessian<N> + HolonomicHessians<N, M>,
    Livens<N, M>: Integrator<Model, N>,
{
    fn step_with_jacobian(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        jacobian: &mut StepJacobian<N>,
    ) -> Result<StepReport, StepError> {
        crate::integrators::checks::check_constant_mass::<Model, N>("Livens")?;
        step_and_differentiate(self, model, state, |method, before, after| {
            let lambda = *method.multipliers();
            let (h, t) = (method.step_size(), before.t);
            let (q0, q1) = (before.q, after.q);
            let mut mass = SMatrix::<f64, N, N>::zeros();
            model.mass_matrix(&q0, &mut mass);
            // ∂₂ at (q0, q1) and ∂₁ as ∂₂ at (q1, q0).
            let (mut v_2, mut v_1) = (SMatrix::<f64, N, N>::zeros(), SMatrix::zeros());
            model.potential_discrete_gradient_jacobian(&q0, &q1, &mut v_2);
            model.potential_discrete_gradient_jacobian(&q1, &q0, &mut v_1);
            let (mut g_2, mut g_1) = ([SMatrix::<f64, N, N>::zeros(); M], [SMatrix::zeros(); M]);
            model.constraint_discrete_gradient_jacobians(&q0, &q1, after.t, &mut g_2);
            model.constraint_discrete_gradient_jacobians(&q1, &q0, after.t, &mut g_1);
            let mut k = mass * (2.0 / h) + v_2 * h;
            let mut start = mass * (2.0 / h) - v_1 * h;
            for (c, (g_2, g_1)) in g_2.iter().zip(&g_1).enumerate() {
                k += g_2 * (h * lambda[c]);
                start -= g_1 * (h * lambda[c]);
            }
            check_finite(&k, "Newton matrix K", t)?;
            check_finite(&start, "discrete gradient Jacobians", t)?;
            let mut dg = SMatrix::<f64, M, N>::zeros();
            model.constraint_discrete_gradient(&q0, &q1, after.t, &mut dg);
            let mut rows = SMatrix::<f64, M, N>::zeros();
            model.constraint_jacobian(&q1, after.t, &mut rows);
            // K̃ = K + α D̄Gᵀ G, exact where G δq = 0, as in the step.
            let augment = dg.transpose() * rows;
            let (k_max, augment_max) = (max_abs(&k), max_abs(&augment));
            if M > 0 && augment_max > 0.0 && k_max.is_finite() && augment_max.is_finite() {
                k += augment * (k_max / augment_max);
            }
            let k = Lu::try_new(&k)
                .map_err(StepError::linear_algebra("Newton matrix K + α D̄Gᵀ G", t))?;
            let x = k.solve_columns(&(dg.transpose() * h));
            let schur = Lu::try_new(&(rows * x)).map_err(StepError::linear_algebra(
                "constraint Schur complement G K̃⁻¹ h D̄Gᵀ",
                t,
            ))?;
            let position = |rhs: SMatrix<f64, N, N>| {
                let y = k.solve_columns(&rhs);
                y - x * schur.solve_columns(&(rows * y))
            };
            let q_q = position(start);
            let q_v = position(mass * 2.0);
            let identity = SMatrix::<f64, N, N>::identity();
            let v_q = (q_q - identity) * (2.0 / h);
            let v_v = q_v * (2.0 / h) - identity;
            let state_jacobian = StepJacobian { q_q, q_v, v_q, v_v };
            state_jacobian.check_finite(t)?;
            *jacobian = state_jacobian;
            Ok(())
        })
    }
}
