//! Checkpoints and resume, bit for bit (issue 28, item 4): runs stopped at random steps,
//! dropped, and resumed in a fresh `Simulation` from the checkpoint file end with the same
//! `t`, `q`, `v` bits and the same CSV bytes as the uninterrupted run, for SPOOK, RATTLE,
//! stiff Z&Ss + GLA on the sparse tier and adaptive DOPRI5; and every mismatch is refused
//! with the part that differs. The random stops come from a seed printed on failure (a fresh
//! `RandomState`, or `MECHANISM_CHECKPOINT_SEED` to replay one); the tests pass for any seed.

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
            |i: &Rattle<4, 2>, _: &State<4>| i.averaged_multipliers().map_or(f64::NAN, |m| m[0]),
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
