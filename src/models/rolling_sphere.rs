//! Cuell (2005) §7: Routh's sphere and the uniform rolling ball, a sphere of unit radius rolling
//! without slipping on the plane `z = 0`, its centre of mass `a` at distance `α` from the
//! geometric centre, its orientation a unit quaternion `q = (w, x, y, z)` (world from body).
//!
//! In the body frame the geometric centre sits at `+α e₃` from the centre of mass, so the
//! contact point relative to the centre of mass is `R s = −e₃ + α R e₃` in the world
//! (`s = −Rᵀe₃ + α e₃`, EXPERIMENTS-M2 §G.1). Rolling means the material point at the contact
//! has zero velocity, `ȧ + Ṙ s = 0` with `s` held fixed (Cuell eq. 67), and with the spatial
//! angular velocity `ω = 2 (w ẋ⃗ − ẇ x⃗ + x⃗ × ẋ⃗)` (`x⃗ = (x, y, z)`) this is
//!
//! ```text
//! ȧ − ω × e₃ + α d/dt (R e₃) = 0,      ω × e₃ = (ω₂, −ω₁, 0)
//! ```
//!
//! three rows linear in `(ȧ, q̇)`, with `R e₃ = (2(xz + wy), 2(yz − wx), w² − x² − y² + z²)`.
//! The third row, `ȧ₃ + α d/dt R₃₃ = 0`, is integrable: the centre stays at height 1. A fourth
//! row, `q·q̇ = 0` (Cuell eq. 66), keeps `|q| = 1`; with the midpoint discrete
//! Lagrange–d'Alembert integrator ([`MidpointLagrangeDAlembert`](crate::runtime::MidpointLagrangeDAlembert))
//! the rows `unit` and `roll_z` are differentials of quadratics, so `|q|²` and
//! `a₃ + α R₃₃` are kept to round-off. The kinetic energy is `½ ΩᵀIΩ + ½ m |ȧ|²` with the body
//! angular velocity `Ω` of [`body_angular_velocity`](super::body_angular_velocity), completed
//! by `½ c (q·q̇)²` so that the mass matrix is invertible (see `mechanism::models`' rigid
//! bodies); the potential is `m g a₃`.

use crate::mechanism;
use crate::runtime::State;

mechanism! {
    /// Routh's sphere (Cuell 2005 §7): a unit sphere with its centre of mass at distance
    /// `alpha` below the geometric centre (body frame), inertia `diag(i1, i1, i3)` about the
    /// centre of mass, rolling without slipping on the plane `z = 0`. Coordinates: the centre
    /// of mass `(a1, a2, a3)` and the unit quaternion `(w, x, y, z)` (world from body). See the
    /// module docs for the rows.
    pub struct RollingSphere {
        coordinates: [a1, a2, a3, w, x, y, z],
        parameters: {
            /// Mass.
            m = 1.0,
            /// Gravity.
            g = 1.0,
            /// Moment of inertia about the body's first and second axes (through the COM).
            i1 = 1.0,
            /// Moment of inertia about the symmetry axis.
            i3 = 1.0,
            /// Distance of the centre of mass from the geometric centre (the radius is 1).
            alpha = 0.0,
            /// Coefficient of the completion `½ c (q·q̇)²`: `4 (2 i1 + i3)/3`.
            c = 4.0,
        },
        kinetic: 0.5 * i1 * (2.0 * (w * dot(x) - x * dot(w) + z * dot(y) - y * dot(z))).powi(2)
            + 0.5 * i1 * (2.0 * (w * dot(y) - y * dot(w) + x * dot(z) - z * dot(x))).powi(2)
            + 0.5 * i3 * (2.0 * (w * dot(z) - z * dot(w) + y * dot(x) - x * dot(y))).powi(2)
            + 0.5 * m * (dot(a1).powi(2) + dot(a2).powi(2) + dot(a3).powi(2))
            + 0.5 * c * (w * dot(w) + x * dot(x) + y * dot(y) + z * dot(z)).powi(2),
        potential: m * g * a3,
        nonholonomic: {
            /// The contact point's velocity along `e₁`: `ȧ₁ − ω₂ + α d/dt R₁₃ = 0`.
            roll_x: dot(a1) - 2.0 * (w * dot(y) - y * dot(w) + z * dot(x) - x * dot(z))
                + alpha * 2.0 * (z * dot(x) + x * dot(z) + y * dot(w) + w * dot(y)),
            /// The contact point's velocity along `e₂`: `ȧ₂ + ω₁ + α d/dt R₂₃ = 0`.
            roll_y: dot(a2) + 2.0 * (w * dot(x) - x * dot(w) + y * dot(z) - z * dot(y))
                + alpha * 2.0 * (z * dot(y) + y * dot(z) - x * dot(w) - w * dot(x)),
            /// The contact point's velocity along `e₃`: `ȧ₃ + α d/dt R₃₃ = 0`.
            roll_z: dot(a3) + alpha * 2.0 * (w * dot(w) - x * dot(x) - y * dot(y) + z * dot(z)),
            /// The quaternion keeps unit length: `q·q̇ = 0` (Cuell eq. 66).
            unit: w * dot(w) + x * dot(x) + y * dot(y) + z * dot(z),
        },
        integrators: [dlda_midpoint],
    }
}

