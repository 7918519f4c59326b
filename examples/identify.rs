//! Fitting a model to measured data: the damped planar double pendulum
//! (`models::DampedDoublePendulum`: bobs `m1`, `m2` on rods `l1`, `l2` from a fixed pivot,
//! gravity `g` along −y, Rayleigh dissipation `R = ½ c (|ṗ₁|² + |ṗ₂|²)`) released from rest,
//! its unknown `m2`, `g`, `c` and initial rod angles `θ₁`, `θ₂` (each rod's from −y) estimated
//! from measured bob positions by Levenberg–Marquardt with the exact sensitivities of the
//! simulated motion (`mechanism::identify`).
//!
//! ```sh
//! cargo run --release --example identify                          # synthetic data, DOPRI5
//! cargo run --release --example identify -- --data lab.csv --guess m2=1,g=9,c=0.1 --out fit.json
//! cargo run --release --example identify -- --method rk4 --h 0.005 --compare-fd
//! ```
//!
//! `--data FILE.csv` holds the measurements: a header naming `t`, `x1`, `y1`, `x2`, `y2` (any
//! order, other columns ignored) and rows at any times `t ≥ 0` (the release is at `t = 0`);
//! a row that cannot be read is an error naming its line and column. Without `--data`, the
//! example makes data from `--truth` (default `m2=1.5,g=9.81,c=0.3,theta1=1.2,theta2=-0.6`)
//! simulated by DOPRI5 at rtol 1e-12 every `--sample-every` (0.05) to `--t-end` (5) with
//! Gaussian noise `--noise` (1e-3, `--seed`), and writes them to `out/identify_data.csv`. With
//! `--data`, `--t-end` leaves out the rows after it (said, never silent); the model is
//! simulated to the last row kept, so nothing is extrapolated.
//!
//! Known: `--m1`, `--l1`, `--l2` (1, 1, √2). The starting guess: `--guess m2=1,g=9,c=0.1`,
//! with `theta1`, `theta2` from the first row's rods unless given. The simulation: `--method
//! dopri5` (default; error control at `--rtol` 1e-10, `--atol` 0.1 rtol, S-both², landing on
//! every measurement time), `rk4` or `spook` at the step `--h` (0.005; Hermite interpolation
//! between steps). `--jacobian fd` fits with central differences instead of the exact
//! sensitivities; `--compare-fd` runs both and prints them side by side.
//!
//! Outputs: the table of estimates with standard errors (the Gauss–Newton covariance scaled by
//! the residual variance), the iterations and the time; `--out FILE.json` writes
//! `{"m2": {"value", "std"}, "g", "c", "theta1", "theta2", "rms_residual", "iterations"}`;
//! otherwise `--out` (default `out/identify.csv`) takes the rows of the fitted model's run
//! (the examples' columns; `--save-every`, `--every`). The plot (`--plot`, default
//! `out/identify.png`) shows the data against the fit and the residuals.

use mechanism_examples as common;

use std::error::Error;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;

use clap::{Parser, ValueEnum};
use common::{RunOptions, Trajectory};
use mechanism::identify::{
    identify, simulate, synthesize, Derivatives, Identification, Known, Measurements, Method,
    FITTED,
};
use mechanism::pictures::{draw_panels, Corner, Frame, Panel, Series, Sketch};
use mechanism::runtime::identification::LevenbergMarquardt;
use mechanism::runtime::integrators::stabilized::{
    Dopri5, PostStabilization, StabilizedRk, DOPRI5, RK4,
};
use mechanism::runtime::Spook;

/// The integrator of the simulations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum MethodArg {
    /// DOPRI5 with error control and S-both² (Ascher et al. 1995).
    Dopri5,
    /// RK4 at the fixed step --h with S-both².
    Rk4,
    /// SPOOK (Lacoursière 2007) at the fixed step --h; first order.
    Spook,
}

/// How the residuals' Jacobian is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum JacobianArg {
    /// The exact sensitivities of the simulated motion.
    Exact,
    /// Central differences (ten more simulations per evaluation).
    Fd,
}

