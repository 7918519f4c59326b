//! The ladder of rigid rods of Lacoursière (2007) §6 on the sparse tier: `L` square cells of
//! rods (centre of mass and unit direction per rod, `3L + 1` rods, `4L + 1` pin joints, `L`
//! closed loops), pinned at one corner, released horizontally at rest and stepped by SPOOK with
//! one sparse `LDLᵀ` per step (`runtime::SparseSpook`). The model is `mechanism::models::Ladder`,
//! written with `mechanism!` families (rows for the joints by filters and bindings, `L` an
//! argument of its `new`), which `tests/it/families/` checks against the hand-written
//! `runtime::reference::SpookLadder`.
//!
//! ```sh
//! cargo run --release --example ladder                        # L = 20, h = 1/60, T = 10
//! cargo run --release --example ladder -- --links 1000 --t-end 2 --every 10
//! cargo run --release --example ladder -- --method rk4 --t-end 5   # RK4 + Baumgarte
//! cargo run --release --example ladder -- --animate out/ladder.gif
//! cargo run --release --example ladder -- --links 1000 --t-end 2 --animate out/ladder_1000.gif
//! cargo run --release --example ladder -- --table             # the figures of §6
//! ```
//!
//! The CSV has the examples' columns `t`, `q.*`, `v.*`, `energy`, `residual.position`,
//! `residual.velocity` (`q.x[r]`, `q.y[r]`, `q.ux[r]`, `q.uy[r]` per rod `r`, 0-based), then
//! `residual.rms` (the RMS of all constraint rows) and `speed.max` (the largest speed of a rod
//! end: the whiplash). The plot shows the energy, the largest end speed and the RMS violation
//! against time.
//!
//! `--method rk4` and `--method rattle` run the paper's contrasts instead: RK4 on the index-1
//! formulation with Baumgarte's term `g̈ + 2γġ + γ²g = 0` (`--gamma`, default 10; Ascher et al.
//! 1995, eq. 2.1),
//! one sparse `LDLᵀ` of `[[M, Gᵀ], [G, 0]]` per stage (`runtime::SparseStabilizedRk`; the sparse
//! model needs `SparseHolonomicKinematics`), and RATTLE, Newton on the multipliers with a sparse
//! LU per iteration (`runtime::SparseRattle`).
//!
//! `--table` reproduces §6: (a) no blow-up at `h = 1/20` for `L = 20` over `T = 30`; (b) Fig. 6,
//! the average violation `⟨‖g‖⟩` against `h` with its fitted slope (paper: `O(h²)`); (c) Fig. 7,
//! the CPU time per step against `L` from 10 to 1000 with its fitted exponent (paper: linear);
//! (d) the whiplash: SPOOK against RK4 + Baumgarte with `γ = 10` and `γ = 1/h` and against
//! RATTLE (SHAKE's positions; `shared/EXPERIMENTS-M2.md` §A.5), which the paper says "break
//! down completely"; (e) the
//! `L = 10` and `L = 100` runs of Figs. 4–5. It writes `out/ladder_fig6.png`,
//! `out/ladder_fig7.png`, `out/ladder_whiplash.png` and `out/ladder_fig45.png`. Parameters:
//! `m = 10`, `l = 1`, `J = m l²/12`, `g = 9.81`, `ε = 1e-8`, `τ = 2h`
//! (`shared/EXPERIMENTS-M2.md` §A).
use mechanism_examples as common;
#[path = "ladder/plots.rs"]
mod plots;
#[path = "ladder/tables.rs"]
mod tables;

use std::error::Error;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use mechanism::models::Ladder;
use mechanism::runtime::integrators::stabilized::{Baumgarte, SparseStabilizedRk, RK4};
use mechanism::runtime::model::{SparseHolonomic, SparseInertia};
use mechanism::runtime::simulation::{
    family, Column, Schedule, Simulation, SimulationError, Sink, SparseMechanics, Table,
};
use mechanism::runtime::{DynState, SparseIntegrator, SparseRattle, SparseSpook};

use common::{exit_code, RunOptions, Thin};
use plots::{plot_run, scene};
use tables::tables;

/// Which integrator to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Method {
    /// SPOOK (Lacoursière 2007, eq. 29), one sparse LDLᵀ per step.
    Spook,
    /// RK4 on the index-1 formulation with Baumgarte's term g̈ + 2γġ + γ²g = 0 (Ascher et al.
    /// 1995, eq. 2.1; `--gamma`), one sparse LDLᵀ per stage: the paper's contrast.
    Rk4,
    /// RATTLE (SHAKE's positions with a velocity projection), Newton on the multipliers with a
    /// sparse LU per iteration, tolerance 1e-10: the paper's other contrast, "plain SHAKE".
    Rattle,
}

