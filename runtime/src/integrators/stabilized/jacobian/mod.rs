//! Exact Jacobians of a stabilized Runge–Kutta step ([`StabilizedRk`](super::StabilizedRk),
//! [`AdaptiveRk`](super::AdaptiveRk) with [`DOPRI5`](super::DOPRI5)) with respect to the state
//! it starts from and the model's parameters: the variational equations of the index-1 ODE
//! integrated by the step's own stages, followed by the derivative of its post-stabilization.
//!
//! **The variational equations.** The index-1 ODE (Ascher et al. 1995, eq. 1.5 with eq. 2.1)
//! is `q̇ = v`, `v̇ = a(q, v, t; p)` with `a` the solution of
//!
//! ```text
//! M a + Gᵀ λ = f,     G a = φ,     f = −∇V + f_a(q, v, t),
//! φ = −b(q, v, t) − α1 (G v + g_t) − α0 g,     b = (G v)_q v + 2 G_t v + g_tt
//! ```
//!
//! Differentiating both rows in a direction `(δq, δv, δp)` gives the same saddle-point matrix
//! with new right-hand sides (`δG = Σ_k e_k (∇²g_k δq)ᵀ + Σ_j δp_j ∂G/∂p_j`):
//!
//! ```text
//! M δa + Gᵀ δλ = δf − δGᵀ λ − δM a
//! G δa          = δφ − δG a,    δφ = −δb − α1 (δG v + G δv + δg_t) − α0 δg
//! ```
//!
//! solved through the Schur complement `G M⁻¹ Gᵀ` for all `2N + P` directions at once, which
//! gives `a_q`, `a_v` and `a_p` at a stage. The tangent of a stage is then propagated like the
//! stage itself: `δQ_i = δq + h Σ_j a_ij δV_j`, `δV_i = δv + h Σ_j a_ij δA_j`,
//! `δA_i = a_q δQ_i + a_v δV_i + a_p δp`, and `δq' = δq + h Σ b_i δV_i`,
//! `δv' = δv + h Σ b_i δA_i`. For an explicit method this is exactly the derivative of the
//! step map with the step size held fixed, and the same as integrating the variational
//! equations `Ẏ = (∂F/∂y) Y + ∂F/∂p` with the step's own stages.
//!
//! For a configuration-dependent `M`, `f` also holds the velocity terms
//! `c(q, v) = ∂T/∂q − Ṁ v`, so `δf` holds `c_q δq + c_v δv + c_p δp` (third derivatives of `T`,
//! [`VelocityTermJacobians`]), and `δM a = (∂(M a)/∂q) δq + Σ_j δp_j (∂M/∂p_j) a` with
//! `∂(M a)_j/∂q_i = ∂²T/∂q_i∂v_j` at `v = a` ([`InertiaGradient::kinetic_hessians`]
//! evaluated at the acceleration: `T` is quadratic in `v`).
//!
//! **The step size is frozen.** An adaptive step's size depends on the state through the
//! error estimate; as CVODES does for its forward sensitivities, the size the controller chose
//! for the state is kept and not differentiated, and the sensitivities do not take part in the
//! error test. The derivative is then that of the accepted step, which converges to the
//! derivative of the exact flow as the tolerance goes to zero (Hairer, Nørsett and Wanner,
//! *Solving ODEs I*, §II.6 on internal differentiation). With first-same-as-last pairs the
//! step's first stage may be the last stage of the step before, evaluated before that step's
//! post-stabilization moved the state; the Jacobian's first stage is evaluated at the state the
//! step starts from (the two differ by the drift the stabilization removed).
//!
//! **The post-stabilization.** `S-both` maps `(q̃, ṽ)` to `q̂ = q̃ − P g(q̃)`,
//! `v̂ = ṽ − P (G ṽ + g_t)` with `P = D (G D)⁻¹` at `q̃` ([`Metric`]); its derivative is
//!
//! ```text
//! δ(P r) = δD x + D (G D)⁻¹ (δr − δ(G D) x),    x = (G D)⁻¹ r,
//! δD = δGᵀ (D = Gᵀ)   or   M⁻¹ (δGᵀ − δM D) (D = M⁻¹ Gᵀ)
//! ```
//!
//! with `δr = G δq + g_p δp` for the position and `δr = δG ṽ + G δv + G_t δq + ∂g_t/∂p δp` for
//! the velocity. `S-both²` applies the same `P` (at `q̃`) to the residuals at `(q̂, v̂)`, so its
//! second application is differentiated with `δP` in the direction of `q̃` and `δr` at the
//! corrected point. `S-full` is not differentiated (its coupling block is itself a derivative of
//! the bias); such a step fails with [`StepError::Unsupported`].
//!
//! The second derivatives this needs (`∇²V`, every row's `∇²g`, the forces' Jacobians) and the
//! derivatives of `b` and `g_t` in `q` and `p` are what `mechanism!` generates for
//! `derivatives: [step_jacobians]` on a model compiled for `rk`, with the velocity terms'
//! derivatives for a configuration-dependent `M`. With the mass metric (`D = M⁻¹ Gᵀ`) and such
//! an `M`, `δM D` holds `∂(M d_c)/∂q̃ δq̃` in each column `d_c` of `D`, one more evaluation of
//! `∂²T/∂q∂v` per row.
//!
//! Cost, measured (`cargo bench --bench step -- "rk4_step_jacobian|dopri5_step_jacobian"`, the
//! double pendulum with S-both²): an RK4 step with its state Jacobian takes about 7 steps' time
//! (553 ns → 3.9 µs), with the parameter Jacobian beside it (`P = 5`) 9.3 µs; a DOPRI5 step
//! (rtol 1e-8) about 5.4 steps (1.54 µs → 8.3 µs), with the parameter Jacobian 11.3 µs. Forward
//! sensitivities carry only their `S` directions through the stages
//! ([`DifferentiableInParameters::step_toward_with_tangents`]).

