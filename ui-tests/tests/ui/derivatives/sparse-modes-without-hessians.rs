use mechanism::mechanism;
use mechanism::runtime::linearization::{sparse_equilibrium, EquilibriumSettings};

mechanism! {
    /// A chain with families, compiled for SPOOK only, without `derivatives: [hessians]`, then
    /// handed to the sparse linearization.
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
    let guess = [0.0, -1.0, 0.0, -2.0, 0.0, -3.0];
    let _ = sparse_equilibrium(&chain, &guess, &EquilibriumSettings::default());
}
