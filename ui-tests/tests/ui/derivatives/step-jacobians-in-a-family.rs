use mechanism::mechanism;

mechanism! {
    /// The sparse tier has no step Jacobians yet.
    pub struct Chain {
        sizes: { N = 3 },
        coordinates: [x[N]],
        kinetic: sum(0..N, |i| 0.5 * dot(x[i]).powi(2)),
        potential: sum(0..N, |i| 0.5 * x[i].powi(2)),
        holonomic: {
            gap[i in 1..N]: (x[i] - x[i - 1]).powi(2) - 1.0,
        },
        integrators: [spook],
        derivatives: [step_jacobians],
    }
}

fn main() {}
