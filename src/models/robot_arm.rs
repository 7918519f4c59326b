use crate::mechanism;
use crate::runtime::State;

mechanism! {
    /// The two-link planar robot arm of Ascher–Chin–Petzold–Reich (1995) §6, Example 2, Case I:
    /// the free end `(x2, y2)` is held on the parabola `y2 = x2² − β`.
    ///
    /// Two uniform rods of masses `m1`, `m2` and lengths `l1`, `l2`; `theta1` is the angle of
    /// the first rod to the horizontal, `theta2` that of the second rod to the first (Fig. 6.1).
    /// The first rod turns about its end (moment of inertia `m1 l1²/3`); the second has its
    /// centre at `(l1 c1 + l2 c12/2, l1 s1 + l2 s12/2)` and turns with `θ̇1 + θ̇2` (moment
    /// `m2 l2²/12` about its centre), so
    ///
    /// ```text
    /// T = ½ m1 l1²/3 θ̇1² + ½ m2 (l1² θ̇1² + l2²/3 (θ̇1 + θ̇2)² + l1 l2 c2 θ̇1 (θ̇1 + θ̇2)),
    /// V = m1 g l1 s1/2 + m2 g (l1 s1 + l2 s12/2),
    /// ```
    ///
    /// whose mass matrix is the paper's `M` and whose `−∇V + ∂T/∂q − Ṁ θ̇` is the paper's `f`.
    /// `β` must make the initial state consistent; [`RobotArmParabola::consistent_beta`]
    /// computes it, and the default is its value at [`RobotArmParabola::initial_state`].
    pub struct RobotArmParabola {
        coordinates: [theta1, theta2],
        parameters: {
            /// Mass of the first rod [kg].
            m1 = 36.0,
            /// Mass of the second rod [kg].
            m2 = 36.0,
            /// Length of the first rod [m].
            l1 = 1.0,
            /// Length of the second rod [m].
            l2 = 1.0,
            /// Gravitational acceleration [m/s²].
            g = 9.81,
            /// Offset of the parabola: `4 cos²70°`, which puts the initial free end
            /// `(2 cos 70°, 0)` on it.
            beta = 0.4679111137620442,
        },
        kinetic: 0.5 * m1 * l1.powi(2) / 3.0 * dot(theta1).powi(2)
            + 0.5 * m2 * (l1.powi(2) * dot(theta1).powi(2)
                + l2.powi(2) / 3.0 * (dot(theta1) + dot(theta2)).powi(2)
                + l1 * l2 * theta2.cos() * dot(theta1) * (dot(theta1) + dot(theta2))),
        potential: m1 * g * l1 * theta1.sin() / 2.0
            + m2 * g * (l1 * theta1.sin() + l2 * (theta1 + theta2).sin() / 2.0),
        holonomic: {
            /// `y2 − (x2² − β) = 0`.
            path: l1 * theta1.sin() + l2 * (theta1 + theta2).sin()
                - (l1 * theta1.cos() + l2 * (theta1 + theta2).cos()).powi(2) + beta,
        },
        integrators: [rk],
        derivatives: [step_jacobians],
    }
}

mechanism! {
    /// The two-link planar robot arm of Ascher–Chin–Petzold–Reich (1995) §6, Example 2,
    /// Case II: the free end follows the prescribed height `y2 = sin²(ωt)`, a rheonomic
    /// constraint (the paper takes `ω = ½` in Table 6.2 and `ω = ½, 1` in Table 6.3).
    ///
    /// Same rods, coordinates, kinetic and potential energy as [`RobotArmParabola`]; only the
    /// constraint row differs (a model has a fixed set of rows, hence two models).
    pub struct RobotArmSine {
        coordinates: [theta1, theta2],
        parameters: {
            /// Mass of the first rod [kg].
            m1 = 36.0,
            /// Mass of the second rod [kg].
            m2 = 36.0,
            /// Length of the first rod [m].
            l1 = 1.0,
            /// Length of the second rod [m].
            l2 = 1.0,
            /// Gravitational acceleration [m/s²].
            g = 9.81,
            /// Angular frequency ω of the prescribed height [1/s]; larger is harder.
            omega = 0.5,
        },
        kinetic: 0.5 * m1 * l1.powi(2) / 3.0 * dot(theta1).powi(2)
            + 0.5 * m2 * (l1.powi(2) * dot(theta1).powi(2)
                + l2.powi(2) / 3.0 * (dot(theta1) + dot(theta2)).powi(2)
                + l1 * l2 * theta2.cos() * dot(theta1) * (dot(theta1) + dot(theta2))),
        potential: m1 * g * l1 * theta1.sin() / 2.0
            + m2 * g * (l1 * theta1.sin() + l2 * (theta1 + theta2).sin() / 2.0),
        holonomic: {
            /// `y2 − sin²(ωt) = 0`.
            path: l1 * theta1.sin() + l2 * (theta1 + theta2).sin() - (omega * t).sin().powi(2),
        },
        integrators: [rk],
        derivatives: [step_jacobians],
    }
}

/// Returns the paper's initial state `θ(0) = (70°, −140°)`, `θ̇(0) = 0` at `t = 0`.
///
/// Consistent with Case II at every `ω` (`y2 = l1 s1 + l2 s12 = 0 = sin² 0` when `l1 = l2`, and
/// `g_t = −ω sin 2ωt = 0` at `t = 0`) and with Case I for `β` from
/// [`RobotArmParabola::consistent_beta`]. The paper's data, with its tables, is
/// [`crate::runtime::reference::robot_arm`].
fn initial_state() -> State<2> {
    crate::runtime::reference::robot_arm::initial_state()
}

impl RobotArmParabola {
    /// Returns the initial state of Example 2, `θ(0) = (70°, −140°)` at rest.
    pub fn initial_state() -> State<2> {
        initial_state()
    }

    /// Returns the free end `(x2, y2) = (l1 c1 + l2 c12, l1 s1 + l2 s12)` at `q`.
    pub fn free_end(&self, q: &[f64; 2]) -> (f64, f64) {
        free_end(self.l1, self.l2, q)
    }

    /// Returns the `β = x2² − y2` that puts the free end of `q` on the parabola ("β is chosen
    /// such that the above initial conditions are consistent", Case I).
    pub fn consistent_beta(&self, q: &[f64; 2]) -> f64 {
        let (x2, y2) = self.free_end(q);
        x2 * x2 - y2
    }
}

impl RobotArmSine {
    /// Returns the initial state of Example 2, `θ(0) = (70°, −140°)` at rest.
    pub fn initial_state() -> State<2> {
        initial_state()
    }

    /// Returns the free end `(x2, y2) = (l1 c1 + l2 c12, l1 s1 + l2 s12)` at `q`.
    pub fn free_end(&self, q: &[f64; 2]) -> (f64, f64) {
        free_end(self.l1, self.l2, q)
    }
}

/// Returns the free end of the arm with rod lengths `l1`, `l2` at `q = (θ1, θ2)`.
fn free_end(l1: f64, l2: f64, q: &[f64; 2]) -> (f64, f64) {
    let (s1, c1) = q[0].sin_cos();
    let (s12, c12) = (q[0] + q[1]).sin_cos();
    (l1 * c1 + l2 * c12, l1 * s1 + l2 * s12)
}
