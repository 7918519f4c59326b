//! Every integrator, fed random states, parameters and step sizes on the *generated* models:
//! the outcome of a step is `Ok` with a finite state or a typed `Err` with the state unchanged
//! (bit for bit) — never a panic, never `Ok` with NaN or infinity. A non-finite parameter is
//! reported by its name, whichever integrator meets it.

use mechanism::models::{DoublePendulum, NonholonomicParticle};
use mechanism::runtime::integrators::stabilized::{
    Baumgarte, PostStabilization, DOPRI5, HEUN, RK4,
};
use mechanism::runtime::{
    CortesMartinez, DiscreteLagrangeDAlembert, Dopri5, Integrator, Langevin, Livens, Newmark,
    NewmarkOneIteration, Penalized, PushForwardNewmark, Rattle, Rk4, Shake, Spook, StabilizedRk,
    State, StepError, SymplecticEuler, Verlet, ZhangSkeel, ZhangSkeelSimplified, ZhangSkeelStiff,
};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// Returns whether `a` and `b` are equal bit for bit.
fn same_bits<const N: usize>(a: &State<N>, b: &State<N>) -> bool {
    a.t.to_bits() == b.t.to_bits()
        && a.q
            .iter()
            .zip(b.q.iter())
            .all(|(x, y)| x.to_bits() == y.to_bits())
        && a.v
            .iter()
            .zip(b.v.iter())
            .all(|(x, y)| x.to_bits() == y.to_bits())
}

/// Takes up to `steps` steps of `integrator` (if it could be built) from `state`: every `Ok`
/// must leave a finite state, the first `Err` must leave the state as it was; returns the
/// outcome of the last step taken.
fn check_steps<Model, I: Integrator<Model, N>, const N: usize>(
    method: &str,
    integrator: Result<I, StepError>,
    model: &Model,
    mut state: State<N>,
    steps: usize,
) -> Result<Option<StepError>, TestCaseError> {
    let Ok(mut integrator) = integrator else {
        return Ok(integrator.err());
    };
    for _ in 0..steps {
        let before = state;
        match integrator.step(model, &mut state) {
            Ok(_) => prop_assert!(
                state.is_finite(),
                "{method}: Ok with a non-finite state {state:?} from {before:?}"
            ),
            Err(err) => {
                prop_assert!(
                    same_bits(&state, &before),
                    "{method}: {err} changed the state from {before:?} to {state:?}"
                );
                return Ok(Some(err));
            }
        }
    }
    Ok(None)
}

/// Runs every integrator compiled for the double pendulum (the penalty methods on the
/// `ω`-penalized model) from `state`.
fn check_every_integrator(
    model: DoublePendulum,
    omega: f64,
    state: State<4>,
    h: f64,
    steps: usize,
) -> Result<Vec<(&'static str, Option<StepError>)>, TestCaseError> {
    let penalized = Penalized::new(model, omega);
    let mut outcomes = Vec::new();
    macro_rules! run {
        ($name:literal, $model:expr, $integrator:expr) => {
            outcomes.push((
                $name,
                check_steps($name, $integrator, $model, state, steps)?,
            ));
        };
    }
    run!("SPOOK", &model, Spook::<4, 2>::new(h));
    run!("Livens", &model, Livens::<4, 2>::new(h));
    run!("SHAKE", &model, Shake::<4, 2>::new(h));
    run!("RATTLE", &model, Rattle::<4, 2>::new(h));
    run!(
        "RK4 + post-stabilization",
        &model,
        StabilizedRk::<4, 2, 4>::new(RK4, h)
            .map(|rk| rk.with_post_stabilization(PostStabilization::BothTwice))
    );
    run!(
        "Heun + Baumgarte",
        &model,
        StabilizedRk::<4, 2, 2>::new(HEUN, h)
            .map(|rk| rk.with_baumgarte(Baumgarte::new(12.0, 70.0).unwrap()))
    );
    run!(
        "DOPRI5",
        &model,
        Dopri5::<4, 2>::new(DOPRI5, 1e-6, 1e-8).and_then(|d| d.with_initial_step(h))
    );
    run!("Z&S", &penalized, ZhangSkeel::<4>::new(h));
    run!("Z&Ss", &penalized, ZhangSkeelSimplified::<4>::new(h));
    run!("stiff Z&Ss", &penalized, ZhangSkeelStiff::<4>::new(h));
    run!("Newmark", &penalized, Newmark::<4>::new(h));
    run!(
        "one-iteration Newmark",
        &penalized,
        NewmarkOneIteration::<4>::new(h)
    );
    run!(
        "push-forward Newmark",
        &penalized,
        PushForwardNewmark::<4>::new(h)
    );
    run!("Verlet", &penalized, Verlet::<4>::new(h));
    run!("symplectic Euler", &penalized, SymplecticEuler::<4>::new(h));
    run!("RK4", &penalized, Rk4::<4>::new(h));
    run!(
        "GLA(Verlet)",
        &penalized,
        Verlet::<4>::new(h).and_then(|verlet| Langevin::new(verlet, h, 0.5, 0.1, 7))
    );
    Ok(outcomes)
}

