//! Constant-temperature sampling with the Geometric Langevin Algorithm (Tao–Owhadi 2014 §4.3,
//! eq. 27–28; Bou-Rabee–Owhadi 2010): the exact Ornstein–Uhlenbeck flow of the momenta, then
//! one step of a deterministic integrator (`--method verlet` or `zss`).
//!
//! ```sh
//! cargo run --release --example langevin_oscillator                        # m = k = kT = γ = 1
//! cargo run --release --example langevin_oscillator -- --m 2 --k 3 --kt 0.5 --gamma 2 --seed 7
//! cargo run --release --example langevin_oscillator -- --penalized         # pendulum, ½ω²g²
//! ```
//!
//! Without `--penalized` it samples Cuell's planar harmonic oscillator
//! (`mechanism::models::PlanarOscillator`, `V = ½ k |q|²`) and prints, per coordinate, the
//! sampled `⟨q²⟩` and `⟨p²⟩` (`p = m v`) with batch-means standard errors next to the
//! Boltzmann–Gibbs values `kT/k` and `m kT`, and next to the chain's own stationary values,
//! which differ from those by the `O(h²)` bias of the discretization.
//!
//! With `--penalized` it samples a planar pendulum whose rod `g = x² + y² − l²` is the penalty
//! `½ω²g²` (`Penalized<PlanarPendulum>`, Tao–Owhadi eq. 7; the model is written with
//! `mechanism!` in `examples/common/sampling.rs`), writes the signed `g` (column
//! `constraint.rod`; `residual.position` is `|g|`) and the distance `|q| − l` to the CSV, and
//! prints the mean, the variance and a histogram of `g` against the exact marginal of the
//! Gibbs measure `exp(−βW) dq` and its Gaussian approximation `N(m G I₁/I₀ / (2lω²), kT/ω²)`
//! (derived in the docs of `sampling::GibbsMarginal`; for `kT/ω² ≪ l⁴`). The distance
//! `d = |q| − l` has the "stiff spring" variance `kT/(ω²|∇g|²)`, `|∇g| = 2l`.
//!
//! The same `--seed` gives the same CSV bytes (`tests/it/langevin_examples.rs`). The CSV holds
//! every `--every`-th step (default 100), so that 10⁶ steps stay a few MB; the statistics use
//! every step after `--burn-in`. `--plot` draws the sampled second moments against their
//! targets (oscillator) or the histogram of `g` against its Gibbs marginal (pendulum).

use mechanism_examples as common;
use mechanism_examples::sampling;

use std::error::Error;
use std::path::Path;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use common::{RunOptions, Thin};
use mechanism::pictures::canvas;
use mechanism::pictures::plotters::prelude::*;
use sampling::{discrete_covariance, Estimate, Inner, Settings};

/// The deterministic integrator inside GLA.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum InnerArg {
    /// Velocity Verlet.
    Verlet,
    /// Simplified Zhang–Skeel (Tao–Owhadi eq. 18), `β = 0.4`.
    Zss,
}

/// Samples a harmonic oscillator (or a penalized pendulum) at constant temperature with GLA.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Sample the penalized pendulum instead of the oscillator.
    #[arg(long)]
    penalized: bool,
    /// Deterministic integrator.
    #[arg(long = "method", value_enum, default_value_t = InnerArg::Verlet)]
    inner: InnerArg,
    /// Mass m (of the oscillator, or of the pendulum's bob).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    m: f64,
    /// Stiffness k of the oscillator.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    k: f64,
    /// Temperature kT.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    kt: f64,
    /// Friction γ (momentum decay rate γ/m).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    gamma: f64,
    #[command(flatten)]
    run: RunOptions,
    /// Number of steps, burn-in included (--t-end gives it as t_end / h instead).
    #[arg(long, default_value_t = 1_000_000, conflicts_with = "t_end")]
    #[arg(value_parser = common::cli::count, allow_negative_numbers = true)]
    steps: usize,
    /// Steps before the statistics start [default: steps/10].
    #[arg(long)]
    burn_in: Option<usize>,
    /// Number of batches of the batch-means standard errors.
    #[arg(long, default_value_t = 50)]
    batches: usize,
    /// Seed of the noise stream.
    #[arg(long, default_value_t = 2014)]
    seed: u64,
    /// Penalty frequency ω of the pendulum's rod.
    #[arg(long, default_value_t = 20.0, allow_negative_numbers = true)]
    omega: f64,
    /// Length l of the pendulum's rod.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    length: f64,
    /// Gravitational acceleration on the pendulum.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    gravity: f64,
}

fn main() -> ExitCode {
    common::exit_code(run(common::cli::parse::<Args>()))
}

