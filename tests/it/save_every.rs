//! `--save-every DT` of the examples: rows at exactly `t = 0, DT, 2·DT, …` and at the end time,
//! for a fixed-step example (GLA in `langevin_oscillator`, on its step grid) and an adaptive one
//! (DOPRI5 in `robot_arm --case sine`, through its dense output), run with the examples' own
//! code; a `DT` off a fixed-step grid is an error, not a silent shift. `--every K` thins the
//! rows of any schedule to every K-th and the last. The kill tests stop a streamed run with
//! signals; the command-line test runs every example binary with each bad value.

#[path = "../../examples/common/mod.rs"]
mod examples_common;

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

/// The kill tests: a child process (this test binary again, running only
/// [`kill_child_streams_a_long_run`]) runs SPOOK on the double pendulum through the examples'
/// harness (`examples_common::simulate` with `Plan::stream_to`, its signal handlers and exit code) for
/// far longer than the test waits, throttled to about 5 000 rows a second by a column that
/// sleeps. The parent waits until the CSV holds a flushed row, waits a random time up to a
/// second, and sends a signal.
///
/// The child is the test binary rather than the `double_pendulum` example: `cargo test
/// --test it` does not build the examples, and an example found in `target/` could be
/// a stale build; the test binary is the code under test, with the harness included as the
/// examples include it.
#[cfg(unix)]
mod kill {
    use super::examples_common;
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
            let plan = examples_common::plan(H, 1.0e4, None)?.stream_to(PathBuf::from(out));
            let throttle = examples_common::Column::new("throttle", |_, _| {
                std::thread::sleep(Duration::from_micros(200));
                0.0
            });
            let trajectory = examples_common::simulate(
                Spook::new(H)?,
                &model,
                &model,
                DoublePendulum::initial_state(),
                &plan,
                [throttle],
            )?;
            Ok(trajectory.outcome()?)
        })();
        std::process::exit(examples_common::exit_status(result).into());
    }

    /// Returns a random duration below one second (a fresh `RandomState` is seeded by the OS).
    fn random_delay() -> Duration {
        Duration::from_nanos(RandomState::new().hash_one(0u8) % 1_000_000_000)
    }

    /// Starts the child writing to `out` and returns it once `out` holds a complete row.
    fn start(out: &Path) -> Child {
        start_child(
            "save_every::kill::kill_child_streams_a_long_run",
            CHILD,
            out,
        )
    }

    /// Starts the child test `test` (with `variable` set to `out`) and returns it once `out`
    /// holds a complete row.
    // The child is returned to the caller, which waits for it after sending the signal.
    #[allow(clippy::zombie_processes)]
    fn start_child(test: &str, variable: &str, out: &Path) -> Child {
        let _ = std::fs::remove_file(out);
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", test, "--nocapture"])
            .args(["--test-threads", "1"])
            .env(variable, out)
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

    /// The variable that makes the checkpointing child run; its value is the output file
    /// (the checkpoint is `FILE.ckpt`).
    const CHECKPOINT_CHILD: &str = "MECHANISM_CHECKPOINT_CHILD";
    /// The end time of the checkpointing child's run: 12 800 steps, about three seconds at the
    /// throttled pace, longer than the parent waits before the SIGKILL.
    const CHECKPOINT_T_END: f64 = 200.0;

    /// Runs SPOOK on the double pendulum through the harness to `CHECKPOINT_T_END`, streaming
    /// to `out` and checkpointing to `checkpoint` every 0.05 (about every third step) if
    /// given, resuming from `resume` if given; the throttle column sleeps in the child only.
    fn checkpointed_run(
        out: &Path,
        checkpoint: Option<&Path>,
        resume: Option<&Path>,
        throttled: bool,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let model = DoublePendulum::default();
        let mut plan =
            examples_common::plan(H, CHECKPOINT_T_END, None)?.stream_to(out.to_path_buf());
        plan.progress = false;
        plan.checkpoint = checkpoint.map(|file| {
            (
                file.to_path_buf(),
                mechanism::runtime::simulation::Every::Time(0.05),
            )
        });
        plan.resume = resume.map(Path::to_path_buf);
        let throttle = examples_common::Column::new("throttle", move |_, _| {
            if throttled {
                std::thread::sleep(Duration::from_micros(200));
            }
            0.0
        });
        let trajectory = examples_common::simulate(
            Spook::new(H)?,
            &model,
            &model,
            DoublePendulum::initial_state(),
            &plan,
            [throttle],
        )?;
        Ok(trajectory.outcome()?)
    }

    /// The checkpointing child's run, when the parent started it (else nothing).
    #[test]
    fn kill_child_checkpoints_a_run() {
        let Some(out) = std::env::var_os(CHECKPOINT_CHILD) else {
            return;
        };
        let out = PathBuf::from(out);
        let checkpoint = out.with_extension("ckpt");
        let result = checkpointed_run(&out, Some(&checkpoint), None, true);
        std::process::exit(examples_common::exit_status(result).into());
    }

    /// A child checkpointing every few steps is killed with SIGKILL at a random moment (often
    /// while a checkpoint is being written); the run resumed from the checkpoint it left ends
    /// with the CSV the uninterrupted run writes, byte for byte.
    #[test]
    fn a_run_killed_while_checkpointing_resumes_to_the_same_file() {
        let dir = std::env::temp_dir().join(format!("mechanism-kill-ckpt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (out, whole) = (dir.join("run.csv"), dir.join("whole.csv"));
        let checkpoint = out.with_extension("ckpt");
        let child = start_child(
            "save_every::kill::kill_child_checkpoints_a_run",
            CHECKPOINT_CHILD,
            &out,
        );
        let started = Instant::now();
        while !checkpoint.exists() && started.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(random_delay());
        let output = signal(child, libc::SIGKILL);
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&output.status),
            Some(9),
            "the child ended before the kill: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let killed_at = mechanism::runtime::checkpoint::Checkpoint::read(&checkpoint)
            .expect("the last checkpoint is whole")
            .t;
        println!("killed; resuming from the checkpoint at t = {killed_at}");
        assert!(killed_at < CHECKPOINT_T_END);
        checkpointed_run(&out, None, Some(&checkpoint), false).unwrap();
        checkpointed_run(&whole, None, None, false).unwrap();
        let (resumed, expected) = (std::fs::read(&out).unwrap(), std::fs::read(&whole).unwrap());
        assert!(
            resumed == expected,
            "the resumed file differs from the uninterrupted one"
        );
        std::fs::remove_dir_all(&dir).unwrap();
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

/// Every example binary refuses each bad value of the shared command line before it runs:
/// exit status 2, one line on stderr that says what is wrong (no panic, no backtrace, no usage
/// block), nothing on stdout, and no output file; and `water` reports a breakdown inside its
/// Fig. 6 as a result.
///
/// The binaries are those `cargo test` builds next to this test's (`target/<profile>/examples/`);
/// the list of examples is the `examples/` directory, so that a new example is not forgotten.
/// An example whose binary is missing (built without its required features, or `cargo test
/// --test it` alone, which does not build the examples) is skipped; none at all fails.
mod command_line {
    use std::path::{Path, PathBuf};
    use std::process::{Command, Output, Stdio};
    use std::time::{Duration, Instant};

    /// The bad values every example must refuse: each as the arguments of one run.
    fn bad_values(sizes: &[&str], scratch: &Path) -> Vec<Vec<String>> {
        let mut cases: Vec<Vec<String>> = Vec::new();
        for option in ["--h", "--t-end", "--save-every", "--checkpoint-every"] {
            for value in ["-1", "0", "nan", "inf", "-inf", "x"] {
                cases.push(vec![option.into(), value.into()]);
            }
        }
        for value in ["0", "-2", "1.5"] {
            cases.push(vec!["--every".into(), value.into()]);
        }
        for size in sizes {
            for value in ["0", "-3"] {
                cases.push(vec![size.to_string(), value.into()]);
            }
        }
        cases.push(vec!["--method".into(), "nosuch".into()]);
        cases.push(vec!["--no-such-option".into()]);
        let file = scratch.join("a-file");
        std::fs::write(&file, "not a directory").unwrap();
        cases.push(vec![
            "--resume".into(),
            scratch.join("no-such-checkpoint").display().to_string(),
        ]);
        for option in ["--out", "--plot", "--checkpoint"] {
            for path in [
                PathBuf::from("/proc/forbidden/x.csv"),
                file.join("x.csv"),
                scratch.to_path_buf(),
            ] {
                cases.push(vec![option.into(), path.display().to_string()]);
            }
        }
        cases.push(vec![
            "--out".into(),
            file.join("x.parquet").display().to_string(),
        ]);
        cases
    }

    /// Runs `binary` with `args` in `dir`, failing if it runs for more than 20 seconds (a
    /// bad value must be refused before the run, which takes milliseconds; the water run
    /// takes 2 s).
    fn run(binary: &Path, args: &[String], dir: &Path) -> Output {
        let mut child = Command::new(binary)
            .args(args)
            .current_dir(dir)
            .env("RUST_BACKTRACE", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while child.try_wait().unwrap().is_none() {
            if started.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                panic!("{} {args:?} ran instead of refusing", binary.display());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        child.wait_with_output().unwrap()
    }

    /// Returns the examples: the `.rs` files directly in `examples/`.
    fn examples() -> Vec<String> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|entry| {
                let path = entry.unwrap().path();
                let stem = path.file_stem()?.to_str()?.to_string();
                (path.extension()? == "rs").then_some(stem)
            })
            .collect();
        names.sort();
        names
    }

    /// Returns the files (not directories) under `dir`.
    fn files(dir: &Path) -> Vec<PathBuf> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                found.extend(files(&path));
            } else {
                found.push(path);
            }
        }
        found
    }

    /// Returns the directory of the example binaries next to this test's.
    fn binaries() -> PathBuf {
        let exe = std::env::current_exe().unwrap();
        exe.parent().unwrap().parent().unwrap().join("examples")
    }

    /// A method that breaks down inside an experiment is a result: `water --deterministic` at
    /// the paper's `n = 100` (Fig. 6, bounded by `--t-end 10`) reports Newmark-1's breakdown
    /// at t = 9.25 with its error, keeps its rows up to it, draws the figure and exits 0;
    /// the same method run alone is the user's own run, whose breakdown is an error.
    #[test]
    fn water_reports_a_breakdown_in_fig_6_as_a_result() {
        let water = binaries().join(format!("water{}", std::env::consts::EXE_SUFFIX));
        if cfg!(debug_assertions) {
            // An unoptimized water run at n = 100 takes minutes rather than 2 s.
            eprintln!("skipped: run with --release");
            return;
        }
        if !water.is_file() {
            eprintln!("skipped: no binary at {}", water.display());
            return;
        }
        let dir = std::env::temp_dir().join(format!("mechanism-water-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let args = ["--deterministic", "--n", "100", "--t-end", "10"].map(String::from);
        let output = run(&water, &args, &dir);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
        assert!(stdout.contains("T = 10,"), "{stdout}");
        let broke = "Newmark-1: broke down at t = 9.25: M + βh² ε⁻¹ Hess V1";
        assert!(stdout.contains(broke), "{stdout}");
        assert!(stdout.contains("SHAKE: 200 steps"), "{stdout}");
        let csv = std::fs::read_to_string(dir.join("out/water_newmark_1_deterministic.csv"));
        let csv = csv.unwrap();
        let last = csv.lines().last().unwrap().split(',').next().unwrap();
        // Rows every 20 steps: the last before the breakdown is step 180, t = 9 (summed).
        let t: f64 = last.parse().unwrap();
        assert!((t - 9.0).abs() < 1e-9, "{last}");
        assert!(dir.join("out/water_invariants.png").is_file());

        let mut alone = args.to_vec();
        alone.extend(["--method", "newmark-1"].map(String::from));
        let output = run(&water, &alone, &dir);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.starts_with("error: step 186 (from t = 9.2"),
            "{stderr}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Returns the arguments of a run of `example` long enough to be stopped: its own run
    /// with a far end time.
    fn long_run(example: &str) -> Vec<String> {
        let args: &[&str] = match example {
            "dna" => &["--method", "zs", "--t-end", "1e8"],
            "langevin_oscillator" => &["--t-end", "1e7"],
            "rolling_sphere" => &["--t-end", "2000"],
            "squeezer" => &["--t-end", "1000"],
            "sweep" => &["--t-end", "1e5"],
            "water" => &["--method", "shake", "--t-end", "1e6"],
            _ => &["--t-end", "1e6"],
        };
        args.iter().map(|a| a.to_string()).collect()
    }

    /// SIGTERM stops every example at a step boundary, also while it prepares its run: exit
    /// status 143 and `interrupted at t = …` in the last line; an example that streams its
    /// rows names the file and the rows in it, every one of them complete.
    #[cfg(unix)]
    #[test]
    fn every_example_stops_at_sigterm_with_its_rows_written() {
        let bin = binaries();
        let scratch = std::env::temp_dir().join(format!("mechanism-term-{}", std::process::id()));
        std::fs::create_dir_all(&scratch).unwrap();
        let mut stopped = 0;
        for name in examples() {
            let binary = bin.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
            if !binary.is_file() {
                continue;
            }
            let csv = scratch.join(format!("{name}.csv"));
            let mut args = long_run(&name);
            args.extend(["--out".to_string(), csv.display().to_string()]);
            let child = Command::new(&binary)
                .args(&args)
                .current_dir(&scratch)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            // Until the file holds a row, or a second for an example that prepares its run
            // first (magnetized_body's benchmark) or writes at the end (sweep).
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(1) {
                let text = std::fs::read_to_string(&csv).unwrap_or_default();
                if text.matches('\n').count() >= 2 {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            let pid = i32::try_from(child.id()).unwrap();
            // SAFETY: `kill` takes a pid and a signal number and touches no memory of ours.
            assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
            let output = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            let context = format!("{name} {args:?}: {stderr}");
            assert_eq!(output.status.code(), Some(143), "{context}");
            let last = stderr.trim_end().lines().last().unwrap_or("");
            // (sweep's member is named first: `ensemble member k … failed: interrupted at …`)
            assert!(last.starts_with("error: "), "{context}");
            assert!(last.contains("interrupted at t = "), "{context}");
            if let Ok(text) = std::fs::read_to_string(&csv) {
                assert!(text.ends_with('\n'), "{context}");
                let width = text.lines().next().unwrap().split(',').count();
                assert!(
                    text.lines().all(|l| l.split(',').count() == width),
                    "{context}"
                );
                let rows = text.lines().count() - 1;
                let named = format!(": {rows} rows written to {}", csv.display());
                assert!(last.ends_with(&named), "{context}");
            }
            stopped += 1;
        }
        std::fs::remove_dir_all(&scratch).unwrap();
        println!("{stopped} examples stopped by SIGTERM");
    }

    #[test]
    fn every_example_refuses_bad_values_in_one_line_before_it_runs() {
        let bin = binaries();
        let scratch = std::env::temp_dir().join(format!("mechanism-cli-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(&scratch).unwrap();
        let (mut found, mut cases) = (0, 0);
        for name in examples() {
            let binary = bin.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
            if !binary.is_file() {
                eprintln!("skipped {name}: no binary at {}", binary.display());
                continue;
            }
            found += 1;
            // The same output options everywhere, and the sizes the example has.
            let help = run(&binary, &["--help".into()], &scratch);
            assert_eq!(help.status.code(), Some(0), "{name} --help");
            let help = String::from_utf8_lossy(&help.stdout).to_string();
            for option in [
                "--out",
                "--plot",
                "--save-every",
                "--every",
                "--h ",
                "--t-end",
                "--method",
            ] {
                assert!(help.contains(option), "{name} has no {option}:\n{help}");
            }
            let sizes: Vec<&str> = ["--n", "--links", "--steps"]
                .into_iter()
                .filter(|size| help.contains(&format!("{size} <")))
                .collect();
            let dir = scratch.join(&name);
            std::fs::create_dir_all(&dir).unwrap();
            for args in bad_values(&sizes, &scratch) {
                let output = run(&binary, &args, &dir);
                let stderr = String::from_utf8_lossy(&output.stderr);
                let context = format!("{name} {args:?}: {stderr}");
                assert_eq!(output.status.code(), Some(2), "{context}");
                assert!(output.stdout.is_empty(), "{context}");
                let lines: Vec<&str> = stderr.trim_end().lines().collect();
                assert_eq!(lines.len(), 1, "{context}");
                assert!(lines[0].starts_with("error: "), "{context}");
                let what = args[0].trim_start_matches("--");
                assert!(lines[0].contains(what), "{context}");
                for word in ["panicked", "backtrace", "RUST_BACKTRACE"] {
                    assert!(!stderr.contains(word), "{context}");
                }
                assert_eq!(files(&dir), Vec::<PathBuf>::new(), "{context}");
                cases += 1;
            }
        }
        std::fs::remove_dir_all(&scratch).unwrap();
        assert!(
            found > 0,
            "no example binary in {}: run `cargo build --examples`",
            bin.display()
        );
        println!("{cases} bad command lines refused by {found} examples");
    }
}

/// Checkpoints and resume, bit for bit (issue 28, item 4): runs stopped at random steps,
/// dropped, and resumed in a fresh `Simulation` from the checkpoint file end with the same
/// `t`, `q`, `v` bits and the same CSV bytes as the uninterrupted run, for SPOOK, RATTLE,
/// stiff Z&Ss + GLA on the sparse tier and adaptive DOPRI5; and every mismatch is refused
/// with the part that differs. The random stops come from a seed printed on failure (a fresh
/// `RandomState`, or `MECHANISM_CHECKPOINT_SEED` to replay one); the tests pass for any seed.
mod checkpoint {
    use mechanism::models::{DoublePendulum, PendulumChain};
    use mechanism::runtime::checkpoint::{Checkpoint, CheckpointError, ModelIdentity};
    use mechanism::runtime::integrators::stabilized::{Dopri5, DOPRI5};
    use mechanism::runtime::simulation::{
        family, CsvSink, Every, IntegratorColumn, Mechanics, Schedule, Simulation, SimulationError,
        SparseMechanics, StateView, Stepper, StopReason,
    };
    use mechanism::runtime::{
        Configuration, Penalized, Rattle, SparseLangevin, SparseZhangSkeelStiff, Spook, State,
    };
    use std::hash::{BuildHasher, RandomState};
    use std::io::Write;
    use std::path::{Path, PathBuf};

    /// Returns the seed of this test's random stops, printed so that a failure can be
    /// replayed with `MECHANISM_CHECKPOINT_SEED`.
    fn seed(label: &str) -> u64 {
        let seed = std::env::var("MECHANISM_CHECKPOINT_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| RandomState::new().hash_one(label));
        eprintln!("{label}: MECHANISM_CHECKPOINT_SEED={seed}");
        seed
    }

    /// Returns the next number of a xorshift stream.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// Returns a fresh directory for one test's files.
    fn directory(label: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "mechanism-checkpoint-{label}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// The final `t`, `q`, `v` of a run, as bits.
    fn bits<S: StateView>(state: &S) -> (u64, Vec<u64>, Vec<u64>) {
        let bits = |x: &[f64]| x.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        (state.t().to_bits(), bits(state.q()), bits(state.v()))
    }

    /// Runs `build()` uninterrupted into a CSV, then again with checkpoints (`every`), stopped
    /// after a random number of steps, dropped (rows written after the checkpoint stay in the
    /// file, as after a kill) and resumed from the file in a fresh run, up to three times;
    /// checks that the final state and the CSV are the uninterrupted run's, bit for bit and
    /// byte for byte. Returns the number of resumes.
    fn stopped_and_resumed<'m, Model, St>(
        label: &str,
        every: Every,
        build: impl Fn() -> Simulation<'m, Model, St>,
    ) -> usize
    where
        Model: ModelIdentity + ?Sized + 'm,
        St: Stepper<Model>,
    {
        let dir = directory(label);
        let whole = dir.join("whole.csv");
        let file = |path: &Path| std::io::BufWriter::new(std::fs::File::create(path).unwrap());
        let mut run = build().write_to(CsvSink::new(file(&whole)));
        run.run().unwrap();
        let (expected, total) = (bits(run.state()), run.steps());
        run.into_output().into_inner().flush().unwrap();

        let mut random = seed(label) | 1;
        let (pieces, checkpoint) = (dir.join("pieces.csv"), dir.join("run.ckpt"));
        let mut run = build()
            .checkpoint_every(every, &checkpoint)
            .unwrap()
            .write_to(CsvSink::new(file(&pieces)));
        let mut resumes = 0;
        let mut finished = false;
        while !finished {
            if resumes < 3 {
                let stop = 1 + next(&mut random) as usize % (total / 3).max(1);
                for _ in 0..stop {
                    if run.step().unwrap() == StopReason::EndReached {
                        finished = true;
                        break;
                    }
                }
            } else {
                run.run().unwrap();
                finished = true;
            }
            if finished || !checkpoint.exists() {
                continue;
            }
            // A kill: everything of the run is dropped; its file holds rows past the
            // checkpoint (the BufWriter flushes on drop), which the resume cuts.
            drop(run);
            resumes += 1;
            let position = Checkpoint::read(&checkpoint).unwrap().output;
            run = build()
                .checkpoint_every(every, &checkpoint)
                .unwrap()
                .resume_from(&checkpoint)
                .unwrap_or_else(|e| panic!("{label}: {e}"))
                .write_to(CsvSink::resume_file(&pieces, &position).unwrap());
        }
        assert_eq!(
            bits(run.state()),
            expected,
            "{label}: the final state differs"
        );
        run.into_output().into_inner().flush().unwrap();
        let (a, b) = (
            std::fs::read(&whole).unwrap(),
            std::fs::read(&pieces).unwrap(),
        );
        assert!(a == b, "{label}: the CSV differs after {resumes} resumes");
        std::fs::remove_dir_all(&dir).unwrap();
        resumes
    }

    const H: f64 = 0.01;

    #[test]
    fn spook_resumes_bit_for_bit() {
        let model = DoublePendulum::default();
        let build = || {
            Simulation::fixed(
                &model,
                Spook::<4, 2>::new(H).unwrap(),
                DoublePendulum::initial_state(),
                3.0,
                Schedule::EveryStep,
            )
            .unwrap()
            .coordinates(DoublePendulum::COORDINATES)
            .unwrap()
            .observe(Mechanics::<_, 4, 2>::new(&model))
            .observe(IntegratorColumn::new(
                "lambda.0",
                |i: &Spook<4, 2>, _: &State<4>| i.multipliers()[0],
            ))
        };
        let resumes = stopped_and_resumed("spook", Every::Steps(7), build);
        assert!(resumes >= 1);
    }

    #[test]
    fn rattle_resumes_bit_for_bit() {
        let model = DoublePendulum::default();
        let build = || {
            Simulation::fixed(
                &model,
                Rattle::<4, 2>::new(H).unwrap(),
                DoublePendulum::initial_state(),
                3.0,
                Schedule::Every(0.05),
            )
            .unwrap()
            .observe(Mechanics::<_, 4, 2>::new(&model))
            .observe(IntegratorColumn::new(
                "averaged.0",
                |i: &Rattle<4, 2>, _: &State<4>| {
                    i.averaged_multipliers().map_or(f64::NAN, |m| m[0])
                },
            ))
        };
        let resumes = stopped_and_resumed("rattle", Every::Time(0.13), build);
        assert!(resumes >= 1);
    }

    /// Stiff Z&Ss inside GLA on the penalized chain of 20 pendula (sparse tier): the carried
    /// acceleration, the energy guard's run and the noise stream's position are restored.
    #[test]
    fn stiff_zss_with_gla_on_the_sparse_tier_resumes_bit_for_bit() {
        let chain = PendulumChain::new(20).unwrap();
        let penalized = Penalized::new(chain.clone(), 20.0);
        let build = || {
            let inner = SparseZhangSkeelStiff::new(&penalized, 0.02)
                .and_then(|z| z.with_beta(0.4))
                .unwrap();
            let gla = SparseLangevin::new(&penalized, inner, 0.02, 0.1, 0.05, 7).unwrap();
            Simulation::sparse(
                &penalized,
                gla,
                chain.tao_owhadi_state(),
                4.0,
                Schedule::Every(0.1),
            )
            .unwrap()
            .coordinates(family(&["x", "y"], chain.links()))
            .unwrap()
            .observe(SparseMechanics::new(&chain))
        };
        let resumes = stopped_and_resumed("gla", Every::Time(0.3), build);
        assert!(resumes >= 1);
    }

    /// DOPRI5 with its step-size controller and first-same-as-last stage, rows from its dense
    /// output; checkpoints every 0.25 of simulated time, whatever the steps.
    #[test]
    fn adaptive_dopri5_resumes_bit_for_bit() {
        let model = DoublePendulum::default();
        let build = || {
            let dopri = Dopri5::<4, 2>::new(DOPRI5, 1e-6, 1e-7).unwrap();
            Simulation::adaptive(
                &model,
                dopri,
                DoublePendulum::initial_state(),
                4.0,
                Schedule::Every(0.1),
            )
            .unwrap()
            .observe(Mechanics::<_, 4, 2>::new(&model))
        };
        let resumes = stopped_and_resumed("dopri5", Every::Time(0.25), build);
        assert!(resumes >= 1);
    }

    /// The other integrators that carry state: Livens (its momentum and multipliers), Newmark
    /// (its carried acceleration, Newton's warm start), RK4 (its energy guard), and SPOOK,
    /// RATTLE and SHAKE (its staggered velocity in the state) on the sparse tier.
    #[test]
    fn the_other_integrators_resume_bit_for_bit() {
        use mechanism::runtime::{Livens, Newmark, Rk4, SparseRattle, SparseShake, SparseSpook};
        let model = DoublePendulum::default();
        let start = DoublePendulum::initial_state();
        stopped_and_resumed("livens", Every::Steps(5), || {
            Simulation::fixed(
                &model,
                Livens::<4, 2>::new(H).unwrap(),
                start,
                1.0,
                Schedule::EveryStep,
            )
            .unwrap()
            .observe(IntegratorColumn::new(
                "lambda.0",
                |i: &Livens<4, 2>, _: &State<4>| i.multipliers()[0],
            ))
        });
        let penalized = Penalized::new(model, 20.0);
        stopped_and_resumed("newmark", Every::Steps(6), || {
            Simulation::fixed(
                &penalized,
                Newmark::<4>::new(H).unwrap(),
                start,
                1.0,
                Schedule::EveryStep,
            )
            .unwrap()
        });
        stopped_and_resumed("rk4", Every::Time(0.1), || {
            Simulation::fixed(
                &penalized,
                Rk4::<4>::new(0.002).unwrap(),
                start,
                1.0,
                Schedule::Every(0.01),
            )
            .unwrap()
        });
        let chain = PendulumChain::new(10).unwrap();
        stopped_and_resumed("sparse-spook", Every::Steps(9), || {
            Simulation::sparse(
                &chain,
                SparseSpook::new(&chain, H).unwrap(),
                chain.tao_owhadi_state(),
                1.0,
                Schedule::EveryStep,
            )
            .unwrap()
            .observe(SparseMechanics::new(&chain))
        });
        stopped_and_resumed("sparse-rattle", Every::Steps(4), || {
            Simulation::sparse(
                &chain,
                SparseRattle::new(&chain, H).unwrap(),
                chain.tao_owhadi_state(),
                1.0,
                Schedule::EveryStep,
            )
            .unwrap()
            .observe(SparseMechanics::new(&chain))
        });
        stopped_and_resumed("sparse-shake", Every::Time(0.07), || {
            let mut shake = SparseShake::new(&chain, H).unwrap();
            let mut start = chain.tao_owhadi_state();
            shake.stagger_velocity(&chain, &mut start).unwrap();
            Simulation::sparse(&chain, shake, start, 1.0, Schedule::EveryStep)
                .unwrap()
                .observe(SparseMechanics::new(&chain))
        });
    }

    /// An interrupt writes a checkpoint at the step boundary it stops at, so that Ctrl-C and
    /// a resume continue the run; the resumed run ends where the uninterrupted one does.
    #[test]
    fn an_interrupt_writes_a_checkpoint_to_resume_from() {
        use std::sync::atomic::{AtomicBool, Ordering};
        static STOP: AtomicBool = AtomicBool::new(false);
        let model = DoublePendulum::default();
        let dir = directory("interrupt");
        let checkpoint = dir.join("run.ckpt");
        let build = || {
            Simulation::fixed(
                &model,
                Spook::<4, 2>::new(H).unwrap(),
                DoublePendulum::initial_state(),
                1.0,
                Schedule::EveryStep,
            )
            .unwrap()
            .checkpoint_every(Every::Time(1e3), &checkpoint)
            .unwrap()
        };
        let mut whole = build();
        whole.run().unwrap();
        let mut run = build().interrupt_on(&STOP);
        let mut random = seed("interrupt") | 1;
        for _ in 0..1 + next(&mut random) % 90 {
            run.step().unwrap();
        }
        STOP.store(true, Ordering::Relaxed);
        let Err(SimulationError::Interrupted { t, .. }) = run.run() else {
            panic!("not interrupted")
        };
        STOP.store(false, Ordering::Relaxed);
        assert_eq!(
            Checkpoint::read(&checkpoint).unwrap().t.to_bits(),
            t.to_bits()
        );
        let mut resumed = build().resume_from(&checkpoint).unwrap();
        resumed.run().unwrap();
        assert_eq!(bits(resumed.state()), bits(whole.state()));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `--every K` ([`examples_common::Thin`](super::examples_common::Thin)) holds the last row back for the end of the run:
    /// an interrupted run's checkpoint is written before that row reaches the file (the resume
    /// cuts it and thins on from the checkpoint's row of the schedule), and a finished run's
    /// after (a resume from it leaves the file as it is). Either way the file is the
    /// uninterrupted run's, byte for byte, at a random stop.
    #[test]
    fn a_thinned_run_interrupted_and_resumed_writes_the_uninterrupted_rows() {
        use crate::save_every::examples_common::Thin;
        use std::sync::atomic::{AtomicBool, Ordering};
        static STOP: AtomicBool = AtomicBool::new(false);
        let model = DoublePendulum::default();
        let dir = directory("thinned");
        let (whole, pieces, checkpoint) = (
            dir.join("whole.csv"),
            dir.join("pieces.csv"),
            dir.join("run.ckpt"),
        );
        let file = |path: &Path| std::io::BufWriter::new(std::fs::File::create(path).unwrap());
        let build = || {
            Simulation::fixed(
                &model,
                Spook::<4, 2>::new(H).unwrap(),
                DoublePendulum::initial_state(),
                1.0,
                Schedule::EveryStep,
            )
            .unwrap()
            .coordinates(DoublePendulum::COORDINATES)
            .unwrap()
            .observe(Mechanics::<_, 4, 2>::new(&model))
            .checkpoint_every(Every::Steps(23), &checkpoint)
            .unwrap()
        };
        let mut run = build().write_to(Thin::new(CsvSink::new(file(&whole)), 7));
        run.run().unwrap();
        drop(run);
        let expected = std::fs::read(&whole).unwrap();
        let mut random = seed("thinned") | 1;
        // A random stop, and two that leave a row held back (neither is a kept row).
        for stop in [1 + next(&mut random) % 98, 10, 52] {
            let mut run = build()
                .interrupt_on(&STOP)
                .write_to(Thin::new(CsvSink::new(file(&pieces)), 7));
            for _ in 0..stop {
                run.step().unwrap();
            }
            STOP.store(true, Ordering::Relaxed);
            let Err(SimulationError::Interrupted { .. }) = run.step() else {
                panic!("not interrupted after {stop} steps")
            };
            STOP.store(false, Ordering::Relaxed);
            drop(run);
            // The end checkpoint of the resumed run is resumed once more: nothing changes.
            for _ in 0..2 {
                let position = Checkpoint::read(&checkpoint).unwrap().output;
                let sink = CsvSink::resume_file(&pieces, &position).unwrap();
                let mut resumed = build()
                    .resume_from(&checkpoint)
                    .unwrap()
                    .write_to(Thin::new(sink, 7));
                resumed.run().unwrap();
                drop(resumed);
                assert!(
                    std::fs::read(&pieces).unwrap() == expected,
                    "the thinned CSV differs after a stop at step {stop}"
                );
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Another model, other parameters, another integrator or setting, another schedule,
    /// another version, a damaged and a cut file: each is refused with the part that differs.
    #[test]
    fn every_mismatch_is_a_typed_error_naming_the_culprit() {
        let model = DoublePendulum::default();
        let dir = directory("mismatch");
        let checkpoint = dir.join("run.ckpt");
        let spook = |h| {
            Simulation::fixed(
                &model,
                Spook::<4, 2>::new(h).unwrap(),
                DoublePendulum::initial_state(),
                1.0,
                Schedule::EveryStep,
            )
            .unwrap()
        };
        let mut run = spook(H)
            .checkpoint_every(Every::Steps(10), &checkpoint)
            .unwrap();
        for _ in 0..25 {
            run.step().unwrap();
        }
        assert!(spook(H).resume_from(&checkpoint).is_ok());

        // Another model: the chain of pendula (another structure).
        let chain = PendulumChain::new(2).unwrap();
        let other = Simulation::sparse(
            &chain,
            mechanism::runtime::SparseSpook::new(&chain, H).unwrap(),
            chain.tao_owhadi_state(),
            1.0,
            Schedule::EveryStep,
        )
        .unwrap();
        let error = other.resume_from(&checkpoint).err().unwrap();
        assert!(
            matches!(error, CheckpointError::ModelMismatch { .. }),
            "{error}"
        );

        // Other parameters of the same model.
        let heavier = DoublePendulum { m2: 2.0, ..model };
        let error = Simulation::fixed(
            &heavier,
            Spook::<4, 2>::new(H).unwrap(),
            DoublePendulum::initial_state(),
            1.0,
            Schedule::EveryStep,
        )
        .unwrap()
        .resume_from(&checkpoint)
        .err()
        .unwrap();
        assert!(error.to_string().contains("parameter `m2`"), "{error}");

        // Another step size, another integrator.
        let error = spook(2.0 * H).resume_from(&checkpoint).err().unwrap();
        assert!(
            matches!(error, CheckpointError::IntegratorMismatch { .. }),
            "{error}"
        );
        assert!(error.to_string().contains("h = 0.02"), "{error}");
        let rattle = Simulation::fixed(
            &model,
            Rattle::<4, 2>::new(H).unwrap(),
            DoublePendulum::initial_state(),
            1.0,
            Schedule::EveryStep,
        )
        .unwrap();
        let error = rattle.resume_from(&checkpoint).err().unwrap();
        assert!(error.to_string().contains("Rattle"), "{error}");

        // Another schedule.
        let error = Simulation::fixed(
            &model,
            Spook::<4, 2>::new(H).unwrap(),
            DoublePendulum::initial_state(),
            1.0,
            Schedule::Every(0.1),
        )
        .unwrap()
        .resume_from(&checkpoint)
        .err()
        .unwrap();
        assert!(
            matches!(
                error,
                CheckpointError::RunMismatch {
                    what: "the output schedule",
                    ..
                }
            ),
            "{error}"
        );

        // Another crate version.
        let mut saved = Checkpoint::read(&checkpoint).unwrap();
        saved.crate_version = "0.0.1".into();
        let older = dir.join("older.ckpt");
        saved.write(&older).unwrap();
        let error = spook(H).resume_from(&older).err().unwrap();
        assert!(
            matches!(error, CheckpointError::VersionMismatch { .. }),
            "{error}"
        );
        assert!(error.to_string().contains("0.0.1"), "{error}");

        // A damaged file and a cut one.
        let bytes = std::fs::read(&checkpoint).unwrap();
        let mut damaged = bytes.clone();
        let middle = damaged.len() / 2;
        damaged[middle] ^= 1;
        let (bad, cut) = (dir.join("damaged.ckpt"), dir.join("cut.ckpt"));
        std::fs::write(&bad, &damaged).unwrap();
        std::fs::write(&cut, &bytes[..bytes.len() - 9]).unwrap();
        for path in [&bad, &cut] {
            let error = spook(H).resume_from(path).err().unwrap();
            assert!(matches!(error, CheckpointError::Corrupt { .. }), "{error}");
            assert!(
                error.to_string().contains(&path.display().to_string()),
                "{error}"
            );
        }
        let missing = dir.join("missing.ckpt");
        let error = spook(H).resume_from(&missing).err().unwrap();
        assert!(matches!(error, CheckpointError::Io { .. }), "{error}");

        // Another output file: an edited one, a fresh one, another run's.
        let csv = dir.join("run.csv");
        let writer = std::io::BufWriter::new(std::fs::File::create(&csv).unwrap());
        let mut run = spook(H)
            .checkpoint_every(Every::Steps(10), &checkpoint)
            .unwrap()
            .write_to(CsvSink::new(writer));
        for _ in 0..25 {
            run.step().unwrap();
        }
        drop(run);
        let position = Checkpoint::read(&checkpoint).unwrap().output;
        let mut text = std::fs::read(&csv).unwrap();
        text[40] = if text[40] == b'1' { b'2' } else { b'1' };
        std::fs::write(&csv, &text).unwrap();
        let error = CsvSink::resume_file(&csv, &position).err().unwrap();
        assert!(
            error
                .to_string()
                .contains("not the file the checkpointed run wrote"),
            "{error}"
        );
        let mut fresh = spook(H)
            .resume_from(&checkpoint)
            .unwrap()
            .write_to(CsvSink::new(Vec::new()));
        let Err(SimulationError::Checkpoint(error)) = fresh.step() else {
            panic!("a fresh CSV continued a checkpoint");
        };
        assert!(matches!(error, CheckpointError::Output { .. }), "{error}");
        assert!(
            error.to_string().contains("CsvSink::resume_file"),
            "{error}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