/// A parameter: mostly ordinary, sometimes zero, negative, tiny, huge or not finite.
fn parameter() -> impl Strategy<Value = f64> {
    prop_oneof![
        30 => 0.2..3.0f64,
        1 => Just(0.0),
        1 => -3.0..-0.1f64,
        1 => 1e-9..1e-6f64,
        1 => 1e6..1e12f64,
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
    ]
}

/// A step size: mostly ordinary, sometimes tiny, huge, zero, negative or not finite.
fn step_size() -> impl Strategy<Value = f64> {
    prop_oneof![
        10 => 1e-4..0.3f64,
        1 => 1e-12..1e-6f64,
        2 => 1.0..1e8f64,
        1 => Just(0.0),
        1 => Just(-0.01),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
    ]
}

/// A coordinate or velocity component: mostly ordinary, sometimes huge or not finite.
fn component(scale: f64) -> impl Strategy<Value = f64> {
    prop_oneof![
        50 => -scale..scale,
        1 => -1e12..1e12f64,
        1 => Just(f64::NAN),
        1 => Just(f64::NEG_INFINITY),
    ]
}

/// A double pendulum state: on its rods (from two angles) or anywhere, with any velocity.
fn pendulum_state(model: DoublePendulum) -> impl Strategy<Value = State<4>> {
    let on_rods = (-3.2..3.2f64, -3.2..3.2f64).prop_map(move |(a, b)| {
        let (x1, y1) = (model.l1 * a.sin(), -model.l1 * a.cos());
        [x1, y1, x1 + model.l2 * b.sin(), y1 - model.l2 * b.cos()]
    });
    let anywhere = prop::array::uniform4(component(3.0));
    (
        prop_oneof![3 => on_rods, 1 => anywhere],
        prop::array::uniform4(component(5.0)),
        prop_oneof![30 => -10.0..10.0f64, 1 => Just(f64::NAN)],
    )
        .prop_map(|(q, v, t)| State::new(t, q, v))
}

fn double_pendulum() -> impl Strategy<Value = DoublePendulum> {
    (
        parameter(),
        parameter(),
        parameter(),
        parameter(),
        parameter(),
    )
        .prop_map(|(m1, m2, l1, l2, g)| DoublePendulum { m1, m2, l1, l2, g })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_double_pendulum_integrator_is_ok_and_finite_or_a_typed_error(
        (model, state) in double_pendulum().prop_flat_map(|m| (Just(m), pendulum_state(m))),
        omega in prop_oneof![20 => 1.0..100.0f64, 1 => Just(f64::NAN), 1 => Just(-5.0)],
        h in step_size(),
        steps in 1usize..6,
    ) {
        check_every_integrator(model, omega, state, h, steps)?;
    }

    #[test]
    fn nonholonomic_integrators_are_ok_and_finite_or_a_typed_error(
        q in prop::array::uniform3(component(3.0)),
        v in prop::array::uniform3(component(5.0)),
        h in step_size(),
        steps in 1usize..6,
    ) {
        let model = NonholonomicParticle::default();
        let state = State::new(0.0, q, v);
        check_steps("DLDA", DiscreteLagrangeDAlembert::<3, 1>::new(h), &model, state, steps)?;
        check_steps("Cortés–Martínez", CortesMartinez::<3, 1>::new(h), &model, state, steps)?;
        check_steps("SPOOK (nonholonomic)", Spook::<3, 0, 1>::new(h), &model, state, steps)?;
    }
}

/// A NaN parameter used to surface as its effect ("non-finite gradient[1]", "Newton … 0
/// iterations (residual NaN)"); every integrator now names it.
#[test]
fn a_nan_parameter_is_named_by_every_integrator() {
    for (name, model) in [
        (
            "g",
            DoublePendulum {
                g: f64::NAN,
                ..DoublePendulum::default()
            },
        ),
        (
            "l2",
            DoublePendulum {
                l2: f64::NAN,
                ..DoublePendulum::default()
            },
        ),
        (
            "m1",
            DoublePendulum {
                m1: f64::INFINITY,
                ..DoublePendulum::default()
            },
        ),
    ] {
        let outcomes =
            check_every_integrator(model, 20.0, DoublePendulum::initial_state(), 0.01, 1).unwrap();
        for (method, outcome) in outcomes {
            let err = outcome.unwrap_or_else(|| panic!("{method} stepped with {name} = NaN"));
            assert!(
                matches!(err, StepError::BadParameter { name: n, .. } if n == name),
                "{method}: {err}"
            );
        }
    }
    let penalized = Penalized::new(DoublePendulum::default(), f64::NAN);
    let mut state = DoublePendulum::initial_state();
    let err = Verlet::<4>::new(0.01)
        .unwrap()
        .step(&penalized, &mut state)
        .unwrap_err();
    println!("{err}");
    assert!(
        matches!(err, StepError::BadParameter { name: "omega", .. }),
        "{err}"
    );
}
