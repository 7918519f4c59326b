//! The chain of `n` planar pendula of Tao–Owhadi (2014) §4.2 on the sparse tier: unit masses on
//! rods of length `√5`, bob `i` (1-based) starting at rest at `(i, −2i)`, stepped either on the
//! hard constraints (SHAKE, RATTLE, SPOOK) or on the penalized potential `V + ½ω²|g|²` (Z&S,
//! Z&Ss), with one sparse factorization per step whatever `n`.
//!
//! ```sh
//! cargo run --release --example pendulum_chain                        # Z&S, h = 0.05, n = 10
//! cargo run --release --example pendulum_chain -- --method shake --h 0.025
//! cargo run --release --example pendulum_chain -- --n 10000 --t-end 1 --save-every 0.1
//! cargo run --release --example pendulum_chain -- --figure            # Fig. 3 and its timings
//! ```
//!
//! The model is `mechanism::models::PendulumChain`, written with `mechanism!` families (a dozen
//! lines; `n` is an argument of its `new`), which `tests/it/families/` checks against the
//! hand-written `runtime::reference::PendulumChain`.
//!
//! Gravity points along −y (`V = +Σ y_i`, `--gravity 1`): the paper prints `V = −Σ y_i`, which
//! starts the chain inverted; `shared/EXPERIMENTS-M2.md` §C (ambiguity C1) resolves it to the
//! hanging chain, and `--gravity -1` runs the printed sign. The CSV has the examples' columns,
//! a family's named by element: `t`, `q.x[0]`, `q.y[0]`, …, `v.y[n-1]`, `energy`,
//! `residual.position`, `residual.velocity`; the penalty methods add `energy.penalized`, the
//! energy `T + V + ½ω²|g|²` they conserve. SHAKE's `v` is its staggered velocity `v_{k+½}`.
//!
//! The step defaults to Tao–Owhadi's `h = 0.05`, except for SHAKE and RATTLE on long chains:
//! both apply the rods' tension along the directions at the start of the step, which makes them
//! Störmer–Verlet across the taut chain, stable only for `h < √(l / (n |g|))` (0.047 for 1000
//! pendula, 0.0150 for 10 000, 0.0047 for 100 000; measured to ±7 %). Above it the step's
//! equations lose their solution and the run stops with a Newton failure, which the example
//! reports with the limit. Their default is the largest `0.05 / k` below 0.8 of the limit: 0.05
//! up to 572 pendula, 0.025 for 1000, 0.01 for 10 000, `0.05 / 14` for 100 000.
//!
//! Every run writes the CSV and, up to `n = 1000`, the plot of energy and residuals
//! (`--plot`); `--animate FILE.gif` and `--paths FILE.png` draw the chain.
//!
//! `--figure` reproduces Fig. 3 (n = 10, T = 50; the paper gives no end time, EXPERIMENTS-M2 §C
//! ambiguity C2): SHAKE at `h = 0.05` and `h = 0.025` and Z&S at `h = 0.05` on the `ω = 20`
//! penalized system with `β = 0.4`, their largest position differences, and the paper's CPU
//! times (SHAKE 16.5 s and 8.1 s against Z&S 1.1 s, in Matlab with `fsolve`) beside ours from
//! the same run. SHAKE's positions are computed by RATTLE (the same positions, with velocities
//! on the constraint manifold), Newton on the multipliers to `1e-12`.

use mechanism_examples as common;

use std::error::Error;
use std::fs::File;
use std::io::BufWriter;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, ValueEnum};
use common::{create_parent, exit_code, RunOptions, Thin};
use mechanism::ensemble::{Cell, EnsembleCsv, Shard};
use mechanism::models::PendulumChain;
use mechanism::pictures::{draw_panels, plot_run, Frame, Panel, Series, Sketch};
use mechanism::runtime::model::{SparseInertia, SparsePotential};
use mechanism::runtime::reference::pendulum_chain::{projection_step, projection_step_limit};
use mechanism::runtime::simulation::{
    family, Column, Schedule, Simulation, Sink, SparseMechanics, Table,
};
use mechanism::runtime::{
    DynState, Penalized, SparseRattle, SparseShake, SparseSpook, SparseZhangSkeel,
    SparseZhangSkeelSimplified,
};