mod post_stabilization;
mod steppers;

use nalgebra::{SMatrix, SVector};

use self::post_stabilization::Stabilizer;
use super::index_one::{ConstrainedAcceleration, IndexOne};
use super::{check_finite, Baumgarte, Metric, PostStabilization, Tableau};
use crate::error::StepError;
use crate::integrators::{ParameterJacobian, StepJacobian};
use crate::linalg::Cholesky;
#[cfg(doc)]
use crate::model::InertiaGradient;
use crate::model::{
    AppliedForces, HolonomicHessians, KinematicsJacobians, KinematicsParameterDerivatives,
    ParameterDerivatives, PotentialHessian, VelocityTermJacobians, VelocityTermParameterJacobian,
};
use crate::state::State;

/// What a model must provide for the state Jacobian of a stabilized Runge–Kutta step.
pub(crate) trait IndexOneJacobians<const N: usize, const M: usize>:
    VelocityTermJacobians<N>
    + PotentialHessian<N>
    + HolonomicHessians<N, M>
    + KinematicsJacobians<N, M>
    + AppliedForces<N>
{
}

impl<Model, const N: usize, const M: usize> IndexOneJacobians<N, M> for Model where
    Model: VelocityTermJacobians<N>
        + PotentialHessian<N>
        + HolonomicHessians<N, M>
        + KinematicsJacobians<N, M>
        + AppliedForces<N>
{
}

/// The derivatives in the parameters of the functions of eq. 1.5 that a step's parameter
/// Jacobian needs, or none (`P = 0`) for the state Jacobian alone.
pub(crate) trait ParameterTerms<const N: usize, const M: usize, const P: usize> {
    /// The right-hand sides `(δf − δGᵀλ − δM a, δφ − δG a)` of the linearized eq. 1.5 for the
    /// `P` parameter directions.
    #[allow(clippy::too_many_arguments)]
    fn acceleration_terms(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        t: f64,
        a: &SVector<f64, N>,
        lambda: &SVector<f64, M>,
        baumgarte: Baumgarte,
    ) -> (SMatrix<f64, N, P>, SMatrix<f64, M, P>);

    /// `∂g/∂p`, `∂G/∂p_j`, `∂g_t/∂p` and `∂M/∂p_j` at `(q, t)`.
    fn rows(&self, q: &SVector<f64, N>, t: f64) -> RowTerms<N, M, P>;
}

/// The parameter derivatives of the rows and the mass matrix at one point.
pub(crate) struct RowTerms<const N: usize, const M: usize, const P: usize> {
    g: SMatrix<f64, M, P>,
    jacobian: [SMatrix<f64, M, N>; P],
    time: SMatrix<f64, M, P>,
    mass: [SMatrix<f64, N, N>; P],
}

/// No parameter directions: the state Jacobian alone.
pub(crate) struct NoParameters;

