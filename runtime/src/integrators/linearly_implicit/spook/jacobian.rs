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
//! Differentiating in a parameter `p_j` (`M_j = ∂M/∂p_j`, and so on; `Σ`, `Υ`, `Γ` come from
//! the rows' regularization and `h`, not from `p`) leaves the same matrix again, with
//!
//! ```text
//! r′ = M_j (v − v') − h ∂_j∇V + h ∂_j f_a + G_jᵀ λ + A_jᵀ α
//! s′ = ∂_j w − A_j v'
//! t′ = Υ (G_j v − (4/h) ∂_j g) − G_j v'
//! ```
//!
//! and `∂q'/∂p_j = h ∂v'/∂p_j` (`q_k` does not depend on `p`): `P` more columns for the same
//! factor.
//!
//! Where `mechanism!` specializes the step to the model's structural nonzeros
//! ([`Holonomic::spook_step`](crate::model::Holonomic::spook_step): a constant diagonal `M`, no
//! nonholonomic rows) and the model asks for `derivatives: [step_jacobians]`, it generates the
//! state Jacobian too ([`HolonomicHessians::spook_velocity_jacobian`]): the same equations over
//! the structural nonzeros of `M`, `G`, the Hessians and the force Jacobians, with the Schur
//! complement's `LDLᵀ` unrolled once and solved for the `2N` directions. The generic code below
//! runs for every other model, and where the generated code declines (it then reports the
//! culprit).
//!
//! Cost, measured (`cargo bench --bench step -- 'spook_step_jacobian'`, criterion, three runs
//! on a shared 2-core machine whose timings drift by a fifth between runs; the ratios are taken
//! within a run): on the double pendulum a step with its generated state Jacobian takes
//! 142–176 ns against 47–57 ns for the step alone, so the Jacobian costs 2.0–2.2 steps (the
//! generic code took about 9); on the 10-link chain 3.6–6.0 µs against 185–295 ns, about 20
//! steps (51 µs, 175 steps, with the generic code, whose dense `O(N²M)` work it replaces). The
//! parameter Jacobian beside it runs the generic code: 500–650 ns on the double pendulum.

use nalgebra::{SMatrix, SVector};

use super::dense::SpookDense;
use super::factor::{Eq29Factor, Eq29Matrix};
use super::SpookScheme;
use crate::error::StepError;
use crate::integrators::checks::check_finite;
use crate::integrators::jacobian::step_and_differentiate;
use crate::integrators::{
    DifferentiableInParameters, DifferentiableStep, ParameterJacobian, StepJacobian, StepReport,
};
use crate::model::{
    AppliedForces, ConstantMass, GeneratedSolve, HolonomicHessians, NonholonomicDerivative,
    ParameterDerivatives, PotentialHessian,
};
use crate::state::State;

/// What a step's Jacobians share: the factor of eq. 29 at `q_k` and the values it was built
/// from.
struct Linearization<const N: usize, const M: usize, const K: usize> {
    factor: Eq29Factor<N, M, K>,
    jac: SMatrix<f64, M, N>,
    mass: SMatrix<f64, N, N>,
    upsilon: SVector<f64, M>,
    lambda: SVector<f64, M>,
    alpha: SVector<f64, K>,
}

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
        // The generated step and Jacobian touch only `λ` besides the state (the coefficients
        // are cached by their step size and regularizations), so that a declined Jacobian
        // needs only `λ` restored before the generic path takes the step again.
        let (multipliers, mut next) = (*self.multipliers(), *state);
        if let Some(report) = self.checked_generated_step(model, &mut next)? {
            if let Some(generated) = self.generated_jacobian(model, state, &next.v) {
                (*state, *jacobian) = (next, generated);
                return Ok(report);
            }
            self.system.multipliers = multipliers;
        }
        step_and_differentiate(self, model, state, |scheme, before, after| {
            let linearization = scheme.linearize(model, before)?;
            *jacobian = state_jacobian(&linearization, model, before, &after.v, scheme.h)?;
            Ok(())
        })
    }
}

impl<Model, const N: usize, const M: usize, const K: usize, const P: usize>
    DifferentiableInParameters<Model, N, P> for SpookScheme<SpookDense<N, M, K>>
