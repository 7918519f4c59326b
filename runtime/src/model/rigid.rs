//! A rigid body whose configuration is a rotation `R ∈ SO(3)` (world from body): what the
//! Lie-group integrators of [`crate::integrators::lie_group`] ask of a model.
//!
//! The body has an inertia tensor `J` (3×3, symmetric positive definite, body frame) and a
//! potential `V(R)`. The body angular velocity `Ω` is defined by `Ṙ = R Ω̂`, with the hat map
//! `Ω̂ = [[0, −Ω₃, Ω₂], [Ω₃, 0, −Ω₁], [−Ω₂, Ω₁, 0]]`, and the Lagrangian is
//! `l(R, Ω) = ½ Ωᵀ J Ω − V(R)` (Tao–Owhadi 2014, eq. 33). A scheme that works on `SO(3)` needs
//! the body torque `τ = −vee(Rᵀ G − Gᵀ R)` of the Euclidean gradient `G = ∂V/∂R` (the
//! derivative of `V(R exp(ε η̂))` in `ε` is `−τ·η`); a scheme that relaxes `R` to `ℝ³ˣ³` with
//! a penalty (the variational linearized integrator, Tao–Owhadi eqs. 36–37) needs `V` extended
//! to all of `ℝ³ˣ³` and its first three derivatives there.
//!
//! Every method takes and returns plain `Matrix3`/`Vector3` values, so that a later
//! `mechanism!` can generate these traits from a potential written with the rotation.

use nalgebra::{Matrix3, Vector3};

/// A rigid body with a constant inertia tensor and a potential of its orientation `R`.
///
/// `V` is given on all of `ℝ³ˣ³` (an extension of the potential on `SO(3)`); its Euclidean
/// gradient [`potential_gradient`](Self::potential_gradient) `G_ij = ∂V/∂R_ij` gives the torque.
pub trait RigidBody {
    /// Returns the inertia tensor `J` in the body frame (symmetric positive definite).
    fn inertia(&self) -> Matrix3<f64>;

    /// Returns `V(R)`.
    fn potential(&self, r: &Matrix3<f64>) -> f64;

    /// Returns the Euclidean gradient `G = ∂V/∂R` (`G_ij = ∂V/∂R_ij`).
    fn potential_gradient(&self, r: &Matrix3<f64>) -> Matrix3<f64>;

    /// Returns the body torque `τ = −vee(Rᵀ G − Gᵀ R)`, `G = ∂V/∂R`, where
    /// `vee(S) = (S₃₂, S₁₃, S₂₁)`: minus the derivative of `V(R exp(ε η̂))` at `ε = 0` is `τ·η`.
    fn torque(&self, r: &Matrix3<f64>) -> Vector3<f64> {
        let m = r.transpose() * self.potential_gradient(r);
        -Vector3::new(
            m[(2, 1)] - m[(1, 2)],
            m[(0, 2)] - m[(2, 0)],
            m[(1, 0)] - m[(0, 1)],
        )
    }

    /// Returns the name and value of the first non-finite or inadmissible parameter, if any.
    fn non_finite_parameter(&self) -> Option<(&'static str, f64)> {
        None
    }
}

/// The second and third derivatives of a [`RigidBody`]'s potential on `ℝ³ˣ³`, contracted with
/// a direction `A ∈ ℝ³ˣ³` (what the variational linearized integrator needs).
pub trait RigidBodyHessians: RigidBody {
    /// Returns `∇²V(R)[A]`, the directional derivative of `∂V/∂R` along `A`.
    fn potential_hessian_product(&self, r: &Matrix3<f64>, a: &Matrix3<f64>) -> Matrix3<f64>;

    /// Returns `∇³V(R)[A, A]`, the second directional derivative of `∂V/∂R` along `A`.
    fn potential_third_derivative(&self, r: &Matrix3<f64>, a: &Matrix3<f64>) -> Matrix3<f64>;
}

/// Returns the hat matrix `ω̂` with `ω̂ x = ω × x`.
///
/// ```
/// use mechanism_runtime::model::hat;
/// use nalgebra::Vector3;
/// let (w, x) = (Vector3::new(1.0, 2.0, 3.0), Vector3::new(-1.0, 0.5, 4.0));
/// assert!((hat(&w) * x - w.cross(&x)).norm() < 1e-15);
/// ```
pub fn hat(w: &Vector3<f64>) -> Matrix3<f64> {
    Matrix3::new(0.0, -w.z, w.y, w.z, 0.0, -w.x, -w.y, w.x, 0.0)
}

/// Returns `vee(S) = (S₃₂, S₁₃, S₂₁)` of the skew part `(S − Sᵀ)/2` of `s`: the inverse of
/// [`hat`] on skew matrices.
///
/// ```
/// use mechanism_runtime::model::{hat, vee};
/// use nalgebra::Vector3;
/// let w = Vector3::new(0.3, -2.0, 1.5);
/// assert_eq!(vee(&hat(&w)), w);
/// ```
pub fn vee(s: &Matrix3<f64>) -> Vector3<f64> {
    Vector3::new(
        0.5 * (s[(2, 1)] - s[(1, 2)]),
        0.5 * (s[(0, 2)] - s[(2, 0)]),
        0.5 * (s[(1, 0)] - s[(0, 1)]),
    )
}
