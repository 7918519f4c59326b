//! The magnetized rigid body on SO(3) of Tao–Owhadi (2014) §4.5: identity inertia, potential
//! `V(R) = Bμ e₃ᵀR⁻¹e₃` as printed (`Bμ = 1`), `R(0) = I`, `Ω(0) = (1, 0.2, 0.1)`, stepped by
//! the Lie-group variational Euler with Cayley (eqs. 34–35, the paper's benchmark) or the
//! variational linearized SO(3) integrator (eqs. 36–37 with the corrected force; first order
//! or trapezoidal) on the penalized body with `ω = 10`, `β = 0.4`
//! (`runtime::integrators::lie_group`, `runtime::reference::MagnetizedBody`).
//!
//! ```sh
//! cargo run --release --example magnetized_body                      # linearized, h = 0.1, T = 100
//! cargo run --release --example magnetized_body -- --method cayley
//! cargo run --release --example magnetized_body -- --method trapezoidal --omega 20   # diverges
//! cargo run --release --example magnetized_body -- --save-every 1     # rows at t = 0, 1, …, 100
//! cargo run --release --example magnetized_body -- --table          # Figs. 9–10 and the timings
//! ```
//!
//! Each run is compared with the fine-step benchmark, the Cayley scheme at `h′ = 1e-4` (the
//! paper's), both through the runtime's driver (`Simulation::fixed`). The CSV has one row per
//! step, or with `--save-every DT` one at `t = 0, DT, 2·DT, …` (`DT` a multiple of `h`), in the
//! examples' contract: `t`, the rotation `q.R.xx, q.R.xy, …, q.R.zz` (world from body, row by
//! row), its rate `v.R.xx, …`, `energy` (`½ΩᵀJΩ + V` on SO(3), in general
//! `¼ tr(ṘᵀṘ) + V(R)`), `residual.position` (`‖RᵀR − I‖_F`), `residual.velocity`
//! (`‖ṘᵀR + RᵀṘ‖_F`, its time derivative), then `energy.penalized` (plus `½ω²‖RᵀR − I‖²`, the
//! energy of the penalized system; equal to `energy` for Cayley), `omega.x`, `omega.y`,
//! `omega.z` (body frame, `vee(RᵀṘ)`), `deviation.max` (`max_ij |R_ij − R′_ij|`) and
//! `deviation.frobenius` (`‖R − R′‖_F`) from the benchmark `R′`. `--plot` draws Fig. 10
//! (energy error, `‖RᵀR − I‖`, deviation against time); `--snapshots` Fig. 9 (the dipole
//! `R e₃` against the field `e₃`, run and benchmark, at eight times). `--animate` is refused:
//! the body turns in space, not in a plane.
//!
//! `--table` runs all three methods at `h = 0.1` to `T = 100` (and `T = 10`), prints their
//! energy error, `‖RᵀR − I‖`, deviation from the benchmark and CPU time beside the paper's
//! claims (0.03 s for the linearized integrator against 1.45 s for Cayley with `fsolve`, both at
//! `h = 0.1`) and the pilot of `shared/EXPERIMENTS-M2.md` §F.5, checks the stability limit
//! (`ω = 20` diverges), and writes `out/magnetized_body_fig9.png` and
//! `out/magnetized_body_fig10.png`.

use mechanism_examples as common;
#[path = "magnetized_body/run.rs"]
mod run;

use std::error::Error;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, ValueEnum};
use common::{exit_code, RunOptions};
use mechanism::pictures::plotters::prelude::*;
use mechanism::pictures::{canvas, draw_panels, Corner, Panel, Scale, Series};
use mechanism::runtime::integrators::lie_group::PenalizedRotation;
use mechanism::runtime::reference::MagnetizedBody;
use mechanism::runtime::simulation::Schedule;
use nalgebra::Vector3;
use run::{benchmark, deviation, run_method, Run, Stream};

/// The paper's benchmark step (Cayley).
const BENCHMARK_H: f64 = 1e-4;

/// Which integrator to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Method {
    /// The variational linearized SO(3) integrator, first order (eqs. 36–37, corrected f_k;
    /// the paper's Figs. 9–10a).
    Linearized,
    /// Its trapezoidal second-order variant (Z&S on the penalized body).
    Trapezoidal,
    /// The Lie-group variational Euler with Cayley (eqs. 34–35; Fig. 10b).
    Cayley,
}

impl Method {
    /// Returns the method's name for output.
    fn label(self) -> &'static str {
        match self {
            Method::Linearized => "variational linearized SO(3), 1st order",
            Method::Trapezoidal => "variational linearized SO(3), trapezoidal",
            Method::Cayley => "Lie-group variational Euler (Cayley)",
        }
    }
}

