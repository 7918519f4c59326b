//! The exact Jacobians of a RATTLE or a SHAKE step on the fixed-size tier.
//!
//! The step ([`Rattle`](super::Rattle)) solves, with `M` constant, `λ`, `μ` its position and
//! velocity multipliers, `G = G(q_k, t_k)`, `G' = G(q_{k+1}, t_{k+1})` and
//! `v_{k+½} = (q_{k+1} − q_k)/h`,
//!
//! ```text
//! M (q_{k+1} − q_k − h v_k) + ½h² (∇V(q_k) + Gᵀ λ) = 0,       g(q_{k+1}, t_{k+1}) = 0
//! M (v_{k+1} − v_{k+½}) + ½h (∇V(q_{k+1}) + G'ᵀ μ) = 0,       G' v_{k+1} = 0
//! ```
//!
//! Differentiating the first pair in a direction `(δq, δv)` (`H(y) = ∇²V + Σ_c y_c ∇²g_c` at
//! the point the equation evaluates it, `C'(w) = ∂(G w)/∂q` at `q_{k+1}`, whose row `c` is
//! `(∇²g_c w)ᵀ`) and writing `δλ̃ = ½h² δλ`, `B = M⁻¹ Gᵀ`:
//!
//! ```text
//! M δq' + Gᵀ δλ̃ = (M − ½h² H_k(λ)) δq + h M δv,     G' δq' = 0
//!   ⇒  X = M⁻¹ (right-hand side),  (G' B) δλ̃ = G' X,  δq' = X − B δλ̃
//! ```
//!
//! where `G' B = G' M⁻¹ Gᵀ` is the Newton matrix at the converged point (factored again there:
//! the step's last factorization was at the iterate before). The second pair, with
//! `δν = ½h δμ`:
//!
//! ```text
//! M δv' + G'ᵀ δν = M (δq' − δq)/h − ½h H_{k+1}(μ) δq' =: R,     G' δv' = −C'(v_{k+1}) δq'
//!   ⇒  (G' M⁻¹ G'ᵀ) δν = G' M⁻¹ R + C'(v_{k+1}) δq',   δv' = M⁻¹ (R − G'ᵀ δν)
//! ```
//!
//! all `2N` directions at once. In a parameter `p_j` (`M_j = ∂M/∂p_j`, …) the same matrices
//! take the right-hand sides
//!
//! ```text
//! −M_j (q_{k+1} − q_k − h v_k) − ½h² (∂_j∇V(q_k) + G_jᵀ λ),     G' δq' = −∂_j g(q_{k+1}, t_{k+1})
//! R = M δq'/h − ½h H_{k+1}(μ) δq' − M_j (v_{k+1} − v_{k+½}) − ½h (∂_j∇V(q_{k+1}) + G'_jᵀ μ),
//! G' δv' = −C'(v_{k+1}) δq' − G'_j v_{k+1}
//! ```
//!
//! (`q_k`, `v_k` do not depend on `p`).
//!
//! **SHAKE** ([`Shake`](super::Shake)) takes the same position step with `h²` in place of
//! `½h²` and the state's velocity `v_{k−½}` in place of `v_k`,
//! `M (q_{k+1} − q_k − h v_{k−½}) + h² (∇V(q_k) + Gᵀ λ) = 0`, `g(q_{k+1}, t_{k+1}) = 0`, and no
//! velocity pair: `v_{k+½} = (q_{k+1} − q_k)/h`. Its Jacobians are the position pair's above
//! (with `δλ̃ = h² δλ`) and `δv' = (δq' − δq)/h`, `∂v'/∂p = ∂q'/∂p / h`.
//!
//! Cost, measured (`cargo bench --bench step -- rattle_step_jacobian`): on the double pendulum
//! a step with its state Jacobian takes about 3.7 steps' time (302 ns → 1.11 µs), with the
//! parameter Jacobian beside it 1.72 µs.

use nalgebra::{SMatrix, SVector};

use super::{ProjectionDense, RattleScheme, ShakeScheme, NEWTON_MATRIX, PROJECTION_MATRIX};
use crate::error::StepError;
use crate::integrators::checks::check_finite;
use crate::integrators::jacobian::step_and_differentiate;
use crate::integrators::{
    DifferentiableInParameters, DifferentiableStep, ParameterJacobian, StepJacobian, StepReport,
};
use crate::linalg::{Cholesky, Lu};
use crate::model::{ConstantMass, HolonomicHessians, ParameterDerivatives, PotentialHessian};
use crate::state::State;

