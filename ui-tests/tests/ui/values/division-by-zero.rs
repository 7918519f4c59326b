use mechanism::mechanism;

mechanism! {
    pub struct Bad {
        coordinates: [x, y],
        kinetic: 0.5 * (dot(x).powi(2) + dot(y).powi(2)),
        potential: x / (y.sin().powi(2) + y.cos().powi(2) - 1.0),
    }
}

fn main() {}
