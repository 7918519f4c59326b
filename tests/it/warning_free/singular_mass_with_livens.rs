//! Kinon–Betsch §6.1: a mass matrix that is singular everywhere is accepted by the schemes that
//! do not invert it. Its `q2` has no inertia and no constraint, so only the potential
//! determines it: SPOOK, which needs a constraint for every direction without inertia, cannot
//! step it (`tests/ui/integrators/massless-coordinate-with-spook.rs`).
#![deny(warnings)]

use mechanism::mechanism;
use mechanism::runtime::{Inertia, SMatrix, SVector};

mechanism! {
    pub struct SingularMassSpring {
        coordinates: [x1, q2, x2],
        parameters: { m1 = 1.0, m2 = 1.0, k1 = 1.0, k2 = 3.0 },
        kinetic: 0.5 * m1 * dot(x1).powi(2) + 0.5 * m2 * dot(x2).powi(2),
        potential: 0.5 * k1 * (q2 - x1).powi(2) + 0.5 * k2 * (x2 - q2).powi(2),
        integrators: [livens],
    }
}

use mechanism_test_support::ten_steps;

#[test]
fn compiles_without_warnings_and_steps() {
    ten_steps!(SingularMassSpring,
        mechanism::runtime::State::new(0.0, [0.1, 0.2, 0.3], [0.1, 0.0, 0.2]),
        <3, 0, 0>, h: 0.001, penalty: false, [livens]);

    let mut m = SMatrix::<f64, 3, 3>::zeros();
    SingularMassSpring::new().mass_matrix(&SVector::zeros(), &mut m);
    assert_eq!(m[(1, 1)], 0.0);
}