impl<const N: usize, const M: usize> ParameterTerms<N, M, 0> for NoParameters {
    fn acceleration_terms(
        &self,
        _: &SVector<f64, N>,
        _: &SVector<f64, N>,
        _: f64,
        _: &SVector<f64, N>,
        _: &SVector<f64, M>,
        _: Baumgarte,
    ) -> (SMatrix<f64, N, 0>, SMatrix<f64, M, 0>) {
        (SMatrix::zeros(), SMatrix::zeros())
    }

    fn rows(&self, _: &SVector<f64, N>, _: f64) -> RowTerms<N, M, 0> {
        RowTerms {
            g: SMatrix::zeros(),
            jacobian: [],
            time: SMatrix::zeros(),
            mass: [],
        }
    }
}

/// The model's `P` parameters as directions.
pub(crate) struct InParameters<'a, Model>(pub(crate) &'a Model);

impl<Model, const N: usize, const M: usize, const P: usize> ParameterTerms<N, M, P>
    for InParameters<'_, Model>
where
    Model: ParameterDerivatives<N, M, 0, P>
        + KinematicsParameterDerivatives<N, M, P>
        + VelocityTermParameterJacobian<N, P>,
{
    fn acceleration_terms(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        t: f64,
        a: &SVector<f64, N>,
        lambda: &SVector<f64, M>,
        baumgarte: Baumgarte,
    ) -> (SMatrix<f64, N, P>, SMatrix<f64, M, P>) {
        let model = self.0;
        let mut gradient = SMatrix::<f64, N, P>::zeros();
        model.potential_gradient_parameter_jacobian(q, &mut gradient);
        let mut force = SMatrix::<f64, N, P>::zeros();
        model.applied_force_parameter_jacobian(q, v, t, &mut force);
        let mut terms = SMatrix::<f64, N, P>::zeros();
        model.velocity_term_parameter_jacobian(q, v, &mut terms);
        let mut bias = SMatrix::<f64, M, P>::zeros();
        model.acceleration_bias_parameter_jacobian(q, v, t, &mut bias);
        let rows = self.rows(q, t);
        let (alpha1, alpha0) = (baumgarte.alpha1(), baumgarte.alpha0());
        let mut r = force + terms - gradient;
        let mut s = -bias - rows.time * alpha1 - rows.g * alpha0;
        for j in 0..P {
            let jacobian = &rows.jacobian[j];
            let mut column = r.column_mut(j);
            column -= rows.mass[j] * a + jacobian.tr_mul(lambda);
            let mut column = s.column_mut(j);
            column -= jacobian * (a + v * alpha1);
        }
        (r, s)
    }

    fn rows(&self, q: &SVector<f64, N>, t: f64) -> RowTerms<N, M, P> {
        let model = self.0;
        let mut rows = RowTerms {
            g: SMatrix::zeros(),
            jacobian: [SMatrix::zeros(); P],
            time: SMatrix::zeros(),
            mass: [SMatrix::zeros(); P],
        };
        model.constraint_parameter_jacobian(q, t, &mut rows.g);
        model.constraint_jacobian_parameter_derivatives(q, t, &mut rows.jacobian);
        model.time_derivative_parameter_jacobian(q, t, &mut rows.time);
        model.mass_parameter_derivatives(q, &mut rows.mass);
        rows
    }
}

/// The linearization of eq. 1.5 at one stage: `a` and its derivatives.
struct StageLinearization<const N: usize, const P: usize> {
    a: SVector<f64, N>,
    a_q: SMatrix<f64, N, N>,
    a_v: SMatrix<f64, N, N>,
    a_p: SMatrix<f64, N, P>,
}

/// The step a Jacobian differentiates: the method and its settings.
pub(crate) struct RkStep<'a, const S: usize> {
    pub(crate) tableau: &'a Tableau<S>,
    pub(crate) h: f64,
    pub(crate) baumgarte: Baumgarte,
    pub(crate) stabilization: PostStabilization,
    pub(crate) metric: Metric,
}

/// The name of the mass matrix in errors.
const MASS: &str = "M (index-1 step Jacobian)";
/// The name of the Schur complement in errors.
const SCHUR: &str = "G M⁻¹ Gᵀ (index-1 step Jacobian)";

/// A step's linearization: its stages' and its post-stabilization's, which map any tangent
/// `(δq, δv, δp)` through the step ([`tangent`](Self::tangent)).
struct StepLinearization<'a, const N: usize, const M: usize, const P: usize, const S: usize> {
    tableau: &'a Tableau<S>,
    h: f64,
    t: f64,
    stages: [Option<StageLinearization<N, P>>; S],
    stabilizer: Option<Stabilizer<N, M, P>>,
}

