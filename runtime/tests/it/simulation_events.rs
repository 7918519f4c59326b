//! Events of the run driver, on the unit oscillator `q(t) = sin t` whose crossings are known in
//! closed form: DOPRI5 locates them through its dense output to its own error, a fixed-step
//! method by the secant to the secant's `h²` bound; runs continue after an event, and an event
//! costs no allocation per step.

use std::f64::consts::{FRAC_PI_6, PI};

use crate::support::allocations;
use crate::support::spring::{sine_start, Spring};
use mechanism_runtime::integrators::stabilized::{Dopri5, DOPRI5};
use mechanism_runtime::reference::harmonic::HarmonicOscillator;
use mechanism_runtime::simulation::{Crossing, Schedule, Simulation, SimulationError, StopReason};
use mechanism_runtime::{Rk4, State, StepError};

fn spring() -> Spring {
    Spring(HarmonicOscillator::default())
}

/// DOPRI5 stops at `q = 0` on the way down, `t* = π`, with the error the perturbed root
/// inherits from the solution: a root of `q_h = q + e` moves by `|e| / |q̇|`, and `|q̇(π)| = 1`,
/// so `|t* − π|` is bounded by the largest error `E` of the dense output near the root (measured
/// against `sin t`), with a factor 2 for the variation of `e` and `q̇` across the bracket.
#[test]
fn dense_output_locates_the_crossing_to_the_solution_error() {
    let model = spring();
    for tolerance in [1e-6, 1e-9] {
        let dopri5 = Dopri5::<1, 0>::new(DOPRI5, tolerance, tolerance).unwrap();
        let mut run = Simulation::adaptive(&model, dopri5, sine_start(), 10.0, Schedule::EveryStep)
            .unwrap()
            .stop_when(Crossing::Falling, |s: &State<1>| s.q[0]);
        let StopReason::Event { index, t } = run.run().unwrap() else {
            panic!("no event before the end");
        };
        assert_eq!(index, 0);
        let step_end = run.state().t;
        assert!(
            t < step_end && step_end < 10.0,
            "t* = {t}, step end {step_end}"
        );
        // The interpolated state at t* is on the crossing up to rounding of the root finder.
        let mut at_event = *run.state();
        run.state_at(t, &mut at_event).unwrap();
        assert!(at_event.q[0].abs() < 1e-14, "q(t*) = {}", at_event.q[0]);
        // E: the dense output's error on a fine grid across the last step (the times before
        // the step's start are refused by `state_at`).
        let mut error: f64 = 0.0;
        let mut probe = at_event;
        for k in 0..=400 {
            let s = step_end - k as f64 / 400.0;
            if run.state_at(s, &mut probe).is_ok() {
                error = error.max((probe.q[0] - s.sin()).abs());
            }
        }
        assert!(error > 0.0 && error < 1e3 * tolerance, "E = {error:e}");
        assert!(
            (t - PI).abs() <= 2.0 * error,
            "tolerance {tolerance:e}: t* − π = {:e}, E = {error:e}",
            t - PI
        );
    }
}

/// RK4 at a fixed step has no dense output: `t*` is the secant root of the step's end values,
/// whose error for `g` with `|g''| ≤ K` is at most `K h² / (8 |g'|)` (plus RK4's `O(h⁴)`
/// error over `|g'|`). For `q = ½` on the way up, `t* = π/6`, `g' = cos(π/6)`, `K = 1`; and the
/// state stays the integrator's state at the end of the step that crossed.
#[test]
fn fixed_step_locates_the_crossing_by_the_secant() {
    let model = spring();
    for h in [0.1, 0.037, 0.01] {
        let mut run = Simulation::fixed(
            &model,
            Rk4::new(h).unwrap(),
            sine_start(),
            10.0,
            Schedule::EveryStep,
        )
        .unwrap()
        .stop_when(Crossing::Rising, |s: &State<1>| s.q[0] - 0.5);
        let StopReason::Event { index: 0, t } = run.run().unwrap() else {
            panic!("no event");
        };
        let step_end = run.state().t;
        assert!(step_end - h < t && t <= step_end, "h = {h}: t* = {t}");
        assert!((step_end - FRAC_PI_6) >= 0.0 && step_end - FRAC_PI_6 < h + 1e-12);
        let bound = h * h / (8.0 * FRAC_PI_6.cos()) + h.powi(4);
        assert!(
            (t - FRAC_PI_6).abs() <= bound,
            "h = {h}: t* − π/6 = {:e}, bound {bound:e}",
            t - FRAC_PI_6
        );
        // No dense output: only the step end can be asked for.
        let mut probe = *run.state();
        assert!(matches!(
            run.state_at(t, &mut probe),
            Err(SimulationError::OffGrid { .. })
        ));
        run.state_at(step_end, &mut probe).unwrap();
        assert_eq!(probe, *run.state());
    }
}

