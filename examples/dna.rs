//! The DNA Morse chain of Tao–Owhadi (2014) §4.4 (eq. 31, Fig. 8): `N = 200` base pairs whose
//! opening angles `θ_k` are joined by linear springs (periodic ends) and held by a Morse
//! potential `εU(θ)` with metastable states at `θ* = arccos(0.7) ≈ 0.795` (closed) and
//! `2π − θ* ≈ 5.49` (open), stepped by full Zhang–Skeel (Z&S, eq. 3) and its simplification
//! (Z&Ss) at `h = 2` against velocity Verlet at `h = 0.2`, with the slow variable
//! `θ̄ = Σθ_k/N`.
//!
//! ```sh
//! cargo run --release --example dna                        # Fig. 8: Z&S, Z&Ss and Verlet, T = 3000
//! cargo run --release --example dna -- --method zs --t-end 1000 --save-every 10
//! cargo run --release --example dna -- --method verlet --seed 3
//! cargo run --release --example dna -- --stability         # T = 2·10⁴, seeds 1–8
//! ```
//!
//! The model is `mechanism::models::DnaChain`, written with `mechanism!` families;
//! `tests/it/dna.rs` checks its derivatives against the closed forms of
//! `runtime::reference::dna_chain` and Z&S's order. The paper's parameters are the defaults
//! (`a = 7`, `x0 = 0.3`, `ε = 1/1400`, `β = 0.3`); its choices and ambiguities are resolved as
//! in `shared/EXPERIMENTS-M2.md` §E: periodic ends (E1), `T = 3000` (E2), `θ_k(0) = 0.8 +
//! 0.1 ξ_k` with `ξ_k` standard normal from the ChaCha8 stream of `--seed` (E3, the same `ξ`
//! for every method), `θ̇_k(0) = cos(4πk/N)/√N` for `k = 1 … N` (E4), Z&S's energy `H(x_k,
//! v_k)` (E5), `θ̄` not wrapped (E6).
//!
//! One run (`--method`) writes the CSV contract, `t`, `q.theta[0]` … `q.theta[n-1]`,
//! `v.theta[0]` …, `energy`, `residual.position`, `residual.velocity` (zero: the chain has no
//! constraints), then `theta.mean` (`θ̄`) and `theta.mean.rate` (`dθ̄/dt`), and a plot of
//! `θ̄(t)` and `H(t)`. Without `--method`, or with `--figure`, it runs the comparison of
//! Fig. 8 from one seed — Z&S (`h = 2`), Z&Ss (`h = 2`) and Verlet (`h = 0.2`) — and writes
//! `θ̄(t)`, the phase portrait `(θ̄, dθ̄/dt)` and `H(t)` of all three (`out/dna_fig8.png`,
//! the traces in `out/dna_fig8.csv`) and a table of the transition times, the energies and
//! the CPU times beside the paper's.
//!
//! Measured with `cargo run --release --example dna` (seed 1, `H(0)` = 2.000): Verlet's `θ̄`
//! first exceeds 4.3 at `t` = 135 and falls back below it at 239 (pilot: 134–142 and
//! 235–242), Z&S's at 154 and 258, Z&Ss's at 182 and 302, and all three are back below 1.0
//! (the closed state) by `t` = 426–498; later transitions differ, the system being chaotic.
//! `H` drops to 0.620 after Z&S's first step (pilot: 0.63 from 2.06) and averages 1.31 (Z&S)
//! and 1.24 (Z&Ss) against Verlet's 1.98, whose `H` stays within 0.046 of `H(0)`: "the Z&S
//! energy is lower than the benchmark because fast oscillations are damped by large
//! time-steps". Verlet takes 2.4–3.0× Z&S's CPU time here (0.09–0.12 s against 0.03–0.04 s,
//! over repeated invocations on a shared machine), where the paper has 7.2× (23.26 s against
//! 3.24 s): with a sparse `LDLᵀ` of the cyclic tridiagonal `I + βh² Hess V` and the `a·V‴·a`
//! term, a Z&S step costs 3.3–4.2 Verlet steps, the paper's 1.4.
//!
//! # Stability at `h = 2`: what we measured, and what to do
//!
//! The paper runs Z&S at `h = 2`, "near the stability limit", for a time it does not state.
//! `--stability` runs each method for `T = 2·10⁴` from eight seeds and reports when a run
//! fails: the driver stops at the integrator's typed error (`SimulationError::Step` with the
//! step, its time and the `StepError`) — here `NonFinite` once the state overflows — and the
//! table also gives the first time `H` exceeded `10 H(0)`, where the blow-up starts.
//! Measured with `cargo run --release --example dna -- --stability` (seeds 1–8, `N = 200`):
//!
//! | method | runs that diverged | `H > 10 H(0)` first at `t` | the driver's error |
//! |---|---|---|---|
//! | full Z&S, `h = 2`, `β = 0.3` | 8/8 | 4590–7588 | at `t` = 4624–7634: `NonFinite { quantity: "third contraction" }` |
//! | Z&Ss, `h = 2`, `β = 0.3` | 0/8 | — (max `H` ≤ 1.033 `H(0)`) | — |
//! | full Z&S, `h = 1`, `β = 0.3` | 0/8 | — (max `H` = `H(0)`, the start) | — |
//! | full Z&S, `h = 2`, `β = 0.5` | 8/8 | 32–4974 | the same error |
//! | full Z&S, `h = 2`, `β = 0.25` | 8/8 | 2076–3232 | the same error |
//! | Z&Ss, `h = 2`, `β = 0.3`, to `T = 10⁵` | 8/8 | 39372–76026 | none: the state stays finite while `H` grows to 1e45–1e112 |
//! | full Z&S, `h = 1`, `β = 0.3`, to `T = 10⁵` | 0/8 | — (max `H` = `H(0)`) | — |
//!
//! (the last two rows with `--stability --t-end 100000`, 43 s). The pilot of EXPERIMENTS-M2
//! §E.5, another generator, saw the same: full Z&S at `h = 2` diverged at `t` = 4142–9286 in
//! 8/8 runs, Z&Ss at `h = 2` in one run continued to `10⁵`, Z&S at `h = 1` in none. The table
//! was measured before the integrators had an energy guard; since then a diverging run ends with
//! the typed `StepError::EnergyDiverged` once `|H − H(0)|` exceeds ten times the run's energy
//! scale (`EnergyGuard`), long before the state overflows: from seed 1, Z&Ss at `t = 43 298`
//! with `H` at most `195 H(0)` before the refused step, full Z&S at `t = 5972` with at most
//! `72 H(0)` (`tests/it/dna.rs`). The blow-up is fast — about
//! 20–50 time units from `H > 10 H(0)` to overflow — and it is nonlinear: each of these `β`
//! is in the linearly unconditionally stable range `β ≥ ¼`, and the simplified method, which
//! differs only by the correction `−½β²h⁴ M⁻¹(a·V‴·a)`, stayed below `1.04 H(0)`. So, to run
//! this chain for long times at large steps:
//!
//! - for runs up to `T ≈ 3·10⁴`, use **Z&Ss at `h = 2`**: stable in every run to `2·10⁴`,
//!   and cheaper per step (0.64× Z&S's time), but diverged in every run between `t ≈ 4·10⁴`
//!   and `7.6·10⁴`;
//! - for longer runs, full Z&S at **`h = 1`**: stable in every run to `10⁵`, at twice the
//!   steps;
//! - do **not** raise `β` to stabilize full Z&S: `β = 0.5` diverged sooner than `β = 0.3`
//!   (as early as `t = 32`; the correction grows as `β²`), and `β = 0.25` sooner too: of the
//!   three, the paper's `β = 0.3` lasted longest;
//! - keep full Z&S at `h = 2` to runs of `T ≲ 4000` (the paper's Fig. 8, our `T = 3000`).
//!
//! `--figure`'s CPU times are measured in the same run, best of `--repeat` (5) runs through the
//! driver writing no rows; the paper's (Matlab) are Verlet 23.26 s and Z&S 3.24 s, ratio 7.2.
use mechanism_examples as common;
#[path = "dna/figure.rs"]
mod figure;
#[path = "dna/stability.rs"]
mod stability;

