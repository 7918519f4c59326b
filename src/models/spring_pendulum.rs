use crate::mechanism;

mechanism! {
    /// Nonlinear spring pendulum in spherical coordinates (Kinon–Betsch–Livens §6.2): a point
    /// mass `m` on a spring of axial stiffness `ea` and resting length `l0`, no gravity.
    ///
    /// The kinetic energy is `T = ½ m (ṙ² + r² θ̇² + r² sin²θ φ̇²)`, i.e. the mass matrix
    /// `M(q) = m diag(1, r², r² sin²θ)` of eq. 45, configuration-dependent and singular at
    /// `θ = kπ`; the potential is `V = ½ EA ε(r)²` (eq. 43) with the Green–Lagrange strain
    /// `ε(r) = (r² − l0²)/(2 l0²)` (eq. 44). Neither depends on the azimuth `φ`, so its momentum
    /// (the angular momentum about the vertical) is conserved; the generated dependency masks
    /// `MASS_DEPENDS_ON = [true, true, false]` and `POTENTIAL_DEPENDS_ON = [true, false, false]`
    /// make the Livens/Gonzalez scheme conserve it to round-off.
    pub struct SpringPendulum {
        coordinates: [r, theta, phi],
        parameters: {
            /// Mass of the bob (Table 2).
            m = 1.0,
            /// Axial stiffness `EA` of the spring (Table 2).
            ea = 300.0,
            /// Resting length of the spring (Table 2).
            l0 = 1.0,
        },
        kinetic: 0.5 * m * (dot(r).powi(2) + r.powi(2) * dot(theta).powi(2)
            + r.powi(2) * theta.sin().powi(2) * dot(phi).powi(2)),
        potential: 0.5 * ea * ((r.powi(2) - l0.powi(2)) / (2.0 * l0.powi(2))).powi(2),
        integrators: [livens, rk],
    }
}

impl SpringPendulum {
    /// Returns the initial state of eq. 46: `q0 = (r, θ, φ) = (1.05, π/2, 0)`, a spring
    /// stretched by 5 %, and the tangential velocity `v0 = (0, 1, 1)`.
    pub fn initial_state() -> crate::runtime::State<3> {
        crate::runtime::State::new(
            0.0,
            [1.05, std::f64::consts::FRAC_PI_2, 0.0],
            [0.0, 1.0, 1.0],
        )
    }
}
