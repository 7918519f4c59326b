//! The kill tests: a child process (this test binary again, running only
//! [`kill_child_streams_a_long_run`]) runs SPOOK on the double pendulum through the examples'
//! harness (`examples_common::simulate` with `Plan::stream_to`, its signal handlers and exit code) for
//! far longer than the test waits, throttled to about 5 000 rows a second by a column that
//! sleeps. The parent waits until the CSV holds a flushed row, waits a random time up to a
//! second, and sends a signal.
//!
//! The child is the test binary rather than the `double_pendulum` example: `cargo test
//! --test it` does not build the examples, and an example found in `target/` could be
//! a stale build; the test binary is the code under test, with the harness
//! (`mechanism-examples`) linked as the examples link it.

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
    let mut plan = examples_common::plan(H, CHECKPOINT_T_END, None)?.stream_to(out.to_path_buf());
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