/// Linearizes the step `before → after` of `step` (its stages recomputed from `before`, its
/// post-stabilization at `t_after`) for `parameters`' directions.
fn linearize_step<
    'a,
    Model,
    Params,
    const N: usize,
    const M: usize,
    const P: usize,
    const S: usize,
>(
    model: &Model,
    parameters: &Params,
    step: &RkStep<'a, S>,
    before: &State<N>,
    t_after: f64,
) -> Result<StepLinearization<'a, N, M, P, S>, StepError>
where
    Model: IndexOneJacobians<N, M>,
    Params: ParameterTerms<N, M, P>,
{
    if step.stabilization == PostStabilization::Full {
        return Err(StepError::Unsupported {
            integrator: "stabilized Runge–Kutta step Jacobian",
            requirement: "S-full post-stabilization is not differentiated; use S-both² \
                          (PostStabilization::BothTwice), S-both, S-vel or S-pos",
        });
    }
    let (tableau, h, t) = (step.tableau, step.h, before.t);
    let mut rhs = IndexOne::<N>::new(step.baumgarte);
    // A stage is needed if the solution or a later stage uses it (DOPRI5's seventh stage
    // serves only the error estimate).
    let needed: [bool; S] =
        std::array::from_fn(|i| tableau.b[i] != 0.0 || (i + 1..S).any(|k| tableau.a[k][i] != 0.0));
    let mut velocities = [SVector::<f64, N>::zeros(); S];
    let mut stages: [Option<StageLinearization<N, P>>; S] = std::array::from_fn(|_| None);
    for i in 0..S {
        if !needed[i] {
            continue;
        }
        let (mut q_i, mut v_i) = (before.q, before.v);
        for (j, &a_ij) in tableau.a[i].iter().enumerate().take(i) {
            if a_ij != 0.0 {
                let a_j = stages[j].as_ref().map_or(SVector::zeros(), |s| s.a);
                q_i += velocities[j] * (h * a_ij);
                v_i += a_j * (h * a_ij);
            }
        }
        velocities[i] = v_i;
        stages[i] = Some(linearize(
            model,
            parameters,
            &mut rhs,
            (&q_i, &v_i, t + tableau.c[i] * h),
            t,
        )?);
    }
    // The unstabilized end point (q̃, ṽ) of the stages.
    let (mut q_tilde, mut v_tilde) = (before.q, before.v);
    for (i, stage) in stages.iter().enumerate() {
        if let Some(stage) = stage {
            q_tilde += velocities[i] * (h * tableau.b[i]);
            v_tilde += stage.a * (h * tableau.b[i]);
        }
    }
    let stabilizer = if step.stabilization == PostStabilization::None {
        None
    } else {
        Some(Stabilizer::at(
            model, parameters, step, &q_tilde, &v_tilde, t_after, t,
        )?)
    };
    Ok(StepLinearization {
        tableau,
        h,
        t,
        stages,
        stabilizer,
    })
}

impl<const N: usize, const M: usize, const P: usize, const S: usize>
    StepLinearization<'_, N, M, P, S>
{
    /// Maps `C` tangents `(δq, δv)` with parameter directions `δp` through the step: the
    /// stages' recursion, then the post-stabilization's derivative.
    fn tangent<const C: usize>(
        &self,
        dq: SMatrix<f64, N, C>,
        dv: SMatrix<f64, N, C>,
        dp: SMatrix<f64, P, C>,
    ) -> (SMatrix<f64, N, C>, SMatrix<f64, N, C>) {
        let (q, v) = propagate_stages(self.tableau, self.h, &self.stages, dq, dv, dp);
        match &self.stabilizer {
            Some(stabilizer) => stabilizer.tangent((&q, &v, &dp)),
            None => (q, v),
        }
    }
}

/// Writes the Jacobians of the step `before → after` of `step` (its stages recomputed from
/// `before`, its post-stabilization at `t_after`): the state Jacobian into `jacobian`, the
/// parameter Jacobian for `parameters`' directions into `parameter_jacobian`.
pub(crate) fn differentiate<
    Model,
    Params,
    const N: usize,
    const M: usize,
    const P: usize,
    const S: usize,
