use mechanism::mechanism;

mechanism! {
    /// Kinon–Betsch §6.1: the middle coordinate carries no mass.
    pub struct Bad {
        coordinates: [x1, q2, x2],
        parameters: { m1 = 1.0, m2 = 1.0, k1 = 1.0, k2 = 3.0 },
        kinetic: 0.5 * m1 * dot(x1).powi(2) + 0.5 * m2 * dot(x2).powi(2),
        potential: 0.5 * k1 * (q2 - x1).powi(2) + 0.5 * k2 * (x2 - q2).powi(2),
        integrators: [zss],
    }
}

fn main() {}
