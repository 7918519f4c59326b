use mechanism::mechanism;

mechanism! {
    pub struct Bad {
        coordinates: [x, y],
        kinetic: 0.5 * (dot(x).powi(2) + dot(y).powi(2)),
        potential: y,
        holonomic: { diamond: x.abs() + y.abs() - 1.0 },
        integrators: [rk],
    }
}

fn main() {}