where
    Model: ConstantMass<N>
        + PotentialHessian<N>
        + HolonomicHessians<N, M>
        + NonholonomicDerivative<N, K>
        + AppliedForces<N>
        + ParameterDerivatives<N, M, K, P>,
{
    fn step_with_jacobians(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        jacobian: &mut StepJacobian<N>,
        parameters: &mut ParameterJacobian<N, P>,
    ) -> Result<StepReport, StepError> {
        step_and_differentiate(self, model, state, |scheme, before, after| {
            let generated = scheme.generated_jacobian(model, before, &after.v);
            let linearization = scheme.linearize(model, before)?;
            let (h, v_next) = (scheme.h, &after.v);
            let state_part = match generated {
                Some(generated) => generated,
                None => state_jacobian(&linearization, model, before, v_next, h)?,
            };
            let parameter_part = parameter_jacobian(&linearization, model, before, v_next, h)?;
            (*jacobian, *parameters) = (state_part, parameter_part);
            Ok(())
        })
    }
}

impl<const N: usize, const M: usize, const K: usize> SpookScheme<SpookDense<N, M, K>> {
    /// Returns the Jacobian of the step from `before` whose new velocity is `v_next` from the
    /// code `mechanism!` generated for the model
    /// ([`HolonomicHessians::spook_velocity_jacobian`]), with `∂q'/∂(q, v) = (I, 0) + h ∂v'/∂(q,
    /// v)`; `None` where the model has none (or nonholonomic rows), a row's regularization is
    /// invalid or the generated code declines: the generic Jacobian then runs.
    fn generated_jacobian<Model: HolonomicHessians<N, M>>(
        &mut self,
        model: &Model,
        before: &State<N>,
        v_next: &SVector<f64, N>,
    ) -> Option<StepJacobian<N>> {
        if K != 0 || !self.system.refresh_coefficients(model, self.h) {
            return None;
        }
        let (mut v_q, mut v_v) = (SMatrix::zeros(), SMatrix::zeros());
        let solved = model.spook_velocity_jacobian(
            &before.q,
            &before.v,
            before.t,
            self.h,
            &self.system.coefficients,
            v_next,
            self.multipliers(),
            &mut v_q,
            &mut v_v,
        );
        (solved == GeneratedSolve::Solved).then(|| StepJacobian {
            q_q: SMatrix::identity() + v_q * self.h,
            q_v: v_v * self.h,
            v_q,
            v_v,
        })
    }

    /// Factors eq. 29's matrix at the state the step started from (with the multipliers the
    /// step just computed).
    fn linearize<Model>(
        &mut self,
        model: &Model,
        before: &State<N>,
    ) -> Result<Linearization<N, M, K>, StepError>
    where
        Model: ConstantMass<N> + HolonomicHessians<N, M> + NonholonomicDerivative<N, K>,
    {
        let (q, time) = (&before.q, before.t);
        let coefficients = self.system.coefficients(model, self.h)?;
        let mut mass = SMatrix::<f64, N, N>::zeros();
        model.mass_matrix(q, &mut mass);
        let mut jac = SMatrix::<f64, M, N>::zeros();
        model.constraint_jacobian(q, time, &mut jac);
        let mut a = SMatrix::<f64, K, N>::zeros();
        model.nonholonomic_matrix(q, &mut a);
        let (factor, _) = Eq29Factor::new(
            &mut self.system.mass_factor,
            Eq29Matrix {
                mass: &mass,
                constant_mass: true,
                jac: &jac,
                a: &a,
                sigma: &coefficients.sigma,
                gamma: &coefficients.gamma,
            },
            time,
        )?;
        Ok(Linearization {
            factor,
            jac,
            mass,
            upsilon: coefficients.upsilon,
            lambda: *self.multipliers(),
            alpha: *self.nonholonomic_multipliers(),
        })
    }
}

