//! Failures leave the state and the carried momentum unchanged; bad parameters are
//! rejected.

use mechanism_runtime::integrators::energy_momentum::Livens;
use mechanism_runtime::reference::double_pendulum::{self, DoublePendulum};
use mechanism_runtime::reference::spherical_pendulum::{self, SphericalSpringPendulum};
use mechanism_runtime::{Integrator, SVector, StepError};

use super::Free;

/// An absurd step makes Newton fail with `NewtonDiverged`, leaving the state and the carried
/// momentum as they were; bad parameters are rejected.
#[test]
fn errors_leave_the_state_unchanged() {
    for h in [0.0, -0.01, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            Livens::<4, 2>::new(h),
            Err(StepError::BadStepSize { .. })
        ));
    }

    let model = Free::<_, true>(SphericalSpringPendulum::default());
    let mut livens = Livens::<3, 0>::new(0.01).unwrap();
    let mut state = spherical_pendulum::initial_state();
    livens.step(&model, &mut state).unwrap();
    let (before, p_before) = (state, *livens.momentum().unwrap());
    let mut absurd = Livens::<3, 0>::new(1e4).unwrap();
    let err = absurd.step(&model, &mut state).unwrap_err();
    println!("h = 1e4 on the spring pendulum: {err}");
    assert!(matches!(err, StepError::NewtonDiverged { .. }), "{err:?}");
    assert_eq!(state, before);

    let mut one = livens.with_max_iterations(1).unwrap();
    let err = one.step(&model, &mut state).unwrap_err();
    assert!(
        matches!(err, StepError::NewtonDiverged { iterations: 1, residual, .. } if residual > 1e-12),
        "{err:?}"
    );
    assert_eq!(state, before);
    assert_eq!(*one.momentum().unwrap(), p_before);

    // The constrained path (Schur complement) fails the same way.
    let pendulum = DoublePendulum::default();
    let mut livens = Livens::<4, 2>::new(0.01)
        .unwrap()
        .with_max_iterations(1)
        .unwrap();
    let mut state = double_pendulum::initial_state();
    let before = state;
    let err = livens.step(&pendulum, &mut state).unwrap_err();
    assert!(
        matches!(err, StepError::NewtonDiverged { iterations: 1, .. }),
        "{err:?}"
    );
    assert_eq!(state, before);
    assert!(livens.momentum().is_none());
    assert_eq!(*livens.multipliers(), SVector::<f64, 2>::zeros());

    let mut nan = double_pendulum::initial_state();
    nan.q[1] = f64::NAN;
    let mut livens = Livens::<4, 2>::new(0.01).unwrap();
    assert!(matches!(
        livens.step(&pendulum, &mut nan),
        Err(StepError::NonFinite {
            quantity: "q",
            index: 1,
            ..
        })
    ));
}
