//! A sweep over methods and step sizes: the energy error of Tao–Owhadi's double pendulum
//! (§4.1, ten seconds from `q0 = (0, −1, 1, −2)`) against `h` for several integrators, every
//! `(method, h)` pair one member of an ensemble run on all cores (`mechanism::ensemble`), as one
//! CSV and one log-log plot.
//!
//! ```sh
//! cargo run --release --example sweep                                   # 5 methods × 6 steps
//! cargo run --release --example sweep -- --method rattle,livens --h 0.1,0.05,0.025
//! cargo run --release --example sweep -- --shard 2/4 --out out/sweep-2.csv   # one array task
//! ```
//!
//! The error of a member is `max_k |E_k − E_0|` over every step of the energy the method
//! conserves or nearly conserves: `T + V` for the methods on the hard constraints,
//! `T + V + ½ω²|g|²` for those on the penalized model (`energy.penalized`). A member whose run
//! fails (a Newton iteration that does not converge at a large step) is a row with its error
//! message in `status` and no point in the plot.
//!
//! On a cluster, `--shard k/n` runs the `k`-th of `n` contiguous blocks of members (`k` from 1,
//! like `$SLURM_ARRAY_TASK_ID` with `--array=1-n`); only shard 1 writes the CSV header, so
//! `cat out/sweep-{1..n}.csv > out/sweep.csv` is the single-machine file byte for byte, and
//! the plot is drawn only by an unsharded run. A shard also writes a manifest beside its part
//! (`out/sweep-2.csv.manifest`: shard, members, rows, bytes, CRC-32) once the part is
//! complete; `--verify out/sweep-*.csv.manifest` checks each part against its manifest and
//! exits non-zero naming every shard to run again (a missing manifest: the shard never
//! finished; a part of another size or checksum: truncated or changed):
//!
//! ```sh
//! cargo run --release --example sweep -- --verify out/sweep-1.csv.manifest out/sweep-2.csv.manifest
//! ```

use mechanism_examples as common;
#[path = "double_pendulum/methods.rs"]
mod methods;

use std::error::Error;
use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use common::{max_deviation, plan, Trajectory};
use mechanism::ensemble::{grid, verify_shard, Cell, Ensemble, EnsembleCsv, Shard, ShardManifest};
use mechanism::models::DoublePendulum;
use mechanism::pictures::{draw_panels, Corner, Panel, Scale, Series};
use mechanism::runtime::reference::fit::loglog_slope;
use mechanism::runtime::simulation::SimulationError;
use methods::{simulate, Method};

/// Sweeps methods × step sizes on the double pendulum and plots the energy error against h.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Integrators, comma-separated (the names of `double_pendulum --method`).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "spook,rattle,livens,zss,newmark"
    )]
    method: Vec<Method>,
    /// Step sizes, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0.1,0.05,0.025,0.0125,0.00625,0.003125",
        allow_hyphen_values = true,
        value_parser = common::cli::positive
    )]
    h: Vec<f64>,
    /// End time of every run.
    #[arg(long, default_value_t = 10.0, allow_hyphen_values = true)]
    #[arg(value_parser = common::cli::positive)]
    t_end: f64,
    /// Penalty frequency ω of the penalized methods.
    #[arg(long, default_value_t = 20.0, allow_negative_numbers = true)]
    omega: f64,
    /// Parameter β of Z&S, Z&Ss and the Newmark methods.
    #[arg(long, default_value_t = 0.4, allow_negative_numbers = true)]
    beta: f64,
    /// Output CSV, one row per member (written when every member has run).
    #[arg(long, value_name = "FILE.csv", default_value = "out/sweep.csv")]
    #[arg(value_parser = common::cli::output)]
    out: PathBuf,
    /// Output plot (unsharded runs only).
    #[arg(long, value_name = "FILE.png", default_value = "out/sweep.png")]
    #[arg(value_parser = common::cli::output)]
    plot: PathBuf,
    /// Refused: the sweep writes one row per member (method, h), not rows in time.
    #[arg(long, value_name = "DT", allow_hyphen_values = true)]
    #[arg(value_parser = common::cli::positive)]
    save_every: Option<f64>,
    /// Refused: as --save-every.
    #[arg(long, value_name = "K", allow_negative_numbers = true, value_parser = common::cli::count)]
    every: Option<usize>,
    /// Worker threads [default: one per core]; the results do not depend on it.
    #[arg(long)]
    threads: Option<usize>,
    /// Run only the k-th of n blocks of members (k from 1), e.g. a SLURM array task.
    #[arg(long, value_name = "k/n", default_value_t = Shard::WHOLE)]
    shard: Shard,
    /// Check shards' parts against their manifests (FILE.csv.manifest) instead of running;
    /// exits non-zero if one is missing, truncated or changed.
    #[arg(long, value_name = "MANIFEST", num_args = 1..)]
    verify: Vec<PathBuf>,
}

