use mechanism::mechanism;

mechanism! {
    pub struct Bad {
        coordinates: [x, y],
        kinetic: 0.5 * (dot(x).powi(2) + dot(y).powi(2)),
        potential: y,
        nonholonomic: { skate: dot(x) * dot(y) },
        integrators: [rk],
    }
}

fn main() {}
