use mechanism::mechanism;

mechanism! {
    /// Kinon–Betsch §6.1: every coordinate carries mass, but `T` sees `q2` and `x2` only through
    /// `dot(q2) + dot(x2)`, so the mass matrix is singular everywhere.
    pub struct Bad {
        coordinates: [x1, q2, x2],
        parameters: { m1 = 1.0, m2 = 1.0, k1 = 1.0, k2 = 3.0, l = 1.1 },
        kinetic: 0.5 * m1 * dot(x1).powi(2) + 0.5 * m2 * (dot(q2) + dot(x2)).powi(2),
        potential: 0.25 * k1 * (x1.powi(2) + x1.powi(4)) + 0.25 * k2 * (x2.powi(2) + x2.powi(4)),
        holonomic: { interconnection: 0.5 * ((q2 - x1).powi(2) - l.powi(2)) },
        integrators: [shake],
    }
}

fn main() {}
