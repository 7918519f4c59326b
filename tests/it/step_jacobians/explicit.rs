//! The explicit methods' step Jacobians (`runtime/.../explicit/jacobian.rs`: symplectic Euler,
//! velocity Verlet and the classical RK4, the chain rule through their evaluations of
//! `a = −M⁻¹∇V`) against central differences of the step, in the state and in every parameter
//! (the mass, which enters through `M`, and the potential's coefficients), at random states of
//! an anharmonic, coupled well.

use mechanism::mechanism;
use mechanism::runtime::{Rk4, State, SymplecticEuler, Verlet};
use proptest::prelude::*;

use super::{check_parameter_jacobian, check_step_jacobian};

mechanism! {
    /// A particle in a coupled, anharmonic well under gravity.
    pub struct Well {
        coordinates: [x, y],
        parameters: { m = 1.3, k = 2.0, c = 0.5, grav = 9.81 },
        kinetic: 0.5 * m * (dot(x).powi(2) + dot(y).powi(2)),
        potential: 0.5 * k * (x.powi(2) + 2.0 * y.powi(2)) + c * x.powi(2) * y
            + 0.25 * c * y.powi(4) + m * grav * y,
        integrators: [verlet, symplectic_euler, rk],
        derivatives: [step_jacobians],
    }
}

const H: f64 = 0.01;

/// `M = m I`: the steps' only factorization, `κ = 1`.
const WELL: (f64, f64) = (1e-5, 10.0);

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn the_explicit_methods_jacobians_match_central_differences(
        q in prop::array::uniform2(-1.5..1.5f64),
        v in prop::array::uniform2(-2.0..2.0f64),
    ) {
        let (model, state) = (Well::default(), State::new(0.2, q, v));
        let euler = SymplecticEuler::<2>::new(H).unwrap();
        let verlet = Verlet::<2>::new(H).unwrap();
        let rk4 = Rk4::<2>::new(H).unwrap();
        let (largest, _) = check_step_jacobian("symplectic Euler", &euler, &model, &state, WELL);
        prop_assert!(largest >= 1.0);
        check_step_jacobian("Verlet", &verlet, &model, &state, WELL);
        check_step_jacobian("RK4", &rk4, &model, &state, WELL);
        for (label, largest) in [
            ("symplectic Euler, parameters", check_parameter_jacobian::<_, _, 2, 4>(
                "symplectic Euler, parameters", &euler, &model, &state, WELL).0),
            ("Verlet, parameters", check_parameter_jacobian::<_, _, 2, 4>(
                "Verlet, parameters", &verlet, &model, &state, WELL).0),
            ("RK4, parameters", check_parameter_jacobian::<_, _, 2, 4>(
                "RK4, parameters", &rk4, &model, &state, WELL).0),
        ] {
            prop_assert!(largest > 1e-4, "{label}: the parameters move the step");
        }
    }
}