/// Simulates Tao–Owhadi's magnetized rigid body and writes a CSV file and plots.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Integrator.
    #[arg(long, value_enum, default_value_t = Method::Linearized)]
    method: Method,
    #[command(flatten)]
    run: RunOptions,
    /// Penalty frequency ω of the linearized integrators.
    #[arg(long, default_value_t = 10.0)]
    omega: f64,
    /// Tao–Owhadi's β of the linearized integrators (eq. 36).
    #[arg(long, default_value_t = 0.4)]
    beta: f64,
    /// Output PNG of the dipole snapshots (Fig. 9) [default: out/magnetized_body_fig9.png].
    #[arg(long, value_name = "FILE.png", value_parser = common::cli::output)]
    snapshots: Option<std::path::PathBuf>,
    /// Print the figure data and timings beside the paper's claims instead of one run.
    #[arg(long)]
    table: bool,
}

fn main() -> ExitCode {
    exit_code(run(&common::cli::parse::<Args>()))
}

fn run(args: &Args) -> Result<(), Box<dyn Error>> {
    args.run.refuse_motion(
        "magnetized_body",
        "a rotation in space, not a mechanism in the plane (its --snapshots draw the dipole)",
    )?;
    args.run.refuse_checkpoints(
        "magnetized_body",
        "its Lie-group integrators carry no checkpointable state yet",
    )?;
    if args.table {
        return tables(args.run.t_end_or(100.0));
    }
    let (h, t_end) = (args.run.h_or(0.1), args.run.t_end_or(100.0));
    let plan = args.run.plan(h, t_end)?;
    let model = PenalizedRotation::new(MagnetizedBody::default(), args.omega);
    // The benchmark first: the rows of the run, streamed to the file while it goes, carry
    // their deviation from it.
    let reference = benchmark(&model, h, plan.steps, plan.schedule.clone())?;
    let csv = args.run.csv_or("magnetized_body");
    let stream = Stream {
        file: &csv,
        every: plan.every,
        reference: &reference.samples,
    };
    let schedule = (plan.schedule, false);
    let run = run_method(
        args.method,
        &model,
        (h, args.beta),
        plan.steps,
        schedule,
        Some(&stream),
    )?;
    let title = format!("{}, h = {h}", args.method.label());
    let fig10 = args.run.png_or("magnetized_body");
    fig10_chart(&fig10, &[(title.clone(), &run)], &reference)?;
    let fig9 = args
        .snapshots
        .clone()
        .unwrap_or_else(|| "out/magnetized_body_fig9.png".into());
    fig9_chart(&fig9, &[(title.clone(), &run)], &reference)?;
    let (max_energy, max_orthogonality) = run.worst;
    println!("{title}, ω = {}, β = {}:", args.omega, args.beta);
    println!(
        "  t = {:.1}: max |E − E₀| = {max_energy:.3e}, max ‖RᵀR − I‖ = {max_orthogonality:.3e}, \
         CPU {:.4} s",
        run.samples.last().map_or(0.0, |s| s.t),
        run.seconds
    );
    println!(
        "  wrote {}, {} and {}",
        csv.display(),
        fig10.display(),
        fig9.display()
    );
    match &run.failure {
        Some(error) => Err(format!("the run stopped early: {error}").into()),
        None => Ok(()),
    }
}