>(
    model: &Model,
    parameters: &Params,
    step: &RkStep<S>,
    before: &State<N>,
    t_after: f64,
    jacobian: &mut StepJacobian<N>,
    parameter_jacobian: &mut ParameterJacobian<N, P>,
) -> Result<(), StepError>
where
    Model: IndexOneJacobians<N, M>,
    Params: ParameterTerms<N, M, P>,
{
    let linearization =
        linearize_step::<Model, Params, N, M, P, S>(model, parameters, step, before, t_after)?;
    let (zero_n, zero_p) = (SMatrix::<f64, P, N>::zeros(), SMatrix::<f64, N, P>::zeros());
    let (q_q, v_q) = linearization.tangent(SMatrix::identity(), SMatrix::zeros(), zero_n);
    let (q_v, v_v) = linearization.tangent(SMatrix::zeros(), SMatrix::identity(), zero_n);
    let (q_p, v_p) = linearization.tangent(zero_p, zero_p, SMatrix::<f64, P, P>::identity());
    let stabilized = StepJacobian { q_q, q_v, v_q, v_v };
    let t = linearization.t;
    let by_parameter = ParameterJacobian { q_p, v_p };
    stabilized.check_finite(t)?;
    by_parameter.check_finite(t)?;
    *jacobian = stabilized;
    *parameter_jacobian = by_parameter;
    Ok(())
}

/// Propagates the tangent `(dq, dv)` with parameter directions `dp` through the stages
/// (the module docs' recursion) and returns `(δq', δv')` before the post-stabilization.
fn propagate_stages<const N: usize, const P: usize, const C: usize, const S: usize>(
    tableau: &Tableau<S>,
    h: f64,
    stages: &[Option<StageLinearization<N, P>>; S],
    dq: SMatrix<f64, N, C>,
    dv: SMatrix<f64, N, C>,
    dp: SMatrix<f64, P, C>,
) -> (SMatrix<f64, N, C>, SMatrix<f64, N, C>) {
    let mut stage_dv = [SMatrix::<f64, N, C>::zeros(); S];
    let mut stage_da = [SMatrix::<f64, N, C>::zeros(); S];
    for (i, stage) in stages.iter().enumerate() {
        let Some(stage) = stage else { continue };
        let (mut dq_i, mut dv_i) = (dq, dv);
        for (j, &a_ij) in tableau.a[i].iter().enumerate().take(i) {
            if a_ij != 0.0 {
                dq_i += stage_dv[j] * (h * a_ij);
                dv_i += stage_da[j] * (h * a_ij);
            }
        }
        stage_da[i] = stage.a_q * dq_i + stage.a_v * dv_i + stage.a_p * dp;
        stage_dv[i] = dv_i;
    }
    let (mut dq_out, mut dv_out) = (dq, dv);
    for (i, stage) in stages.iter().enumerate() {
        if stage.is_some() && tableau.b[i] != 0.0 {
            dq_out += stage_dv[i] * (h * tableau.b[i]);
            dv_out += stage_da[i] * (h * tableau.b[i]);
        }
    }
    (dq_out, dv_out)
}

