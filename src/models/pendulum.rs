//! The simple pendulum in Cartesian coordinates, the model of the `sensitivity` example and of
//! the forward sensitivities' test against the closed form
//! (`mechanism::runtime::reference::ReleasedPendulum`).

use crate::mechanism;

mechanism! {
    /// A unit-mass bob on a rod of length `l` from a pivot at the origin, gravity `g` along
    /// −y, in Cartesian coordinates with the rod as a holonomic row; with the derivatives of
    /// its steps in the state and in `g` and `l` (`derivatives: [step_jacobians]`).
    pub struct Pendulum {
        coordinates: [x, y],
        parameters: {
            /// Gravitational acceleration.
            g = 1.0,
            /// Length of the rod.
            l = 1.0,
        },
        kinetic: 0.5 * (dot(x).powi(2) + dot(y).powi(2)),
        potential: g * y,
        holonomic: {
            /// The rod, `½ (|p|² − l²) = 0`.
            rod: 0.5 * (x.powi(2) + y.powi(2) - l.powi(2)),
        },
        integrators: [spook, rattle, rk],
        derivatives: [step_jacobians],
    }
}

impl Pendulum {
    /// Returns the state released from rest at the angle `theta0` from −y at `t = 0`: the bob
    /// at `(l sin θ₀, −l cos θ₀)`, at rest.
    pub fn released(&self, theta0: f64) -> crate::runtime::State<2> {
        let (sin, cos) = theta0.sin_cos();
        crate::runtime::State::new(0.0, [self.l * sin, -self.l * cos], [0.0, 0.0])
    }

    /// Returns the seeds of the derivatives of a run started at [`released`](Self::released)
    /// with respect to `g`, `l` (at fixed `θ₀`: the start moves with `l` along
    /// `(sin θ₀, −cos θ₀)`) and `θ₀` (the start moves along `(l cos θ₀, l sin θ₀)`), in that
    /// order.
    pub fn release_seeds(
        &self,
        theta0: f64,
    ) -> crate::runtime::simulation::ForwardSensitivity<2, 2, 3> {
        use crate::runtime::SMatrix;
        let (sin, cos) = theta0.sin_cos();
        #[rustfmt::skip]
        let q = SMatrix::<f64, 2, 3>::new(
            0.0, sin, self.l * cos,
            0.0, -cos, self.l * sin,
        );
        // The parameters in declaration order: g, l.
        #[rustfmt::skip]
        let p = SMatrix::<f64, 2, 3>::new(
            1.0, 0.0, 0.0,
            0.0, 1.0, 0.0,
        );
        crate::runtime::simulation::ForwardSensitivity::new(q, SMatrix::zeros(), p)
    }
}
