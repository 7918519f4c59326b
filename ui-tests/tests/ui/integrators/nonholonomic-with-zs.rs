use mechanism::mechanism;

mechanism! {
    pub struct Bad {
        coordinates: [x, y, theta],
        kinetic: 0.5 * (dot(x).powi(2) + dot(y).powi(2) + dot(theta).powi(2)),
        potential: 0.0 * x,
        nonholonomic: { knife: dot(x) * theta.sin() - dot(y) * theta.cos() },
        integrators: [zs],
    }
}

fn main() {}