/// Returns the CPU seconds of one run of `method` (`steps` steps of `h`), the median of
/// repetitions that take at least 0.3 s in all.
fn time_method(
    method: Method,
    model: &PenalizedRotation<MagnetizedBody>,
    h: f64,
    steps: usize,
) -> Result<f64, Box<dyn Error>> {
    let mut times = Vec::new();
    let mut total = 0.0;
    while total < 0.3 || times.len() < 5 {
        let run = run_method(
            method,
            model,
            (h, 0.4),
            steps,
            (Schedule::EveryStep, true),
            None,
        )?;
        total += run.seconds;
        times.push(run.seconds);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

/// Prints the figure data of §4.5 beside the paper's claims and writes Figs. 9 and 10.
fn tables(t_end: f64) -> Result<(), Box<dyn Error>> {
    let h = 0.1;
    let steps = common::step_count(h, t_end)?;
    let model = PenalizedRotation::new(MagnetizedBody::default(), 10.0);
    let start = Instant::now();
    let reference = benchmark(&model, h, steps, Schedule::EveryStep)?;
    let benchmark_seconds = start.elapsed().as_secs_f64();
    let methods = [Method::Linearized, Method::Trapezoidal, Method::Cayley];
    let pilot = [
        "0.173 | 5.9e-2 | 0.21 / 1.50",
        "0.069 | 5.6e-2 | 0.21 / 1.50",
        "0.110 | 8e-15 | 0.14 / 1.07",
    ];
    println!(
        "## Tao–Owhadi §4.5, magnetized rigid body: h = {h}, ω = 10, β = 0.4, Bμ = 1, T = {t_end}\n"
    );
    println!(
        "Benchmark: Cayley at h′ = {BENCHMARK_H:e} ({} steps, {benchmark_seconds:.2} s).\n",
        steps * (h / BENCHMARK_H).round() as usize
    );
    println!(
        "| method | max \\|E − E₀\\| | max \\|E_pen − E₀\\| | max ‖RᵀR − I‖_F | max_ij \\|R − R′\\| (t ≤ 10 / t ≤ {t_end}) | CPU s per run | pilot (§F.5): \\|E − E₀\\| | ‖RᵀR − I‖ | deviation |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut runs = Vec::new();
    for (method, pilot) in methods.iter().zip(pilot) {
        let run = run_method(
            *method,
            &model,
            (h, 0.4),
            steps,
            (Schedule::EveryStep, false),
            None,
        )?;
        if let Some(error) = &run.failure {
            return Err(format!("{} failed: {error}", method.label()).into());
        }
        let e0 = run.samples[0].energy;
        let energy = run
            .samples
            .iter()
            .map(|s| (s.energy - e0).abs())
            .fold(0.0, f64::max);
        let penalized = run
            .samples
            .iter()
            .map(|s| (s.penalized_energy - e0).abs())
            .fold(0.0, f64::max);
        let orthogonality = run
            .samples
            .iter()
            .map(|s| s.orthogonality)
            .fold(0.0, f64::max);
        let deviation_until = |t: f64| {
            run.samples
                .iter()
                .zip(&reference.samples)
                .filter(|(s, _)| s.t <= t + 1e-9)
                .map(|(s, b)| deviation(&s.r, &b.r).0)
                .fold(0.0, f64::max)
        };
        let seconds = time_method(*method, &model, h, steps)?;
        println!(
            "| {} | {energy:.3} | {penalized:.3} | {orthogonality:.1e} | {:.2} / {:.2} | {seconds:.2e} | {pilot} |",
            method.label(),
            deviation_until(10.0),
            deviation_until(t_end),
        );
        runs.push((method.label().to_string(), run, seconds));
    }
    let (linearized, cayley) = (runs[0].2, runs[2].2);
    println!(
        "\nCost (both at h = 0.1, T = {t_end}): paper 0.03 s (linearized) vs 1.45 s (Cayley with \
         `fsolve`), ratio {:.0}; ours {linearized:.2e} s vs {cayley:.2e} s, ratio {:.2} (the \
         Cayley update here is a closed-form scalar cubic, a few Newton steps, where the \
         linearized step factors a 9×9 matrix).",
        1.45 / 0.03,
        cayley / linearized
    );
    println!("\nStability (effective Newmark β/2 = 0.2 < ¼; linear limit ω < 15.8 at h = 0.1):\n");
    for omega in [10.0, 20.0] {
        let penalized = PenalizedRotation::new(MagnetizedBody::default(), omega);
        for method in [Method::Linearized, Method::Trapezoidal] {
            let schedule = (Schedule::EveryStep, false);
            let run = run_method(method, &penalized, (h, 0.4), steps, schedule, None)?;
            let residual = run
                .samples
                .iter()
                .map(|s| s.orthogonality)
                .fold(0.0, f64::max);
            let outcome = match &run.failure {
                Some(error) => format!(
                    "diverged: ‖RᵀR − I‖ reached {residual:.1e}, then at t = {:.1}: {error}",
                    run.samples.last().map_or(0.0, |s| s.t)
                ),
                None => format!("stable to T = {t_end}, max ‖RᵀR − I‖ = {residual:.1e}"),
            };
            println!("- ω = {omega}, {}: {outcome}", method.label());
        }
    }
    let labelled: Vec<(String, &Run)> = runs
        .iter()
        .map(|(label, run, _)| (format!("{label}, h = {h}"), run))
        .collect();
    let (fig9, fig10) = (
        Path::new("out/magnetized_body_fig9.png"),
        Path::new("out/magnetized_body_fig10.png"),
    );
    fig9_chart(fig9, &labelled[..1], &reference)?;
    fig10_chart(fig10, &labelled, &reference)?;
    println!("\nwrote {} and {}", fig9.display(), fig10.display());
    Ok(())
}

/// Draws Fig. 10: for each run, the energy error `E − E₀`, `‖RᵀR − I‖_F` (log) and the deviation
/// `max_ij |R − R′|` from the benchmark against time.
fn fig10_chart(
    path: &Path,
    runs: &[(String, &Run)],
    reference: &Run,
) -> Result<(), Box<dyn Error>> {
    let mut energy = Panel::new(
        "energy error E(t) − E(0) (E = ½|Ω|² + Bμ R₃₃)",
        "t",
        "E − E₀",
    )
    .legend(Corner::UpperLeft);
    let mut orthogonality = Panel::new("Lie group structure: ‖RᵀR − I‖_F", "t", "‖RᵀR − I‖")
        .y_scale(Scale::Log)
        .legend(Corner::LowerRight);
    let mut deviations = Panel::new(
        "deviation from the benchmark (Cayley, h′ = 1e-4)",
        "t",
        "max |R − R′|",
    )
    .legend(Corner::UpperLeft);
    for (label, run) in runs {
        let e0 = run.samples[0].energy;
        let points = run.samples.iter().map(|s| (s.t, s.energy - e0));
        energy = energy.series(Series::new(label, points));
        let points = run.samples.iter().map(|s| (s.t, s.orthogonality));
        orthogonality = orthogonality.series(Series::new(label, points));
        let points = run
            .samples
            .iter()
            .zip(&reference.samples)
            .map(|(s, b)| (s.t, deviation(&s.r, &b.r).0));
        deviations = deviations.series(Series::new(label, points));
    }
    Ok(draw_panels(
        path,
        (1000, 1000),
        &[energy, orthogonality, deviations],
    )?)
}

/// Projects a direction of world space obliquely to the page: `x` to the right, `z` up, `y`
/// into the page (down and to the left).
fn project(d: &Vector3<f64>) -> (f64, f64) {
    (d.x - 0.4 * d.y, d.z - 0.3 * d.y)
}

/// Draws Fig. 9: snapshots of the dipole `R e₃` (black) against the field `e₃` (red) at eight
/// times, one row per run and one for the benchmark.
fn fig9_chart(path: &Path, runs: &[(String, &Run)], reference: &Run) -> Result<(), Box<dyn Error>> {
    let columns = 8;
    let mut rows: Vec<(String, &Run)> = runs.to_vec();
    rows.push(("benchmark (Cayley, h′ = 1e-4)".to_string(), reference));
    let root = canvas(path, (1200, 180 * rows.len() as u32 + 40))?;
    let (header, body) = root.split_vertically(40);
    header.draw(&Text::new(
        "Dipole R e3 (black, from the centre) against the uniform field e3 (red, left); x right, z up, y oblique",
        (10, 10),
        ("sans-serif", 20),
    ))?;
    let row_areas = body.split_evenly((rows.len(), 1));
    for ((label, run), row_area) in rows.iter().zip(&row_areas) {
        let (title, cells) = row_area.split_vertically(22);
        title.draw(&Text::new(label.as_str(), (10, 2), ("sans-serif", 16)))?;
        let t_last = run.samples.last().map_or(0.0, |s| s.t);
        let span = t_last.min(10.0);
        for (k, cell) in cells.split_evenly((1, columns)).iter().enumerate() {
            let t = span * k as f64 / (columns - 1) as f64;
            let Some(s) = run
                .samples
                .iter()
                .min_by(|a, b| (a.t - t).abs().total_cmp(&(b.t - t).abs()))
            else {
                continue;
            };
            let mut chart = ChartBuilder::on(cell)
                .caption(format!("t = {:.1}", s.t), ("sans-serif", 14))
                .margin(4)
                .build_cartesian_2d(-1.5..1.5, -1.3..1.3)?;
            let circle: Vec<(f64, f64)> = (0..=64)
                .map(|i| {
                    let a = std::f64::consts::TAU * i as f64 / 64.0;
                    (a.cos(), a.sin())
                })
                .collect();
            chart.draw_series(LineSeries::new(circle, &BLACK.mix(0.15)))?;
            let dipole = project(&(s.r * Vector3::z()));
            chart.draw_series(LineSeries::new(
                [(-1.35, -0.6), (-1.35, 0.6)],
                RED.stroke_width(3),
            ))?;
            chart.draw_series(LineSeries::new([(0.0, 0.0), dipole], BLACK.stroke_width(3)))?;
            chart.draw_series([Circle::new(dipole, 4, BLACK.filled())])?;
            chart.draw_series([Circle::new((-1.35, 0.6), 4, RED.filled())])?;
        }
    }
    root.present()
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(())
}