use std::cell::RefCell;
use std::error::Error;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, ValueEnum};
use mechanism::models::DnaChain;
use mechanism::pictures::{draw_panels, Panel, Series};
use mechanism::runtime::simulation::{
    family, Column, Schedule, Simulation, SimulationError, Sink, SparseMechanics,
};
use mechanism::runtime::{
    DynState, SparseIntegrator, SparseVerlet, SparseZhangSkeel, SparseZhangSkeelSimplified,
    StepError,
};

use common::{exit_code, RunOptions, Thin};
use figure::figure;
use stability::stability;

/// Which integrator to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Method {
    /// Full Zhang–Skeel (Tao–Owhadi eq. 3), with the `a·V‴·a` term; default h = 2.
    Zs,
    /// Simplified Zhang–Skeel (Tao–Owhadi eq. 18), without it; default h = 2.
    Zss,
    /// Velocity Verlet, the paper's benchmark; default h = 0.2.
    Verlet,
}

impl Method {
    /// Returns the method's name for output.
    fn label(self) -> &'static str {
        match self {
            Method::Zs => "Z&S",
            Method::Zss => "Z&Ss",
            Method::Verlet => "Verlet",
        }
    }

    /// Returns the paper's step size for the method (near its stability limit, §4.4).
    fn paper_h(self) -> f64 {
        match self {
            Method::Zs | Method::Zss => 2.0,
            Method::Verlet => 0.2,
        }
    }

    /// Returns the method's integrator for `chain` at step `h` (`β` for Z&S and Z&Ss).
    fn integrator(
        self,
        chain: &DnaChain,
        h: f64,
        beta: f64,
    ) -> Result<Box<dyn SparseIntegrator<DnaChain>>, StepError> {
        Ok(match self {
            Method::Zs => Box::new(SparseZhangSkeel::new(chain, h)?.with_beta(beta)?),
            Method::Zss => Box::new(SparseZhangSkeelSimplified::new(chain, h)?.with_beta(beta)?),
            Method::Verlet => Box::new(SparseVerlet::new(chain, h)?),
        })
    }
}