/// Which integrator to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Method {
    /// SHAKE on the hard constraints (Newton on the multipliers, sparse LU); v holds v_{k+½}.
    Shake,
    /// RATTLE on the hard constraints: SHAKE's positions, velocities on the manifold.
    Rattle,
    /// SPOOK (Lacoursière 2007, eq. 29) on the hard constraints, one sparse LDLᵀ per step.
    Spook,
    /// Full Zhang–Skeel (Tao–Owhadi eq. 3) on the penalized system, as in Fig. 3.
    Zs,
    /// Simplified Zhang–Skeel (Tao–Owhadi eq. 18) on the penalized system.
    Zss,
}

impl Method {
    /// Returns whether the method runs the penalized system.
    fn is_penalized(self) -> bool {
        matches!(self, Method::Zs | Method::Zss)
    }

    /// Returns the method's name for output.
    fn label(self) -> &'static str {
        match self {
            Method::Shake => "SHAKE",
            Method::Rattle => "RATTLE",
            Method::Spook => "SPOOK",
            Method::Zs => "Z&S",
            Method::Zss => "Z&Ss",
        }
    }
}

/// Simulates Tao–Owhadi's chain of pendula and writes a CSV file.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Integrator.
    #[arg(long, value_enum, default_value_t = Method::Zs)]
    method: Method,
    #[command(flatten)]
    run: RunOptions,
    /// Number of pendula n.
    #[arg(long, default_value_t = 10, value_parser = common::cli::count, allow_negative_numbers = true)]
    n: usize,
    /// Penalty frequency ω of Z&S and Z&Ss (V + ½ω²|g|²).
    #[arg(long, default_value_t = 20.0, allow_negative_numbers = true)]
    omega: f64,
    /// Parameter β of Z&S and Z&Ss.
    #[arg(long, default_value_t = 0.4, allow_negative_numbers = true)]
    beta: f64,
    /// Gravity g of V = g Σ y_i; the paper's printed V = −Σ y_i is --gravity=-1.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    gravity: f64,
    /// Reproduce Fig. 3 (SHAKE at h = 0.05 and 0.025, Z&S at 0.05; n = 10, T = 50) and its
    /// timings instead of one run; uses --omega, --beta, --gravity and --t-end.
    #[arg(long)]
    figure: bool,
}

/// The settings of one run.
struct Setup {
    method: Method,
    h: f64,
    omega: f64,
    beta: f64,
}

fn main() -> ExitCode {
    exit_code(run(&common::cli::parse::<Args>()))
}