fn run(args: Args) -> Result<(), Box<dyn Error>> {
    args.run.refuse_motion(
        "langevin_oscillator",
        "its rows sample a thermostatted run (every N-th of 10⁶ noisy steps) for statistics, \
         not a motion to watch",
    )?;
    args.run.refuse_checkpoints(
        "langevin_oscillator",
        "its sampling loop does not write checkpoints yet",
    )?;
    let h = args.run.h_or(if args.penalized { 0.005 } else { 0.05 });
    let steps = match args.run.t_end {
        Some(t_end) => common::step_count(h, t_end)?,
        None => args.steps,
    };
    // The CSV holds every 100th step by default (10⁶ steps in a few MB); with --save-every
    // the times choose the rows, and --every K keeps every K-th of them.
    let every = args.run.every_or(100);
    let settings = Settings {
        m: args.m,
        k: args.k,
        kt: args.kt,
        gamma: args.gamma,
        h,
        steps,
        burn_in: args.burn_in.unwrap_or(steps / 10),
        batches: args.batches,
        every,
        save_every: args.run.save_every,
        seed: args.seed,
        inner: match args.inner {
            InnerArg::Verlet => Inner::Verlet,
            InnerArg::Zss => Inner::Zss,
        },
        omega: args.omega,
        length: args.length,
        gravity: args.gravity,
        interrupt: Some(common::interrupt_flag()),
    };
    settings.validate()?;
    let name = if args.penalized {
        "langevin_pendulum"
    } else {
        "langevin_oscillator"
    };
    let path = args.run.csv_or(name);
    // The rows go to the file while the run goes, so that a killed run leaves them; the
    // sampler's schedule takes every N-th step, and --every thins the times of --save-every.
    let thin = if settings.save_every.is_some() {
        every
    } else {
        1
    };
    let rows = Thin::new(common::table_sink(&path)?, thin);
    println!(
        "GLA + {:?}, h = {}, γ = {}, kT = {}, seed {}: {} steps ({} burn-in, {} batches of {})",
        settings.inner,
        settings.h,
        settings.gamma,
        settings.kt,
        settings.seed,
        settings.steps,
        settings.burn_in,
        settings.batches,
        (settings.steps - settings.burn_in) / settings.batches
    );
    let png = args
        .run
        .plot
        .clone()
        .unwrap_or_else(|| path.with_extension("png"));
    let named = |error| common::in_file(error, &path);
    if args.penalized {
        let report = sampling::run_pendulum(&settings, rows).map_err(named)?;
        print_pendulum(&settings, &report);
        plot_histogram(&png, &report)?;
    } else {
        let report = sampling::run_oscillator(&settings, rows).map_err(named)?;
        print_oscillator(&settings, &report);
        plot_moments(&png, &settings, &report)?;
    }
    let rows = match settings.save_every {
        Some(dt) if every > 1 => format!("every {every}-th of every {dt} in time"),
        Some(dt) => format!("every {dt} in time"),
        None => format!("every {}-th step", settings.every),
    };
    println!("wrote {} ({rows}) and {}", path.display(), png.display());
    Ok(())
}

/// Plots each sampled second moment divided by its Boltzmann–Gibbs value, with ±2σ bars: all
/// should straddle 1.
fn plot_moments(
    path: &Path,
    settings: &Settings,
    report: &sampling::OscillatorReport,
) -> Result<(), Box<dyn Error>> {
    let (q2, p2) = (settings.kt / settings.k, settings.m * settings.kt);
    let moments = [
        ("<x²>", report.q2[0], q2),
        ("<y²>", report.q2[1], q2),
        ("<p_x²>", report.p2[0], p2),
        ("<p_y²>", report.p2[1], p2),
    ];
    let spread = moments
        .iter()
        .map(|(_, e, target)| ((e.mean - target).abs() + 2.0 * e.error) / target)
        .fold(0.01, f64::max);
    let root = canvas(path, (900, 500))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "GLA, planar oscillator: sampled moment / Boltzmann–Gibbs value (±2σ)",
            ("sans-serif", 20),
        )
        .margin(15)
        .x_label_area_size(35)
        .y_label_area_size(60)
        .build_cartesian_2d(-0.5..3.5f64, (1.0 - 1.5 * spread)..(1.0 + 1.5 * spread))?;
    chart
        .configure_mesh()
        .x_labels(4)
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() < 1e-9 && (0.0..4.0).contains(&i) {
                moments[i as usize].0.to_string()
            } else {
                String::new()
            }
        })
        .draw()?;
    chart.draw_series(LineSeries::new(
        [(-0.5, 1.0), (3.5, 1.0)],
        BLACK.stroke_width(1),
    ))?;
    for (i, (_, estimate, target)) in moments.iter().enumerate() {
        let x = i as f64;
        let (mean, error) = (estimate.mean / target, estimate.error / target);
        chart.draw_series(std::iter::once(Circle::new((x, mean), 5, BLUE.filled())))?;
        chart.draw_series(LineSeries::new(
            [(x, mean - 2.0 * error), (x, mean + 2.0 * error)],
            BLUE.stroke_width(2),
        ))?;
    }
    root.present()?;
    Ok(())
}

