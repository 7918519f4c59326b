//! Non-smooth functions are fine where only first derivatives are needed, and a non-smooth
//! function of parameters alone is smooth in the coordinates, so any integrator takes it.
#![deny(warnings)]

use mechanism::mechanism;
use mechanism::runtime::{Potential, PotentialHessian, SMatrix, SVector};

mechanism! {
    /// A V-shaped well for SPOOK, which needs only the gradient.
    pub struct Well {
        coordinates: [x],
        parameters: { k = 1.0 },
        kinetic: 0.5 * dot(x).powi(2),
        potential: k * x.abs(),
        integrators: [spook],
    }
}

mechanism! {
    /// A spring whose stiffness is clamped from below.
    pub struct Clamped {
        coordinates: [x],
        parameters: { k = 0.5 },
        kinetic: 0.5 * dot(x).powi(2),
        potential: 0.5 * max(k, 1.0) * x.powi(2),
        integrators: [spook, zs],
    }
}

use mechanism_test_support::ten_steps;

#[test]
fn compiles_without_warnings_and_steps() {
    let state = mechanism::runtime::State::new(0.0, [0.5], [0.0]);
    ten_steps!(Well, state, <1, 0, 0>, h: 0.001, penalty: false, [spook]);
    ten_steps!(Clamped, state, <1, 0, 0>, h: 0.001, penalty: false, [spook, zs]);

    let mut g = SVector::<f64, 1>::zeros();
    Well::new().potential_gradient(&SVector::<f64, 1>::new(-0.5), &mut g);
    assert_eq!(g[0], -1.0);
    let mut h = SMatrix::<f64, 1, 1>::zeros();
    Clamped::new().potential_hessian(&SVector::<f64, 1>::new(0.5), &mut h);
    assert_eq!(h[(0, 0)], 1.0);
}
