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
            &common::Plan {
                schedule,
                ..common::adaptive_plan(None).unwrap()
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

/// The kill tests: a child process (this test binary again, running only
/// [`kill_child_streams_a_long_run`]) runs SPOOK on the double pendulum through the examples'
/// harness (`common::simulate` with `Plan::stream_to`, its signal handlers and exit code) for
/// far longer than the test waits, throttled to about 5 000 rows a second by a column that
/// sleeps. The parent waits until the CSV holds a flushed row, waits a random time up to a
/// second, and sends a signal.
///
/// The child is the test binary rather than the `double_pendulum` example: `cargo test
/// --test save_every` does not build the examples, and an example found in `target/` could be
/// a stale build; the test binary is the code under test, with the harness included as the
/// examples include it.
#[cfg(unix)]
mod kill {
    use super::common;
    use mechanism::models::DoublePendulum;
    use mechanism::runtime::Spook;
    use std::hash::{BuildHasher, RandomState};
    use std::path::{Path, PathBuf};
    use std::process::{Child, Command, Output, Stdio};
    use std::time::{Duration, Instant};

    /// The variable that makes the child test run; its value is the output file.
    const CHILD: &str = "MECHANISM_KILL_CHILD";
    /// The step of the child's run.
    const H: f64 = 1.0 / 64.0;
    /// The columns of a row: `t`, four `q`, four `v`, energy, two residuals, the throttle.
    const WIDTH: usize = 13;

    /// The child's run, when the parent started it (else nothing): exits the process with
    /// the harness's exit code.
    #[test]
    fn kill_child_streams_a_long_run() {
        let Some(out) = std::env::var_os(CHILD) else {
            return;
        };
        let result = (|| -> Result<(), Box<dyn std::error::Error>> {
            let model = DoublePendulum::default();
            let plan = common::plan(H, 1.0e4, None)?.stream_to(PathBuf::from(out));
            let throttle = common::Column::new("throttle", |_, _| {
                std::thread::sleep(Duration::from_micros(200));
                0.0
            });
            let trajectory = common::simulate(
                Spook::new(H)?,
                &model,
                &model,
                DoublePendulum::initial_state(),
                &plan,
                [throttle],
            )?;
            Ok(trajectory.outcome()?)
        })();
        std::process::exit(common::exit_status(result).into());
    }

    /// Returns a random duration below one second (a fresh `RandomState` is seeded by the OS).
    fn random_delay() -> Duration {
        Duration::from_nanos(RandomState::new().hash_one(0u8) % 1_000_000_000)
    }

    /// Starts the child writing to `out` and returns it once `out` holds a complete row.
    // The child is returned to the caller, which waits for it after sending the signal.
    #[allow(clippy::zombie_processes)]
    fn start(out: &Path) -> Child {
        let _ = std::fs::remove_file(out);
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "kill::kill_child_streams_a_long_run",
                "--nocapture",
            ])
            .args(["--test-threads", "1"])
            .env(CHILD, out)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let started = Instant::now();
        loop {
            let text = std::fs::read_to_string(out).unwrap_or_default();
            // The header and one complete row.
            if text.matches('\n').count() >= 2 {
                return child;
            }
            if started.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                let output = child.wait_with_output().unwrap();
                panic!(
                    "no row after a minute: {}",
                    String::from_utf8_lossy(&output.stderr)
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Checks the CSV the child left: the header, then rows of 13 numbers at `t = k h`; a
    /// last line without its newline is allowed if `partial` (a SIGKILL may cut the write of a
    /// full buffer mid-row) and must then be the start of a row. Returns the complete rows.
    fn check_csv(out: &Path, partial: bool) -> usize {
        let text = std::fs::read_to_string(out).unwrap();
        let (complete, tail) = match text.rfind('\n') {
            Some(end) => (&text[..end], &text[end + 1..]),
            None => panic!("not even the header is complete"),
        };
        let mut lines = complete.lines();
        assert!(lines.next().unwrap().starts_with("t,q.x1,q.y1"));
        let mut rows = 0;
        for (k, line) in lines.enumerate() {
            let values: Vec<f64> = line.split(',').map(|x| x.parse().unwrap()).collect();
            assert_eq!(values.len(), WIDTH, "row {k}: {line}");
            assert!((values[0] - k as f64 * H).abs() < 1e-9, "row {k}: {line}");
            rows += 1;
        }
        if partial {
            assert!(tail.split(',').count() <= WIDTH, "{tail}");
            assert!(
                tail.chars()
                    .all(|c| c.is_ascii_digit() || ".,-e".contains(c)),
                "{tail}"
            );
        } else {
            assert!(tail.is_empty(), "an incomplete last line: {tail}");
        }
        rows
    }

    /// Returns the output of `child` after sending it `signal`.
    fn signal(child: Child, signal: i32) -> Output {
        let pid = i32::try_from(child.id()).unwrap();
        // SAFETY: `kill` takes a pid and a signal number and touches no memory of ours.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
        child.wait_with_output().unwrap()
    }

    /// A SIGKILL at a random moment leaves every row up to the last flush readable.
    #[test]
    fn a_killed_run_leaves_its_rows_readable() {
        let out = std::env::temp_dir().join(format!("mechanism-kill-{}.csv", std::process::id()));
        let child = start(&out);
        std::thread::sleep(random_delay());
        let output = signal(child, libc::SIGKILL);
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&output.status),
            Some(9)
        );
        assert!(check_csv(&out, true) >= 1);
        std::fs::remove_file(&out).unwrap();
    }

    /// SIGINT and SIGTERM at a random moment stop the run at a step boundary: the file is
    /// complete, the exit status is 128 + the signal, and the message gives the time and the
    /// rows written.
    #[test]
    fn an_interrupted_run_finishes_its_file_and_says_where() {
        for (number, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
            let out = std::env::temp_dir().join(format!(
                "mechanism-interrupt-{}-{number}.csv",
                std::process::id()
            ));
            let child = start(&out);
            std::thread::sleep(random_delay());
            let output = signal(child, number);
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(output.status.code(), Some(code), "{stderr}");
            let rows = check_csv(&out, false);
            let expected = format!(": {rows} rows written to {}", out.display());
            assert!(
                stderr.contains("error: interrupted at t = ") && stderr.contains(&expected),
                "{stderr}"
            );
            std::fs::remove_file(&out).unwrap();
        }
    }
}