/// Simulates Tao–Owhadi's DNA Morse chain and writes a CSV file.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Integrator of one run [default: the comparison of Fig. 8, as --figure].
    #[arg(long, value_enum)]
    method: Option<Method>,
    #[command(flatten)]
    run: RunOptions,
    /// Number of base pairs N.
    #[arg(long, default_value_t = 200, value_parser = common::cli::count, allow_negative_numbers = true)]
    n: usize,
    /// Seed of the initial angles' normal draws (the first seed of --stability).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Parameter β of Z&S and Z&Ss.
    #[arg(long, default_value_t = 0.3, allow_negative_numbers = true)]
    beta: f64,
    /// Reproduce Fig. 8 (Z&S and Z&Ss at h = 2, Verlet at h = 0.2, T = 3000) with its
    /// transition times, energies and CPU times; uses --n, --seed, --beta and --t-end.
    #[arg(long)]
    figure: bool,
    /// Run full Z&S (h = 2 and 1), Z&Ss (h = 2) and Z&S with β = 0.5 (h = 2) to T = 2·10⁴
    /// from --seeds seeds and report when they diverge; uses --n, --seed, --beta and --t-end.
    #[arg(long)]
    stability: bool,
    /// Number of seeds of --stability (--seed, --seed + 1, …).
    #[arg(long, default_value_t = 8)]
    seeds: u64,
    /// Repetitions of the timing runs of --figure (the best is reported).
    #[arg(long, default_value_t = 5)]
    repeat: usize,
}

/// The settings of one run.
#[derive(Clone, Copy, Debug)]
struct Setup {
    method: Method,
    h: f64,
    beta: f64,
}

impl Setup {
    /// Returns the run's name for output, e.g. `Z&S h = 2`.
    fn label(&self) -> String {
        format!("{} h = {}", self.method.label(), self.h)
    }
}

/// The slow variables after every step: time, `θ̄`, `dθ̄/dt` and `H`.
#[derive(Clone, Debug, Default)]
struct Trace {
    t: Vec<f64>,
    mean: Vec<f64>,
    rate: Vec<f64>,
    energy: Vec<f64>,
}

impl Trace {
    /// Adds `state` of `chain`.
    fn push(&mut self, chain: &DnaChain, state: &DynState) {
        self.t.push(state.t);
        self.mean.push(DnaChain::mean_angle(&state.q));
        self.rate.push(DnaChain::mean_angle(&state.v));
        self.energy.push(chain.energy(&state.q, &state.v));
    }

