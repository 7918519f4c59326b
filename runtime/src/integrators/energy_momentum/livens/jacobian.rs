//! The exact state and parameter Jacobians of a Livens step for a constant mass matrix
//! (Kinon–Betsch eq. 30).
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
//! **In the parameters** the same block matrix takes `P` more right-hand sides,
//!
//! ```text
//! −∂R/∂p = −(2/h) M_p (q^{n+1} − q^n) + 2 M_p v^n − h ∂_p D̄V − h Σ_k λ_k ∂_p D̄g_k,
//! −∂g/∂p (q^{n+1})
//! ```
//!
//! with `∂_p D̄` the parameter derivative of Gonzalez's formula
//! ([`gonzalez_parameter_derivative_masked`]: `∂V/∂p` at both points and `∂∇V/∂p` at the
//! midpoint, the rows' alike); `δv^{n+1} = 2 δq^{n+1}/h`. The rows' part of the right-hand
//! side is not zero here, and the augmentation adds `α D̄Gᵀ G δq = α D̄Gᵀ (−∂g/∂p)`, which lies
//! in the multipliers' column `h D̄Gᵀ`: it shifts `δλ`, not `δq^{n+1}`.
//!
//! A configuration-dependent `M` is not covered: its carried momentum `p^n` differs from
//! `M(q^n) v^n`, so its step maps `(q, v, p)`, not `(q, v)`.

use nalgebra::{SMatrix, SVector};

use super::{max_abs, Livens};
use crate::discrete_gradient::{
    gonzalez_parameter_derivative_masked, ConstraintDiscreteGradient,
    ConstraintDiscreteGradientJacobians, PotentialDiscreteGradientJacobian,
};
use crate::error::StepError;
use crate::integrators::checks::{check_constant_mass, check_finite};
use crate::integrators::jacobian::step_and_differentiate;
use crate::integrators::{
    DifferentiableInParameters, DifferentiableStep, Integrator, ParameterJacobian, StepJacobian,
    StepReport,
};
use crate::linalg::{BorderedLu, Lu};
use crate::model::{ConstantMass, HolonomicHessians, ParameterDerivatives, PotentialHessian};
use crate::state::State;

/// A converged Livens step's block matrix `[K̃ h D̄Gᵀ; G 0]`, factored as the step factors it:
/// `K̃ = K + α D̄Gᵀ G` and the Schur complement `G K̃⁻¹ h D̄Gᵀ`.
struct Linearization<const N: usize, const M: usize> {
    h: f64,
    t: f64,
    mass: SMatrix<f64, N, N>,
    /// `(2/h) M − h ∂₁D̄V − h Σ_k λ_k ∂₁D̄g_k`: the position's right-hand side per `δq^n`.
    start: SMatrix<f64, N, N>,
    /// `[K̃ h D̄Gᵀ; G(q^{n+1}) 0]`.
    block: BorderedLu<N, M>,
}

impl<const N: usize, const M: usize> Linearization<N, M> {
    /// Linearizes the step `before → after` with the multipliers `lambda` it converged to.
    fn at<Model>(
        model: &Model,
        (before, after): (&State<N>, &State<N>),
        h: f64,
        lambda: &SVector<f64, M>,
    ) -> Result<Self, StepError>
    where
        Model: ConstantMass<N> + PotentialHessian<N> + HolonomicHessians<N, M>,
    {
        let t = before.t;
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
        let k =
            Lu::try_new(&k).map_err(StepError::linear_algebra("Newton matrix K + α D̄Gᵀ G", t))?;
        let block = BorderedLu::new(k, &(dg.transpose() * h), rows).map_err(
            StepError::linear_algebra("constraint Schur complement G K̃⁻¹ h D̄Gᵀ", t),
        )?;
        Ok(Linearization {
            h,
            t,
            mass,
            start,
            block,
        })
    }

    /// Returns `δq^{n+1}` of `K δq + h D̄Gᵀ δλ = r`, `G δq = s` for `C` right-hand sides, solved
    /// as `K̃ δq + h D̄Gᵀ δλ̃ = r` with the Schur complement: `K̃ δq = K δq + α D̄Gᵀ s`, and
    /// `α D̄Gᵀ s` lies in the multipliers' column, so it only shifts `δλ̃ = δλ + α s/h`.
    fn position<const C: usize>(
        &self,
        r: &SMatrix<f64, N, C>,
        s: &SMatrix<f64, M, C>,
    ) -> SMatrix<f64, N, C> {
        self.block.solve_columns(r, s).0
    }

    /// The state Jacobian (the module docs' system, with zero rows' right-hand sides).
    fn state_jacobian(&self) -> Result<StepJacobian<N>, StepError> {
        let zero = SMatrix::<f64, M, N>::zeros();
        let q_q = self.position(&self.start, &zero);
        let q_v = self.position(&(self.mass * 2.0), &zero);
        let identity = SMatrix::<f64, N, N>::identity();
        let v_q = (q_q - identity) * (2.0 / self.h);
        let v_v = q_v * (2.0 / self.h) - identity;
        let jacobian = StepJacobian { q_q, q_v, v_q, v_v };
        jacobian.check_finite(self.t)?;
        Ok(jacobian)
    }

