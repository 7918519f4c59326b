use mechanism::mechanism;

mechanism! {
    /// `q2` has neither inertia nor a constraint, and no `integrators:` section.
    pub struct Bad {
        coordinates: [x1, q2, x2],
        kinetic: 0.5 * dot(x1).powi(2) + 0.5 * dot(x2).powi(2),
        potential: 0.5 * (q2 - x1).powi(2) + 1.5 * (x2 - q2).powi(2),
    }
}

fn main() {}
