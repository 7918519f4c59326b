//! The ladder of rigid rods of Lacoursière (2007) §6 on the sparse tier: `L` square cells of
//! rods (centre of mass and unit direction per rod, `3L + 1` rods, `4L + 1` pin joints, `L`
//! closed loops), pinned at one corner, released horizontally at rest and stepped by SPOOK with
//! one sparse `LDLᵀ` per step (`runtime::reference::SpookLadder`, `runtime::SparseSpook`).
//!
//! ```sh
//! cargo run --release --example ladder                        # L = 20, h = 1/60, T = 10
//! cargo run --release --example ladder -- --links 1000 --t-end 2 --every 10
//! cargo run --release --example ladder -- --method rk4 --t-end 5   # RK4 + Baumgarte
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

mod common;

use std::error::Error;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, ValueEnum};
use common::{canvas, create_parent, exit_code, RunOptions};
use mechanism::runtime::integrators::stabilized::{Baumgarte, SparseStabilizedRk, RK4};
use mechanism::runtime::model::{SparseHolonomic, SparseInertia};
use mechanism::runtime::reference::SpookLadder;
use mechanism::runtime::simulation::{
    family, Column, CsvSink, Schedule, Simulation, SimulationError, Sink, SparseMechanics, Table,
};
use mechanism::runtime::{DynState, SparseIntegrator, SparseRattle, SparseSpook};
use plotters::prelude::*;

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
        ladder: &SpookLadder,
        h: f64,
        gamma: f64,
    ) -> Result<Box<dyn SparseIntegrator<SpookLadder>>, Box<dyn Error>> {
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
    #[arg(long, default_value_t = 20)]
    links: usize,
    /// Write every K-th step only (the first and the last are always written).
    #[arg(long, default_value_t = 1, value_name = "K")]
    every: usize,
    /// Print the figure data of §6 beside the paper's claims instead of one run.
    #[arg(long)]
    table: bool,
}

fn main() -> ExitCode {
    exit_code(run(&Args::parse()))
}

fn run(args: &Args) -> Result<(), Box<dyn Error>> {
    if args.links == 0 {
        return Err("--links must be at least 1".into());
    }
    if args.every == 0 {
        return Err("--every must be at least 1".into());
    }
    if args.table {
        return tables();
    }
    let (h, t_end) = (args.run.h_or(1.0 / 60.0), args.run.t_end_or(10.0));
    let steps = common::step_count(h, t_end)?;
    let ladder = SpookLadder::new(args.links);
    let csv = args.run.csv_or("ladder");
    let png = args.run.png_or("ladder");
    let file = create_file(&csv)?;
    let schedule = match args.run.save_every {
        Some(_) => common::plan(h, t_end, args.run.save_every)?.schedule,
        None => Schedule::EveryNthStep(args.every),
    };
    let mut samples = Vec::new();
    let integrator = args.method.integrator(&ladder, h, args.gamma)?;
    let (_, outcome) = simulate(
        &ladder,
        integrator,
        (h, steps),
        schedule,
        CsvSink::new(BufWriter::new(file)),
        |step, sample| {
            if step % args.every == 0 || step == steps {
                samples.push(sample);
            }
        },
    )?;
    let label = args.method.label(args.gamma);
    plot_run(&png, &label, &ladder, h, &samples)?;
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
        samples.len(),
        png.display()
    );
    Ok(outcome?)
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
fn observe(ladder: &SpookLadder, state: &DynState, g: &mut [f64], jac: &mut [f64]) -> Sample {
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
/// `speed.max`) go into `sink`, and `record` gets the step number and the [`Sample`] at step 0
/// and after every step. Returns the sink with the rows up to the end or a failed step, and
/// the run's outcome.
fn simulate<K: Sink>(
    ladder: &SpookLadder,
    integrator: Box<dyn SparseIntegrator<SpookLadder>>,
    (h, steps): (f64, usize),
    schedule: Schedule,
    sink: K,
    mut record: impl FnMut(usize, Sample),
) -> Result<(K, Result<(), SimulationError>), Box<dyn Error>> {
    let start = ladder.horizontal_state();
    let (m, entries) = (ladder.constraint_count(), ladder.jacobian_pattern().len());
    let (mut g, mut jac) = (vec![0.0; m], vec![0.0; entries]);
    record(0, observe(ladder, &start, &mut g, &mut jac));
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
            record(step, observe(ladder, state, &mut g, &mut jac));
        })
        .write_to(sink);
    if steps as f64 * h > 1.0 {
        run = run.with_progress("ladder");
    }
    let outcome = run.run();
    Ok((run.into_output(), outcome.map(|_| ())))
}

