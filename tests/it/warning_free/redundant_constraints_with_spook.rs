//! SPOOK tolerates linearly dependent constraints (Lacoursière 2007, Theorem 5.1).
#![deny(warnings)]

use mechanism::mechanism;

mechanism! {
    pub struct Redundant {
        coordinates: [x, y],
        kinetic: 0.5 * (dot(x).powi(2) + dot(y).powi(2)),
        potential: y,
        holonomic: {
            rod: x.powi(2) + y.powi(2) - 1.0,
            rod_again: 2.0 * (x.powi(2) + y.powi(2) - 1.0),
        },
        integrators: [spook, zss],
    }
}

use mechanism_test_support::ten_steps;

#[test]
fn compiles_without_warnings_and_steps() {
    ten_steps!(Redundant, mechanism::runtime::State::new(0.0, [0.6, -0.8], [0.8, 0.6]),
        <2, 2, 0>, h: 0.001, penalty: true, [spook, zss]);

    let _ = Redundant::default();
}
