//! A plain fixed-step classical Runge–Kutta 4 for `y' = f(y)`, for computing reference
//! solutions in coordinates other than a model's (angles instead of Cartesian positions) or of
//! ODEs no integrator of the runtime steps (the penalized equations with a hand-written force).
//!
//! It is deliberately independent of the runtime's integrators and model traits, so that a
//! reference computed with it shares no code with the methods it checks.

use nalgebra::SVector;

/// Integrates `y' = f(y)` from `y` over `steps` steps of size `h` with classical RK4 and returns
/// the final value.
///
/// ```
/// use mechanism_runtime::reference::ode::rk4;
/// use mechanism_runtime::SVector;
/// // y' = −y from y(0) = 1: y(1) = e⁻¹, with an error of order h⁴.
/// let y = rk4(|y: &SVector<f64, 1>| -y, SVector::<f64, 1>::new(1.0), 0.01, 100);
/// assert!((y[0] - (-1f64).exp()).abs() < 1e-9);
/// ```
pub fn rk4<const D: usize>(
    f: impl Fn(&SVector<f64, D>) -> SVector<f64, D>,
    mut y: SVector<f64, D>,
    h: f64,
    steps: usize,
) -> SVector<f64, D> {
    for _ in 0..steps {
        let k1 = f(&y);
        let k2 = f(&(y + k1 * (h / 2.0)));
        let k3 = f(&(y + k2 * (h / 2.0)));
        let k4 = f(&(y + k3 * h));
        y += (k1 + k2 * 2.0 + k3 * 2.0 + k4) * (h / 6.0);
    }
    y
}
