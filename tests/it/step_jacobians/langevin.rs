//! GLA's step Jacobians along one realization of its noise (`runtime/.../langevin/jacobian.rs`)
//! against central differences of the same step (every evaluation a copy of the integrator, so
//! the same draws): around SPOOK on the double pendulum, whose diagonal `M` holds the masses
//! `m1`, `m2` (the flow's slopes in the masses weigh in the parameter Jacobian), and around
//! Verlet on a model whose `M` couples its coordinates (the state Jacobian; the parameter
//! Jacobian through its off-diagonal mass entry is refused as `Unsupported`). On the sparse
//! tier, `tests/it/step_jacobians/sparse.rs`.

use mechanism::mechanism;
use mechanism::models::DoublePendulum;
use mechanism::runtime::{
    DifferentiableInParameters, Langevin, ParameterJacobian, Spook, State, StepError, StepJacobian,
    Verlet,
};
use proptest::prelude::*;

use super::{chain_state, check_parameter_jacobian, check_step_jacobian};

const H: f64 = 0.01;

mechanism! {
    /// Two coordinates whose kinetic energy couples them (`M = [[m, c], [c, m]]`), in a
    /// quartic well: its flow's eigenbasis is rotated, and `c` moves `M` off its diagonal.
    pub struct CoupledWell {
        coordinates: [x, y],
        parameters: { m = 1.5, c = 0.4, k = 2.0 },
        kinetic: 0.5 * m * (dot(x).powi(2) + dot(y).powi(2)) + c * dot(x) * dot(y),
        potential: 0.5 * k * (x.powi(2) + 2.0 * y.powi(2)) + 0.1 * x.powi(4),
        integrators: [verlet],
        derivatives: [step_jacobians],
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    #[test]
    fn gla_around_spook_matches_central_differences_on_the_double_pendulum(
        angles in prop::array::uniform2(-3.0..3.0f64),
        rates in prop::array::uniform2(-2.0..2.0f64),
        friction in 0.5..4.0f64,
        temperature in 0.1..2.0f64,
        seed in any::<u64>(),
    ) {
        let model = DoublePendulum::default();
        let state = chain_state::<4>(&[1.0, 2.0f64.sqrt()], &angles, &rates);
        let spook = Spook::<4, 2>::new(H).unwrap();
        let gla = Langevin::new(spook, H, friction, temperature, seed).unwrap();
        let (largest, _) = check_step_jacobian("GLA(SPOOK), double pendulum", &gla, &model, &state, (1e-5, 1e3));
        prop_assert!(largest > 0.5);
        check_parameter_jacobian::<_, _, 4, 5>(
            "GLA(SPOOK), double pendulum, parameters", &gla, &model, &state, (1e-5, 1e3),
        );
    }

    #[test]
    fn gla_around_verlet_matches_central_differences_with_a_coupled_mass(
        x in prop::array::uniform2(-1.5..1.5f64),
        rates in prop::array::uniform2(-1.0..1.0f64),
        seed in any::<u64>(),
    ) {
        let model = CoupledWell::default();
        let state = State::new(0.0, x, rates);
        let gla = Langevin::new(Verlet::<2>::new(H).unwrap(), H, 2.0, 0.5, seed).unwrap();
        check_step_jacobian("GLA(Verlet), coupled well", &gla, &model, &state, (1e-5, 1e3));
        // The parameters reach M off its diagonal (c) and in a block that is not diagonal (m).
        let (mut gla, mut stepped) = (gla, state);
        let (mut jacobian, mut parameters) = (StepJacobian::default(), ParameterJacobian::<2, 3>::default());
        let refused = gla.step_with_jacobians(&model, &mut stepped, &mut jacobian, &mut parameters);
        prop_assert!(matches!(refused, Err(StepError::Unsupported { .. })), "{refused:?}");
        prop_assert_eq!((stepped.q, stepped.v), (state.q, state.v), "a refused step changes nothing");
    }
}
