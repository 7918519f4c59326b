//! A Lagrangian with a configuration-dependent mass matrix, for the schemes that allow one.
#![deny(warnings)]

use mechanism::mechanism;
use mechanism::runtime::{Inertia, InertiaGradient, SVector};

mechanism! {
    /// A spherical spring pendulum (Kinon–Betsch §6.2).
    pub struct SpringPendulum {
        coordinates: [r, theta, phi],
        parameters: { m = 1.0, ea = 300.0, l0 = 1.0, g = 9.81 },
        lagrangian: 0.5 * m * (dot(r).powi(2) + r.powi(2) * dot(theta).powi(2)
                + r.powi(2) * theta.sin().powi(2) * dot(phi).powi(2))
            - 0.5 * ea / l0 * (r - l0).powi(2) + m * g * r * theta.cos(),
        integrators: [livens, rk],
    }
}

use mechanism_test_support::ten_steps;

#[test]
fn compiles_without_warnings_and_steps() {
    ten_steps!(SpringPendulum, mechanism::runtime::State::new(0.0, [1.0, 0.5, 0.0], [0.0, 1.0, 1.0]),
        <3, 0, 0>, h: 0.001, penalty: false, [livens, rk]);

    let model = SpringPendulum::new();
    const { assert!(!<SpringPendulum as Inertia<3>>::CONSTANT_MASS) };
    let mut out = SVector::<f64, 3>::zeros();
    model.kinetic_gradient(
        &SVector::<f64, 3>::new(1.0, 0.5, 0.0),
        &SVector::<f64, 3>::new(0.0, 1.0, 1.0),
        &mut out,
    );
    assert!(out[0] > 0.0);
}
