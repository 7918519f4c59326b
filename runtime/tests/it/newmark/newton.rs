//! Newton's iteration: a failure is reported and leaves the state unchanged, bad parameters
//! are rejected, and a step reports its factorizations and iterations.

use crate::support::run;
use mechanism_runtime::integrators::linearly_implicit::{
    Newmark, NewmarkOneIteration, PushForwardNewmark, ZhangSkeelStiff,
};
use mechanism_runtime::reference::double_pendulum::initial_state;
use mechanism_runtime::{Integrator, StepError};

use super::pendulum;

#[test]
fn newton_failure_is_reported_and_leaves_the_state_unchanged() {
    let model = pendulum();
    let start = run(
        &mut Newmark::<4>::new(0.1).unwrap(),
        &model,
        initial_state(),
        5,
        |_| {},
    )
    .unwrap();
    let mut state = start;
    let mut tight = Newmark::<4>::new(0.1)
        .unwrap()
        .with_max_iterations(1)
        .unwrap()
        .with_tolerance(1e-15)
        .unwrap();
    let error = tight.step(&model, &mut state).unwrap_err();
    println!("Newmark, one allowed iteration at tolerance 1e-15: {error}");
    match error {
        StepError::NewtonDiverged {
            iterations,
            residual,
            t,
        } => {
            assert_eq!(iterations, 1);
            assert!(residual > 0.0 && residual.is_finite());
            assert_eq!(t, start.t);
        }
        other => panic!("expected NewtonDiverged, got {other:?}"),
    }
    assert_eq!(state, start);

    let mut push = PushForwardNewmark::<4>::new(0.1)
        .unwrap()
        .with_max_iterations(1)
        .unwrap()
        .with_tolerance(1e-15)
        .unwrap();
    let error = push.step(&model, &mut state).unwrap_err();
    assert!(
        matches!(error, StepError::NewtonDiverged { iterations: 1, .. }),
        "{error:?}"
    );
    assert_eq!(state, start);

    // An absurd step, h ω = 2·10⁴ on the cubic penalized force: Newton wanders for 50
    // iterations (at h = 100 it still converges, in 42).
    let mut absurd = Newmark::<4>::new(1e3).unwrap();
    let error = absurd.step(&model, &mut state).unwrap_err();
    println!("Newmark at h = 1000: {error}");
    assert!(
        matches!(error, StepError::NewtonDiverged { iterations: 50, .. }),
        "{error:?}"
    );
    assert_eq!(state, start);
}

#[test]
fn bad_newton_parameters_are_rejected() {
    assert!(matches!(
        Newmark::<4>::new(0.1).unwrap().with_tolerance(0.0),
        Err(StepError::BadParameter {
            name: "tolerance",
            ..
        })
    ));
    assert!(matches!(
        PushForwardNewmark::<4>::new(0.1)
            .unwrap()
            .with_max_iterations(0),
        Err(StepError::BadParameter {
            name: "max_iterations",
            ..
        })
    ));
    assert!(matches!(
        ZhangSkeelStiff::<4>::new(0.1).unwrap().with_beta(f64::NAN),
        Err(StepError::BadParameter { name: "beta", .. })
    ));
    assert!(matches!(
        NewmarkOneIteration::<4>::new(-1.0),
        Err(StepError::BadStepSize { .. })
    ));
}

#[test]
fn mass_factor_and_acceleration_are_carried() {
    let model = pendulum();
    let mut newmark = Newmark::<4>::new(0.05).unwrap();
    let mut state = initial_state();
    let first = newmark.step(&model, &mut state).unwrap();
    let second = newmark.step(&model, &mut state).unwrap();
    println!("Newmark reports: {first:?}, {second:?}");
    // Step 1 factors M for a_0, then one Jacobian per Newton iteration; step 2 only Newton.
    assert_eq!(first.factorizations, first.newton_iterations + 1);
    assert_eq!(second.factorizations, second.newton_iterations);
    let mut one = NewmarkOneIteration::<4>::new(0.05).unwrap();
    let mut state = initial_state();
    one.step(&model, &mut state).unwrap();
    let report = one.step(&model, &mut state).unwrap();
    assert_eq!((report.factorizations, report.newton_iterations), (1, 1));
    let mut stiff = ZhangSkeelStiff::<4>::new(0.05).unwrap();
    let mut state = initial_state();
    let first = stiff.step(&model, &mut state).unwrap();
    let second = stiff.step(&model, &mut state).unwrap();
    assert_eq!((first.factorizations, second.factorizations), (2, 1));
}
