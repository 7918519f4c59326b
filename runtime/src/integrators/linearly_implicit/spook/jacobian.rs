//! The exact Jacobian of a SPOOK step on the fixed-size tier.
//!
//! The step (eq. 29 with `q_{k+1} = q_k + h v_{k+1}`) solves, with `M` constant and `G`, `A`,
//! `∇V`, `f` at `(q_k, v_k, t_k)`,
//!
//! ```text
//! M v' − Aᵀ α − Gᵀ λ = M v − h ∇V(q) + h f(q, v)
//! A v' + Γ α         = w(t)
//! G v' + Σ λ         = Υ (G v − (4/h) g(q))
//! ```
//!
//! Differentiating in a direction `(δq, δv)` (`H_g(y) = Σ_c y_c ∇²g_c`, `C(w) = ∂(G w)/∂q`
//! whose row `c` is `(∇²g_c w)ᵀ`, `D(w) = ∂(A w)/∂q`, and `E(α) = ∂(Aᵀα)/∂q`) leaves the same
//! matrix with the right-hand sides
//!
//! ```text
//! r′ = (M + h f_v) δv + (−h ∇²V + h f_q + H_g(λ) + E(α)) δq
//! s′ = −D(v') δq
//! t′ = Υ G δv + (Υ C(v) − (4/h) Υ G − C(v')) δq
//! ```
//!
//! solved for all `2N` directions with one factor of the step's matrix ([`Eq29Factor`], the
//! one the generic step solves with; `M`'s factor is cached across steps, so the Schur
//! complement is the only factorization), and `δq' = δq + h δv'`.
//!
//! Cost, measured (`cargo bench --bench step -- spook_step_jacobian`): on the double pendulum a
//! step with its Jacobian takes about 8 steps' time (61 ns → 488 ns), on the 10-link chain about
//! 190 (254 ns → 49 µs: the model evaluations and solves are dense and generic, against a step
//! `mechanism!` specialized to the structural nonzeros).

use nalgebra::{SMatrix, SVector};

use super::dense::SpookDense;
use super::factor::{Eq29Factor, Eq29Matrix};
use super::SpookScheme;
use crate::error::StepError;
use crate::integrators::checks::check_finite;
use crate::integrators::{DifferentiableStep, Integrator, StepJacobian, StepReport};
use crate::model::{
    AppliedForces, ConstantMass, HolonomicHessians, NonholonomicDerivative, PotentialHessian,
};
use crate::state::State;

impl<Model, const N: usize, const M: usize, const K: usize> DifferentiableStep<Model, N>
    for SpookScheme<SpookDense<N, M, K>>
where
    Model: ConstantMass<N>
        + PotentialHessian<N>
        + HolonomicHessians<N, M>
        + NonholonomicDerivative<N, K>
        + AppliedForces<N>,
{
    fn step_with_jacobian(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        jacobian: &mut StepJacobian<N>,
    ) -> Result<StepReport, StepError> {
        let mut next = *state;
        let kept = (*self.multipliers(), *self.nonholonomic_multipliers());
        let report = self.step(model, &mut next)?;
        match self.differentiate(model, state, &next.v) {
            Ok(differentiated) => {
                *state = next;
                *jacobian = differentiated;
                Ok(report)
            }
            Err(error) => {
                (
                    self.system.multipliers,
                    self.system.nonholonomic_multipliers,
                ) = kept;
                Err(error)
            }
        }
    }
}

