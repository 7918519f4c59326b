//! The work of a few reference runs as `insta` snapshots (`tests/it/snapshots/`): steps, linear
//! systems factored and Newton iterations, summed from each step's `StepReport`, and the step
//! counts of an adaptive run. A change to an integrator's cost shows up in review as a changed
//! snapshot; `cargo insta review` accepts it (in CI, with `CI` set, a changed one fails).

use std::fmt::Write;

use mechanism_runtime::integrators::stabilized::{Dopri5, PostStabilization, DOPRI5};
use mechanism_runtime::reference::double_pendulum::{initial_state, DoublePendulum};
use mechanism_runtime::reference::robot_arm::{self, RobotArm};
use mechanism_runtime::reference::{PendulumChain, SpookLadder};
use mechanism_runtime::{
    DynState, Integrator, Penalized, Rattle, SparseIntegrator, SparseRattle, SparseSpook,
    SparseZhangSkeel, Spook, State, StepReport,
};

/// The work of a run: its steps and the sums of their reports.
#[derive(Default)]
struct Work {
    steps: usize,
    factorizations: u64,
    newton_iterations: u64,
}

impl Work {
    fn add(&mut self, report: StepReport) {
        self.steps += 1;
        self.factorizations += u64::from(report.factorizations);
        self.newton_iterations += u64::from(report.newton_iterations);
    }

    fn table(&self, run: &str) -> String {
        let mut text = String::new();
        writeln!(text, "run: {run}").unwrap();
        writeln!(text, "steps: {}", self.steps).unwrap();
        writeln!(text, "factorizations: {}", self.factorizations).unwrap();
        write!(text, "newton iterations: {}", self.newton_iterations).unwrap();
        text
    }
}

/// Runs `steps` steps of a fixed-size integrator and returns their work.
fn fixed<I, Model, const N: usize>(
    mut integrator: I,
    model: &Model,
    mut state: State<N>,
    steps: usize,
) -> Work
where
    I: Integrator<Model, N>,
{
    let mut work = Work::default();
    for _ in 0..steps {
        work.add(integrator.step(model, &mut state).unwrap());
    }
    work
}

/// Runs `steps` steps of a sparse-tier integrator and returns their work.
fn sparse<I, Model>(mut integrator: I, model: &Model, mut state: DynState, steps: usize) -> Work
where
    I: SparseIntegrator<Model>,
{
    let mut work = Work::default();
    for _ in 0..steps {
        work.add(integrator.step(model, &mut state).unwrap());
    }
    work
}

#[test]
fn spook_double_pendulum() {
    let run = "SPOOK, double pendulum (Tao–Owhadi §4.1), h = 0.01, 1000 steps";
    let model = DoublePendulum::default();
    let work = fixed(
        Spook::<4, 2>::new(0.01).unwrap(),
        &model,
        initial_state(),
        1000,
    );
    insta::assert_snapshot!(work.table(run));
}

#[test]
fn rattle_double_pendulum() {
    let run = "RATTLE, double pendulum (Tao–Owhadi §4.1), h = 0.01, 1000 steps";
    let model = DoublePendulum::default();
    let work = fixed(
        Rattle::<4, 2>::new(0.01).unwrap(),
        &model,
        initial_state(),
        1000,
    );
    insta::assert_snapshot!(work.table(run));
}

#[test]
fn sparse_rattle_chain() {
    let run = "sparse RATTLE, chain of 10 (Tao–Owhadi §4.2), h = 0.01, 500 steps";
    let chain = PendulumChain::tao_owhadi(10);
    let start = chain.tao_owhadi_state();
    let work = sparse(SparseRattle::new(&chain, 0.01).unwrap(), &chain, start, 500);
    insta::assert_snapshot!(work.table(run));
}

#[test]
fn sparse_zhang_skeel_ladder() {
    let run = "sparse Z&S, ladder of 1 penalized at omega = 20, h = 1/600, 1000 steps";
    let model = Penalized::new(SpookLadder::new(1), 20.0);
    let start = model.model.horizontal_state();
    let work = sparse(
        SparseZhangSkeel::new(&model, 1.0 / 600.0).unwrap(),
        &model,
        start,
        1000,
    );
    insta::assert_snapshot!(work.table(run));
}

#[test]
fn sparse_spook_ladder() {
    let run = "sparse SPOOK, ladder of 10 (Lacoursière 2007 §6), h = 1/600, 1000 steps";
    let ladder = SpookLadder::new(10);
    let start = ladder.horizontal_state();
    let work = sparse(
        SparseSpook::new(&ladder, 1.0 / 600.0).unwrap(),
        &ladder,
        start,
        1000,
    );
    insta::assert_snapshot!(work.table(run));
}

#[test]
fn dopri5_robot_arm() {
    // Table 6.3's setting at ω = 1 with S-both², to t = 10.
    let arm = RobotArm::case_two(1.0);
    let mut dopri = Dopri5::<2, 1>::new(DOPRI5, 1e-5, 1e-6)
        .unwrap()
        .with_post_stabilization(PostStabilization::BothTwice);
    let mut state = robot_arm::initial_state();
    let stats = dopri.advance_to(&arm, &mut state, 10.0, |_| {}).unwrap();
    let table = format!(
        "run: DOPRI5 + S-both², robot arm case II (omega = 1), TOL = 1e-5, atol = 1e-6, t = 10\n\
         accepted: {}\nrejected: {}\nevaluations: {}",
        stats.accepted, stats.rejected, stats.evaluations
    );
    insta::assert_snapshot!(table);
}
