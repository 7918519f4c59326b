//! The exact state Jacobian of a step of [`MidpointLagrangeDAlembert`] (McLachlan–Perlmutter
//! 2006), for a configuration-dependent `M(q)`.
//!
//! The step solves for `(q₁, μ)` and then projects the velocity (the type's docs), with
//! `q̄ = (q₀ + q₁)/2`, `u = (q₁ − q₀)/h`, `c = ∂T/∂q − ∇V` at `(q̄, u)`:
//!
//! ```text
//! F = M(q₀) v₀ + A(q₀)ᵀ μ + (h/2) c − M(q̄) u = 0
//! G = A(q̄) u − w(t₀ + h/2)                  = 0
//! p⁺ = (h/2) c + M(q̄) u
//! M(q₁) v₁ = p⁺ + A(q₁)ᵀ ν,   A(q₁) v₁ = w(t₁)
//! ```
//!
//! By the implicit function theorem on these equations at the converged `(q₁, μ)` (not through
//! Newton's iterates), with `Q = ∂²T/∂q∂v`, `K_c = (h/4)(∂²T/∂q² − ∇²V)` at `(q̄, u)`,
//! `E(μ) = ∂(Aᵀμ)/∂q`, `D(u) = ∂(A u)/∂q`:
//!
//! ```text
//! J₁ δq₁ + A(q₀)ᵀ δμ = −(Q(q₀, v₀)ᵀ + E(μ)(q₀) + J₀) δq₀ − M(q₀) δv₀
//! g₁ δq₁             = −g₀ δq₀
//! J₁ = K_c + ½(Q − Qᵀ) − M(q̄)/h,    J₀ = K_c − ½(Q + Qᵀ) + M(q̄)/h
//! g₁ = ½ D(u)(q̄) + A(q̄)/h,          g₀ = ½ D(u)(q̄) − A(q̄)/h
//! δp⁺ = (K_c + ½(Q + Qᵀ) + M(q̄)/h) δq₁ + (K_c − ½(Q − Qᵀ) − M(q̄)/h) δq₀
//! M(q₁) δv₁ + Q(q₁, v₁)ᵀ δq₁ = δp⁺ + E(ν)(q₁) δq₁ + A(q₁)ᵀ δν,    A(q₁) δv₁ + D(v₁)(q₁) δq₁ = 0
//! ```
//!
//! The first block is Newton's own matrix (`J₁` by LU, then its `K × K` Schur complement
//! `g₁ J₁⁻¹ A(q₀)ᵀ`), the last the projection's (`M(q₁)` by Cholesky, then `A M⁻¹ Aᵀ`): four
//! factorizations for all `2N` directions. The parameter Jacobian would need `∂(∂T/∂q)/∂p`,
//! which `mechanism!` does not generate, so the scheme implements [`DifferentiableStep`] only.

use nalgebra::{SMatrix, SVector};

use super::{constraint_matrix, MidpointLagrangeDAlembert};
use crate::error::StepError;
use crate::integrators::checks::check_finite;
use crate::integrators::jacobian::step_and_differentiate;
use crate::integrators::{DifferentiableStep, Integrator, StepJacobian, StepReport};
use crate::linalg::{Cholesky, Lu};
use crate::model::{InertiaGradient, NonholonomicDerivative, PotentialHessian};
use crate::state::State;

impl<Model, const N: usize, const K: usize> DifferentiableStep<Model, N>
    for MidpointLagrangeDAlembert<N, K>
where
    Model: InertiaGradient<N> + PotentialHessian<N> + NonholonomicDerivative<N, K>,
    MidpointLagrangeDAlembert<N, K>: Integrator<Model, N>,
{
    fn step_with_jacobian(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        jacobian: &mut StepJacobian<N>,
    ) -> Result<StepReport, StepError> {
        step_and_differentiate(self, model, state, |method, before, after| {
            let (mu, nu) = (*method.multipliers(), *method.projection_multipliers());
            let (q_q, q_v, v_q, v_v) =
                state_jacobian(model, method.step_size(), before, after, &mu, &nu)?;
            let state_jacobian = StepJacobian { q_q, q_v, v_q, v_v };
            state_jacobian.check_finite(before.t)?;
            *jacobian = state_jacobian;
            Ok(())
        })
    }
}

/// `(∂q₁/∂q₀, ∂q₁/∂v₀, ∂v₁/∂q₀, ∂v₁/∂v₀)`.
type Blocks<const N: usize> = (
    SMatrix<f64, N, N>,
    SMatrix<f64, N, N>,
    SMatrix<f64, N, N>,
    SMatrix<f64, N, N>,
);

