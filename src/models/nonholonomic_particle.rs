use crate::mechanism;

mechanism! {
    /// Cuell's nonholonomic free particle (Cuell 2005 §3.1): a unit mass in `R³`,
    /// `L = ½ (ẋ² + ẏ² + ż²)`, with the non-integrable constraint `ż = y ẋ`, i.e. the row
    /// `A(q) = (−y, 0, 1)`, `w = 0`.
    ///
    /// The energy `½ (ẋ² (1 + y²) + ẏ²)` is conserved and the motion has a closed form
    /// (`mechanism::runtime::reference::NonholonomicParticle::exact`).
    pub struct NonholonomicParticle {
        coordinates: [x, y, z],
        kinetic: 0.5 * (dot(x).powi(2) + dot(y).powi(2) + dot(z).powi(2)),
        potential: 0.0,
        nonholonomic: {
            /// `ż = y ẋ`.
            z_dot_equals_y_x_dot: dot(z) - y * dot(x),
        },
        integrators: [dlda, spook],
    }
}

impl NonholonomicParticle {
    /// Returns the initial state `q = (0, −1, 0)`, `v = (1, ½, −1)` (so `ż = y ẋ`): the
    /// particle crosses the curved region around `y = 0`, where the constraint turns `ẋ`.
    pub fn initial_state() -> crate::runtime::State<3> {
        crate::runtime::State::new(0.0, [0.0, -1.0, 0.0], [1.0, 0.5, -1.0])
    }
}