impl Method {
    /// Returns the method's integrator for `ladder` with step size `h`; `gamma` is Baumgarte's
    /// rate for RK4.
    fn integrator(
        self,
        ladder: &Ladder,
        h: f64,
        gamma: f64,
    ) -> Result<Box<dyn SparseIntegrator<Ladder>>, Box<dyn Error>> {
        Ok(match self {
            Method::Spook => Box::new(SparseSpook::new(ladder, h)?),
            Method::Rk4 => Box::new(
                SparseStabilizedRk::new(ladder, RK4, h)?
                    .with_baumgarte(Baumgarte::critically_damped(gamma)?),
            ),
            Method::Rattle => Box::new(SparseRattle::new(ladder, h)?.with_tolerance(1e-10)?),
        })
    }

    /// Returns the method's name for output.
    fn label(self, gamma: f64) -> String {
        match self {
            Method::Spook => "SPOOK".to_string(),
            Method::Rk4 => format!("RK4 + Baumgarte (γ = {gamma})"),
            Method::Rattle => "RATTLE (SHAKE's positions)".to_string(),
        }
    }
}

/// Simulates the SPOOK ladder of rods and writes a CSV file and a plot.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Integrator.
    #[arg(long, value_enum, default_value_t = Method::Spook)]
    method: Method,
    #[command(flatten)]
    run: RunOptions,
    /// Baumgarte's rate γ of `--method rk4` (α1 = 2γ, α0 = γ²).
    #[arg(long, default_value_t = 10.0)]
    gamma: f64,
    /// Number of links L (square cells) of the ladder.
    #[arg(long, default_value_t = 20, value_parser = common::cli::count, allow_negative_numbers = true)]
    links: usize,
    /// Print the figure data of §6 beside the paper's claims instead of one run.
    #[arg(long)]
    table: bool,
}

fn main() -> ExitCode {
    exit_code(run(&common::cli::parse::<Args>()))
}

fn run(args: &Args) -> Result<(), Box<dyn Error>> {
    if args.table {
        args.run.refuse_checkpoints(
            "ladder --table",
            "it computes a table of many short runs; checkpoint a single --method run instead",
        )?;
        return tables();
    }
    let (h, t_end) = (args.run.h_or(1.0 / 60.0), args.run.t_end_or(10.0));
    let ladder = Ladder::new(args.links)?;
    let csv = args.run.csv_or("ladder");
    let png = args.run.png_or("ladder");
    let plan = args.run.plan(h, t_end)?.stream_to(csv.clone());
    let (steps, every) = (plan.steps, plan.every);
    // The rows go to the file while the run goes (every --every-th), so that a killed run
    // leaves them; a resumed run continues the file of its checkpoint.
    let sink = Thin::new(common::plan_sink(&plan)?, every);
    let mut samples = Vec::new();
    // The configurations for --animate (every 1/20 time unit on the step grid) and --paths
    // (every step), kept apart from the CSV's rows.
    let mut motion = Table::default();
    let stride = match (&args.run.animate, &args.run.paths) {
        (_, Some(_)) => Some(1),
        (Some(_), None) => Some((0.05 / h).round().max(1.0) as usize),
        (None, None) => None,
    };
    if stride.is_some() {
        let coordinates = family(&["x", "y", "ux", "uy"], ladder.rods());
        let columns: Vec<String> = std::iter::once("t".to_string())
            .chain(coordinates.iter().map(|c| format!("q.{c}")))
            .collect();
        motion.begin(&columns, None)?;
    }
    let mut row = Vec::new();
    let integrator = args.method.integrator(&ladder, h, args.gamma)?;
    let (mut sink, outcome) = simulate(
        &ladder,
        integrator,
        (h, steps),
        plan.schedule.clone(),
        sink,
        Some(&plan),
        |step, state, sample| {
            if step % every == 0 || step == steps {
                samples.push(sample);
            }
            if stride.is_some_and(|k| step % k == 0) {
                row.clear();
                row.push(state.t);
                row.extend_from_slice(&state.q);
                let _ = Sink::row(&mut motion, &row); // a Table grows; it does not fail
            }
        },
    )?;
    sink.finish()?; // also after a failed run: the rows up to the failure stay readable
    let label = args.method.label(args.gamma);
    plot_run(&png, &label, &ladder, h, &samples)?;
    let title = format!("{label}, ladder L = {}", ladder.links());
    args.run.draw_motion(&title, &motion, &scene(&ladder))?;
    println!(
        "{label}, ladder L = {} ({} rods, {} coordinates, {} rows), h = {h:.5}, t = 0 … {:.3}",
        ladder.links(),
        ladder.rods(),
        ladder.coordinate_count(),
        ladder.constraint_count(),
        samples.last().map_or(0.0, |s| s.t)
    );
    let max = |f: fn(&Sample) -> f64| samples.iter().map(f).fold(0.0, f64::max);
    println!(
        "  E(end) − E(0)       = {:.4e}",
        samples.last().map_or(0.0, |s| s.energy) - samples[0].energy
    );
    println!("  max RMS violation   = {:.3e}", max(|s| s.rms));
    println!("  max end speed       = {:.3}", max(|s| s.speed));
    println!(
        "wrote {} ({} rows) and {}",
        csv.display(),
        sink.written(),
        png.display()
    );
    outcome
        .map_err(|error| common::interrupted(&common::thinned(error, sink.written()), &csv).into())
}