/// Fits m2, g, c and the initial angles of a damped double pendulum to measured positions.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// The measurements (CSV with t,x1,y1,x2,y2) [default: synthetic data from --truth].
    #[arg(long, value_name = "FILE")]
    data: Option<PathBuf>,
    /// The integrator.
    #[arg(long, value_enum, default_value_t = MethodArg::Dopri5)]
    method: MethodArg,
    /// Relative tolerance of dopri5 [default: 1e-10].
    #[arg(long, value_parser = common::cli::positive)]
    rtol: Option<f64>,
    /// Absolute tolerance of dopri5 [default: 0.1 rtol].
    #[arg(long, value_parser = common::cli::positive)]
    atol: Option<f64>,
    /// Mass of the first bob (known).
    #[arg(long, default_value_t = 1.0, value_parser = common::cli::positive)]
    m1: f64,
    /// Length of the first rod (known).
    #[arg(long, default_value_t = 1.0, value_parser = common::cli::positive)]
    l1: f64,
    /// Length of the second rod (known).
    #[arg(long, default_value_t = std::f64::consts::SQRT_2, value_parser = common::cli::positive)]
    l2: f64,
    /// The starting guess, `name=value` pairs of m2, g, c, theta1, theta2.
    #[arg(long, default_value = "m2=1,g=9,c=0.1")]
    guess: String,
    /// The true values of the synthetic data (without --data)
    /// [default: m2=1.5,g=9.81,c=0.3,theta1=1.2,theta2=-0.6].
    #[arg(long)]
    truth: Option<String>,
    /// The synthetic data's noise, a standard deviation [default: 1e-3].
    #[arg(long, value_parser = common::cli::positive)]
    noise: Option<f64>,
    /// The seed of the synthetic data's noise [default: 1].
    #[arg(long)]
    seed: Option<u64>,
    /// The interval between synthetic measurements [default: 0.05].
    #[arg(long, value_parser = common::cli::positive)]
    sample_every: Option<f64>,
    /// The residuals' Jacobian.
    #[arg(long, value_enum, default_value_t = JacobianArg::Exact)]
    jacobian: JacobianArg,
    /// Also fit with the other Jacobian and print both side by side.
    #[arg(long)]
    compare_fd: bool,
    /// The most Levenberg–Marquardt trial steps.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    max_iterations: u32,
    #[command(flatten)]
    run: RunOptions,
}

/// The default step of the fixed-step methods, the synthetic data's end and dopri5's rtol.
const H: f64 = 0.005;
const T_END: f64 = 5.0;
const RTOL: f64 = 1e-10;
/// The default truth of the synthetic data.
const TRUTH: &str = "m2=1.5,g=9.81,c=0.3,theta1=1.2,theta2=-0.6";

fn main() -> ExitCode {
    common::exit_code(run(common::cli::parse::<Args>()))
}