/// A run continues after an event: the zeros of `sin t` on `(0, 10]` are π, 2π and 3π, each
/// reported once in order, the scheduled rows are all written, and the run then reaches its end.
#[test]
fn run_continues_after_events() {
    let model = spring();
    let dopri5 = Dopri5::<1, 0>::new(DOPRI5, 1e-10, 1e-10).unwrap();
    let mut run = Simulation::adaptive(&model, dopri5, sine_start(), 10.0, Schedule::Every(1.0))
        .unwrap()
        .stop_when(Crossing::Either, |s: &State<1>| s.q[0])
        .stop_when(Crossing::Rising, |s: &State<1>| s.t - 20.0);
    let mut found = Vec::new();
    loop {
        match run.run().unwrap() {
            StopReason::Event { index, t } => found.push((index, t)),
            StopReason::EndReached => break,
            StopReason::InternalStep => unreachable!("run returns at an event or the end"),
        }
    }
    assert_eq!(found.len(), 3, "{found:?}");
    for (k, (index, t)) in found.iter().enumerate() {
        assert_eq!(*index, 0);
        assert!((t - (k + 1) as f64 * PI).abs() < 1e-7, "{found:?}");
    }
    let times: Vec<f64> = run.output().column("t").unwrap().collect();
    assert_eq!(times, (0..=10).map(f64::from).collect::<Vec<_>>());
    assert_eq!(run.step().unwrap(), StopReason::EndReached);
}

/// Of two events crossing in the same step the earlier is reported; a condition that starts at
/// exactly zero does not fire until it crosses again.
#[test]
fn earliest_event_wins_and_zero_start_does_not_fire() {
    let model = spring();
    let mut run = Simulation::fixed(
        &model,
        Rk4::new(0.5).unwrap(),
        sine_start(),
        10.0,
        Schedule::EveryStep,
    )
    .unwrap()
    .stop_when(Crossing::Rising, |s: &State<1>| s.q[0] - 0.4)
    .stop_when(Crossing::Rising, |s: &State<1>| s.q[0] - 0.2)
    .stop_when(Crossing::Either, |s: &State<1>| s.q[0]);
    let StopReason::Event { index, t } = run.run().unwrap() else {
        panic!("no event");
    };
    assert_eq!(index, 1, "q = 0.2 is crossed before q = 0.4 (t* = {t})");
    assert!((t - 0.2f64.asin()).abs() < 0.5 * 0.5 / 8.0 / 0.9);
    // The next step crosses nothing new (q = 0.4 was also crossed in the first step and is
    // not reported twice); the zero at π is next.
    let StopReason::Event { index, t } = run.run().unwrap() else {
        panic!("no event");
    };
    assert_eq!(index, 2);
    assert!((t - PI).abs() < 0.5 * 0.5 / 8.0 + 1e-3, "t* = {t}");
}

/// A condition that is not finite fails the run with the event's number and time; an event
/// on a run adds no allocation per step.
#[test]
fn non_finite_condition_is_an_error_and_events_do_not_allocate() {
    let model = spring();
    let mut run = Simulation::fixed(
        &model,
        Rk4::new(0.1).unwrap(),
        sine_start(),
        1.0,
        Schedule::EveryStep,
    )
    .unwrap()
    .stop_when(Crossing::Either, |s: &State<1>| s.q[0])
    .stop_when(Crossing::Either, |s: &State<1>| (s.q[0] - 0.5).sqrt());
    match run.run() {
        Err(SimulationError::Observer {
            t,
            source: StepError::NonFinite { index: 1, .. },
        }) => assert_eq!(t, 0.0),
        other => panic!("expected the event's error, got {other:?}"),
    }

    let dopri5 = Dopri5::<1, 0>::new(DOPRI5, 1e-8, 1e-8).unwrap();
    let mut run = Simulation::adaptive(&model, dopri5, sine_start(), 30.0, Schedule::Every(0.5))
        .unwrap()
        .stop_when(Crossing::Either, |s: &State<1>| s.q[0]);
    run.step().unwrap();
    let before = allocations();
    let mut events = 0;
    loop {
        match run.step().unwrap() {
            StopReason::Event { .. } => events += 1,
            StopReason::EndReached => break,
            StopReason::InternalStep => {}
        }
    }
    assert_eq!(allocations() - before, 0);
    assert_eq!(events, 9, "zeros of sin t in (0, 30]: π, …, 9π");
}