/// The name of the mass matrix, for errors.
const MASS_MATRIX: &str = "mass matrix M";

impl<Model, const N: usize, const M: usize> DifferentiableStep<Model, N>
    for RattleScheme<ProjectionDense<N, M>>
where
    Model: ConstantMass<N> + PotentialHessian<N> + HolonomicHessians<N, M>,
{
    fn step_with_jacobian(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        jacobian: &mut StepJacobian<N>,
    ) -> Result<StepReport, StepError> {
        step_and_differentiate(self, model, state, |scheme, before, after| {
            let linearization = linearize(model, before, after, Step::rattle(scheme))?;
            *jacobian = state_jacobian(&linearization, model, before, after)?;
            Ok(())
        })
    }
}

impl<Model, const N: usize, const M: usize, const P: usize> DifferentiableInParameters<Model, N, P>
    for RattleScheme<ProjectionDense<N, M>>
where
    Model: ConstantMass<N>
        + PotentialHessian<N>
        + HolonomicHessians<N, M>
        + ParameterDerivatives<N, M, 0, P>,
{
    fn step_with_jacobians(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        jacobian: &mut StepJacobian<N>,
        parameters: &mut ParameterJacobian<N, P>,
    ) -> Result<StepReport, StepError> {
        step_and_differentiate(self, model, state, |scheme, before, after| {
            let linearization = linearize(model, before, after, Step::rattle(scheme))?;
            let state_part = state_jacobian(&linearization, model, before, after)?;
            let parameter_part = parameter_jacobian(&linearization, model, before, after)?;
            (*jacobian, *parameters) = (state_part, parameter_part);
            Ok(())
        })
    }
}

impl<Model, const N: usize, const M: usize> DifferentiableStep<Model, N>
    for ShakeScheme<ProjectionDense<N, M>>
where
    Model: ConstantMass<N> + PotentialHessian<N> + HolonomicHessians<N, M>,
{
    fn step_with_jacobian(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        jacobian: &mut StepJacobian<N>,
    ) -> Result<StepReport, StepError> {
        step_and_differentiate(self, model, state, |scheme, before, after| {
            let linearization = linearize(model, before, after, Step::shake(scheme))?;
            *jacobian = shake_state_jacobian(&linearization, model, before, after)?;
            Ok(())
        })
    }
}

impl<Model, const N: usize, const M: usize, const P: usize> DifferentiableInParameters<Model, N, P>
    for ShakeScheme<ProjectionDense<N, M>>
where
    Model: ConstantMass<N>
        + PotentialHessian<N>
        + HolonomicHessians<N, M>
        + ParameterDerivatives<N, M, 0, P>,
{
    fn step_with_jacobians(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        jacobian: &mut StepJacobian<N>,
        parameters: &mut ParameterJacobian<N, P>,
    ) -> Result<StepReport, StepError> {
        step_and_differentiate(self, model, state, |scheme, before, after| {
            let linearization = linearize(model, before, after, Step::shake(scheme))?;
            let state_part = shake_state_jacobian(&linearization, model, before, after)?;
            let q_p = position_parameter_jacobian(&linearization, model, before, after)?;
            let v_p = q_p / linearization.h;
            check_finite(&v_p, "parameter Jacobian ∂v'/∂p", after.t)?;
            (*jacobian, *parameters) = (state_part, ParameterJacobian { q_p, v_p });
            Ok(())
        })
    }
}

/// The scheme's data a Jacobian needs: the step, the position step's weight `c` of
/// `c (∇V + Gᵀ λ)` (`½h²` for RATTLE, `h²` for SHAKE) and the multipliers.
struct Step<const M: usize> {
    h: f64,
    weight: f64,
    lambda: SVector<f64, M>,
    mu: SVector<f64, M>,
}

impl<const M: usize> Step<M> {
    fn rattle<const N: usize>(scheme: &RattleScheme<ProjectionDense<N, M>>) -> Self {
        let h = scheme.step_size();
        Step {
            h,
            weight: 0.5 * h * h,
            lambda: *scheme.multipliers(),
            mu: *scheme.velocity_multipliers(),
        }
    }