fn run(args: Args) -> Result<(), Box<dyn Error>> {
    args.run
        .refuse_checkpoints("identify", "a fit is not a resumable run")?;
    let known = Known {
        m1: args.m1,
        l1: args.l1,
        l2: args.l2,
    };
    let method = method(&args)?;
    let synthetic = [
        ("--truth", args.truth.is_some()),
        ("--noise", args.noise.is_some()),
        ("--seed", args.seed.is_some()),
        ("--sample-every", args.sample_every.is_some()),
    ];
    if let (Some(_), Some((option, _))) = (&args.data, synthetic.iter().find(|(_, set)| *set)) {
        return Err(format!("{option} makes synthetic data; it does not apply with --data").into());
    }
    // Refuse a malformed guess before the data are read or made.
    named_values(&args.guess, "--guess", Some([0.0; 2]))?;
    let stop = common::interrupt_flag();
    let mut proceed = |_t: f64| !stop.load(Ordering::Relaxed);
    let data = match &args.data {
        Some(path) => measured(&args, path)?,
        None => {
            let truth = args.truth.as_deref().unwrap_or(TRUTH);
            let truth = named_values(truth, "--truth", None)?;
            let (noise, seed) = (args.noise.unwrap_or(1e-3), args.seed.unwrap_or(1));
            let sample_every = args.sample_every.unwrap_or(0.05);
            let t_end = args.run.t_end_or(T_END);
            let count = (t_end / sample_every).floor() as usize;
            let times: Vec<f64> = (0..=count).map(|i| i as f64 * sample_every).collect();
            let exact = Method::Dopri5 {
                rtol: 1e-12,
                atol: 1e-13,
                first_step: None,
            };
            let noise = (noise, seed);
            let data = synthesize(&known, &truth, exact, &times, noise, &mut proceed)?;
            let path = Path::new("out/identify_data.csv");
            data.write_csv(path)?;
            println!(
                "synthetic data: {} rows over [0, {}] from m2 = {}, g = {}, c = {}, θ₁ = {}, \
                 θ₂ = {} with noise σ = {:e} (seed {}), written to {}",
                data.t.len(),
                times.last().copied().unwrap_or(0.0),
                truth[0],
                truth[1],
                truth[2],
                truth[3],
                truth[4],
                noise.0,
                noise.1,
                path.display()
            );
            data
        }
    };
    let guess = named_values(&args.guess, "--guess", Some(data.first_angles()))?;
    let settings = LevenbergMarquardt {
        max_iterations: args.max_iterations as usize,
        ..LevenbergMarquardt::default()
    };
    let derivatives = match args.jacobian {
        JacobianArg::Exact => Derivatives::Exact,
        JacobianArg::Fd => Derivatives::FiniteDifferences,
    };
    println!("{}", describe(method));
    let fit = identify(
        &data,
        &known,
        &guess,
        method,
        derivatives,
        &settings,
        &mut proceed,
    )?;
    let mut fits = vec![(derivatives, fit)];
    if args.compare_fd {
        let other = match derivatives {
            Derivatives::Exact => Derivatives::FiniteDifferences,
            Derivatives::FiniteDifferences => Derivatives::Exact,
        };
        let fit = identify(
            &data,
            &known,
            &guess,
            method,
            other,
            &settings,
            &mut proceed,
        )?;
        fits.push((other, fit));
    }
    print_table(&guess, &fits);
    let fit = &fits[0].1;
    let estimates: [f64; 5] = std::array::from_fn(|k| fit.estimates[k].value);

    let json = args
        .run
        .out
        .clone()
        .filter(|path| path.extension().is_some_and(|e| e == "json"));
    if let Some(path) = &json {
        write_json(path, fit)?;
        println!("wrote {}", path.display());
    }
    let rows = match &json {
        Some(_) => PathBuf::from("out/identify.csv"),
        None => args.run.csv_or("identify"),
    };
    let t_end = data.t.last().copied().unwrap_or(0.0);
    let trajectory = fitted_run(&args, &known, &estimates, t_end, &rows)?;
    let at_data = simulate(&known, &estimates, method, &data.t, &mut proceed)?;
    let title = format!(
        "fit to {} rows: m2 = {:.4}, g = {:.4}, c = {:.4}",
        data.t.len(),
        estimates[0],
        estimates[1],
        estimates[2]
    );
    args.run.draw_motion(&title, &trajectory.table, &scene())?;
    let png = args.run.png_or("identify");
    plot(&png, &title, &data, &at_data, &trajectory)?;
    println!(
        "wrote {} ({} rows) and {}",
        rows.display(),
        trajectory.table.len(),
        png.display()
    );
    trajectory.outcome()?;
    Ok(())
}

/// The simulation method of the command line.
fn method(args: &Args) -> Result<Method, Box<dyn Error>> {
    if args.method != MethodArg::Dopri5 && (args.rtol.is_some() || args.atol.is_some()) {
        return Err("--rtol and --atol apply to --method dopri5 only".into());
    }
    Ok(match args.method {
        MethodArg::Dopri5 => {
            let rtol = args.rtol.unwrap_or(RTOL);
            Method::Dopri5 {
                rtol,
                atol: args.atol.unwrap_or(0.1 * rtol),
                first_step: args.run.h,
            }
        }
        MethodArg::Rk4 => Method::Rk4 {
            h: args.run.h_or(H),
        },
        MethodArg::Spook => Method::Spook {
            h: args.run.h_or(H),
        },
    })
}

