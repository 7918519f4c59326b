use mechanism::mechanism;
use mechanism::runtime::{Integrator, Spook, State};

mechanism! {
    /// Polar coordinates: the mass matrix depends on `r`, so the default set has no `spook`.
    pub struct Polar {
        coordinates: [r, phi],
        kinetic: 0.5 * (dot(r).powi(2) + r.powi(2) * dot(phi).powi(2)),
        potential: 0.5 * (r - 1.0).powi(2),
    }
}

fn main() {
    let mut spook = Spook::<2, 0>::new(0.01).unwrap();
    let mut state = State::new(0.0, [1.2, 0.0], [0.1, 1.0]);
    let _ = spook.step(&Polar::new(), &mut state);
}
