//! Discrete Lagrange–d'Alembert integrators for Pfaffian (nonholonomic) constraints
//! `A(q) v = w(t)`.
//!
//! Both schemes discretize the action of `L = ½ vᵀ M v − V(q)` with the symplectic-Euler
//! discrete Lagrangian, the left-endpoint rule of Cuell (2005) §4 and Lacoursière (2007) eq. 12:
//!
//! ```text
//! L_d(q_0, q_1) = (1/2h) (q_1 − q_0)ᵀ M (q_1 − q_0) − h V(q_0)
//! ```
//!
//! and restrict the variations to the constraint distribution `D(q) = ker A(q)`, which adds a
//! reaction `A(q_k)ᵀ μ` to the discrete Euler–Lagrange equations at the node `q_k`:
//!
//! ```text
//! M (q_{k+1} − q_k)/h − M (q_k − q_{k−1})/h + h ∇V(q_k) = A(q_k)ᵀ μ_k
//! ```
//!
//! They differ only in where the discrete constraint is evaluated:
//!
//! | integrator | discrete constraint | solve per step |
//! | --- | --- | --- |
//! | [`DiscreteLagrangeDAlembert`] (Cuell 2005 §6, eq. 53–58) | `A(q_k)(q_{k+1} − q_k)/h = w(t_k)` | one `K×K` Cholesky, no iteration |
//! | [`CortesMartinez`] (Lacoursière 2007 eq. 24 as `γ → 0`) | `A(q_{k+1})(q_{k+1} − q_k)/h = w(t_{k+1})` | Newton on the `K` multipliers |
//!
//! A third, [`MidpointLagrangeDAlembert`] (McLachlan–Perlmutter 2006), takes the midpoint
//! discrete Lagrangian `L_d = h L((q_0 + q_1)/2, (q_1 − q_0)/h)` instead, with the constraint
//! `A(q̄)(q_{k+1} − q_k)/h = w(t_{k+1/2})` at the midpoint `q̄` and Newton on `(q_{k+1}, μ)`:
//! it is second order, steps a configuration-dependent mass matrix (a unit quaternion with the
//! completion of its kinetic energy), and keeps every quadratic integral of the rows, such as
//! `|q| = 1`, to round-off.
//!
//! In both, the velocity of the state an integrator returns satisfies `A(q) v = w(t)` at its
//! own configuration and time, to round-off (Cuell) or to the Newton tolerance (Cortés–Martínez).
//! Neither is exactly energy conserving for a genuinely nonholonomic constraint; both conserve
//! the momentum maps of symmetries that leave `L` and `D` invariant (e.g. the angular momentum
//! of a planar central-force problem with the constraint `x ẋ + y ẏ = 0`).

mod cortes_martinez;
mod cuell;
mod jacobian;
mod midpoint;
mod midpoint_jacobian;

pub use cortes_martinez::CortesMartinez;
pub use cuell::DiscreteLagrangeDAlembert;
pub use midpoint::MidpointLagrangeDAlembert;

use nalgebra::{SMatrix, SVector};

use super::checks::check_finite;
use crate::error::StepError;
use crate::linalg::{factored, Cholesky, LinearSolver, Lu};
use crate::model::{Nonholonomic, NonholonomicDerivative};

/// The name of the constraint Schur complement, for errors.
const SCHUR_MATRIX: &str = "A M⁻¹ Aᵀ";

/// The name of the Newton matrix of [`CortesMartinez`], for errors.
const NEWTON_MATRIX: &str = "Newton matrix (A + h ∂(Av)/∂q) M⁻¹ A(q_k)ᵀ";

/// Returns `A(q)` of `model`, checked to be finite.
fn constraint_matrix<Model, const N: usize, const K: usize>(
    model: &Model,
    q: &SVector<f64, N>,
    t_err: f64,
) -> Result<SMatrix<f64, K, N>, StepError>
where
    Model: Nonholonomic<N, K>,
{
    let mut a = SMatrix::<f64, K, N>::zeros();
    model.nonholonomic_matrix(q, &mut a);
    check_finite(&a, "nonholonomic matrix", t_err)?;
    Ok(a)
}

/// Returns `w(t)` of `model`, checked to be finite.
fn constraint_drive<Model, const N: usize, const K: usize>(
    model: &Model,
    t: f64,
    t_err: f64,
) -> Result<SVector<f64, K>, StepError>
where
    Model: Nonholonomic<N, K>,
{
    let mut w = SVector::<f64, K>::zeros();
    model.nonholonomic_drive(t, &mut w);
    check_finite(&w, "nonholonomic drive", t_err)?;
    Ok(w)
}

/// Returns the velocity `v = v* + M⁻¹ Aᵀ μ` with `A v = w`: the `M`-orthogonal projection of
/// `v*` onto the affine space `{A v = w}`, the multipliers `μ`, and the factorizations it took
/// (1, or 0 if `K = 0`).
///
/// It solves the saddle-point system `[M −Aᵀ; A 0] [v; μ] = [M v*; w]` by its Schur complement
/// `A M⁻¹ Aᵀ μ = w − A v*`, which is symmetric positive definite exactly when the rows of `A`
/// are linearly independent; dependent rows are [`StepError::Singular`].
fn project_velocity<const N: usize, const K: usize>(
    mass: &Cholesky<N>,
    a: &SMatrix<f64, K, N>,
    w: &SVector<f64, K>,
    v_star: &SVector<f64, N>,
    t_err: f64,
) -> Result<(SVector<f64, N>, SVector<f64, K>, u32), StepError> {
    if K == 0 {
        return Ok((*v_star, SVector::zeros(), 0));
    }
    let mut minv_at = a.transpose();
    mass.solve_in_place(&mut minv_at);
    let wrap = StepError::linear_algebra(SCHUR_MATRIX, t_err);
    let mut schur = factored::<Option<Cholesky<K>>>(&(a * minv_at)).map_err(&wrap)?;
    let mut mu = w - a * v_star;
    schur.solve_in_place(mu.as_mut_slice()).map_err(&wrap)?;
    Ok((v_star + minv_at * mu, mu, 1))
}

/// Returns `max_i |x_i|` (0 for an empty vector).
fn max_abs<const K: usize>(x: &SVector<f64, K>) -> f64 {
    x.iter().fold(0.0, |m, c| m.max(c.abs()))
}

/// Returns the scale of the terms of `A v`, `max_i Σ_j |A_ij v_j|`, which sets the rounding
/// error of the residual `A v − w`.
fn constraint_scale<const N: usize, const K: usize>(
    a: &SMatrix<f64, K, N>,
    v: &SVector<f64, N>,
) -> f64 {
    a.row_iter()
        .map(|row| row.iter().zip(v.iter()).map(|(x, y)| (x * y).abs()).sum())
        .fold(0.0, f64::max)
}

/// Returns the Newton correction `j⁻¹ residual` for the `K×K` Newton matrix `j`, by LU.
fn newton_correction<const K: usize>(
    j: &SMatrix<f64, K, K>,
    residual: &SVector<f64, K>,
    t_err: f64,
) -> Result<SVector<f64, K>, StepError> {
    let wrap = StepError::linear_algebra(NEWTON_MATRIX, t_err);
    let mut lu = factored::<Option<Lu<K>>>(j).map_err(&wrap)?;
    let mut correction = *residual;
    lu.solve_in_place(correction.as_mut_slice())
        .map_err(&wrap)?;
    Ok(correction)
}
