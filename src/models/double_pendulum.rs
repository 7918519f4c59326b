use crate::mechanism;

mechanism! {
    /// Planar double pendulum in Cartesian coordinates (Tao–Owhadi 2014, §4.1): two unit
    /// masses on rods of lengths `l1` and `l2`, gravity `g` along −y.
    pub struct DoublePendulum {
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
            g = 1.0,
        },
        kinetic: 0.5 * m1 * (dot(x1).powi(2) + dot(y1).powi(2))
            + 0.5 * m2 * (dot(x2).powi(2) + dot(y2).powi(2)),
        potential: m1 * g * y1 + m2 * g * y2,
        holonomic: {
            /// The first rod, from the origin to bob 1.
            rod1: x1.powi(2) + y1.powi(2) - l1.powi(2),
            /// The second rod, from bob 1 to bob 2.
            rod2: (x2 - x1).powi(2) + (y2 - y1).powi(2) - l2.powi(2),
        },
        integrators: [
            spook, zs, zss, zss_stiff, newmark, newmark_1, pf_newmark, livens, shake, rattle,
            symplectic_euler, verlet, rk
        ],
        derivatives: [step_jacobians],
    }
}

impl DoublePendulum {
    /// Returns the initial state of Tao–Owhadi §4.1: `q0 = (0, −1, 1, −2)`, at rest.
    pub fn initial_state() -> crate::runtime::State<4> {
        crate::runtime::State::new(0.0, [0.0, -1.0, 1.0, -2.0], [0.0; 4])
    }
}
