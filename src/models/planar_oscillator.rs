use crate::mechanism;

mechanism! {
    /// Cuell's two-dimensional harmonic oscillator (Cuell 2005 §4.1): a mass `m` in the plane on
    /// an isotropic spring of stiffness `k`, `L = ½ m (ẋ² + ẏ²) − ½ k (x² + y²)`.
    ///
    /// Energy and the angular momentum `m (x ẏ − y ẋ)` are conserved. The symplectic-Euler
    /// discrete Lagrangian of Cuell eq. 31–32 is `dlda` without constraint rows; the penalty
    /// and Langevin baselines (`verlet`, `zss`) run it unchanged.
    pub struct PlanarOscillator {
        coordinates: [x, y],
        parameters: {
            /// Mass.
            m = 1.0,
            /// Spring stiffness.
            k = 1.0,
        },
        kinetic: 0.5 * m * (dot(x).powi(2) + dot(y).powi(2)),
        potential: 0.5 * k * (x.powi(2) + y.powi(2)),
        integrators: [dlda, spook, verlet, zss],
    }
}

mechanism! {
    /// [`PlanarOscillator`] with the integrable constraint `x ẋ + y ẏ = 0` written as a
    /// nonholonomic (velocity) row, `A(q) = (x, y)`, `w = 0` (Cuell 2005 §3.1 and §5.1).
    ///
    /// Along exact solutions `|q|` is constant; a velocity-level discretization only keeps
    /// `A(q) v = 0` and lets `|q|` drift, which this model makes visible.
    pub struct OscillatorOnCircle {
        coordinates: [x, y],
        parameters: {
            /// Mass.
            m = 1.0,
            /// Spring stiffness.
            k = 1.0,
        },
        kinetic: 0.5 * m * (dot(x).powi(2) + dot(y).powi(2)),
        potential: 0.5 * k * (x.powi(2) + y.powi(2)),
        nonholonomic: {
            /// No radial velocity: `x ẋ + y ẏ = 0`.
            radial: x * dot(x) + y * dot(y),
        },
        integrators: [dlda, spook],
    }
}

impl PlanarOscillator {
    /// Returns Cuell's initial state `(x, y, ẋ, ẏ) = (1, 0, 0, 1)` at `t = 0` (§4.1): the unit
    /// circle, one period per `2π` for `m = k = 1`.
    pub fn initial_state() -> crate::runtime::State<2> {
        crate::runtime::State::new(0.0, [1.0, 0.0], [0.0, 1.0])
    }

    /// Returns the angular momentum `m (x ẏ − y ẋ)` (Cuell's `p = ẏx − ẋy` for `m = 1`).
    pub fn angular_momentum(&self, state: &crate::runtime::State<2>) -> f64 {
        self.m * (state.q[0] * state.v[1] - state.q[1] * state.v[0])
    }
}

impl OscillatorOnCircle {
    /// Returns Cuell's initial state `(1, 0, 0, 1)` (§4.1, §5.1), which satisfies
    /// `x ẋ + y ẏ = 0`.
    pub fn initial_state() -> crate::runtime::State<2> {
        PlanarOscillator::initial_state()
    }

    /// Returns the angular momentum `m (x ẏ − y ẋ)`.
    pub fn angular_momentum(&self, state: &crate::runtime::State<2>) -> f64 {
        self.m * (state.q[0] * state.v[1] - state.q[1] * state.v[0])
    }
}
