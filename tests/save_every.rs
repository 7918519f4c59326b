//! `--save-every DT` of the examples: rows at exactly `t = 0, DT, 2·DT, …` and at the end time,
//! for a fixed-step example (GLA in `langevin_oscillator`, on its step grid) and an adaptive one
//! (DOPRI5 in `robot_arm --case sine`, through its dense output), run with the examples' own
//! code; a `DT` off a fixed-step grid is an error, not a silent shift.

#[path = "../examples/common/mod.rs"]
mod common;
#[path = "../examples/langevin_oscillator/sampling.rs"]
#[allow(dead_code)] // the test uses the oscillator run only
mod sampling;

use mechanism::models::{RobotArmParabola, RobotArmSine};
use mechanism::runtime::integrators::stabilized::{Dopri5, PostStabilization, DOPRI5};
use mechanism::runtime::simulation::{CsvSink, Schedule};
use sampling::{Inner, Settings};

/// The `t` column of a CSV.
fn times(csv: &[u8]) -> Vec<f64> {
    let text = std::str::from_utf8(csv).unwrap();
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with("t,q."));
    lines
        .map(|line| line.split(',').next().unwrap().parse().unwrap())
        .collect()
}

fn settings(save_every: Option<f64>) -> Settings {
    Settings {
        m: 1.0,
        k: 1.0,
        kt: 1.0,
        gamma: 1.0,
        h: 0.05,
        steps: 2_010, // t_end = 100.5: the last row is the end time, off the DT grid
        burn_in: 200,
        batches: 10,
        every: 1,
        save_every,
        seed: 11,
        inner: Inner::Verlet,
        omega: 20.0,
        length: 1.0,
        gravity: 1.0,
    }
}

#[test]
fn fixed_step_rows_fall_exactly_on_the_requested_times() {
    let mut csv = Vec::new();
    let sampled = sampling::run_oscillator(&settings(Some(2.5)), CsvSink::new(&mut csv)).unwrap();
    let mut expected: Vec<f64> = (0..=40).map(|i| f64::from(i) * 2.5).collect();
    expected.push(100.5);
    assert_eq!(times(&csv), expected);

    // The rows are the states on the grid: the same run written every 50th step has them
    // (with the summed t, within rounding of the requested time), and the statistics of
    // every step do not depend on what is written.
    let mut every = Vec::new();
    let all = sampling::run_oscillator(
        &Settings {
            every: 50,
            ..settings(None)
        },
        CsvSink::new(&mut every),
    )
    .unwrap();
    let text = |csv: &[u8]| String::from_utf8(csv.to_vec()).unwrap();
    let (saved, stepped) = (text(&csv), text(&every));
    for (a, b) in saved.lines().zip(stepped.lines()).skip(1).take(40) {
        let (a, b) = (a.split_once(',').unwrap(), b.split_once(',').unwrap());
        assert_eq!(a.1, b.1, "same state at t = {} and {}", a.0, b.0);
        let (ta, tb): (f64, f64) = (a.0.parse().unwrap(), b.0.parse().unwrap());
        assert!((ta - tb).abs() <= 1e-12 * ta.max(1.0), "{ta} vs {tb}");
    }
    assert_eq!(sampled.q2[0].mean.to_bits(), all.q2[0].mean.to_bits());
    assert_eq!(sampled.last.q, all.last.q);

    let off_grid = sampling::run_oscillator(&settings(Some(0.12)), CsvSink::new(Vec::new()));
    let Err(error) = off_grid else {
        panic!("0.12 is not a multiple of h = 0.05");
    };
    let message = error.to_string();
    assert!(
        message.contains("whole multiple of the step size"),
        "{message}"
    );
    let error = common::plan(0.01, 1.0, Some(0.015))
        .err()
        .unwrap()
        .to_string();
    assert!(error.contains("--save-every"), "{error}");
}

#[test]
fn adaptive_rows_fall_exactly_on_the_requested_times_through_dense_output() {
    // `robot_arm --case sine --method dopri5 --save-every 1`, as the example builds it.
    let model = RobotArmSine::default();
    let dopri = |rtol: f64| {
        Dopri5::<2, 1>::new(DOPRI5, rtol, 0.1 * rtol)
            .unwrap()
            .with_post_stabilization(PostStabilization::BothTwice)
    };
    let run = |rtol, schedule| {
        common::simulate_adaptive(
            dopri(rtol),
            &model,
            RobotArmParabola::initial_state(),
            10.0,
            Vec::new(),
            schedule,
        )
        .unwrap()
    };
    let saved = run(1e-5, Schedule::Every(1.0));
    assert!(saved.failure.is_none());
    let t = saved.column("t").unwrap();
    assert_eq!(t, (0..=10).map(f64::from).collect::<Vec<_>>());
    for required in [1.0, 5.0, 10.0] {
        assert!(t.contains(&required));
    }
    // The rows are the states at those times, not at the nearest accepted step (the accepted
    // steps miss t = 5): against a run at a 10⁴ times tighter tolerance, the dense rows are as
    // accurate as the accepted steps themselves (the loose run's global error, measured at its
    // own steps through the tight run's dense output), up to the interpolant's own error.
    let steps = run(1e-5, Schedule::EveryStep);
    let accepted = steps.column("t").unwrap();
    assert!(!accepted.contains(&5.0));
    let tight = run(1e-9, Schedule::Every(1.0));
    let tight_at_steps = run(1e-9, Schedule::At(accepted));
    let worst = |a: &common::Trajectory, b: &common::Trajectory| {
        ["q.theta1", "q.theta2"]
            .iter()
            .flat_map(|name| {
                let (a, b) = (a.column(name).unwrap(), b.column(name).unwrap());
                a.into_iter().zip(b).map(|(x, y)| (x - y).abs())
            })
            .fold(0.0f64, f64::max)
    };
    let (dense_error, global_error) = (worst(&saved, &tight), worst(&steps, &tight_at_steps));
    println!("max |q − q_tight|: rows at t = 0, 1, …, 10 {dense_error:.3e}, accepted steps {global_error:.3e}");
    assert!(
        dense_error <= 2.0 * global_error + 1e-6,
        "{dense_error:e} vs {global_error:e}"
    );
    // The summary is over every accepted step whatever the schedule.
    assert_eq!(saved.summary.steps, steps.summary.steps);
    assert_eq!(
        saved.summary.max_energy_error,
        steps.summary.max_energy_error
    );
}