/// Returns the four blocks of the state Jacobian of the step from `before` to `after` with
/// multipliers `mu` and projection multipliers `nu`, as the module docs derive them.
fn state_jacobian<Model, const N: usize, const K: usize>(
    model: &Model,
    h: f64,
    before: &State<N>,
    after: &State<N>,
    mu: &SVector<f64, K>,
    nu: &SVector<f64, K>,
) -> Result<Blocks<N>, StepError>
where
    Model: InertiaGradient<N> + PotentialHessian<N> + NonholonomicDerivative<N, K>,
{
    let t = before.t;
    let (q0, v0, q1, v1) = (before.q, before.v, after.q, after.v);
    let mid = (q0 + q1) * 0.5;
    let u = (q1 - q0) / h;

    // The DLA equation's derivatives at (q̄, u).
    let (mut qq, mut qv) = (SMatrix::<f64, N, N>::zeros(), SMatrix::<f64, N, N>::zeros());
    model.kinetic_hessians(&mid, &u, &mut qq, &mut qv);
    let mut hessian = SMatrix::<f64, N, N>::zeros();
    model.potential_hessian(&mid, &mut hessian);
    let mut mass_mid = SMatrix::<f64, N, N>::zeros();
    model.mass_matrix(&mid, &mut mass_mid);
    let mut rows_derivative = SMatrix::<f64, K, N>::zeros();
    model.nonholonomic_velocity_jacobian(&mid, &u, &mut rows_derivative);
    check_finite(&qq, "∂²T/∂q²", t)?;
    check_finite(&qv, "∂²T/∂q∂v", t)?;
    check_finite(&hessian, "Hess V", t)?;
    check_finite(&mass_mid, "mass matrix", t)?;
    check_finite(&rows_derivative, "nonholonomic velocity jacobian", t)?;
    let rows_mid = constraint_matrix(model, &mid, t)?;
    let curvature = (qq - hessian) * (0.25 * h);
    let (sum, difference) = (qv + qv.transpose(), qv - qv.transpose());
    let inertia = mass_mid / h;
    let j1 = curvature + difference * 0.5 - inertia;
    let j0 = curvature - sum * 0.5 + inertia;
    let g1 = rows_derivative * 0.5 + rows_mid / h;
    let g0 = rows_derivative * 0.5 - rows_mid / h;

    // The start's terms: p₀ = M(q₀) v₀ and the reaction A(q₀)ᵀ μ.
    let (mut start_qq, mut start_qv) = (SMatrix::<f64, N, N>::zeros(), SMatrix::zeros());
    model.kinetic_hessians(&q0, &v0, &mut start_qq, &mut start_qv);
    let mut mass_start = SMatrix::<f64, N, N>::zeros();
    model.mass_matrix(&q0, &mut mass_start);
    let mut reaction_start = SMatrix::<f64, N, N>::zeros();
    model.nonholonomic_reaction_jacobian(&q0, mu, &mut reaction_start);
    check_finite(&start_qv, "∂²T/∂q∂v", t)?;
    check_finite(&mass_start, "mass matrix", t)?;
    check_finite(
        &reaction_start,
        "nonholonomic reaction derivative ∂(Aᵀμ)/∂q",
        t,
    )?;
    let rows_start = constraint_matrix(model, &q0, t)?;

    // [J₁ A₀ᵀ; g₁ 0] (δq₁, δμ) = (r_F, r_G), for the q₀- and v₀-directions.
    let wrap = StepError::linear_algebra("Newton block ∂(D₁L_d)/∂q_{k+1}", t);
    let j1 = Lu::try_new(&j1).map_err(wrap)?;
    let x = j1.solve_columns(&rows_start.transpose());
    let schur = Lu::try_new(&(g1 * x)).map_err(StepError::linear_algebra(
        "Newton Schur complement (½ ∂(Au)/∂q + A/h) J⁻¹ A(q_k)ᵀ",
        t,
    ))?;
    let position = |r_f: SMatrix<f64, N, N>, r_g: SMatrix<f64, K, N>| {
        let y = j1.solve_columns(&r_f);
        y - x * schur.solve_columns(&(g1 * y - r_g))
    };
    let dq1_dq0 = position(-(start_qv.transpose() + reaction_start + j0), -g0);
    let dq1_dv0 = position(-mass_start, SMatrix::zeros());

    // p⁺ and the projection at q₁.
    let p_q1 = curvature + sum * 0.5 + inertia;
    let p_q0 = curvature - difference * 0.5 - inertia;
    let (mut end_qq, mut end_qv) = (SMatrix::<f64, N, N>::zeros(), SMatrix::zeros());
    model.kinetic_hessians(&q1, &v1, &mut end_qq, &mut end_qv);
    let mut mass_end = SMatrix::<f64, N, N>::zeros();
    model.mass_matrix(&q1, &mut mass_end);
    let mut reaction_end = SMatrix::<f64, N, N>::zeros();
    model.nonholonomic_reaction_jacobian(&q1, nu, &mut reaction_end);
    let mut velocity_rows = SMatrix::<f64, K, N>::zeros();
    model.nonholonomic_velocity_jacobian(&q1, &v1, &mut velocity_rows);
    check_finite(&end_qv, "∂²T/∂q∂v", t)?;
    check_finite(
        &reaction_end,
        "nonholonomic reaction derivative ∂(Aᵀν)/∂q",
        t,
    )?;
    check_finite(&velocity_rows, "nonholonomic velocity jacobian", t)?;
    let rows_end = constraint_matrix(model, &q1, t)?;
    let mass_factor = Cholesky::try_new(&mass_end)
        .map_err(StepError::linear_algebra("mass matrix M(q_{k+1})", t))?;
    let mut reaction = rows_end.transpose();
    mass_factor.solve_in_place(&mut reaction);
    let projection = Lu::try_new(&(rows_end * reaction))
        .map_err(StepError::linear_algebra("A M⁻¹ Aᵀ at q_{k+1}", t))?;
    let velocity = |dq1: &SMatrix<f64, N, N>, dp: SMatrix<f64, N, N>| {
        let mut z = dp + (reaction_end - end_qv.transpose()) * dq1;
        mass_factor.solve_in_place(&mut z);
        z - reaction * projection.solve_columns(&(velocity_rows * dq1 + rows_end * z))
    };
    let dv1_dq0 = velocity(&dq1_dq0, p_q1 * dq1_dq0 + p_q0);
    let dv1_dv0 = velocity(&dq1_dv0, p_q1 * dq1_dv0);
    Ok((dq1_dq0, dq1_dv0, dv1_dq0, dv1_dv0))
}