/// What is recorded of the ladder at one time.
#[derive(Clone, Copy, Debug)]
struct Sample {
    t: f64,
    energy: f64,
    rms: f64,
    speed: f64,
}

/// Returns the observables of `state` that the plots and summaries use: energy, RMS
/// violation and the largest end speed (the residuals at both levels are the driver's
/// [`SparseMechanics`]).
fn observe(ladder: &Ladder, state: &DynState, g: &mut [f64], jac: &mut [f64]) -> Sample {
    ladder.constraints_and_jacobian(&state.q, state.t, g, jac);
    Sample {
        t: state.t,
        energy: ladder.energy(&state.q, &state.v),
        rms: (g.iter().map(|g| g * g).sum::<f64>() / g.len() as f64).sqrt(),
        speed: ladder.largest_end_speed(&state.v),
    }
}

/// Runs `integrator` (built for `ladder`) from the horizontal start for `steps` steps of `h`
/// through the driver ([`Simulation::sparse`]): rows of `schedule` (the CSV contract: `t`,
/// `q.*`, `v.*`, `energy`, `residual.position`, `residual.velocity`, then `residual.rms` and
/// `speed.max`) go into `sink`, and `record` gets the step number, the state and its
/// [`Sample`] at step 0 and after every step (of a resumed run: from the checkpoint on, counted
/// from it); with a `plan`, its checkpoints and resume (`--checkpoint`, `--resume`). Returns the
/// sink with the rows up to the end or a failed step, and the run's outcome.
fn simulate<K: Sink>(
    ladder: &Ladder,
    integrator: Box<dyn SparseIntegrator<Ladder>>,
    (h, steps): (f64, usize),
    schedule: Schedule,
    sink: K,
    plan: Option<&common::Plan>,
    mut record: impl FnMut(usize, &DynState, Sample),
) -> Result<(K, Result<(), SimulationError>), Box<dyn Error>> {
    let start = ladder.horizontal_state();
    let (m, entries) = (ladder.constraint_count(), ladder.jacobian_pattern().len());
    let (mut g, mut jac) = (vec![0.0; m], vec![0.0; entries]);
    record(0, &start, observe(ladder, &start, &mut g, &mut jac));
    let mut step = 0;
    let (mut g_rms, mut jac_rms) = (vec![0.0; m], vec![0.0; entries]);
    let mut run = Simulation::sparse(ladder, integrator, start, steps as f64 * h, schedule)?
        .coordinates(family(&["x", "y", "ux", "uy"], ladder.rods()))?
        .observe(SparseMechanics::new(ladder))
        .observe(Column::new("residual.rms", move |s: &DynState| {
            observe(ladder, s, &mut g_rms, &mut jac_rms).rms
        }))
        .observe(Column::new("speed.max", |s: &DynState| {
            ladder.largest_end_speed(&s.v)
        }))
        .on_step(move |_, state| {
            step += 1;
            record(step, state, observe(ladder, state, &mut g, &mut jac));
        })
        .interrupt_on(common::interrupt_flag())
        .write_to(sink);
    if let Some(plan) = plan {
        run = common::with_checkpoints(run, plan)?;
    }
    if steps as f64 * h > 1.0 {
        run = run.with_progress("ladder");
    }
    let outcome = run.run();
    Ok((run.into_output(), outcome.map(|_| ())))
}

/// Runs [`simulate`] without output rows, for the tables: `record` sees every step; a failed
/// step is the integrator's error.
fn track(
    ladder: &Ladder,
    integrator: Box<dyn SparseIntegrator<Ladder>>,
    span: (f64, usize),
    mut record: impl FnMut(usize, Sample),
) -> Result<(), Box<dyn Error>> {
    let schedule = Schedule::EveryNthStep(span.1.max(1));
    let record = |step, _: &DynState, sample| record(step, sample);
    let (_, outcome) = simulate(
        ladder,
        integrator,
        span,
        schedule,
        Table::default(),
        None,
        record,
    )?;
    outcome.map_err(|error| match error {
        SimulationError::Step { source, .. } => source.into(),
        other => other.into(),
    })
}

/// Returns SPOOK with step size `h` for `ladder`, as the figures run it.
fn spook(ladder: &Ladder, h: f64) -> Result<Box<dyn SparseIntegrator<Ladder>>, Box<dyn Error>> {
    Method::Spook.integrator(ladder, h, 0.0)
}