fn describe(method: Method) -> String {
    match method {
        Method::Dopri5 { rtol, atol, .. } => {
            format!("DOPRI5, rtol = {rtol:.1e}, atol = {atol:.1e}, S-both²")
        }
        Method::Rk4 { h } => format!("RK4, h = {h}, S-both²"),
        Method::Spook { h } => format!("SPOOK, h = {h}"),
    }
}

/// Reads `path`, leaving out (and saying so) the rows after `--t-end`.
fn measured(args: &Args, path: &Path) -> Result<Measurements, Box<dyn Error>> {
    let mut data = Measurements::read_csv(path)?;
    let total = data.t.len();
    println!(
        "data: {total} rows over [{}, {}] from {}",
        data.t[0],
        data.t[total - 1],
        path.display()
    );
    if let Some(t_end) = args.run.t_end {
        let kept = data.t.partition_point(|&t| t <= t_end);
        if kept < 2 {
            return Err(format!(
                "--t-end {t_end} leaves {kept} of the {total} rows of {}; the fit needs 2",
                path.display()
            )
            .into());
        }
        if kept < total {
            data.t.truncate(kept);
            data.positions.truncate(kept);
            println!(
                "--t-end {t_end}: fitting the first {kept} rows, leaving out {}",
                total - kept
            );
        }
    }
    Ok(data)
}

/// Parses `name=value` pairs of the fitted quantities; `angles` fill in `theta1`, `theta2`
/// when they are not given (otherwise every one must be).
fn named_values(
    text: &str,
    option: &str,
    angles: Option<[f64; 2]>,
) -> Result<[f64; 5], Box<dyn Error>> {
    let mut values: [Option<f64>; 5] = [None; 5];
    for pair in text.split(',').filter(|p| !p.trim().is_empty()) {
        let (name, value) = pair
            .split_once('=')
            .ok_or_else(|| format!("{option}: `{pair}` is not name=value"))?;
        let index = FITTED
            .iter()
            .position(|n| *n == name.trim())
            .ok_or_else(|| {
                format!(
                    "{option}: unknown name `{}` (the fitted quantities are {})",
                    name.trim(),
                    FITTED.join(", ")
                )
            })?;
        let value: f64 = value
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| format!("{option}: `{}` is not a finite number", value.trim()))?;
        values[index] = Some(value);
    }
    if let Some([theta1, theta2]) = angles {
        values[3] = values[3].or(Some(theta1));
        values[4] = values[4].or(Some(theta2));
    }
    let mut out = [0.0; 5];
    for (k, value) in values.iter().enumerate() {
        out[k] = value.ok_or_else(|| format!("{option}: no value for {}", FITTED[k]))?;
    }
    Ok(out)
}

/// Prints the estimates with their standard errors, beside the guess, one column per fit.
fn print_table(guess: &[f64; 5], fits: &[(Derivatives, Identification)]) {
    let label = |d: Derivatives| match d {
        Derivatives::Exact => "exact sensitivities",
        Derivatives::FiniteDifferences => "central differences",
    };
    print!("\n{:<14} {:>12}", "", "guess");
    for (d, _) in fits {
        print!(" {:>36}", label(*d));
    }
    println!();
    for (k, name) in FITTED.iter().enumerate() {
        print!("{name:<14} {:>12.6}", guess[k]);
        for (_, fit) in fits {
            let e = fit.estimates[k];
            print!(" {:>20.10} ± {:<13.3e}", e.value, e.std);
        }
        println!();
    }
    type Cell = fn(&Identification) -> String;
    let rows: [(&str, Cell); 4] = [
        ("rms residual", |f| format!("{:.4e}", f.rms_residual)),
        ("iterations", |f| f.iterations.to_string()),
        ("evaluations", |f| {
            format!("{} ({:?})", f.evaluations, f.convergence)
        }),
        ("time", |f| format!("{:.3} s", f.elapsed.as_secs_f64())),
    ];
    for (name, value) in rows {
        print!("{name:<14} {:>12}", "");
        for (_, fit) in fits {
            print!(" {:>36}", value(fit));
        }
        println!();
    }
    println!();
}

