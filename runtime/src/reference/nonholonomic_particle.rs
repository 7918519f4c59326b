//! Cuell's nonholonomic free particle (Cuell 2005 §3.1): a unit mass in `R³` with `ż = y ẋ`,
//! and its closed-form solution.

use nalgebra::{SMatrix, SVector};

use crate::model::NonholonomicDerivative;
use crate::model::{
    AppliedForces, Configuration, ConstantMass, Inertia, Nonholonomic, Potential, PotentialHessian,
};
use crate::state::State;

/// The nonholonomic free particle: `L = ½ (ẋ² + ẏ² + ż²)`, `V = 0`, and the non-integrable
/// constraint `ż = y ẋ`, i.e. `A(q) = (−y, 0, 1)`, `w = 0` (Cuell 2005 §3.1).
///
/// Its equations of motion are `ẍ + y ẋ ẏ / (1 + y²) = 0`, `ÿ = 0`, `ż = y ẋ` (§3.1); they
/// integrate in closed form, see [`exact`](Self::exact). The energy `½ (ẋ² (1 + y²) + ẏ²)` is
/// conserved.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NonholonomicParticle;

impl NonholonomicParticle {
    /// Returns the kinetic energy `½ |v|²`.
    pub fn energy(&self, state: &State<3>) -> f64 {
        0.5 * state.v.norm_squared()
    }

    /// Returns the constraint residual `ż − y ẋ`.
    pub fn constraint_residual(&self, state: &State<3>) -> f64 {
        state.v[2] - state.q[1] * state.v[0]
    }

    /// Returns the exact state at time `t` of the solution through `initial`, whose `ż` is
    /// taken to be `y ẋ` (the given `ż` is ignored).
    ///
    /// `ÿ = 0` gives `y = y₀ + ẏ₀ τ` (`τ = t − t₀`), and `ẍ (1 + y²) + y ẋ ẏ = 0` says that
    /// `c = ẋ √(1 + y²)` is constant. Integrating `ẋ = c / √(1 + y²)` and `ż = y ẋ` over `y`:
    ///
    /// ```text
    /// x = x₀ + (c/ẏ₀) (asinh y − asinh y₀),   z = z₀ + (c/ẏ₀) (√(1 + y²) − √(1 + y₀²))
    /// ```
    ///
    /// and, if `ẏ₀ = 0`, `x = x₀ + ẋ₀ τ`, `z = z₀ + y₀ ẋ₀ τ`.
    pub fn exact(&self, initial: &State<3>, t: f64) -> State<3> {
        let tau = t - initial.t;
        let (x0, y0, z0) = (initial.q[0], initial.q[1], initial.q[2]);
        let (xd0, yd0) = (initial.v[0], initial.v[1]);
        let y = y0 + yd0 * tau;
        let root0 = (1.0 + y0 * y0).sqrt();
        let root = (1.0 + y * y).sqrt();
        let c = xd0 * root0;
        let (x, z) = if yd0 == 0.0 {
            (x0 + xd0 * tau, z0 + y0 * xd0 * tau)
        } else {
            (
                x0 + c / yd0 * (y.asinh() - y0.asinh()),
                z0 + c / yd0 * (root - root0),
            )
        };
        let xd = c / root;
        State::new(t, [x, y, z], [xd, yd0, y * xd])
    }
}

impl Configuration<3> for NonholonomicParticle {
    const COORDINATES: [&'static str; 3] = ["x", "y", "z"];
}

/// No dissipation or external forces.
impl AppliedForces<3> for NonholonomicParticle {}

/// Constant `M`; `do_not_recommend` keeps the library's models out of the list of
/// implementers in the error for a model without the marker.
#[diagnostic::do_not_recommend]
impl ConstantMass<3> for NonholonomicParticle {}

impl Inertia<3> for NonholonomicParticle {
    const CONSTANT_MASS: bool = true;

    fn mass_matrix(&self, _q: &SVector<f64, 3>, m: &mut SMatrix<f64, 3, 3>) {
        *m = SMatrix::<f64, 3, 3>::identity();
    }
}

/// The particle is free: `V = 0`.
impl Potential<3> for NonholonomicParticle {
    fn potential(&self, _q: &SVector<f64, 3>) -> f64 {
        0.0
    }

    fn potential_gradient(&self, _q: &SVector<f64, 3>, grad: &mut SVector<f64, 3>) {
        grad.fill(0.0);
    }
}

impl PotentialHessian<3> for NonholonomicParticle {
    fn potential_hessian(&self, _q: &SVector<f64, 3>, hess: &mut SMatrix<f64, 3, 3>) {
        hess.fill(0.0);
    }
}

impl Nonholonomic<3, 1> for NonholonomicParticle {
    const NONHOLONOMIC: [&'static str; 1] = ["z_dot_equals_y_x_dot"];

    fn nonholonomic_matrix(&self, q: &SVector<f64, 3>, a: &mut SMatrix<f64, 1, 3>) {
        *a = SMatrix::<f64, 1, 3>::new(-q[1], 0.0, 1.0);
    }

    fn nonholonomic_drive(&self, _t: f64, w: &mut SVector<f64, 1>) {
        w.fill(0.0);
    }
}

impl NonholonomicDerivative<3, 1> for NonholonomicParticle {
    fn nonholonomic_velocity_jacobian(
        &self,
        _q: &SVector<f64, 3>,
        v: &SVector<f64, 3>,
        out: &mut SMatrix<f64, 1, 3>,
    ) {
        // ∂(−y ẋ + ż)/∂(x, y, z) = (0, −ẋ, 0)
        *out = SMatrix::<f64, 1, 3>::new(0.0, -v[0], 0.0);
    }
}