    fn shake<const N: usize>(scheme: &ShakeScheme<ProjectionDense<N, M>>) -> Self {
        let h = scheme.step_size();
        Step {
            h,
            weight: h * h,
            lambda: *scheme.multipliers(),
            mu: SVector::zeros(),
        }
    }
}

/// What a step's Jacobians share: the factors of the two linear systems of the module docs and
/// the values at both ends of the step.
struct Linearization<const N: usize, const M: usize> {
    h: f64,
    /// `c` of the position step `M (q' − q − h v) + c (∇V + Gᵀ λ) = 0`.
    weight: f64,
    mass: SMatrix<f64, N, N>,
    mass_factor: Cholesky<N>,
    /// `M⁻¹ G(q_k)ᵀ`.
    b_start: SMatrix<f64, N, M>,
    /// `G(q_{k+1})`, and `M⁻¹ G(q_{k+1})ᵀ`.
    jac_end: SMatrix<f64, M, N>,
    b_end: SMatrix<f64, N, M>,
    /// The factors of `G' M⁻¹ Gᵀ` and of `G' M⁻¹ G'ᵀ`.
    newton: Lu<M>,
    projection: Cholesky<M>,
    lambda: SVector<f64, M>,
    mu: SVector<f64, M>,
}

/// Factors the two matrices of the module docs at the step from `before` to `after`.
fn linearize<Model, const N: usize, const M: usize>(
    model: &Model,
    before: &State<N>,
    after: &State<N>,
    step: Step<M>,
) -> Result<Linearization<N, M>, StepError>
where
    Model: ConstantMass<N> + HolonomicHessians<N, M>,
{
    let mut mass = SMatrix::<f64, N, N>::zeros();
    model.mass_matrix(&before.q, &mut mass);
    let mass_factor =
        Cholesky::try_new(&mass).map_err(StepError::linear_algebra(MASS_MATRIX, before.t))?;
    let mut jac_start = SMatrix::<f64, M, N>::zeros();
    model.constraint_jacobian(&before.q, before.t, &mut jac_start);
    let mut jac_end = SMatrix::<f64, M, N>::zeros();
    model.constraint_jacobian(&after.q, after.t, &mut jac_end);
    check_finite(&jac_end, "constraint jacobian", after.t)?;
    let mut b_start = jac_start.transpose();
    mass_factor.solve_in_place(&mut b_start);
    let mut b_end = jac_end.transpose();
    mass_factor.solve_in_place(&mut b_end);
    let newton = Lu::try_new(&(jac_end * b_start))
        .map_err(StepError::linear_algebra(NEWTON_MATRIX, after.t))?;
    let projection = Cholesky::try_new(&(jac_end * b_end))
        .map_err(StepError::linear_algebra(PROJECTION_MATRIX, after.t))?;
    Ok(Linearization {
        h: step.h,
        weight: step.weight,
        mass,
        mass_factor,
        b_start,
        jac_end,
        b_end,
        newton,
        projection,
        lambda: step.lambda,
        mu: step.mu,
    })
}

/// Returns `∇²V(q) + Σ_c y_c ∇²g_c(q, t)` and the row Hessians.
fn hessian<Model, const N: usize, const M: usize>(
    model: &Model,
    q: &SVector<f64, N>,
    t: f64,
    y: &SVector<f64, M>,
) -> Result<(SMatrix<f64, N, N>, [SMatrix<f64, N, N>; M]), StepError>
where
    Model: PotentialHessian<N> + HolonomicHessians<N, M>,
{
    let mut total = SMatrix::<f64, N, N>::zeros();
    model.potential_hessian(q, &mut total);
    check_finite(&total, "potential Hessian", t)?;
    let mut rows = [SMatrix::<f64, N, N>::zeros(); M];
    model.constraint_hessians(q, t, &mut rows);
    for (row, weight) in rows.iter().zip(y.iter()) {
        check_finite(row, "constraint Hessian", t)?;
        total += row * *weight;
    }
    Ok((total, rows))
}

/// Solves the position pair for `C` right-hand sides `rhs` (`G' δq' = −offset`): returns `δq'`.
fn solve_positions<const N: usize, const M: usize, const C: usize>(
    linearization: &Linearization<N, M>,
    mut rhs: SMatrix<f64, N, C>,
    offset: &SMatrix<f64, M, C>,
) -> SMatrix<f64, N, C> {
    let l = linearization;
    l.mass_factor.solve_in_place(&mut rhs);
    let mut multipliers = l.jac_end * rhs + offset;
    for mut column in multipliers.column_iter_mut() {
        let mut solved = column.clone_owned();
        l.newton.solve_in_place(&mut solved);
        column.copy_from(&solved);
    }
    rhs - l.b_start * multipliers
}