/// Runs [`simulate`] without output rows, for the tables: `record` sees every step; a failed
/// step is the integrator's error.
fn track(
    ladder: &SpookLadder,
    integrator: Box<dyn SparseIntegrator<SpookLadder>>,
    span: (f64, usize),
    record: impl FnMut(usize, Sample),
) -> Result<(), Box<dyn Error>> {
    let schedule = Schedule::EveryNthStep(span.1.max(1));
    let (_, outcome) = simulate(ladder, integrator, span, schedule, Table::default(), record)?;
    outcome.map_err(|error| match error {
        SimulationError::Step { source, .. } => source.into(),
        other => other.into(),
    })
}

/// Creates `path` (and its directory) for writing.
fn create_file(path: &Path) -> Result<File, Box<dyn Error>> {
    create_parent(path)?;
    Ok(File::create(path).map_err(|e| format!("cannot write {}: {e}", path.display()))?)
}

/// Returns SPOOK with step size `h` for `ladder`, as the figures run it.
fn spook(
    ladder: &SpookLadder,
    h: f64,
) -> Result<Box<dyn SparseIntegrator<SpookLadder>>, Box<dyn Error>> {
    Method::Spook.integrator(ladder, h, 0.0)
}

/// The figures of §6 as tables beside the paper's claims, and their plots.
fn tables() -> Result<(), Box<dyn Error>> {
    // (a) Stability at h = 1/20.
    let ladder = SpookLadder::new(20);
    let mut worst = 0.0f64;
    let outcome = track(
        &ladder,
        spook(&ladder, 1.0 / 20.0)?,
        (1.0 / 20.0, 600),
        |_, s| {
            worst = worst.max(s.rms);
        },
    );
    println!("## (a) Stability, L = 20, h = 1/20, T = 30\n");
    println!("| quantity | ours | paper / pilot |\n|---|---|---|");
    println!(
        "| outcome | {} | \"stable … for h as large as h = 1/20 for N = 20\" |",
        match &outcome {
            Ok(()) => "600 steps, no error".to_string(),
            Err(e) => format!("failed: {e}"),
        }
    );
    println!("| max RMS violation | {worst:.3} | pilot (EXPERIMENTS-M2 §A.7): 0.23 |\n");

    // (b) Fig. 6: ⟨‖g‖⟩ against h.
    let hs = [
        1.0 / 30.0,
        1.0 / 60.0,
        1.0 / 120.0,
        1.0 / 240.0,
        1.0 / 480.0,
    ];
    let pilot = [2.19e-1, 4.22e-2, 2.27e-2, 3.29e-3, 1.22e-3];
    let mut averages = Vec::new();
    for &h in &hs {
        let steps = common::step_count(h, 10.0)?;
        let mut sum = 0.0;
        track(&ladder, spook(&ladder, h)?, (h, steps), |step, s| {
            if step > 0 {
                sum += s.rms * (ladder.constraint_count() as f64).sqrt();
            }
        })?;
        averages.push(sum / steps as f64);
    }
    let slope = common::loglog_slope(&hs, &averages);
    println!("## (b) Fig. 6: average violation ⟨‖g‖⟩ over T = 10, L = 20\n");
    println!("| h | ⟨‖g‖⟩ ours | ⟨‖g‖⟩ pilot (SciPy, EXPERIMENTS-M2 §A.7) |\n|---|---|---|");
    for ((h, a), p) in hs.iter().zip(&averages).zip(pilot) {
        println!("| 1/{:.0} | {a:.3e} | {p:.2e} |", 1.0 / h);
    }
    println!("\nfitted slope: **{slope:.2}** (paper: \"appears to be O(h²)\"; pilot 1.9)\n");
    loglog_chart(
        Path::new("out/ladder_fig6.png"),
        "Fig. 6: average constraint violation, L = 20, T = 10",
        ("h", "<|g|>"),
        &[(
            format!("SPOOK, slope {slope:.2}"),
            hs.iter().copied().zip(averages.iter().copied()).collect(),
        )],
    )?;

    // (c) Fig. 7: CPU time per step against L.
    let links = [10, 20, 50, 100, 200, 500, 1000];
    let mut times = Vec::new();
    println!(
        "## (c) Fig. 7: time per step against L (h = 1/60, 300 steps after 30 warm-up steps)\n"
    );
    println!(
        "| L | unknowns n + m | entries of L | time per step | per link |\n|---|---|---|---|---|"
    );
    for &l in &links {
        let ladder = SpookLadder::new(l);
        let mut spook = SparseSpook::new(&ladder, 1.0 / 60.0)?;
        let mut state = ladder.horizontal_state();
        for _ in 0..30 {
            spook.step(&ladder, &mut state)?;
        }
        let start = Instant::now();
        let steps = 300;
        for _ in 0..steps {
            spook.step(&ladder, &mut state)?;
        }
        let per_step = start.elapsed().as_secs_f64() / steps as f64;
        times.push(per_step);
        println!(
            "| {l} | {} | {} | {:.1} µs | {:.2} µs |",
            spook.system().unknown_count(),
            spook.system().factor_entry_count(),
            per_step * 1e6,
            per_step * 1e6 / l as f64
        );
    }
    let xs: Vec<f64> = links.iter().map(|&l| l as f64).collect();
    let exponent = common::loglog_slope(&xs, &times);
    println!("\nfitted exponent: **{exponent:.2}** (paper: \"linear as it should\")\n");
    loglog_chart(
        Path::new("out/ladder_fig7.png"),
        "Fig. 7: time per SPOOK step against the number of links",
        ("L", "seconds per step"),
        &[(
            format!("SPOOK, exponent {exponent:.2}"),
            xs.into_iter().zip(times).collect(),
        )],
    )?;

    // (d) The whiplash contrast: RK4 + Baumgarte on the same ladder (EXPERIMENTS-M2 §A.5:
    // γ = 1/h, ACPR §2, and γ = 10).
    println!(
        "## (d) The whiplash: SPOOK against RK4 + Baumgarte and RATTLE, L = 20, h = 1/60, T = 30\n"
    );
    println!("| method | outcome | E(end) − E(0) | max RMS violation | max end speed |");
    println!("|---|---|---|---|---|");
    let ladder = SpookLadder::new(20);
    let (mut energies, mut speeds) = (Vec::new(), Vec::new());
    for (method, gamma) in [
        (Method::Spook, 0.0),
        (Method::Rk4, 10.0),
        (Method::Rk4, 60.0),
        (Method::Rattle, 0.0),
    ] {
        let mut samples: Vec<Sample> = Vec::new();
        let integrator = method.integrator(&ladder, 1.0 / 60.0, gamma)?;
        let outcome = track(&ladder, integrator, (1.0 / 60.0, 1800), |_, s| {
            samples.push(s)
        });
        let e0 = samples[0].energy;
        let last = samples[samples.len() - 1];
        let max = |f: fn(&Sample) -> f64| samples.iter().map(f).fold(0.0, f64::max);
        println!(
            "| {} | {} | {:.1} | {:.3e} | {:.1} |",
            method.label(gamma),
            match &outcome {
                Ok(()) => "1800 steps, no error".to_string(),
                Err(e) => format!("fails at t = {:.2}: {}", last.t, first_words(e.as_ref(), 2)),
            },
            last.energy - e0,
            max(|s| s.rms),
            max(|s| s.speed)
        );
        energies.push((
            method.label(gamma),
            samples
                .iter()
                .map(|s| (s.t, s.energy - e0))
                .collect::<Vec<_>>(),
        ));
        speeds.push((
            method.label(gamma),
            samples.iter().map(|s| (s.t, s.speed)).collect::<Vec<_>>(),
        ));
    }
    println!(
        "\nPaper (§6): \"Runge–Kutta fourth order with Baumgarte stabilization or plain SHAKE \
         break down completely when whiplash occurs\"; SPOOK only dissipates.\n"
    );
    whiplash_chart(Path::new("out/ladder_whiplash.png"), &energies, &speeds)?;

    // (e) The runs of Figs. 4–5.
    println!("## (e) Figs. 4–5: h = 1/60, T = 30\n");
    println!("| L | E(0) | E(30) − E(0) | max RMS violation | mean RMS violation | max end speed (at t) |");
    println!("|---|---|---|---|---|---|");
    let mut energy_series = Vec::new();
    for l in [10, 100] {
        let ladder = SpookLadder::new(l);
        let mut samples = Vec::new();
        track(
            &ladder,
            spook(&ladder, 1.0 / 60.0)?,
            (1.0 / 60.0, 1800),
            |_, s| samples.push(s),
        )?;
        let e0 = samples[0].energy;
        let last = samples[samples.len() - 1];
        let max_rms = samples.iter().map(|s| s.rms).fold(0.0, f64::max);
        let mean_rms = samples.iter().map(|s| s.rms).sum::<f64>() / samples.len() as f64;
        let fastest = samples
            .iter()
            .max_by(|a, b| a.speed.total_cmp(&b.speed))
            .copied();
        let fastest = fastest.unwrap_or(last);
        println!(
            "| {l} | {e0:.1} | {:.1} | {max_rms:.3e} | {mean_rms:.3e} | {:.1} (t = {:.2}) |",
            last.energy - e0,
            fastest.speed,
            fastest.t
        );
        energy_series.push((
            format!("L = {l}"),
            samples
                .iter()
                .map(|s| (s.t, (s.energy - e0) / e0.abs()))
                .collect::<Vec<_>>(),
        ));
    }
    println!(
        "\nPaper (§6, Figs. 4–5): energy is dissipated, most when the chain passes the vertical; \
         \"whiplash develops at the end links after a few oscillations\".\n"
    );
    time_chart(
        Path::new("out/ladder_fig45.png"),
        "Figs. 4-5: energy dissipated by SPOOK, h = 1/60",
        "(E(t) - E(0)) / |E(0)|",
        &energy_series,
    )?;

    println!(
        "\nwrote out/ladder_fig6.png, out/ladder_fig7.png, out/ladder_fig45.png, \
         out/ladder_whiplash.png"
    );
    Ok(())
}

