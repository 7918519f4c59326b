use mechanism::mechanism;
use mechanism::runtime::{SparseDifferentiableStep, SparseSpook};

mechanism! {
    /// A chain with families compiled without `derivatives: [step_jacobians]`, whose step is
    /// then differentiated.
    pub struct Chain {
        sizes: { N = 3 },
        coordinates: [x[N], y[N]],
        kinetic: sum(0..N, |i| 0.5 * (dot(x[i]).powi(2) + dot(y[i]).powi(2))),
        potential: sum(0..N, |i| y[i]),
        holonomic: {
            anchor: x[0].powi(2) + y[0].powi(2) - 1.0,
            rod[i in 1..N]: (x[i] - x[i - 1]).powi(2) + (y[i] - y[i - 1]).powi(2) - 1.0,
        },
        integrators: [spook],
    }
}

fn main() {
    let chain = Chain::new(3).unwrap();
    let mut spook = SparseSpook::new(&chain, 0.01).unwrap();
    let mut state = mechanism::runtime::DynState::new(0.0, vec![0.0; 6], vec![0.0; 6]);
    let _ = spook.step_linearized(&chain, &mut state);
}