/// Solves the velocity pair for `C` right-hand sides `rhs` (`G' δv' = −offset`): returns `δv'`.
fn solve_velocities<const N: usize, const M: usize, const C: usize>(
    linearization: &Linearization<N, M>,
    mut rhs: SMatrix<f64, N, C>,
    offset: &SMatrix<f64, M, C>,
) -> SMatrix<f64, N, C> {
    let l = linearization;
    l.mass_factor.solve_in_place(&mut rhs);
    let mut multipliers = l.jac_end * rhs + offset;
    l.projection.solve_in_place(&mut multipliers);
    rhs - l.b_end * multipliers
}

/// Returns `C'(w) = ∂(G w)/∂q` at the end of the step from the row Hessians there.
fn velocity_curvature<const N: usize, const M: usize>(
    rows: &[SMatrix<f64, N, N>; M],
    w: &SVector<f64, N>,
) -> SMatrix<f64, M, N> {
    let mut curvature = SMatrix::<f64, M, N>::zeros();
    for (c, row) in rows.iter().enumerate() {
        curvature.set_row(c, &(row * w).transpose());
    }
    curvature
}

/// Returns the Jacobian of the step from `before` to `after`, as the module docs derive it.
fn state_jacobian<Model, const N: usize, const M: usize>(
    linearization: &Linearization<N, M>,
    model: &Model,
    before: &State<N>,
    after: &State<N>,
) -> Result<StepJacobian<N>, StepError>
where
    Model: PotentialHessian<N> + HolonomicHessians<N, M>,
{
    let l = linearization;
    let h = l.h;
    let (start, _) = hessian(model, &before.q, before.t, &l.lambda)?;
    let (end, end_rows) = hessian(model, &after.q, after.t, &l.mu)?;
    // The position pair: δq in the first N columns, δv in the last N, at once.
    let (q_q, q_v) = position_state_jacobian(l, &start);
    let curvature = velocity_curvature(&end_rows, &after.v);
    let velocity = |dq_next: &SMatrix<f64, N, N>, dq: &SMatrix<f64, N, N>| {
        let rhs = l.mass * (dq_next - dq) / h - end * dq_next * (0.5 * h);
        solve_velocities(l, rhs, &(curvature * dq_next))
    };
    let jacobian = StepJacobian {
        v_q: velocity(&q_q, &SMatrix::identity()),
        v_v: velocity(&q_v, &SMatrix::zeros()),
        q_q,
        q_v,
    };
    jacobian.check_finite(after.t)?;
    Ok(jacobian)
}

/// The position pair's state Jacobian `(∂q'/∂q, ∂q'/∂v)`: right-hand sides
/// `M − c H_k(λ)` and `h M`, with `start = H_k(λ)`.
fn position_state_jacobian<const N: usize, const M: usize>(
    l: &Linearization<N, M>,
    start: &SMatrix<f64, N, N>,
) -> (SMatrix<f64, N, N>, SMatrix<f64, N, N>) {
    let none = SMatrix::<f64, M, N>::zeros();
    (
        solve_positions(l, l.mass - start * l.weight, &none),
        solve_positions(l, l.mass * l.h, &none),
    )
}

/// SHAKE's state Jacobian: the position pair's, and `δv' = (δq' − δq)/h`.
fn shake_state_jacobian<Model, const N: usize, const M: usize>(
    linearization: &Linearization<N, M>,
    model: &Model,
    before: &State<N>,
    after: &State<N>,
) -> Result<StepJacobian<N>, StepError>
where
    Model: PotentialHessian<N> + HolonomicHessians<N, M>,
{
    let l = linearization;
    let (start, _) = hessian(model, &before.q, before.t, &l.lambda)?;
    let (q_q, q_v) = position_state_jacobian(l, &start);
    let jacobian = StepJacobian {
        v_q: (q_q - SMatrix::<f64, N, N>::identity()) / l.h,
        v_v: q_v / l.h,
        q_q,
        q_v,
    };
    for (block, name) in [
        (&jacobian.q_q, "step Jacobian ∂q'/∂q"),
        (&jacobian.q_v, "step Jacobian ∂q'/∂v"),
    ] {
        check_finite(block, name, after.t)?;
    }
    Ok(jacobian)
}

