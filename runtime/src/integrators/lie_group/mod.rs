//! Integrators for a rigid body on `SO(3)` (Tao–Owhadi 2014 §4.5): the Lie-group variational
//! Euler with the Cayley map (the paper's benchmark, eqs. 34–35) and the variational linearized
//! `SO(3)` integrator (eqs. 36–37), first order and its trapezoidal second-order variant.
//!
//! # Design
//!
//! Both schemes step the house's [`State<9>`]: `q` is the rotation `R` (world from body) row by
//! row (`R.xx, R.xy, …, R.zz`), `v` is `Ṙ` in the same order, so the examples, observers and
//! test harnesses of the fixed-size tier serve them unchanged ([`rotation_state`],
//! [`rotation`], [`body_rate`]).
//!
//! - [`LieGroupEuler`] keeps `R` on `SO(3)` (Cayley's map is exactly orthogonal) and reads the
//!   body angular velocity as `Ω = vee(RᵀṘ)`; it steps any [`RigidBody`](crate::model::RigidBody).
//! - The linearized integrator relaxes `R` to `ℝ³ˣ³` and adds the penalty
//!   `½ω²‖RᵀR − I‖²_F`. With `p = ∂L/∂Ṙ = (j/2) Ṙ` (inertia `J = j I`) its force `f_k` is
//!   Zhang–Skeel's `a − ½β²h⁴ M⁻¹ (a·V‴·a)` on `ℝ⁹` with the constant mass `M = (j/2) I` and
//!   `β' = j β / 2`, so it is written once: [`PenalizedRotation`] turns a rigid body into a
//!   fixed-size model on `ℝ⁹` (the potential `U = V + ½ω²‖RᵀR − I‖²` and its first three
//!   derivatives), the trapezoidal variant *is* [`ZhangSkeel<9>`](crate::ZhangSkeel) on it
//!   ([`linearized_trapezoidal`]), and the first-order variant [`LinearizedSo3`] reuses Z&S's
//!   force rule and linear algebra (`FullAcceleration` on `CarriedDense<9>`, one Cholesky-or-LU
//!   of `M + β'h² Hess U` through [`LinearSolver`](crate::linalg::LinearSolver)) and adds only
//!   its symplectic-Euler update.

mod cayley;
mod linearized;

pub use cayley::LieGroupEuler;
pub use linearized::{linearized_trapezoidal, LinearizedSo3, PenalizedRotation};

use nalgebra::{Matrix3, SVector, Vector3};

use crate::model::{hat, vee};
use crate::state::State;

/// The names of the nine coordinates `R.xx, R.xy, …, R.zz` (world from body, row by row).
pub const ROTATION_COORDINATES: [&str; 9] = [
    "R.xx", "R.xy", "R.xz", "R.yx", "R.yy", "R.yz", "R.zx", "R.zy", "R.zz",
];

/// Returns the state at time `t` with rotation `r` and body angular velocity `omega`:
/// `q = R` and `v = Ṙ = R Ω̂`, row by row.
///
/// ```
/// use mechanism_runtime::integrators::lie_group::{body_rate, rotation, rotation_state};
/// use nalgebra::{Matrix3, Vector3};
/// let state = rotation_state(0.0, &Matrix3::identity(), &Vector3::new(1.0, 0.2, 0.1));
/// assert_eq!(rotation(&state.q), Matrix3::identity());
/// assert_eq!(body_rate(&state), Vector3::new(1.0, 0.2, 0.1));
/// ```
pub fn rotation_state(t: f64, r: &Matrix3<f64>, omega: &Vector3<f64>) -> State<9> {
    State {
        t,
        q: row_major(r),
        v: row_major(&(r * hat(omega))),
    }
}

/// Returns the 3×3 matrix stored row by row in `x` (`R` from `q`, `Ṙ` from `v`).
pub fn rotation(x: &SVector<f64, 9>) -> Matrix3<f64> {
    Matrix3::from_row_slice(x.as_slice())
}

/// Returns `m` row by row as a vector of ℝ⁹.
pub fn row_major(m: &Matrix3<f64>) -> SVector<f64, 9> {
    SVector::from_row_slice(m.transpose().as_slice())
}

/// Returns the body angular velocity `Ω = vee(RᵀṘ)` of the skew part of `RᵀṘ` (exact on
/// `SO(3)`, where `RᵀṘ = Ω̂`; a least-squares reading off it).
pub fn body_rate(state: &State<9>) -> Vector3<f64> {
    vee(&(rotation(&state.q).transpose() * rotation(&state.v)))
}

/// Returns the distance from orthogonality `‖RᵀR − I‖_F`.
pub fn orthogonality_residual(r: &Matrix3<f64>) -> f64 {
    (r.transpose() * r - Matrix3::identity()).norm()
}
