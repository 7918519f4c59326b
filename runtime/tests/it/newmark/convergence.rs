//! Second order: the four schemes on the penalized double pendulum against RK4, and Newmark,
//! push-forward Newmark and stiff Z&Ss on harmonic oscillators against the closed form.

use crate::support::{report, run, steps_to};
use mechanism_runtime::integrators::linearly_implicit::{
    Newmark, NewmarkOneIteration, PushForwardNewmark, ZhangSkeelStiff,
};
use mechanism_runtime::reference::double_pendulum::{initial_state, DoublePendulum};
use mechanism_runtime::reference::HarmonicOscillator;
use mechanism_runtime::{Integrator, Penalized, SVector, State};

use super::{pendulum, rk4_reference, SplitOscillator};

/// Returns the position error at `t_end` of `integrator(h)` for each `h` against `reference`.
fn position_errors<I: Integrator<Penalized<DoublePendulum>, 4>>(
    integrator: impl Fn(f64) -> I,
    hs: &[f64],
    t_end: f64,
    reference: &SVector<f64, 4>,
) -> Vec<f64> {
    hs.iter()
        .map(|&h| {
            let end = run(
                &mut integrator(h),
                &pendulum(),
                initial_state(),
                steps_to(t_end, h),
                |_| {},
            );
            (end.unwrap().q - reference).amax()
        })
        .collect()
}

const CONVERGENCE_STEPS: [f64; 4] = [0.01, 0.005, 0.0025, 0.00125];
const CONVERGENCE_TIME: f64 = 1.0;

fn assert_second_order_on_pendulum<I: Integrator<Penalized<DoublePendulum>, 4>>(
    label: &str,
    integrator: impl Fn(f64) -> I,
) {
    let reference = rk4_reference(CONVERGENCE_TIME, 1e-4);
    let hs = CONVERGENCE_STEPS;
    let errors = position_errors(integrator, &hs, CONVERGENCE_TIME, &reference);
    let slope = report(
        &format!("{label}, penalized pendulum ω = 20, |q − q_ref| at t = 1"),
        &hs,
        &errors,
    );
    assert!(slope >= 1.8, "{label}: slope {slope}");
}

#[test]
fn newmark_is_second_order() {
    assert_second_order_on_pendulum("Newmark", |h| Newmark::<4>::new(h).unwrap());
}

#[test]
fn push_forward_newmark_is_second_order() {
    assert_second_order_on_pendulum("push-forward Newmark", |h| {
        PushForwardNewmark::<4>::new(h).unwrap()
    });
}

#[test]
fn stiff_zhang_skeel_is_second_order() {
    assert_second_order_on_pendulum("stiff Z&Ss", |h| ZhangSkeelStiff::<4>::new(h).unwrap());
}

#[test]
fn one_iteration_newmark_is_consistent() {
    assert_second_order_on_pendulum("Newmark, one Newton iteration", |h| {
        NewmarkOneIteration::<4>::new(h).unwrap()
    });
}

/// Returns `|q(2) − q_exact(2)|` for each `h`, from `q = 1`, `v = 0.5`.
fn oscillator_errors<Model, I>(
    model: &Model,
    exact: &HarmonicOscillator,
    integrator: impl Fn(f64) -> I,
    hs: &[f64],
) -> Vec<f64>
where
    I: Integrator<Model, 1>,
{
    let initial = State::new(0.0, [1.0], [0.5]);
    let end = exact.exact(&initial, 2.0);
    hs.iter()
        .map(|&h| {
            let state = run(&mut integrator(h), model, initial, steps_to(2.0, h), |_| {});
            (state.unwrap().q - end.q).amax()
        })
        .collect()
}

#[test]
fn harmonic_oscillator_converges_to_the_closed_form() {
    let model = HarmonicOscillator::default();
    let hs = [0.04, 0.02, 0.01, 0.005];
    let newmark = oscillator_errors(&model, &model, |h| Newmark::<1>::new(h).unwrap(), &hs);
    let push = oscillator_errors(
        &model,
        &model,
        |h| PushForwardNewmark::<1>::new(h).unwrap(),
        &hs,
    );
    let split = SplitOscillator {
        soft: 1.0,
        stiff: 3.0,
    };
    let total = HarmonicOscillator {
        mass: 1.0,
        stiffness: 4.0,
    };
    let stiff = oscillator_errors(
        &split,
        &total,
        |h| ZhangSkeelStiff::<1>::new(h).unwrap(),
        &hs,
    );
    for (label, errors) in [
        (
            "Newmark, harmonic oscillator, |q − q_exact| at t = 2",
            &newmark,
        ),
        ("push-forward Newmark, harmonic oscillator", &push),
        ("stiff Z&Ss, V = ½ q² + ½·3 q² (soft + stiff)", &stiff),
    ] {
        let slope = report(label, &hs, errors);
        assert!((1.9..2.2).contains(&slope), "{label}: slope {slope}");
    }
}
