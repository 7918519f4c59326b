use mechanism::mechanism;
use mechanism::runtime::{Integrator, Spook, State};

mechanism! {
    /// One mistake (an undeclared `k`) must give one error, not errors at every use below.
    pub struct Pendulum {
        coordinates: [x, y],
        parameters: { m = 1.0 },
        kinetic: 0.5 * m * (dot(x).powi(2) + dot(y).powi(2)),
        potential: m * k * y,
        holonomic: { rod: x.powi(2) + y.powi(2) - 1.0 },
    }
}

fn main() {
    let model = Pendulum { m: 2.0 };
    let mut state = State::new(0.0, [1.0, 0.0], [0.0, 0.0]);
    let mut spook = Spook::new(0.01).unwrap();
    spook.step(&model, &mut state).unwrap();
}