/// Returns the Jacobian of the step from `before` whose new velocity is `v_next`, as the module
/// docs derive it.
fn state_jacobian<Model, const N: usize, const M: usize, const K: usize>(
    linearization: &Linearization<N, M, K>,
    model: &Model,
    before: &State<N>,
    v_next: &SVector<f64, N>,
    h: f64,
) -> Result<StepJacobian<N>, StepError>
where
    Model: ConstantMass<N>
        + PotentialHessian<N>
        + HolonomicHessians<N, M>
        + NonholonomicDerivative<N, K>
        + AppliedForces<N>,
{
    let (q, v, time) = (&before.q, &before.v, before.t);
    let Linearization {
        factor,
        jac,
        mass,
        upsilon,
        lambda,
        alpha,
    } = linearization;
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
        let mut reaction = SMatrix::<f64, N, N>::zeros();
        model.nonholonomic_reaction_jacobian(q, alpha, &mut reaction);
        check_finite(
            &reaction,
            "nonholonomic reaction derivative ∂(Aᵀα)/∂q",
            time,
        )?;
        r_q += reaction;
    }
    check_finite(&s_q, "nonholonomic derivative ∂(A v)/∂q", time)?;
    let r_v = mass + f_v * h;
    let mut t_v = *jac;
    for (c, scale) in upsilon.iter().enumerate() {
        t_v.row_mut(c).scale_mut(*scale);
    }

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

/// Returns the Jacobian with respect to the model's parameters of the step from `before` whose
/// new velocity is `v_next`, as the module docs derive it.
fn parameter_jacobian<Model, const N: usize, const M: usize, const K: usize, const P: usize>(
    linearization: &Linearization<N, M, K>,
    model: &Model,
    before: &State<N>,
    v_next: &SVector<f64, N>,
    h: f64,
) -> Result<ParameterJacobian<N, P>, StepError>
where
    Model: ParameterDerivatives<N, M, K, P>,
{
    let (q, v, time) = (&before.q, &before.v, before.t);
    let Linearization {
        factor,
        upsilon,
        lambda,
        alpha,
        ..
    } = linearization;
    let mut mass_p = [SMatrix::<f64, N, N>::zeros(); P];
    model.mass_parameter_derivatives(q, &mut mass_p);
    let mut gradient_p = SMatrix::<f64, N, P>::zeros();
    model.potential_gradient_parameter_jacobian(q, &mut gradient_p);
    let mut force_p = SMatrix::<f64, N, P>::zeros();
    model.applied_force_parameter_jacobian(q, v, time, &mut force_p);
    let mut g_p = SMatrix::<f64, M, P>::zeros();
    model.constraint_parameter_jacobian(q, time, &mut g_p);
    let mut jac_p = [SMatrix::<f64, M, N>::zeros(); P];
    model.constraint_jacobian_parameter_derivatives(q, time, &mut jac_p);
    let mut a_p = [SMatrix::<f64, K, N>::zeros(); P];
    model.nonholonomic_matrix_parameter_derivatives(q, &mut a_p);
    let mut w_p = SMatrix::<f64, K, P>::zeros();
    model.nonholonomic_drive_parameter_jacobian(time, &mut w_p);

    let mut r = (force_p - gradient_p) * h;
    let mut s = w_p;
    let mut t = SMatrix::<f64, M, P>::zeros();
    let dv = v - v_next;
    for j in 0..P {
        let column = mass_p[j] * dv + jac_p[j].tr_mul(lambda) + a_p[j].tr_mul(alpha);
        let mut target = r.column_mut(j);
        target += column;
        let mut target = s.column_mut(j);
        target -= a_p[j] * v_next;
        let (along_v, along_v_next) = (jac_p[j] * v, jac_p[j] * v_next);
        for c in 0..M {
            t[(c, j)] = upsilon[c] * (along_v[c] - 4.0 / h * g_p[(c, j)]) - along_v_next[c];
        }
    }
    check_finite(&r, "parameter derivative of eq. 29's first row", time)?;
    check_finite(&s, "parameter derivative of the nonholonomic rows", time)?;
    check_finite(&t, "parameter derivative of the holonomic rows", time)?;
    let (v_p, _, _) = factor.solve(&r, &s, &t);
    let jacobian = ParameterJacobian { q_p: v_p * h, v_p };
    check_finite(&jacobian.v_p, "step Jacobian ∂v'/∂p", time)?;
    Ok(jacobian)
}
