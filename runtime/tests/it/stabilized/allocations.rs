//! No heap allocation in a step; dimensions inferred from the model and the state.

use crate::support::allocations;
use mechanism_runtime::integrators::stabilized::{
    drift, Baumgarte, Dopri5, Metric, PostStabilization, StabilizedRk, DOPRI5, MIDPOINT, RK4,
};
use mechanism_runtime::reference::double_pendulum::{initial_state, DoublePendulum};
use mechanism_runtime::reference::robot_arm::{self, Path, RobotArm};
use mechanism_runtime::Integrator;

#[test]
fn steps_do_not_allocate() {
    let model = DoublePendulum::default();
    let arm = RobotArm::new(Path::Sine { omega: 1.0 });
    let baumgarte = Baumgarte::new(12.0, 70.0).unwrap();
    let mut total = 0;
    for stabilization in [
        PostStabilization::None,
        PostStabilization::Full,
        PostStabilization::Both,
        PostStabilization::BothTwice,
        PostStabilization::Velocity,
        PostStabilization::Position,
    ] {
        for metric in [Metric::Euclidean, Metric::Mass] {
            let mut rk = StabilizedRk::<4, 2, 4>::new(RK4, 0.01)
                .unwrap()
                .with_baumgarte(baumgarte)
                .with_post_stabilization(stabilization)
                .with_metric(metric);
            let mut arm_rk = StabilizedRk::<2, 1, 2>::new(MIDPOINT, 0.01)
                .unwrap()
                .with_post_stabilization(stabilization)
                .with_metric(metric);
            let mut dopri = Dopri5::<2, 1>::new(DOPRI5, 1e-6, 1e-7)
                .unwrap()
                .with_post_stabilization(stabilization)
                .with_metric(metric);
            let mut state = initial_state();
            let mut arm_state = robot_arm::initial_state();
            let mut dopri_state = robot_arm::initial_state();
            let before = allocations();
            for _ in 0..20 {
                rk.step(&model, &mut state).unwrap();
                arm_rk.step(&arm, &mut arm_state).unwrap();
                dopri.step_toward(&arm, &mut dopri_state, 5.0).unwrap();
            }
            total += allocations() - before;
        }
    }
    assert_eq!(total, 0, "heap allocations in stabilized steps");
}

#[test]
fn dimensions_are_inferred_from_the_model_and_the_state() {
    // `StabilizedRk::new(RK4, h)` needs no turbofish: N comes from the state, M from the
    // model's unique `Holonomic<N, M>`.
    let model = DoublePendulum::default();
    let mut rk = StabilizedRk::new(RK4, 0.01)
        .unwrap()
        .with_post_stabilization(PostStabilization::BothTwice);
    let mut state = initial_state();
    rk.step(&model, &mut state).unwrap();
    let mut dopri = Dopri5::new(DOPRI5, 1e-6, 1e-7).unwrap();
    dopri.step(&model, &mut state).unwrap();
    assert!(drift::<_, 4, 2>(&model, &state).position < 1e-6);
}