impl RollingSphere {
    /// Cuell §7.3 case 1: the uniform ball, `α = 0`, `I = diag(1, 1, 1)`, `m = g = 1`
    /// (EXPERIMENTS-M2 §G.4 G1).
    pub fn uniform_ball() -> Self {
        RollingSphere::default()
    }

    /// Cuell §7.3 case 2: Routh's sphere, `α = 0.2`, `I₁ = I₂ = 1`, `I₃ = 0.8`, `m = g = 1`
    /// (G1, G3), with the completion `c = 4 (2 I₁ + I₃)/3`.
    pub fn routh() -> Self {
        RollingSphere {
            alpha: 0.2,
            i3: 0.8,
            c: 4.0 * (2.0 + 0.8) / 3.0,
            ..RollingSphere::default()
        }
    }

    /// Returns the state with the geometric centre at `(0, 0, 1)` (touching `z = 0`),
    /// orientation `q` (unit, world from body) and body angular velocity `omega`, rolling:
    /// `a = (0, 0, 1) − α R e₃`, `q̇ = ½ q ⊗ (0, Ω)`, `ȧ = −ω × (R s)`.
    pub fn rolling_state(&self, q: [f64; 4], omega: [f64; 3]) -> State<7> {
        let rotation = super::rotation_matrix(&q);
        let column = |i: usize| rotation[i][2];
        let arm = [
            -self.alpha * column(0),
            -self.alpha * column(1),
            1.0 - self.alpha * column(2),
        ];
        let rate = super::quaternion_state(q, omega).v;
        // Spatial angular velocity R Ω; contact arm R s = −e₃ + α R e₃.
        let spatial: Vec<f64> = (0..3)
            .map(|i| (0..3).map(|k| rotation[i][k] * omega[k]).sum())
            .collect();
        let contact = [
            self.alpha * column(0),
            self.alpha * column(1),
            -1.0 + self.alpha * column(2),
        ];
        let a_dot = [
            -(spatial[1] * contact[2] - spatial[2] * contact[1]),
            -(spatial[2] * contact[0] - spatial[0] * contact[2]),
            -(spatial[0] * contact[1] - spatial[1] * contact[0]),
        ];
        State::new(
            0.0,
            [arm[0], arm[1], arm[2], q[0], q[1], q[2], q[3]],
            [
                a_dot[0], a_dot[1], a_dot[2], rate[0], rate[1], rate[2], rate[3],
            ],
        )
    }

    /// Cuell case 1 (G4): `q = (1, 0, 0, 0)`, `a = (0, 0, 1)`, `Ω = (0, 1, 0)`, so
    /// `ȧ = (1, 0, 0)`: rolling along `e₁`.
    pub fn uniform_ball_state(&self) -> State<7> {
        self.rolling_state([1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0])
    }

    /// Cuell case 2 (G5): tilted about `e₂` by `θ = asin(0.199/α)` so that `a₁ = −0.199`,
    /// `q = (cos θ/2, 0, sin θ/2, 0)`, at rest; the centre at `(0, 0, 1)`, so
    /// `a = (−0.199, 0, 1 − α cos θ)`.
    pub fn routh_state(&self) -> State<7> {
        let theta = (0.199 / self.alpha).asin();
        let (s, c) = (0.5 * theta).sin_cos();
        self.rolling_state([c, 0.0, s, 0.0], [0.0, 0.0, 0.0])
    }
}