/// The position pair's parameter Jacobian `∂q'/∂p`: right-hand sides
/// `−M_j (q' − q − h v) − c (∂_j∇V(q) + G_jᵀ λ)` with `G' δq' = −∂_j g(q')`.
fn position_parameter_jacobian<Model, const N: usize, const M: usize, const P: usize>(
    l: &Linearization<N, M>,
    model: &Model,
    before: &State<N>,
    after: &State<N>,
) -> Result<SMatrix<f64, N, P>, StepError>
where
    Model: ParameterDerivatives<N, M, 0, P>,
{
    let mut mass_p = [SMatrix::<f64, N, N>::zeros(); P];
    model.mass_parameter_derivatives(&before.q, &mut mass_p);
    let mut gradient_start = SMatrix::<f64, N, P>::zeros();
    model.potential_gradient_parameter_jacobian(&before.q, &mut gradient_start);
    check_finite(&gradient_start, "parameter derivative of ∇V", before.t)?;
    let mut jac_start_p = [SMatrix::<f64, M, N>::zeros(); P];
    model.constraint_jacobian_parameter_derivatives(&before.q, before.t, &mut jac_start_p);
    let mut g_end_p = SMatrix::<f64, M, P>::zeros();
    model.constraint_parameter_jacobian(&after.q, after.t, &mut g_end_p);
    check_finite(&g_end_p, "parameter derivative of the constraints", after.t)?;
    let displacement = after.q - before.q - before.v * l.h;
    let mut rhs = SMatrix::<f64, N, P>::zeros();
    for j in 0..P {
        let column = -(mass_p[j] * displacement)
            - (gradient_start.column(j) + jac_start_p[j].tr_mul(&l.lambda)) * l.weight;
        rhs.set_column(j, &column);
    }
    let q_p = solve_positions(l, rhs, &g_end_p);
    check_finite(&q_p, "parameter Jacobian ∂q'/∂p", after.t)?;
    Ok(q_p)
}

/// Returns the Jacobian with respect to the model's parameters of the step from `before` to
/// `after`, as the module docs derive it.
fn parameter_jacobian<Model, const N: usize, const M: usize, const P: usize>(
    linearization: &Linearization<N, M>,
    model: &Model,
    before: &State<N>,
    after: &State<N>,
) -> Result<ParameterJacobian<N, P>, StepError>
where
    Model: PotentialHessian<N> + HolonomicHessians<N, M> + ParameterDerivatives<N, M, 0, P>,
{
    let l = linearization;
    let h = l.h;
    let mut mass_p = [SMatrix::<f64, N, N>::zeros(); P];
    model.mass_parameter_derivatives(&before.q, &mut mass_p);
    let mut gradient_end = SMatrix::<f64, N, P>::zeros();
    model.potential_gradient_parameter_jacobian(&after.q, &mut gradient_end);
    check_finite(&gradient_end, "parameter derivative of ∇V", after.t)?;
    let mut jac_end_p = [SMatrix::<f64, M, N>::zeros(); P];
    model.constraint_jacobian_parameter_derivatives(&after.q, after.t, &mut jac_end_p);

    let half_step_velocity = (after.q - before.q) / h;
    let q_p = position_parameter_jacobian(l, model, before, after)?;

    let (end, end_rows) = hessian(model, &after.q, after.t, &l.mu)?;
    let curvature = velocity_curvature(&end_rows, &after.v);
    let mut rhs = l.mass * q_p / h - end * q_p * (0.5 * h);
    let mut offset = curvature * q_p;
    for j in 0..P {
        let column = -(mass_p[j] * (after.v - half_step_velocity))
            - (gradient_end.column(j) + jac_end_p[j].tr_mul(&l.mu)) * (0.5 * h);
        let mut target = rhs.column_mut(j);
        target += column;
        let mut target = offset.column_mut(j);
        target += jac_end_p[j] * after.v;
    }
    let v_p = solve_velocities(l, rhs, &offset);
    let jacobian = ParameterJacobian { q_p, v_p };
    jacobian.check_finite(after.t)?;
    Ok(jacobian)
}