/// Solves eq. 1.5 at `(q, v, t)` and its linearization (the module docs) for `a_q`, `a_v`,
/// `a_p`.
fn linearize<Model, Params, const N: usize, const M: usize, const P: usize>(
    model: &Model,
    parameters: &Params,
    rhs: &mut IndexOne<N>,
    (q, v, t): (&SVector<f64, N>, &SVector<f64, N>, f64),
    t_err: f64,
) -> Result<StageLinearization<N, P>, StepError>
where
    Model: IndexOneJacobians<N, M>,
    Params: ParameterTerms<N, M, P>,
{
    let ConstrainedAcceleration {
        acceleration: a,
        multipliers: lambda,
    } = rhs.evaluate::<Model, M>(model, q, v, t, t_err)?;
    let baumgarte = rhs.baumgarte;
    let (alpha1, alpha0) = (baumgarte.alpha1(), baumgarte.alpha0());
    let mut potential = SMatrix::<f64, N, N>::zeros();
    model.potential_hessian(q, &mut potential);
    let (mut force_q, mut force_v) = (SMatrix::<f64, N, N>::zeros(), SMatrix::<f64, N, N>::zeros());
    model.applied_force_jacobians(q, v, t, &mut force_q, &mut force_v);
    let mut hessians = [SMatrix::<f64, N, N>::zeros(); M];
    model.constraint_hessians(q, t, &mut hessians);
    let mut jac = SMatrix::<f64, M, N>::zeros();
    model.constraint_jacobian(q, t, &mut jac);
    let mut bias_q = SMatrix::<f64, M, N>::zeros();
    model.acceleration_bias_jacobian(q, v, t, &mut bias_q);
    let mut time_q = SMatrix::<f64, M, N>::zeros();
    model.time_derivative_jacobian(q, t, &mut time_q);

    // Right-hand sides of M δa + Gᵀ δλ = r, G δa = s for the q- and v-directions.
    let mut r_q = force_q - potential;
    let mut s_q = -bias_q - time_q * alpha1 - jac * alpha0;
    let mut r_v = force_v;
    if !Model::CONSTANT_MASS {
        // The velocity terms' derivatives, and −δM a = −(∂(M a)/∂q) δq with
        // `∂(M a)_j/∂q_i = ∂²T/∂q_i∂v_j` at `v = a` (`T` is quadratic in `v`).
        let (mut terms_q, mut terms_v) = (SMatrix::<f64, N, N>::zeros(), SMatrix::zeros());
        model.velocity_term_jacobians(q, v, &mut terms_q, &mut terms_v);
        let (mut unused, mut mass_a) = (SMatrix::<f64, N, N>::zeros(), SMatrix::zeros());
        model.kinetic_hessians(q, &a, &mut unused, &mut mass_a);
        r_q += terms_q - mass_a.transpose();
        r_v += terms_v;
    }
    let mut s_v = -time_q * 2.0 - jac * alpha1;
    for (k, hessian) in hessians.iter().enumerate() {
        r_q -= hessian * lambda[k];
        let (h_a, h_v) = (hessian * a, hessian * v);
        let mut row = s_q.row_mut(k);
        row -= (h_a + h_v * alpha1).transpose();
        let mut row = s_v.row_mut(k);
        row -= h_v.transpose() * 2.0;
    }
    let (r_p, s_p) = parameters.acceleration_terms(q, v, t, &a, &lambda, baumgarte);
    check_finite(&r_q, "force and row Hessians (step Jacobian)", t_err)?;
    check_finite(&r_v, "force velocity Jacobian (step Jacobian)", t_err)?;
    check_finite(&s_q, "acceleration bias Jacobian (step Jacobian)", t_err)?;
    check_finite(&r_p, "force parameter derivatives (step Jacobian)", t_err)?;
    check_finite(&s_p, "row parameter derivatives (step Jacobian)", t_err)?;

    let mut m = SMatrix::<f64, N, N>::zeros();
    model.mass_matrix(q, &mut m);
    let mass = Cholesky::<N>::try_new(&m).map_err(StepError::linear_algebra(MASS, t_err))?;
    let mut minv_jac_t = jac.transpose();
    mass.solve_in_place(&mut minv_jac_t);
    let schur = Cholesky::<M>::try_new(&(jac * minv_jac_t))
        .map_err(StepError::linear_algebra(SCHUR, t_err))?;
    let saddle = Saddle {
        mass: &mass,
        schur: &schur,
        jac: &jac,
        minv_jac_t: &minv_jac_t,
    };
    Ok(StageLinearization {
        a,
        a_q: saddle.solve(r_q, s_q),
        a_v: saddle.solve(r_v, s_v),
        a_p: saddle.solve(r_p, s_p),
    })
}

/// The saddle-point matrix `[M Gᵀ; G 0]` of eq. 1.5, factored through its Schur complement.
struct Saddle<'a, const N: usize, const M: usize> {
    mass: &'a Cholesky<N>,
    schur: &'a Cholesky<M>,
    jac: &'a SMatrix<f64, M, N>,
    minv_jac_t: &'a SMatrix<f64, N, M>,
}

impl<const N: usize, const M: usize> Saddle<'_, N, M> {
    /// Returns `δa` of `M δa + Gᵀ δλ = r`, `G δa = s`:
    /// `δλ = (G M⁻¹ Gᵀ)⁻¹ (G M⁻¹ r − s)`, `δa = M⁻¹ r − M⁻¹ Gᵀ δλ`.
    fn solve<const C: usize>(
        &self,
        r: SMatrix<f64, N, C>,
        s: SMatrix<f64, M, C>,
    ) -> SMatrix<f64, N, C> {
        let mut free = r;
        self.mass.solve_in_place(&mut free);
        let mut multipliers = self.jac * free - s;
        self.schur.solve_in_place(&mut multipliers);
        free - self.minv_jac_t * multipliers
    }
}