    /// The parameter Jacobian (the module docs' `−∂R/∂p`, `−∂g/∂p`).
    fn parameter_jacobian<Model, const P: usize>(
        &self,
        model: &Model,
        (before, after): (&State<N>, &State<N>),
        lambda: &SVector<f64, M>,
    ) -> Result<ParameterJacobian<N, P>, StepError>
    where
        Model: ConstantMass<N>
            + PotentialHessian<N>
            + HolonomicHessians<N, M>
            + ParameterDerivatives<N, M, 0, P>,
    {
        let (h, t1) = (self.h, after.t);
        let (q0, q1) = (before.q, after.q);
        let mid = (q0 + q1) * 0.5;
        let mut mass_p = [SMatrix::<f64, N, N>::zeros(); P];
        model.mass_parameter_derivatives(&q0, &mut mass_p);
        // ∂_p D̄V.
        let (mut v0_p, mut v1_p) = (SVector::<f64, P>::zeros(), SVector::zeros());
        model.potential_parameter_gradient(&q0, &mut v0_p);
        model.potential_parameter_gradient(&q1, &mut v1_p);
        let mut gradient_p = SMatrix::<f64, N, P>::zeros();
        model.potential_gradient_parameter_jacobian(&mid, &mut gradient_p);
        let potential = gonzalez_parameter_derivative_masked(
            &q0,
            &q1,
            (&v0_p, &v1_p),
            &gradient_p,
            &Model::POTENTIAL_DEPENDS_ON,
        );
        // Σ_k λ_k ∂_p D̄g_k, and ∂g/∂p at q^{n+1}.
        let (mut g0_p, mut g1_p) = (SMatrix::<f64, M, P>::zeros(), SMatrix::zeros());
        model.constraint_parameter_jacobian(&q0, t1, &mut g0_p);
        model.constraint_parameter_jacobian(&q1, t1, &mut g1_p);
        let mut jacobian_p = [SMatrix::<f64, M, N>::zeros(); P];
        model.constraint_jacobian_parameter_derivatives(&mid, t1, &mut jacobian_p);
        let mut reaction = SMatrix::<f64, N, P>::zeros();
        for k in 0..M {
            let row_p = SMatrix::<f64, N, P>::from_fn(|i, j| jacobian_p[j][(k, i)]);
            let derivative = gonzalez_parameter_derivative_masked(
                &q0,
                &q1,
                (&g0_p.row(k).transpose(), &g1_p.row(k).transpose()),
                &row_p,
                &Model::CONSTRAINT_DEPENDS_ON[k],
            );
            reaction += derivative * lambda[k];
        }
        let mut r = -(potential + reaction) * h;
        let (increment, v0) = (q1 - q0, before.v);
        for (j, mass_p) in mass_p.iter().enumerate() {
            let mut column = r.column_mut(j);
            column -= mass_p * (increment * (2.0 / h) - v0 * 2.0);
        }
        check_finite(&r, "parameter derivatives of the momentum balance", self.t)?;
        check_finite(&g1_p, "constraint parameter derivatives", self.t)?;
        let q_p = self.position(&r, &(-g1_p));
        let jacobian = ParameterJacobian {
            q_p,
            v_p: q_p * (2.0 / h),
        };
        jacobian.check_finite(self.t)?;
        Ok(jacobian)
    }
}

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
        check_constant_mass::<Model, N>("Livens")?;
        step_and_differentiate(self, model, state, |method, before, after| {
            let (h, lambda) = (method.step_size(), *method.multipliers());
            let linearization = Linearization::at(model, (before, after), h, &lambda)?;
            *jacobian = linearization.state_jacobian()?;
            Ok(())
        })
    }
}

impl<Model, const N: usize, const M: usize, const P: usize> DifferentiableInParameters<Model, N, P>
    for Livens<N, M>
where
    Model: ConstantMass<N>
        + PotentialHessian<N>
        + HolonomicHessians<N, M>
        + ParameterDerivatives<N, M, 0, P>,
    Livens<N, M>: Integrator<Model, N>,
{
    fn step_with_jacobians(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        jacobian: &mut StepJacobian<N>,
        parameters: &mut ParameterJacobian<N, P>,
    ) -> Result<StepReport, StepError> {
        check_constant_mass::<Model, N>("Livens")?;
        step_and_differentiate(self, model, state, |method, before, after| {
            let (h, lambda) = (method.step_size(), *method.multipliers());
            let linearization = Linearization::at(model, (before, after), h, &lambda)?;
            let state_part = linearization.state_jacobian()?;
            let parameter_part =
                linearization.parameter_jacobian(model, (before, after), &lambda)?;
            (*jacobian, *parameters) = (state_part, parameter_part);
            Ok(())
        })
    }
}