/// Returns the first `count` words of an error's message.
fn first_words(error: &dyn Error, count: usize) -> String {
    let text = error.to_string();
    let words: Vec<&str> = text.split_whitespace().take(count).collect();
    format!("{} …", words.join(" "))
}

/// Returns `(min, max)` of `values`, widened when they coincide.
fn span(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if lo < hi {
        (lo, hi)
    } else {
        (lo - 1.0, hi + 1.0)
    }
}

/// Draws points and lines of each series on log-log axes.
fn loglog_chart(
    path: &Path,
    title: &str,
    (x_desc, y_desc): (&str, &str),
    series: &[(String, Vec<(f64, f64)>)],
) -> Result<(), Box<dyn Error>> {
    let root = canvas(path, (900, 600))?;
    let (x0, x1) = span(series.iter().flat_map(|(_, s)| s.iter().map(|p| p.0)));
    let (y0, y1) = span(series.iter().flat_map(|(_, s)| s.iter().map(|p| p.1)));
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(
            (x0 / 1.5..x1 * 1.5).log_scale(),
            (y0 / 2.0..y1 * 2.0).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&|x| format!("{x:.3}"))
        .y_label_formatter(&|y| format!("{y:.0e}"))
        .draw()?;
    for (name, points) in series {
        chart.draw_series(LineSeries::new(points.clone(), &BLUE))?;
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 4, BLUE.filled())))?
            .label(name.as_str())
            .legend(|(x, y)| Circle::new((x + 10, y), 4, BLUE.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(())
}

/// Draws each series against time on linear axes.
fn time_chart(
    path: &Path,
    title: &str,
    y_desc: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> Result<(), Box<dyn Error>> {
    let root = canvas(path, (1000, 500))?;
    draw_time_panel(&root, title, y_desc, series)?;
    root.present()
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(())
}

/// Draws the whiplash contrast: the energy change and the largest end speed of each method
/// against time, each clipped to a few times the range of the first (SPOOK's) series so that a
/// blow-up shows as a jump to the panel's edge instead of flattening SPOOK's curve.
fn whiplash_chart(
    path: &Path,
    energies: &[(String, Vec<(f64, f64)>)],
    speeds: &[(String, Vec<(f64, f64)>)],
) -> Result<(), Box<dyn Error>> {
    let clip = |series: &[(String, Vec<(f64, f64)>)], factor: f64| {
        let (lo, hi) = span(series[0].1.iter().map(|p| p.1));
        let bound = lo.abs().max(hi.abs()) * factor;
        let (lo, hi) = (-bound, bound);
        series
            .iter()
            .map(|(name, points)| {
                let clipped = points.iter().map(|&(t, y)| (t, y.clamp(lo, hi))).collect();
                (name.clone(), clipped)
            })
            .collect::<Vec<_>>()
    };
    let root = canvas(path, (1000, 800))?;
    let panels = root.split_evenly((2, 1));
    draw_time_panel(
        &panels[0],
        "Whiplash, L = 20, h = 1/60: energy change (clipped at ±2x SPOOK's largest change)",
        "E(t) - E(0)",
        &clip(energies, 2.0),
    )?;
    draw_time_panel(
        &panels[1],
        "largest speed of a rod end (clipped at 3x SPOOK's maximum)",
        "max |v_end|",
        &clip(speeds, 3.0),
    )?;
    root.present()
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(())
}

/// Draws one linear time-series panel on `area`.
fn draw_time_panel(
    area: &DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>,
    title: &str,
    y_desc: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> Result<(), Box<dyn Error>> {
    let (t0, t1) = span(series.iter().flat_map(|(_, s)| s.iter().map(|p| p.0)));
    let (y0, y1) = span(series.iter().flat_map(|(_, s)| s.iter().map(|p| p.1)));
    let pad = 0.05 * (y1 - y0);
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(80)
        .build_cartesian_2d(t0..t1, y0 - pad..y1 + pad)?;
    chart.configure_mesh().x_desc("t").y_desc(y_desc).draw()?;
    let palette = [BLUE, RED, GREEN, MAGENTA];
    for (k, (name, points)) in series.iter().enumerate() {
        let color = palette[k % palette.len()];
        chart
            .draw_series(LineSeries::new(points.clone(), &color))?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// Draws the energy, the largest end speed and the RMS violation of one run against time.
fn plot_run(
    path: &Path,
    label: &str,
    ladder: &SpookLadder,
    h: f64,
    samples: &[Sample],
) -> Result<(), Box<dyn Error>> {
    let root = canvas(path, (1000, 900))?;
    let panels = root.split_evenly((3, 1));
    let series = |f: fn(&Sample) -> f64| samples.iter().map(|s| (s.t, f(s))).collect::<Vec<_>>();
    let title = format!("{label}, ladder L = {}, h = {h:.4}", ladder.links());
    draw_time_panel(
        &panels[0],
        &format!("{title}: energy"),
        "E = T + V",
        &[("energy".into(), series(|s| s.energy))],
    )?;
    draw_time_panel(
        &panels[1],
        "whiplash: largest speed of a rod end",
        "max |v_end|",
        &[("speed".into(), series(|s| s.speed))],
    )?;
    draw_time_panel(
        &panels[2],
        "constraint violation",
        "RMS g",
        &[("RMS violation".into(), series(|s| s.rms))],
    )?;
    root.present()
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(())
}