/// What one member measured.
struct Outcome {
    /// Steps taken (fewer than asked if the run failed).
    steps: usize,
    /// `max_k |E_k − E_0|` of the conserved energy, over the steps taken.
    energy_error: f64,
    /// `max_k max_i |g_i|` of the hard constraints.
    position_residual: f64,
    /// The failure, if the run stopped early.
    failure: Option<String>,
}

fn main() -> ExitCode {
    common::exit_code(run(common::cli::parse::<Args>()))
}

fn run(args: Args) -> Result<(), Box<dyn Error>> {
    if !args.verify.is_empty() {
        return verify(&args.verify);
    }
    if !(args.omega.is_finite() && args.omega > 0.0) {
        return Err(format!("--omega must be a positive number, got {}", args.omega).into());
    }
    common::csv_only(&args.out, "the sweep's table")?;
    if args.save_every.is_some() || args.every.is_some() {
        return Err(
            "--save-every and --every are not offered by sweep: it writes one row per \
                    member (method, h) with its energy error, not rows in time"
                .into(),
        );
    }
    let model = DoublePendulum::default();
    let mut ensemble = Ensemble::new(grid(&args.method, &args.h)).shard(args.shard);
    if let Some(threads) = args.threads {
        ensemble = ensemble.threads(threads);
    }
    let indices = ensemble.indices();
    println!(
        "shard {}: members {}..{} of {} ({} methods × {} step sizes), t_end = {}",
        args.shard,
        indices.start,
        indices.end,
        ensemble.all_members().len(),
        args.method.len(),
        args.h.len(),
        args.t_end
    );
    let outcomes = ensemble.try_map(|member| {
        let &(method, h) = member.parameters;
        measure(&model, method, h, &args).map_err(|e| e.to_string())
    })?;

    common::create_parent(&args.out)?;
    let file = File::create(&args.out)
        .map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;
    let columns = [
        "method",
        "h",
        "steps",
        "energy_error",
        "residual.position",
        "status",
    ];
    let mut csv = EnsembleCsv::new(BufWriter::new(file), args.shard, &columns)?;
    println!(
        "{:<22} {:>10} {:>12} {:>12}",
        "method", "h", "|E - E0|", "max |g|"
    );
    for (index, outcome) in indices.clone().zip(&outcomes) {
        let (method, h) = ensemble.all_members()[index];
        let status = outcome.failure.as_deref().unwrap_or("ok");
        csv.row(
            index,
            &[
                Cell::Text(method.label()),
                Cell::Number(h),
                Cell::Number(outcome.steps as f64),
                Cell::Number(outcome.energy_error),
                Cell::Number(outcome.position_residual),
                Cell::Text(status),
            ],
        )?;
        let error = match &outcome.failure {
            None => format!(
                "{:12.3e} {:12.3e}",
                outcome.energy_error, outcome.position_residual
            ),
            Some(failure) => format!("failed: {failure}"),
        };
        println!("{:<22} {h:>10} {error}", method.label());
    }
    let (_, summary) = csv.finish()?;
    println!("wrote {}", args.out.display());
    if args.shard != Shard::WHOLE {
        let total = ensemble.all_members().len();
        let manifest = ShardManifest::path_for(&args.out);
        ShardManifest::new(&args.out, args.shard, total, summary).write(&manifest)?;
        println!("wrote {} ({} rows)", manifest.display(), summary.rows);
    }

    if args.shard != Shard::WHOLE {
        println!("(a shard draws no plot: concatenate the shards' CSV files, in order)");
        return Ok(());
    }
    let lines: Vec<(&str, Vec<(f64, f64)>)> = args
        .method
        .iter()
        .map(|&method| {
            let points = ensemble
                .all_members()
                .iter()
                .zip(&outcomes)
                .filter(|((m, _), o)| *m == method && o.failure.is_none())
                .map(|(&(_, h), o)| (h, o.energy_error))
                .collect();
            (method.label(), points)
        })
        .collect();
    for (label, points) in &lines {
        match tail_slope(points) {
            Some(slope) => println!("{label}: slope {slope:.2} over the two smallest steps"),
            None => println!("{label}: no slope (fewer than two completed runs with errors above round-off, 1e-12)"),
        }
    }
    plot_errors(&args, &lines)?;
    println!("wrote {}", args.plot.display());
    Ok(())
}

