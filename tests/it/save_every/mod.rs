//! `--save-every DT` of the examples: rows at exactly `t = 0, DT, 2·DT, …` and at the end time,
//! for a fixed-step example (GLA in `langevin_oscillator`, on its step grid) and an adaptive one
//! (DOPRI5 in `robot_arm --case sine`, through its dense output), run with the examples' own
//! code; a `DT` off a fixed-step grid is an error, not a silent shift. `--every K` thins the
//! rows of any schedule to every K-th and the last. The kill tests stop a streamed run with
//! signals; the command-line test runs every example binary with each bad value.

use mechanism_examples as examples_common;

use crate::support::sampling::{self, Inner, Settings};
use mechanism::models::{RobotArmParabola, RobotArmSine};
use mechanism::runtime::integrators::stabilized::{Dopri5, PostStabilization, DOPRI5};
use mechanism::runtime::simulation::{CsvSink, Schedule};

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
        interrupt: None,
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
    let error = examples_common::plan(0.01, 1.0, Some(0.015))
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
        examples_common::simulate_adaptive(
            dopri(rtol),
            &model,
            RobotArmParabola::initial_state(),
            10.0,
            Vec::new(),
            &examples_common::Plan {
                schedule,
                ..examples_common::adaptive_plan(None).unwrap()
            },
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
    let worst = |a: &examples_common::Trajectory, b: &examples_common::Trajectory| {
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

#[cfg(unix)]
mod kill;

/// `--every K` ([`examples_common::Thin`]): every K-th row of the schedule from the first, and the
/// last even when it is not among them; its rows are the unthinned run's, bit for bit.
#[test]
fn every_keeps_every_kth_row_of_the_schedule_and_the_last() {
    let model = mechanism::models::DoublePendulum::default();
    let run = |every: usize, save_every: Option<f64>| {
        let plan = examples_common::Plan {
            every,
            ..examples_common::plan(0.01, 1.01, save_every).unwrap()
        };
        let trajectory = examples_common::simulate(
            mechanism::runtime::Spook::new(0.01).unwrap(),
            &model,
            &model,
            mechanism::models::DoublePendulum::initial_state(),
            &plan,
            [],
        )
        .unwrap();
        assert!(trajectory.failure.is_none());
        // The summary is over every step whatever is written.
        assert_eq!(trajectory.summary.steps, 101);
        trajectory.table
    };
    let rows = |table: &mechanism::runtime::simulation::Table| -> Vec<Vec<u64>> {
        table
            .rows()
            .map(|row| row.iter().map(|x| x.to_bits()).collect())
            .collect()
    };
    let all = rows(&run(1, None));
    assert_eq!(all.len(), 102);
    let thinned = rows(&run(7, None));
    let mut expected: Vec<Vec<u64>> = all.iter().step_by(7).cloned().collect();
    expected.push(all[101].clone()); // step 101 is not a multiple of 7
    assert_eq!(thinned, expected);
    // With --save-every 0.1: rows at t = 0, 0.1, …, 1.0 and the end 1.01; every third of them
    // (0, 0.3, 0.6, 0.9) and the end.
    let saved = run(1, Some(0.1));
    let times: Vec<f64> = saved.column("t").unwrap().collect();
    assert_eq!(times.len(), 12);
    let every_third = run(3, Some(0.1));
    let mut expected: Vec<Vec<u64>> = rows(&saved).into_iter().step_by(3).collect();
    expected.push(rows(&saved)[11].clone());
    assert_eq!(rows(&every_third), expected);
}

mod command_line;

mod checkpoint;