    /// Returns the first time at or after `from` when `θ̄` is above `level` (`above`) or
    /// below it.
    fn first(&self, from: f64, level: f64, above: bool) -> Option<f64> {
        self.t
            .iter()
            .zip(&self.mean)
            .find(|&(&t, &m)| t >= from && (m > level) == above)
            .map(|(&t, _)| t)
    }

    /// Returns the first time `H` exceeded `factor · H(0)` (or was NaN).
    fn energy_exceeds(&self, factor: f64) -> Option<f64> {
        let e0 = *self.energy.first()?;
        self.t
            .iter()
            .zip(&self.energy)
            .find(|&(_, &e)| e.is_nan() || e > factor * e0)
            .map(|(&t, _)| t)
    }

    /// Returns the mean of `H` over the steps.
    fn mean_energy(&self) -> f64 {
        self.energy.iter().sum::<f64>() / self.energy.len() as f64
    }

    /// Returns the fraction of steps with `θ̄` above `OPEN` (in the open state).
    fn open_fraction(&self) -> f64 {
        self.mean.iter().filter(|&&m| m > OPEN).count() as f64 / self.mean.len() as f64
    }

    /// Returns the number of openings: `θ̄` rising above `OPEN` after it was below `CLOSED`
    /// (or at the start).
    fn openings(&self) -> usize {
        let (mut open, mut count) = (false, 0);
        for &m in &self.mean {
            if !open && m > OPEN {
                (open, count) = (true, count + 1);
            } else if open && m < CLOSED {
                open = false;
            }
        }
        count
    }
}

/// `θ̄` above this counts as the open state `2π − θ* ≈ 5.49` (EXPERIMENTS-M2 §E.5).
const OPEN: f64 = 4.3;

/// `θ̄` below this counts as back in the closed state `θ* ≈ 0.795`, and above it as having
/// left it: `θ* + 0.2`.
const CLOSED: f64 = 1.0;

/// What one run produced: its sink, the slow variables after every step, and the error that
/// ended it early, if one did (the rows before it are kept).
struct Outcome<K> {
    sink: K,
    trace: Trace,
    failure: Option<SimulationError>,
}

fn main() -> ExitCode {
    exit_code(run(&common::cli::parse::<Args>()))
}

fn run(args: &Args) -> Result<(), Box<dyn Error>> {
    args.run.refuse_motion(
        "dna",
        "the angles of the base pairs are not points in the plane",
    )?;
    let chain = DnaChain::new(args.n)?;
    if args.stability {
        args.run.refuse_checkpoints(
            "dna --stability",
            "it computes a table of many short runs; checkpoint a single --method run instead",
        )?;
        return stability(&chain, args);
    }
    let Some(method) = args.method.filter(|_| !args.figure) else {
        args.run.refuse_checkpoints(
            "dna's Fig. 8 (no --method, or --figure)",
            "it computes a table of many short runs; checkpoint a single --method run instead",
        )?;
        return figure(&chain, args);
    };
    let setup = Setup {
        method,
        h: args.run.h_or(method.paper_h()),
        beta: args.beta,
    };
    let t_end = args.run.t_end_or(3000.0);
    let csv = args.run.csv_or("dna");
    let plan = args.run.plan(setup.h, t_end)?.stream_to(csv.clone());
    // The rows go to the file while the run goes (every --every-th), so that a killed run
    // leaves them; a resumed run continues the file of its checkpoint.
    let sink = Thin::new(common::plan_sink(&plan)?, plan.every);
    let started = Instant::now();
    let start = chain.initial_state(args.seed);
    let outcome = simulate(
        &chain,
        setup,
        start,
        plan.steps,
        plan.schedule.clone(),
        sink,
        true,
        Some(&plan),
    )?;
    let seconds = started.elapsed().as_secs_f64();
    let mut sink = outcome.sink;
    sink.finish()?; // also after a failed step: the rows up to it stay readable
    let trace = &outcome.trace;
    let title = format!("DNA chain, N = {}, {}", args.n, setup.label());
    let png = args.run.png_or("dna");
    draw_panels(
        &png,
        (1000, 800),
        &[
            Panel::new(format!("{title}: mean angle"), "t", "mean theta")
                .series(Series::new(setup.label(), pairs(&trace.t, &trace.mean))),
            Panel::new("energy", "t", "H")
                .series(Series::new(setup.label(), pairs(&trace.t, &trace.energy))),
        ],
    )?;
    println!(
        "{}, DNA chain of N = {} base pairs, seed {}, t = 0 … {}",
        setup.label(),
        args.n,
        args.seed,
        trace.t.last().copied().unwrap_or(0.0)
    );
    if method != Method::Verlet {
        println!("  beta = {}", setup.beta);
    }
    println!(
        "  {} steps in {seconds:.3} s, H(0) = {:.4}, mean H = {:.4}, {} openings, open {:.1}% of the time",
        trace.t.len() - 1,
        trace.energy[0],
        trace.mean_energy(),
        trace.openings(),
        100.0 * trace.open_fraction()
    );
    println!("wrote {} and {}", csv.display(), png.display());
    match outcome.failure {
        Some(error) => {
            let error = common::thinned(error, sink.written());
            Err(common::interrupted(&error, &csv).into())
        }
        None => Ok(()),
    }
}