fn write_json(path: &Path, fit: &Identification) -> Result<(), Box<dyn Error>> {
    let mut json = serde_json::Map::new();
    for (name, e) in FITTED.iter().zip(&fit.estimates) {
        json.insert(
            name.to_string(),
            serde_json::json!({ "value": e.value, "std": e.std }),
        );
    }
    json.insert("rms_residual".into(), fit.rms_residual.into());
    json.insert("iterations".into(), fit.iterations.into());
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir)?;
    }
    fs::write(path, serde_json::to_string_pretty(&json)?)?;
    Ok(())
}

/// Runs the fitted model from its release to `t_end` through the examples' harness, its rows
/// streamed to `rows`.
fn fitted_run(
    args: &Args,
    known: &Known,
    estimates: &[f64; 5],
    t_end: f64,
    rows: &Path,
) -> Result<Trajectory, Box<dyn Error>> {
    let model = known.model(estimates);
    let initial = model.released(estimates[3], estimates[4]);
    match method(args)? {
        Method::Dopri5 {
            rtol,
            atol,
            first_step,
        } => {
            let mut dopri = Dopri5::<4, 2>::new(DOPRI5, rtol, atol)?
                .with_post_stabilization(PostStabilization::BothTwice);
            if let Some(h) = first_step {
                dopri = dopri.with_initial_step(h)?;
            }
            let plan = args.run.adaptive_plan()?.stream_to(rows.to_path_buf());
            common::simulate_adaptive(dopri, &model, initial, t_end, Vec::new(), &plan)
        }
        Method::Rk4 { h } => {
            let plan = args.run.plan(h, t_end)?.stream_to(rows.to_path_buf());
            let rk4 = StabilizedRk::<4, 2, 4>::new(RK4, h)?
                .with_post_stabilization(PostStabilization::BothTwice);
            common::simulate::<_, _, _, 4, 2>(rk4, &model, &model, initial, &plan, [])
        }
        Method::Spook { h } => {
            let plan = args.run.plan(h, t_end)?.stream_to(rows.to_path_buf());
            let spook = Spook::<4, 2>::new(h)?;
            common::simulate::<_, _, _, 4, 2>(spook, &model, &model, initial, &plan, [])
        }
    }
}

/// The pendulum as the motion's drawings show it.
fn scene() -> Sketch<impl Fn(f64, &[f64], &mut Frame)> {
    Sketch::new(|_t, q, frame| {
        frame
            .anchor((0.0, 0.0))
            .link((0.0, 0.0), (q[0], q[1]))
            .link((q[0], q[1]), (q[2], q[3]));
        frame.body((q[0], q[1])).body((q[2], q[3]));
    })
}

/// Draws each measured coordinate against the fitted run, and the residuals.
fn plot(
    path: &Path,
    title: &str,
    data: &Measurements,
    at_data: &[[f64; 4]],
    trajectory: &Trajectory,
) -> Result<(), Box<dyn Error>> {
    let t = trajectory.column("t").unwrap_or_default();
    let mut panels = Vec::new();
    let mut residuals =
        Panel::new("residuals: data − fit", "t", "residual").legend(Corner::UpperRight);
    for (k, name) in ["x1", "y1", "x2", "y2"].iter().enumerate() {
        let fitted = trajectory.column(&format!("q.{name}")).unwrap_or_default();
        let measured = data.t.iter().zip(&data.positions).map(|(&t, p)| (t, p[k]));
        let title = if k == 0 {
            format!("{title}: {name}")
        } else {
            name.to_string()
        };
        panels.push(
            Panel::new(title, "t", *name)
                .legend(Corner::UpperRight)
                .series(Series::new("data", measured.collect::<Vec<_>>()).with_markers())
                .series(Series::new(
                    "fit",
                    t.iter().copied().zip(fitted).collect::<Vec<_>>(),
                )),
        );
        let residual = data
            .t
            .iter()
            .zip(&data.positions)
            .zip(at_data)
            .map(|((&t, p), q)| (t, p[k] - q[k]));
        residuals = residuals.series(Series::new(*name, residual.collect::<Vec<_>>()));
    }
    panels.push(residuals);
    draw_panels(path, (900, 1500), &panels)?;
    Ok(())
}
