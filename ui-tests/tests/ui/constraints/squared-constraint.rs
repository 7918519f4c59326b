use mechanism::mechanism;

mechanism! {
    /// The rod squared: its gradient vanishes on the circle.
    pub struct Bad {
        coordinates: [x, y],
        kinetic: 0.5 * (dot(x).powi(2) + dot(y).powi(2)),
        potential: 9.81 * y,
        holonomic: { rod: (x * x + y * y - 1.0).powi(2) },
    }
}

fn main() {}
