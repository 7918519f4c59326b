use mechanism::mechanism;

mechanism! {
    /// The runtime's SPOOK does not yet use nonholonomic rows; the macro refuses the model
    /// rather than let SPOOK step it while ignoring the row.
    pub struct KnifeEdge {
        coordinates: [x, y, theta],
        kinetic: 0.5 * (dot(x).powi(2) + dot(y).powi(2) + dot(theta).powi(2)),
        potential: 0.0,
        nonholonomic: { blade: dot(x) * theta.sin() - dot(y) * theta.cos() },
        integrators: [spook],
    }
}

fn main() {}