fn run(args: &Args) -> Result<(), Box<dyn Error>> {
    if !(args.omega.is_finite() && args.omega > 0.0) {
        return Err(format!("--omega must be a positive number, got {}", args.omega).into());
    }
    if !args.gravity.is_finite() {
        return Err(format!("--gravity must be a finite number, got {}", args.gravity).into());
    }
    let mut chain = PendulumChain::new(args.n)?;
    chain.g = args.gravity;
    if args.figure {
        args.run.refuse_checkpoints(
            "pendulum_chain --figure",
            "it computes a table of many short runs; checkpoint a single --method run instead",
        )?;
        return figure(&chain, args);
    }
    let setup = Setup {
        method: args.method,
        h: args.run.h_or(default_step(args.method, &chain)),
        omega: args.omega,
        beta: args.beta,
    };
    let t_end = args.run.t_end_or(50.0);
    let csv = args.run.csv_or("pendulum_chain");
    let plan = args.run.plan(setup.h, t_end)?.stream_to(csv.clone());
    let started = Instant::now();
    // The rows are kept for the plot and the pictures up to n = 1000 pendula (or whenever
    // --animate or --paths asks for them); above, they are streamed to --out, with no plot.
    let drawn = args.run.animate.is_some() || args.run.paths.is_some();
    let png = args.run.png_or("pendulum_chain");
    // Either way the rows go to the file while the run goes, so that a killed run leaves them.
    let named = |error| common::in_file(error, &csv);
    let (rows, last, seconds) = if drawn || args.n <= 1000 {
        let stream = Thin::new((Table::default(), common::plan_sink(&plan)?), plan.every);
        let (stream, last) = simulate(&chain, &setup, &plan, stream, true)
            .map_err(|err| explain(named(err), &setup, &chain))?;
        let rows = stream.written();
        let (table, _) = stream.into_inner();
        let seconds = started.elapsed().as_secs_f64();
        let title = format!(
            "chain of {} pendula, {}, h = {}",
            args.n,
            setup.method.label(),
            setup.h
        );
        plot_run(&png, &title, &table)?;
        println!("wrote {}", png.display());
        args.run.draw_motion(&title, &table, &scene())?;
        (rows, last, seconds)
    } else {
        println!("(n > 1000: rows streamed to the output file, no plot)");
        let sink = Thin::new(common::plan_sink(&plan)?, plan.every);
        let (sink, last) = simulate(&chain, &setup, &plan, sink, true)
            .map_err(|err| explain(named(err), &setup, &chain))?;
        (sink.written(), last, started.elapsed().as_secs_f64())
    };
    println!(
        "{}, chain of n = {} pendula ({} coordinates), h = {}, t = 0 … {:.3}",
        setup.method.label(),
        args.n,
        2 * args.n,
        setup.h,
        last.t
    );
    if setup.method.is_penalized() {
        println!("  omega = {}, beta = {}", setup.omega, setup.beta);
    }
    println!(
        "  {} steps in {seconds:.3} s ({:.2} µs per step per pendulum)",
        plan.steps,
        seconds / plan.steps as f64 / args.n as f64 * 1e6
    );
    println!(
        "  bob n at ({:.4}, {:.4})",
        last.q[2 * args.n - 2],
        last.q[2 * args.n - 1]
    );
    println!("wrote {} ({rows} rows)", csv.display());
    Ok(())
}

/// Returns the default step of `method` on `chain`: 0.05 (Tao–Owhadi's), and for SHAKE and
/// RATTLE the largest `0.05 / k` below 0.8 of their stability limit `√(l / (n |g|))`
/// (`runtime::reference::pendulum_chain::projection_step`): 0.025 for 1000 pendula, 0.01 for
/// 10 000, `0.05 / 14` for 100 000.
fn default_step(method: Method, chain: &PendulumChain) -> f64 {
    match method {
        Method::Shake | Method::Rattle => projection_step(chain.links(), chain.l, chain.g, 0.05),
        Method::Spook | Method::Zs | Method::Zss => 0.05,
    }
}

/// Adds to the error of a SHAKE or RATTLE run stepped above the chain's stability limit the
/// limit (the largest step that works, measured to ±7 % for 1000, 10 000 and 100 000 pendula)
/// and the default step.
fn explain(err: Box<dyn Error>, setup: &Setup, chain: &PendulumChain) -> Box<dyn Error> {
    let limit = projection_step_limit(chain.links(), chain.l, chain.g);
    if !matches!(setup.method, Method::Shake | Method::Rattle) || setup.h <= limit {
        return err;
    }
    format!(
        "{err}\n  {} broke down: h = {} is above its stability limit √(l/(n|g|)) = {limit:.4} \
         on this chain (Verlet across the taut rods), the largest step that works; without \
         --h the example takes {}",
        setup.method.label(),
        setup.h,
        default_step(setup.method, chain)
    )
    .into()
}

/// Returns what to draw of `q = (x[0], y[0], x[1], y[1], …)`: the pivot at the origin, the
/// rods from bob to bob, the bobs.
fn scene() -> Sketch<impl Fn(f64, &[f64], &mut Frame)> {
    Sketch::new(|_t, q, frame| {
        frame.anchor((0.0, 0.0));
        let mut previous = (0.0, 0.0);
        for bob in q.chunks_exact(2) {
            let p = (bob[0], bob[1]);
            frame.link(previous, p).body(p);
            previous = p;
        }
    })
}

