//! The damped planar double pendulum in Cartesian coordinates, the model of the `identify`
//! example and of fitting a model to measured positions (`mechanism::identify`).

use crate::mechanism;
use crate::runtime::simulation::ForwardSensitivity;
use crate::runtime::{SMatrix, State};

mechanism! {
    /// Two bobs of masses `m1`, `m2` at the ends of rods of lengths `l1` (from a fixed pivot at
    /// the origin) and `l2` (from bob 1), gravity `g` along −y, and Rayleigh dissipation
    /// `R = ½ c (|ṗ₁|² + |ṗ₂|²)` on both bobs; with the derivatives of its steps in the state
    /// and in every parameter (`derivatives: [step_jacobians]`) for SPOOK and the stabilized
    /// Runge–Kutta methods.
    pub struct DampedDoublePendulum {
        coordinates: [x1, y1, x2, y2],
        parameters: {
            /// Mass of the first bob.
            m1 = 1.0,
            /// Mass of the second bob.
            m2 = 1.0,
            /// Length of the first rod.
            l1 = 1.0,
            /// Length of the second rod.
            l2 = 1.4142135623730951,
            /// Gravitational acceleration.
            g = 9.81,
            /// Damping coefficient of both bobs' velocities.
            c = 0.1,
        },
        kinetic: 0.5 * m1 * (dot(x1).powi(2) + dot(y1).powi(2))
            + 0.5 * m2 * (dot(x2).powi(2) + dot(y2).powi(2)),
        potential: g * (m1 * y1 + m2 * y2),
        dissipation: 0.5 * c * (dot(x1).powi(2) + dot(y1).powi(2) + dot(x2).powi(2) + dot(y2).powi(2)),
        holonomic: {
            /// The first rod, `½ (|p₁|² − l1²) = 0`.
            rod1: 0.5 * (x1.powi(2) + y1.powi(2) - l1.powi(2)),
            /// The second rod, `½ (|p₂ − p₁|² − l2²) = 0`.
            rod2: 0.5 * ((x2 - x1).powi(2) + (y2 - y1).powi(2) - l2.powi(2)),
        },
        integrators: [spook, rk],
        derivatives: [step_jacobians],
    }
}

impl DampedDoublePendulum {
    /// Returns the state released from rest at `t = 0` with the rods at the angles `theta1`,
    /// `theta2` from −y (each rod's own angle, not the second relative to the first): bob 1 at
    /// `l1 (sin θ₁, −cos θ₁)`, bob 2 at bob 1 plus `l2 (sin θ₂, −cos θ₂)`.
    pub fn released(&self, theta1: f64, theta2: f64) -> State<4> {
        let (s1, c1) = theta1.sin_cos();
        let (s2, c2) = theta2.sin_cos();
        let (x1, y1) = (self.l1 * s1, -self.l1 * c1);
        State::new(
            0.0,
            [x1, y1, x1 + self.l2 * s2, y1 - self.l2 * c2],
            [0.0; 4],
        )
    }

    /// The seeds of a run started at [`released`](Self::released) for the derivatives with
    /// respect to `m2`, `g`, `c`, `θ₁` and `θ₂`, in that order: a parameter's seed moves the
    /// parameter, an angle's moves the start along `∂q₀/∂θ`.
    pub fn release_seeds(&self, theta1: f64, theta2: f64) -> ForwardSensitivity<4, 6, 5> {
        let (s1, c1) = theta1.sin_cos();
        let (s2, c2) = theta2.sin_cos();
        let mut q = SMatrix::<f64, 4, 5>::zeros();
        let (d1x, d1y) = (self.l1 * c1, self.l1 * s1);
        q.set_column(3, &[d1x, d1y, d1x, d1y].into());
        q.set_column(4, &[0.0, 0.0, self.l2 * c2, self.l2 * s2].into());
        let mut p = SMatrix::<f64, 6, 5>::zeros();
        // m1, m2, l1, l2, g, c in declaration order.
        (p[(1, 0)], p[(4, 1)], p[(5, 2)]) = (1.0, 1.0, 1.0);
        ForwardSensitivity::new(q, SMatrix::zeros(), p)
    }
}
