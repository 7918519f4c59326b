//! Every section of the language at least once, compiled with warnings denied: the expansion of
//! a valid model raises no warning in the user's crate. (No integrator treats nonholonomic rows
//! together with time in `holonomic`, so the wire here is fixed; `t` appears in the drive and
//! the force.)
#![deny(warnings)]

use mechanism::mechanism;
use mechanism::runtime::{Dissipation, Forces, Holonomic, Nonholonomic, Potential, SVector};

mechanism! {
    /// A bead on a parabolic wire with friction, a drive and a skate-like constraint.
    pub struct Everything {
        coordinates: [x, y, theta],
        parameters: {
            /// Mass.
            m = 1.0,
            /// Friction coefficient.
            c = 0.1,
            /// Drive frequency.
            w = 0.5,
        },
        kinetic: 0.5 * m * (dot(x).powi(2) + dot(y).powi(2)) + 0.5 * dot(theta).powi(2),
        potential: m * 9.81 * y,
        holonomic: {
            /// The wire is a parabola.
            #[spook(epsilon = 1e-6, tau = 0.05)]
            wire: y - 0.5 * x.powi(2),
        },
        nonholonomic: {
            /// A skate: no velocity across its blade, plus a prescribed slip.
            #[spook(gamma = 1e-7)]
            skate: dot(x) * theta.sin() - dot(y) * theta.cos() - 0.1 * t,
        },
        dissipation: 0.5 * c * (dot(x).powi(2) + dot(y).powi(2)),
        forces: { theta: 0.01 * (w * t).cos() },
        integrators: [spook],
    }
}

use mechanism_test_support::ten_steps;

#[test]
fn compiles_without_warnings_and_steps() {
    ten_steps!(Everything, mechanism::runtime::State::new(0.0, [0.0, 0.0, 0.3], [0.0, 0.0, 0.5]),
        <3, 1, 1>, h: 0.001, penalty: false, [spook]);

    let model = Everything::new();
    let q = SVector::<f64, 3>::new(0.1, 0.2, 0.3);
    let v = SVector::<f64, 3>::new(1.0, -1.0, 0.5);
    let mut g = SVector::<f64, 1>::zeros();
    model.constraints(&q, 1.0, &mut g);
    let mut w = SVector::<f64, 1>::zeros();
    model.nonholonomic_drive(1.0, &mut w);
    assert!((w[0] - 0.1).abs() < 1e-15);
    let mut f = SVector::<f64, 3>::zeros();
    model.dissipation_force(&q, &v, &mut f);
    assert!((f[0] + 0.1).abs() < 1e-15);
    model.force(&q, &v, 0.0, &mut f);
    assert!((f[2] - 0.01).abs() < 1e-15);
    assert_eq!(model.regularization(0).epsilon, 1e-6);
    assert_eq!(model.nonholonomic_compliance(0), 1e-7);
    assert!(model.potential(&q).is_finite());
}