/// Runs `setup` on `chain` from Tao–Owhadi's start for `plan.steps` steps through the driver
/// into `sink` (the CSV contract; penalty methods add `energy.penalized`; every `--every`-th
/// row), with the plan's schedule, checkpoints and resume; returns the sink and the last state.
fn simulate<K: Sink>(
    chain: &PendulumChain,
    setup: &Setup,
    plan: &common::Plan,
    sink: Thin<K>,
    progress: bool,
) -> Result<(Thin<K>, DynState), Box<dyn Error>> {
    let t_end = plan.steps as f64 * setup.h;
    let schedule = plan.schedule.clone();
    let penalized = Penalized::new(chain.clone(), setup.omega);
    let start = chain.tao_owhadi_state();
    let names = family(&["x", "y"], chain.links());
    macro_rules! drive {
        ($model:expr, $integrator:expr, $start:expr) => {{
            let mut run = Simulation::sparse($model, $integrator, $start, t_end, schedule)?
                .coordinates(names)?
                .observe(SparseMechanics::new(chain))
                .interrupt_on(common::interrupt_flag())
                .write_to(sink);
            if setup.method.is_penalized() {
                run = run.observe(Column::new("energy.penalized", |s: &DynState| {
                    penalized.kinetic_energy(&s.q, &s.v) + penalized.potential(&s.q)
                }));
            }
            run = common::with_checkpoints(run, plan)?;
            if progress && t_end > 1.0 {
                run = run.with_progress("chain");
            }
            let outcome = run.run();
            let last = run.state().clone();
            let mut sink = run.into_output();
            sink.finish()?; // also after a failed run: the rows up to the failure stay readable
            outcome.map_err(|error| common::thinned(error, sink.written()))?;
            (sink, last)
        }};
    }
    let h = setup.h;
    Ok(match setup.method {
        Method::Shake => {
            let mut shake = SparseShake::new(chain, h)?.with_tolerance(1e-12)?;
            let mut start = start;
            shake.stagger_velocity(chain, &mut start)?;
            drive!(chain, shake, start)
        }
        Method::Rattle => drive!(
            chain,
            SparseRattle::new(chain, h)?.with_tolerance(1e-12)?,
            start
        ),
        Method::Spook => drive!(chain, SparseSpook::new(chain, h)?, start),
        Method::Zs => drive!(
            &penalized,
            SparseZhangSkeel::new(&penalized, h)?.with_beta(setup.beta)?,
            start
        ),
        Method::Zss => drive!(
            &penalized,
            SparseZhangSkeelSimplified::new(&penalized, h)?.with_beta(setup.beta)?,
            start
        ),
    })
}

/// Returns the plan of one of Fig. 3's runs: `steps` steps of `h`, rows at `schedule`, no
/// file, no checkpoint.
fn figure_plan(h: f64, steps: usize, schedule: Schedule) -> common::Plan {
    common::Plan {
        h,
        steps,
        schedule,
        progress: false,
        out: None,
        every: 1,
        checkpoint: None,
        resume: None,
    }
}

