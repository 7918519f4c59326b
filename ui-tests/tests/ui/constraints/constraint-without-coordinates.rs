use mechanism::mechanism;

mechanism! {
    pub struct Bad {
        coordinates: [x, y],
        parameters: { l = 1.0 },
        kinetic: 0.5 * (dot(x).powi(2) + dot(y).powi(2)),
        potential: y,
        holonomic: { rod: l - 1.0 },
    }
}

fn main() {}
