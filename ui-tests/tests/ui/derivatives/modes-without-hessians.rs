use mechanism::mechanism;
use mechanism::runtime::linearization::{equilibrium, EquilibriumSettings};
use mechanism::runtime::SVector;

mechanism! {
    /// Compiled for SPOOK only, without `derivatives: [hessians]`, then linearized.
    pub struct Pendulum {
        coordinates: [x, y],
        kinetic: 0.5 * (dot(x).powi(2) + dot(y).powi(2)),
        potential: y,
        holonomic: { rod: x.powi(2) + y.powi(2) - 1.0 },
        integrators: [spook],
    }
}

fn main() {
    let guess = SVector::<f64, 2>::new(0.1, -1.0);
    let _ = equilibrium::<_, 2, 1>(&Pendulum::new(), &guess, &EquilibriumSettings::default());
}
