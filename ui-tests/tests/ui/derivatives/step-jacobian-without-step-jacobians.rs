use mechanism::mechanism;
use mechanism::runtime::{DifferentiableStep, Spook, State, StepJacobian};

mechanism! {
    /// Compiled for SPOOK only, without `derivatives: [step_jacobians]`, then differentiated.
    pub struct Pendulum {
        coordinates: [x, y],
        kinetic: 0.5 * (dot(x).powi(2) + dot(y).powi(2)),
        potential: y,
        holonomic: { rod: x.powi(2) + y.powi(2) - 1.0 },
        integrators: [spook],
    }
}

fn main() {
    let mut spook = Spook::<2, 1>::new(0.01).unwrap();
    let mut state = State::new(0.0, [1.0, 0.0], [0.0, 1.0]);
    let mut jacobian = StepJacobian::default();
    let _ = spook.step_with_jacobian(&Pendulum::new(), &mut state, &mut jacobian);
}
