use mechanism::mechanism;
use mechanism::runtime::{Integrator, Livens, State};

mechanism! {
    /// Compiled for SPOOK only, stepped with Livens.
    pub struct Spring {
        coordinates: [x],
        kinetic: 0.5 * dot(x).powi(2),
        potential: 0.5 * x.powi(2),
        integrators: [spook],
    }
}

fn main() {
    let mut livens = Livens::<1, 0>::new(0.01).unwrap();
    let mut state = State::new(0.0, [1.0], [0.0]);
    let _ = livens.step(&Spring::new(), &mut state);
}