/// Checks each shard's part against its manifest, prints one line per shard, and fails if
/// one does not match.
fn verify(manifests: &[PathBuf]) -> Result<(), Box<dyn Error>> {
    let mut failed = 0;
    for manifest in manifests {
        match verify_shard(manifest) {
            Ok(m) => println!(
                "ok: shard {} ({}, members {}..{}, {} rows)",
                m.shard,
                m.part.display(),
                m.members.start,
                m.members.end,
                m.summary.rows
            ),
            Err(error) => {
                println!("rerun: {error}");
                failed += 1;
            }
        }
    }
    match failed {
        0 => Ok(()),
        n => Err(format!("{n} of {} shards must run again", manifests.len()).into()),
    }
}

/// Runs `method` at step `h` for `args.t_end` and measures its energy error.
fn measure(
    model: &DoublePendulum,
    method: Method,
    h: f64,
    args: &Args,
) -> Result<Outcome, Box<dyn Error>> {
    let mut plan = plan(h, args.t_end, None)?;
    plan.progress = false;
    let trajectory: Trajectory = simulate(method, model, args.omega, args.beta, &plan)?;
    if let Some(error @ SimulationError::Interrupted { .. }) = &trajectory.failure {
        // SIGINT or SIGTERM: the sweep stops rather than recording the rest as failures.
        return Err(error.to_string().into());
    }
    let energy = trajectory
        .column("energy.penalized")
        .unwrap_or_else(|| trajectory.energy());
    Ok(Outcome {
        steps: trajectory.summary.steps,
        energy_error: max_deviation(&energy),
        position_residual: trajectory.summary.max_position_residual,
        failure: trajectory.failure.as_ref().map(ToString::to_string),
    })
}

/// Returns the log-log slope of the two points of smallest `h`, if there are two with errors
/// above round-off.
fn tail_slope(points: &[(f64, f64)]) -> Option<f64> {
    let mut sorted = points.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let [(h0, e0), (h1, e1), ..] = sorted[..] else {
        return None;
    };
    if e0 > 1e-12 && e1 > 1e-12 {
        loglog_slope(&[h0, h1], &[e0, e1]).ok()
    } else {
        None
    }
}

/// Draws the energy error against h on log-log axes, one line per method, with the slope `h²`
/// for reference.
fn plot_errors(args: &Args, lines: &[(&str, Vec<(f64, f64)>)]) -> Result<(), Box<dyn Error>> {
    let points = || lines.iter().flat_map(|(_, p)| p.iter().copied());
    let h_min = points().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let h_max = points().map(|p| p.0).fold(0.0, f64::max);
    if !(h_min.is_finite() && h_max > 0.0) {
        return Err("no member completed: nothing to plot".into());
    }
    let mut panel = Panel::new(
        format!(
            "double pendulum, t_end = {}: energy error against h (omega = {})",
            args.t_end, args.omega
        ),
        "h",
        "max |E - E0|",
    )
    .x_scale(Scale::Log)
    .y_scale(Scale::Log)
    .legend(Corner::LowerRight);
    for (label, points) in lines {
        let mut sorted = points.clone();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
        panel = panel.series(Series::new(*label, sorted).with_markers());
    }
    // The second-order slope from a tenth of the geometric mean of the errors (above
    // round-off) at the largest step, so that it runs among the methods' lines; drawn out to
    // 4 h_max, which leaves the legend a corner free of data.
    let at_largest: Vec<f64> = points()
        .filter(|&(h, e)| h == h_max && e > 1e-12)
        .map(|(_, e)| e.ln())
        .collect();
    if !at_largest.is_empty() {
        let anchor = (at_largest.iter().sum::<f64>() / at_largest.len() as f64).exp() / 10.0;
        let line = [h_min, 4.0 * h_max].map(|h| (h, anchor * (h / h_max).powi(2)));
        panel = panel.series(Series::new("O(h^2)", line));
    }
    draw_panels(&args.plot, (900, 650), &[panel])?;
    Ok(())
}
