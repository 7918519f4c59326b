use mechanism::mechanism;

mechanism! {
    /// `dot(y)` carries negative kinetic energy.
    pub struct Bad {
        coordinates: [x, y],
        kinetic: 0.5 * (dot(x).powi(2) - dot(y).powi(2)),
        potential: 0.5 * (x.powi(2) + y.powi(2)),
    }
}

fn main() {}
