//! SPOOK steps nonholonomic rows (Lacoursière 2007, eq. 24 and 29): a knife edge keeps its
//! velocity along the blade.
#![deny(warnings)]

use mechanism::mechanism;
use mechanism::runtime::{Integrator, Nonholonomic, SMatrix, Spook, State};

mechanism! {
    /// A knife edge (skate) in the plane, spinning while it slides.
    pub struct KnifeEdge {
        coordinates: [x, y, theta],
        kinetic: 0.5 * (dot(x).powi(2) + dot(y).powi(2) + dot(theta).powi(2)),
        potential: 0.0,
        nonholonomic: { blade: dot(x) * theta.sin() - dot(y) * theta.cos() },
        integrators: [spook],
    }
}

use mechanism_test_support::ten_steps;

#[test]
fn compiles_without_warnings_and_steps() {
    ten_steps!(KnifeEdge, State::new(0.0, [0.0, 0.0, 0.0], [1.0, 0.0, 1.0]),
        <3, 0, 1>, h: 0.001, penalty: false, [spook]);

    let model = KnifeEdge::new();
    let mut spook = Spook::<3, 0, 1>::new(0.01).unwrap();
    let mut state = State::new(0.0, [0.0, 0.0, 0.0], [1.0, 0.0, 1.0]);
    for _ in 0..100 {
        spook.step(&model, &mut state).unwrap();
    }
    let mut a = SMatrix::<f64, 1, 3>::zeros();
    model.nonholonomic_matrix(&state.q, &mut a);
    // The row is enforced at the start of each step: |A(q_k) v_{k+1}| = O(γ), and
    // |A(q_{k+1}) v_{k+1}| = O(h).
    assert!((a * state.v)[0].abs() < 0.02, "{}", (a * state.v)[0]);
}