impl<const N: usize, const M: usize, const K: usize> SpookScheme<SpookDense<N, M, K>> {
    /// Returns the Jacobian of the step from `before` whose new velocity is `v_next` (and
    /// whose multipliers are the last step's), as the module docs derive it.
    fn differentiate<Model>(
        &mut self,
        model: &Model,
        before: &State<N>,
        v_next: &SVector<f64, N>,
    ) -> Result<StepJacobian<N>, StepError>
    where
        Model: ConstantMass<N>
            + PotentialHessian<N>
            + HolonomicHessians<N, M>
            + NonholonomicDerivative<N, K>
            + AppliedForces<N>,
    {
        let (q, v, time, h) = (&before.q, &before.v, before.t, self.h);
        let lambda = *self.multipliers();
        let alpha = *self.nonholonomic_multipliers();
        let coefficients = self.system.coefficients(model, h)?;
        let (sigma, upsilon, gamma) =
            (coefficients.sigma, coefficients.upsilon, coefficients.gamma);

        let mut mass = SMatrix::<f64, N, N>::zeros();
        model.mass_matrix(q, &mut mass);
        let mut jac = SMatrix::<f64, M, N>::zeros();
        model.constraint_jacobian(q, time, &mut jac);
        let mut a = SMatrix::<f64, K, N>::zeros();
        model.nonholonomic_matrix(q, &mut a);
        let mut hessian = SMatrix::<f64, N, N>::zeros();
        model.potential_hessian(q, &mut hessian);
        check_finite(&hessian, "potential Hessian", time)?;
        let mut row_hessians = [SMatrix::<f64, N, N>::zeros(); M];
        model.constraint_hessians(q, time, &mut row_hessians);
        for row_hessian in &row_hessians {
            check_finite(row_hessian, "constraint Hessian", time)?;
        }
        let (mut f_q, mut f_v) = (SMatrix::<f64, N, N>::zeros(), SMatrix::<f64, N, N>::zeros());
        model.applied_force_jacobians(q, v, time, &mut f_q, &mut f_v);
        check_finite(&f_q, "applied force Jacobian ∂f/∂q", time)?;
        check_finite(&f_v, "applied force Jacobian ∂f/∂v", time)?;

        // The right-hand sides of the q- and v-directions.
        let mut r_q = hessian * -h + f_q * h;
        let mut t_q = SMatrix::<f64, M, N>::zeros();
        for (c, row_hessian) in row_hessians.iter().enumerate() {
            r_q += row_hessian * lambda[c];
            let along_v = row_hessian * v;
            let along_v_next = row_hessian * v_next;
            for j in 0..N {
                t_q[(c, j)] = upsilon[c] * (along_v[j] - 4.0 / h * jac[(c, j)]) - along_v_next[j];
            }
        }
        let mut s_q = SMatrix::<f64, K, N>::zeros();
        if K > 0 {
            model.nonholonomic_velocity_jacobian(q, v_next, &mut s_q);
            s_q = -s_q;
            // E(α) = ∂(Aᵀα)/∂q, column l of Aᵀ at a time: ∂(A e_l)/∂q has entries ∂A_il/∂q_j.
            let mut unit = SVector::<f64, N>::zeros();
            let mut d_column = SMatrix::<f64, K, N>::zeros();
            for l in 0..N {
                unit[l] = 1.0;
                model.nonholonomic_velocity_jacobian(q, &unit, &mut d_column);
                unit[l] = 0.0;
                let row = alpha.tr_mul(&d_column);
                let mut target = r_q.row_mut(l);
                target += row;
            }
        }
        check_finite(&s_q, "nonholonomic derivative ∂(A v)/∂q", time)?;
        let r_v = mass + f_v * h;
        let mut t_v = jac;
        for (c, scale) in upsilon.iter().enumerate() {
            t_v.row_mut(c).scale_mut(*scale);
        }

        let (factor, _) = Eq29Factor::new(
            &mut self.system.mass_factor,
            Eq29Matrix {
                mass: &mass,
                constant_mass: true,
                jac: &jac,
                a: &a,
                sigma: &sigma,
                gamma: &gamma,
            },
            time,
        )?;
        let (v_q, _, _) = factor.solve(&r_q, &s_q, &t_q);
        let (v_v, _, _) = factor.solve(&r_v, &SMatrix::<f64, K, N>::zeros(), &t_v);
        let jacobian = StepJacobian {
            q_q: SMatrix::identity() + v_q * h,
            q_v: v_v * h,
            v_q,
            v_v,
        };
        check_finite(&jacobian.v_q, "step Jacobian ∂v'/∂q", time)?;
        check_finite(&jacobian.v_v, "step Jacobian ∂v'/∂v", time)?;
        Ok(jacobian)
    }
}
