//! Gonzalez discrete gradients (Kinon–Betsch–Livens eq. 26–29): directionality, consistency,
//! the safe limit for short steps, and every Newton Jacobian against finite differences.

mod directionality;
mod jacobians;

use mechanism_runtime::discrete_gradient::{
    gonzalez, gonzalez_jacobian, gonzalez_jacobian_masked, gonzalez_masked,
    ConstraintDiscreteGradient, ConstraintDiscreteGradientJacobians, KineticDiscreteGradient,
    KineticJacobians, PotentialDiscreteGradient, PotentialDiscreteGradientJacobian,
};
use mechanism_runtime::reference::{DoublePendulum, SphericalSpringPendulum};
use mechanism_runtime::{Holonomic, Inertia, InertiaGradient, Potential, SMatrix, SVector};
use proptest::prelude::*;

/// Step lengths `|q1 − q0|` exercised by the property tests: exactly equal points, the safe
/// limit, the transition, and ordinary steps.
const STEP_SCALES: [f64; 9] = [0.0, 1e-14, 1e-12, 1e-9, 1e-6, 1e-4, 1e-2, 0.1, 1.0];

/// The spherical pendulum with gravity, so that `V` depends on `θ` as well as on `r`.
fn spherical() -> SphericalSpringPendulum {
    SphericalSpringPendulum {
        gravity: 9.81,
        ..SphericalSpringPendulum::default()
    }
}

/// A smooth non-polynomial test function on ℝ³: `F = sin x₀ e^{x₁} + x₂⁴/4 + x₀ x₂`.
fn test_f(x: &SVector<f64, 3>) -> f64 {
    x[0].sin() * x[1].exp() + 0.25 * x[2].powi(4) + x[0] * x[2]
}

/// Returns `∇F`.
fn test_grad(x: &SVector<f64, 3>) -> SVector<f64, 3> {
    let e = x[1].exp();
    SVector::<f64, 3>::new(x[0].cos() * e + x[2], x[0].sin() * e, x[2].powi(3) + x[0])
}

/// Returns `Hess F`.
fn test_hess(x: &SVector<f64, 3>) -> SMatrix<f64, 3, 3> {
    let e = x[1].exp();
    let (s, c) = x[0].sin_cos();
    #[rustfmt::skip]
    let h = SMatrix::<f64, 3, 3>::new(
        -s * e, c * e, 1.0,
        c * e,  s * e, 0.0,
        1.0,    0.0,   3.0 * x[2] * x[2],
    );
    h
}

/// Returns `D̄F(x, y)` through the kernel.
fn test_discrete_gradient(x: &SVector<f64, 3>, y: &SVector<f64, 3>) -> SVector<f64, 3> {
    gonzalez(x, y, test_f(x), test_f(y), &test_grad(&((x + y) * 0.5)))
}

/// A smooth function on ℝ³ that does not depend on `x₂` (a cyclic coordinate):
/// `G = sin x₀ e^{x₁} + x₀⁴/4`.
fn cyclic_f(x: &SVector<f64, 3>) -> f64 {
    x[0].sin() * x[1].exp() + 0.25 * x[0].powi(4)
}

/// Returns `∇G`; its last component is exactly zero.
fn cyclic_grad(x: &SVector<f64, 3>) -> SVector<f64, 3> {
    let e = x[1].exp();
    SVector::<f64, 3>::new(x[0].cos() * e + x[0].powi(3), x[0].sin() * e, 0.0)
}

/// Returns `Hess G`.
fn cyclic_hess(x: &SVector<f64, 3>) -> SMatrix<f64, 3, 3> {
    let e = x[1].exp();
    let (s, c) = x[0].sin_cos();
    #[rustfmt::skip]
    let h = SMatrix::<f64, 3, 3>::new(
        -s * e + 3.0 * x[0] * x[0], c * e, 0.0,
        c * e,                      s * e, 0.0,
        0.0,                        0.0,   0.0,
    );
    h
}

/// The dependency mask of `G`.
const CYCLIC_MASK: [bool; 3] = [true, true, false];

/// Returns the masked `D̄G(x, y)` through the kernel.
fn cyclic_discrete_gradient(x: &SVector<f64, 3>, y: &SVector<f64, 3>) -> SVector<f64, 3> {
    let z = (x + y) * 0.5;
    gonzalez_masked(
        x,
        y,
        cyclic_f(x),
        cyclic_f(y),
        &cyclic_grad(&z),
        &CYCLIC_MASK,
    )
}

/// A point `x` and a second point `y = x + scale·d` with `|d| = 1`.
fn pair<const N: usize>(
    x: [f64; N],
    d: [f64; N],
    scale: f64,
) -> (SVector<f64, N>, SVector<f64, N>) {
    let x = SVector::from(x);
    let d = SVector::from(d);
    let norm = d.norm();
    let direction = if norm > 1e-3 {
        d / norm
    } else {
        let mut e = SVector::zeros();
        e[0] = 1.0;
        e
    };
    (x, x + direction * scale)
}

/// A configuration of the spherical pendulum away from the singular `θ = kπ`.
fn spherical_configuration() -> impl Strategy<Value = [f64; 3]> {
    [0.6..1.5f64, 0.3..2.8f64, -3.0..3.0f64]
}