/// Returns the points `(x_i, y_i)`.
fn pairs(x: &[f64], y: &[f64]) -> Vec<(f64, f64)> {
    x.iter().copied().zip(y.iter().copied()).collect()
}

/// Runs `setup` on `chain` from `start` for `steps` steps through the driver into `sink` (the
/// CSV contract, then `theta.mean` and `theta.mean.rate`), keeping the slow variables of every
/// step; a failed step ends the run and is returned in the outcome. With `checkpoints`, the
/// run writes and resumes checkpoints as the plan says (`--checkpoint`, `--resume`).
#[allow(clippy::too_many_arguments)]
fn simulate<K: Sink>(
    chain: &DnaChain,
    setup: Setup,
    start: DynState,
    steps: usize,
    schedule: Schedule,
    sink: K,
    progress: bool,
    checkpoints: Option<&common::Plan>,
) -> Result<Outcome<K>, Box<dyn Error>> {
    let t_end = start.t + steps as f64 * setup.h;
    let trace = RefCell::new(Trace::default());
    trace.borrow_mut().push(chain, &start);
    let integrator = setup.method.integrator(chain, setup.h, setup.beta)?;
    let mut run = Simulation::sparse(chain, integrator, start, t_end, schedule)?
        .coordinates(family(&["theta"], chain.base_pairs()))?
        .observe(SparseMechanics::new(chain))
        .observe(Column::new("theta.mean", |s: &DynState| {
            DnaChain::mean_angle(&s.q)
        }))
        .observe(Column::new("theta.mean.rate", |s: &DynState| {
            DnaChain::mean_angle(&s.v)
        }))
        .on_step(|_, s| trace.borrow_mut().push(chain, s))
        .interrupt_on(common::interrupt_flag())
        .write_to(sink);
    if let Some(plan) = checkpoints {
        run = common::with_checkpoints(run, plan)?;
    }
    if progress && t_end > 1.0 {
        run = run.with_progress(setup.method.label());
    }
    let failure = run.run().err();
    let sink = run.into_output();
    Ok(Outcome {
        sink,
        trace: trace.into_inner(),
        failure,
    })
}

/// Returns the best wall-clock time of `repeat` runs of `setup` through the driver, writing
/// only the last row and observing nothing: the integrator's cost, construction included.
fn best_time(
    chain: &DnaChain,
    setup: Setup,
    start: &DynState,
    steps: usize,
    repeat: usize,
) -> Result<f64, Box<dyn Error>> {
    let mut best = f64::INFINITY;
    for _ in 0..repeat.max(1) {
        let started = Instant::now();
        let integrator = setup.method.integrator(chain, setup.h, setup.beta)?;
        let t_end = start.t + steps as f64 * setup.h;
        let schedule = Schedule::EveryNthStep(steps.max(1));
        let mut run = Simulation::sparse(chain, integrator, start.clone(), t_end, schedule)?;
        run.run()?;
        best = best.min(started.elapsed().as_secs_f64());
    }
    Ok(best)
}

/// Formats an optional time, `—` for none.
fn time(t: Option<f64>) -> String {
    t.map_or("—".into(), |t| format!("{t:.0}"))
}