/// Plots the sampled histogram of `g` against the exact Gibbs marginal, bin by bin.
fn plot_histogram(path: &Path, report: &sampling::PendulumReport) -> Result<(), Box<dyn Error>> {
    let gibbs = &report.gibbs;
    let centres: Vec<f64> = gibbs
        .edges
        .windows(2)
        .map(|e| 0.5 * (e[0] + e[1]))
        .collect();
    let top = report
        .histogram
        .iter()
        .chain(&gibbs.bins)
        .fold(0.0f64, |m, &p| m.max(p));
    let (first, last) = (gibbs.edges[0], gibbs.edges[gibbs.edges.len() - 1]);
    let root = canvas(path, (900, 500))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "GLA, penalized pendulum: distribution of g = x² + y² − l²",
            ("sans-serif", 20),
        )
        .margin(15)
        .x_label_area_size(35)
        .y_label_area_size(60)
        .build_cartesian_2d(first..last, 0.0..1.1 * top)?;
    chart
        .configure_mesh()
        .x_desc("g")
        .y_desc("fraction per bin")
        .x_label_formatter(&|g| format!("{g:.1e}"))
        .draw()?;
    chart
        .draw_series(LineSeries::new(
            centres.iter().copied().zip(gibbs.bins.iter().copied()),
            RED.stroke_width(2),
        ))?
        .label("exact Gibbs marginal")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], RED));
    chart
        .draw_series(
            centres
                .iter()
                .zip(&report.histogram)
                .map(|(&g, &p)| Circle::new((g, p), 4, BLUE.filled())),
        )?
        .label("sampled")
        .legend(|(x, y)| Circle::new((x + 10, y), 4, BLUE.filled()));
    chart
        .configure_series_labels()
        .background_style(WHITE)
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

/// Formats an estimate against a prediction: `mean ± error (|Δ|/σ)`.
fn versus(estimate: Estimate, prediction: f64) -> String {
    format!(
        "{:.5} ± {:.5}  (Δ = {:+.2}σ)",
        estimate.mean,
        estimate.error,
        (estimate.mean - prediction) / estimate.error
    )
}

fn print_oscillator(settings: &Settings, report: &sampling::OscillatorReport) {
    let (q2, p2) = (settings.kt / settings.k, settings.m * settings.kt);
    println!(
        "planar oscillator m = {}, k = {}: Boltzmann–Gibbs ⟨q²⟩ = kT/k = {q2:.5}, ⟨p²⟩ = m kT = \
         {p2:.5}",
        settings.m, settings.k
    );
    println!(
        "  the chain's exact stationary values (O(h²) bias): ⟨q²⟩ = {:.5}, ⟨p²⟩ = {:.5}",
        report.discrete.0, report.discrete.1
    );
    for (i, name) in ["x", "y"].into_iter().enumerate() {
        println!("  ⟨{name}²⟩   = {}   vs kT/k", versus(report.q2[i], q2));
        println!("  ⟨p_{name}²⟩ = {}   vs m kT", versus(report.p2[i], p2));
    }
}

fn print_pendulum(settings: &Settings, report: &sampling::PendulumReport) {
    let gibbs = &report.gibbs;
    let stiff = 2.0 * settings.omega * settings.length / settings.m.sqrt();
    println!(
        "penalized pendulum m = {}, l = {}, G = {}, ω = {}: stiff frequency Ω = 2ωl/√m = {stiff:.3}, \
         hΩ = {:.3}",
        settings.m,
        settings.length,
        settings.gravity,
        settings.omega,
        settings.h * stiff
    );
    let (q2, _) = discrete_covariance(
        settings.m,
        settings.m * stiff * stiff,
        settings.gamma,
        settings.kt,
        settings.h,
        settings.inner,
    );
    let bias = q2 / (settings.kt / (settings.m * stiff * stiff));
    println!(
        "  g = x² + y² − l²: mean     {}   vs exact Gibbs marginal {:.3e} (Gaussian approx. {:.3e})",
        versus(report.mean, gibbs.mean),
        gibbs.mean,
        gibbs.gaussian_mean
    );
    println!(
        "                    variance {}   vs exact Gibbs marginal {:.5e} (Gaussian kT/ω² = {:.5e})",
        versus(report.variance, gibbs.variance),
        gibbs.variance,
        gibbs.gaussian_variance
    );
    println!(
        "                    the chain's variance of a harmonic mode at hΩ is {bias:.4} × the exact \
         one: expect ≈ {:.5e}",
        bias * gibbs.variance
    );
    let normal = settings.kt / (settings.omega * 2.0 * settings.length).powi(2);
    println!(
        "  d = |q| − l:      mean     {:.3e} ± {:.1e}, variance {}   vs kT/(ω²|∇g|²) = {normal:.5e}",
        report.distance_mean.mean,
        report.distance_mean.error,
        versus(report.distance_variance, normal)
    );
    println!("  histogram of g (fraction of samples; exact Gibbs marginal in brackets):");
    let widest = report.histogram.iter().fold(0.0f64, |m, &f| m.max(f));
    for (i, (&sampled, &exact)) in report.histogram.iter().zip(&gibbs.bins).enumerate() {
        let bar = "#".repeat((50.0 * sampled / widest.max(f64::MIN_POSITIVE)).round() as usize);
        println!(
            "    [{:+.4}, {:+.4})  {sampled:.4} [{exact:.4}]  {bar}",
            gibbs.edges[i],
            gibbs.edges[i + 1]
        );
    }
}