/// Fig. 3: SHAKE (RATTLE's positions) at `h = 0.05` and `0.025` and Z&S at `h = 0.05` from
/// the same start, sampled every 0.05; their largest position differences and CPU times.
fn figure(chain: &PendulumChain, args: &Args) -> Result<(), Box<dyn Error>> {
    let csv = args.run.csv_or("pendulum_chain_fig3");
    common::csv_only(&csv, "Fig. 3's table of three runs")?;
    if chain.links() != 10 {
        println!(
            "(the paper's Fig. 3 has n = 10; running n = {})",
            chain.links()
        );
    }
    let t_end = args.run.t_end_or(50.0);
    let runs = [
        (Method::Rattle, 0.05, "SHAKE h = 0.05", 8.1),
        (Method::Rattle, 0.025, "SHAKE h = 0.025", 16.5),
        (Method::Zs, 0.05, "Z&S h = 0.05", 1.1),
    ];
    let mut tables = Vec::new();
    let mut seconds = Vec::new();
    for &(method, h, _, _) in &runs {
        let setup = Setup {
            method,
            h,
            omega: args.omega,
            beta: args.beta,
        };
        let steps = common::step_count(h, t_end)?;
        // The timing runs write nothing (best of five); the rows come from a run every 0.05.
        let mut best = f64::INFINITY;
        for _ in 0..5 {
            let started = Instant::now();
            let plan = figure_plan(h, steps, Schedule::EveryNthStep(steps));
            simulate(chain, &setup, &plan, Thin::new(Table::default(), 1), false)?;
            best = best.min(started.elapsed().as_secs_f64());
        }
        seconds.push(best);
        let plan = figure_plan(h, steps, Schedule::Every(0.05));
        let rows = Thin::new(Table::default(), 1);
        let (rows, _) = simulate(chain, &setup, &plan, rows, false)?;
        tables.push(rows.into_inner());
    }
    let q_columns: Vec<usize> = (1..=2 * chain.links()).collect();
    let largest_difference = |a: &Table, b: &Table| {
        a.rows().zip(b.rows()).fold(0.0f64, |m, (ra, rb)| {
            q_columns
                .iter()
                .fold(m, |m, &c| m.max((ra[c] - rb[c]).abs()))
        })
    };
    let residual = |t: &Table| {
        t.column("residual.position")
            .map_or(f64::NAN, |c| c.fold(0.0, f64::max))
    };
    println!(
        "## Fig. 3: chain of n = {} pendula, T = {t_end}, omega = {}, beta = {}\n",
        chain.links(),
        args.omega,
        args.beta
    );
    println!("| quantity | ours | pilot (EXPERIMENTS-M2 §C.6, T = 50) |\n|---|---|---|");
    println!(
        "| max |Δq|, Z&S h = 0.05 vs SHAKE h = 0.025 | {:.4} | 0.034 |",
        largest_difference(&tables[2], &tables[1])
    );
    println!(
        "| max |Δq|, SHAKE h = 0.05 vs SHAKE h = 0.025 | {:.4} | 0.002 |",
        largest_difference(&tables[0], &tables[1])
    );
    println!(
        "| max |g| of Z&S (the penalty's stretch) | {:.2e} | 1.1e-2 |",
        residual(&tables[2])
    );
    println!("\n## CPU time, the same run (ours: best of five)\n");
    println!("| run | ours (s) | paper (s, Matlab + fsolve) | ours / Z&S | paper / Z&S |");
    println!("|---|---|---|---|---|");
    for (k, &(_, _, label, paper)) in runs.iter().enumerate() {
        println!(
            "| {label} | {:.4} | {paper} | {:.1} | {:.1} |",
            seconds[k],
            seconds[k] / seconds[2],
            paper / 1.1
        );
    }
    // Fig. 3: the coordinates of bob 5 and of the last bob against time, the three runs
    // together (the paper shows "not all degrees of freedom").
    let bobs = [4.min(chain.links() - 1), chain.links() - 1];
    let mut panels = Vec::new();
    for &bob in &bobs {
        for (axis, offset) in [("x", 1), ("y", 2)] {
            let column = 2 * bob + offset;
            let mut panel = Panel::new(
                format!("{axis}[{bob}] (bob {} of {})", bob + 1, chain.links()),
                "t",
                format!("{axis}[{bob}]"),
            );
            for (k, table) in tables.iter().enumerate() {
                panel = panel.series(Series::new(
                    runs[k].2,
                    table.rows().map(|row| (row[0], row[column])),
                ));
            }
            panels.push(panel);
        }
    }
    let png = args.run.png_or("pendulum_chain_fig3");
    draw_panels(&png, (1000, 1100), &panels)?;
    println!("\nwrote {}", png.display());

    // The three runs' positions in one CSV, a row per run and time: `member,run,t,q.x[0],…`.
    create_parent(&csv)?;
    let file = File::create(&csv).map_err(|e| format!("cannot write {}: {e}", csv.display()))?;
    let positions = 1 + 2 * chain.links();
    let mut columns = vec!["run"];
    columns.extend(tables[0].columns()[..positions].iter().map(String::as_str));
    let mut out = EnsembleCsv::new(BufWriter::new(file), Shard::WHOLE, &columns)?;
    let mut cells = Vec::with_capacity(columns.len());
    for (k, table) in tables.iter().enumerate() {
        for row in table.rows() {
            cells.clear();
            cells.push(Cell::Text(runs[k].2));
            cells.extend(row[..positions].iter().map(|&x| Cell::Number(x)));
            out.row(k, &cells)?;
        }
    }
    out.into_inner()?;
    println!("\nwrote {}", csv.display());
    Ok(())
}
