use crate::mechanism;

mechanism! {
    /// Mass-spring system with redundant coordinates and a singular mass matrix
    /// (Kinon–Betsch–Livens §6.1, after Udwadia–Phohomsiri): mass `m1` at `x1` on spring 1
    /// (stiffness `k1`), a rigid link of length `l10 + w` to the point `q2`, and mass `m2` at
    /// `q2 + x2` on spring 2 (stiffness `k2`), with `x2` measured relative to `q2`.
    ///
    /// The kinetic energy is `T = ½ m1 ẋ1² + ½ m2 (q̇2 + ẋ2)²` (eq. 39), whose mass matrix
    /// `[[m1, 0, 0], [0, m2, m2], [0, m2, m2]]` (eq. 40) is singular for every configuration —
    /// `T` does not see the velocity direction `q̇2 = −ẋ2` — so only schemes that never invert
    /// it can run the model. The potential of the two nonlinear springs is
    /// `V = ¼ k1 (x1² + x1⁴) + ¼ k2 (x2² + x2⁴)` (eq. 41), and the interconnection
    /// `q2 = x1 + l10 + w` is the holonomic constraint `g = ½ ((q2 − x1)² − (l10 + w)²)` (eq. 38),
    /// which fixes the massless direction.
    pub struct SingularMassSpring {
        coordinates: [x1, q2, x2],
        parameters: {
            /// Mass of the first body (Table 1).
            m1 = 1.0,
            /// Mass of the second body (Table 1).
            m2 = 1.0,
            /// Stiffness of the first spring (Table 1).
            k1 = 1.0,
            /// Stiffness of the second spring (Table 1).
            k2 = 3.0,
            /// Resting length `l10` of the first spring (Table 1).
            l10 = 1.0,
            /// Width `w` of the first body, added to the link length (Table 1).
            w = 0.1,
        },
        kinetic: 0.5 * m1 * dot(x1).powi(2) + 0.5 * m2 * (dot(q2) + dot(x2)).powi(2),
        potential: 0.25 * k1 * (x1.powi(2) + x1.powi(4)) + 0.25 * k2 * (x2.powi(2) + x2.powi(4)),
        holonomic: {
            /// The interconnection `q2 = x1 + l10 + w` (eq. 38).
            interconnection: 0.5 * ((q2 - x1).powi(2) - (l10 + w).powi(2)),
        },
        integrators: [livens, spook],
        derivatives: [step_jacobians],
    }
}

impl SingularMassSpring {
    /// Returns the default initial state: `x1 = 0.5`, `q2 = x1 + l10 + w = 1.6`, `x2 = 0`, with
    /// the second spring stretched at unit rate, `v = (0, 0, 1)` (`G v = 0`). The paper does not
    /// print its initial state.
    pub fn initial_state() -> crate::runtime::State<3> {
        crate::runtime::State::new(0.0, [0.5, 1.6, 0.0], [0.0, 0.0, 1.0])
    }

    /// Returns a small-amplitude initial state: `x1 = 0.1`, `q2 = x1 + l10 + w = 1.2`, `x2 = 0`,
    /// at rest.
    pub fn initial_state_small() -> crate::runtime::State<3> {
        crate::runtime::State::new(0.0, [0.1, 1.2, 0.0], [0.0; 3])
    }
}
