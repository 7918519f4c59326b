//! Derivatives of a simulated motion: the simple pendulum released from rest, in Cartesian
//! coordinates with its rod as a holonomic row (`models::Pendulum`), and the derivatives of its
//! bob's position at `--t-end` with respect to gravity `g`, the rod's length `l` (at fixed
//! release angle) and the release angle `θ₀`, carried along the run by the chain rule through
//! each step's exact Jacobians (`runtime::simulation::ForwardSensitivity`), beside the closed
//! form in Jacobi elliptic functions (`runtime::reference::ReleasedPendulum`).
//!
//! ```sh
//! cargo run --release --example sensitivity                      # g = l = θ₀ = 1, T = 10
//! cargo run --release --example sensitivity -- --theta0 2.5 --h 1e-4 --out out/sensitivity.json
//! cargo run --release --example sensitivity -- --table           # the errors over h, h/2, …, h/16
//! cargo run --release --example sensitivity -- --method dopri5 --rtol 1e-12 --table
//! ```
//!
//! The discrete sensitivities are the exact derivatives of the discrete trajectory; they
//! converge to those of the exact motion at the method's order (`--method spook`: 1,
//! `--method rattle`: 2), which `--table` shows with the observed orders. `--method dopri5` is
//! the error-controlled Dormand–Prince pair on the index-1 formulation with S-both²
//! post-stabilization (Ascher et al. 1995), `--rtol` (default 1e-10) and `--atol` (default
//! 0.1 rtol), `--h` its first step: its sensitivities are its variational equations integrated
//! with the accepted steps' own stages, each step's size held fixed as CVODES does; `--table`
//! then runs at 10⁴ rtol, 10³ rtol, …, rtol instead of smaller steps, and `--save-every` sets the
//! times of its rows (default: every accepted step).
//!
//! Outputs: the run's rows (`--out FILE.csv` or `.parquet`, default `out/sensitivity.csv`) with
//! the examples' columns, then the sensitivities `dq.x/dg`, `dq.y/dg`, `dq.x/dl`, …,
//! `dq.y/dtheta0`, then `dv.x/dg`, …; `--out FILE.json` instead writes the end point as
//! `{"x", "y", "d_dg": [dx, dy], "d_dl": [dx, dy], "d_dtheta0": [dx, dy]}` (the rows then go
//! to `out/sensitivity.csv`). The plot (`--plot`, default `out/sensitivity.png`) shows `∂x/∂g`,
//! `∂x/∂l` and `∂x/∂θ₀` over the run against the closed form, and their differences from it;
//! `--animate`, `--paths` draw the motion. `--t-end` is rounded to a whole number of steps
//! (reached exactly by `dopri5`).

use mechanism_examples as common;

use std::error::Error;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use common::{Plan, RunOptions, Trajectory};
use mechanism::models::Pendulum;
use mechanism::pictures::{draw_panels, Corner, Frame, Panel, Scale, Series, Sketch};
use mechanism::runtime::integrators::stabilized::{Dopri5, PostStabilization, DOPRI5};
use mechanism::runtime::reference::fit::loglog_slope;
use mechanism::runtime::reference::{BobSensitivity, ReleasedPendulum};
use mechanism::runtime::simulation::ForwardSensitivity;
use mechanism::runtime::{DifferentiableInParameters, Rattle, Spook, State};

/// The integrator whose step Jacobians carry the sensitivities.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Method {
    /// SPOOK (Lacoursière 2007), first order.
    Spook,
    /// RATTLE (Andersen 1983), second order.
    Rattle,
    /// DOPRI5 with error control and S-both² (Ascher et al. 1995), fifth order.
    Dopri5,
}

impl Method {
    fn label(self) -> &'static str {
        match self {
            Method::Spook => "SPOOK",
            Method::Rattle => "RATTLE",
            Method::Dopri5 => "DOPRI5",
        }
    }
}

/// The pendulum's position at `--t-end` and its derivatives in g, l and θ₀.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// The integrator.
    #[arg(long, value_enum, default_value_t = Method::Spook)]
    method: Method,
    /// Gravitational acceleration.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    #[arg(value_parser = common::cli::positive)]
    g: f64,
    /// The rod's length.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    #[arg(value_parser = common::cli::positive)]
    l: f64,
    /// The release angle from −y, rad, in (−π, π).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    theta0: f64,
    /// Relative tolerance of dopri5.
    #[arg(long, value_parser = common::cli::positive)]
    rtol: Option<f64>,
    /// Absolute tolerance of dopri5 [default: 0.1 rtol].
    #[arg(long, value_parser = common::cli::positive)]
    atol: Option<f64>,
    /// Also run at h/2, h/4, h/8, h/16 (dopri5: 10⁴ rtol, 10³ rtol, …, rtol) without output and
    /// print the errors against the closed form (with the observed orders).
    #[arg(long)]
    table: bool,
    #[command(flatten)]
    run: RunOptions,
}

/// The seeds of the sensitivities, in the order of `Pendulum::release_seeds`.
const SEEDS: [&str; 3] = ["g", "l", "theta0"];

/// The default step and end time.
const H: f64 = 1e-3;
const T_END: f64 = 10.0;
/// The default relative tolerance of dopri5.
const RTOL: f64 = 1e-10;

fn main() -> ExitCode {
    common::exit_code(run(common::cli::parse::<Args>()))
}

fn run(args: Args) -> Result<(), Box<dyn Error>> {
    if !(args.theta0.is_finite() && args.theta0.abs() < std::f64::consts::PI) {
        return Err(format!(
            "--theta0 must be an angle in (−π, π) rad (a release from rest below the \
             upright position), got {}",
            args.theta0
        )
        .into());
    }
    args.run.refuse_checkpoints(
        "sensitivity",
        "a resumed run would restart its sensitivities from the seeds",
    )?;
    let json = args
        .run
        .out
        .clone()
        .filter(|path| path.extension().is_some_and(|e| e == "json"));
    let rows = match &json {
        Some(_) => PathBuf::from("out/sensitivity.csv"),
        None => args.run.csv_or("sensitivity"),
    };
    if args.method != Method::Dopri5 && (args.rtol.is_some() || args.atol.is_some()) {
        return Err("--rtol and --atol apply to --method dopri5 only".into());
    }
    let h = args.run.h_or(H);
    let (plan, t_end) = match args.method {
        Method::Dopri5 => (args.run.adaptive_plan()?, args.run.t_end_or(T_END)),
        Method::Spook | Method::Rattle => {
            let plan = args.run.plan(h, args.run.t_end_or(T_END))?;
            let t_end = plan.steps as f64 * h;
            (plan, t_end)
        }
    };
    let plan = plan.stream_to(rows.clone());
    let model = Pendulum {
        g: args.g,
        l: args.l,
    };
    let exact = ReleasedPendulum {
        g: args.g,
        l: args.l,
        theta0: args.theta0,
    };
    let rtol = args.rtol.unwrap_or(RTOL);
    let steps = match args.method {
        Method::Dopri5 => format!("rtol = {rtol:e}, S-both²"),
        Method::Spook | Method::Rattle => format!("h = {h}"),
    };
    let title = format!(
        "pendulum released at θ₀ = {} rad, g = {}, l = {}; {}, {steps}",
        args.theta0,
        args.g,
        args.l,
        args.method.label()
    );
    println!("{title}");
    let (theta0, run) = (args.theta0, (&plan, t_end));
    let trajectory = match args.method {
        Method::Spook => simulate(Spook::<2, 1>::new(h)?, &model, theta0, run)?,
        Method::Rattle => simulate(Rattle::<2, 1>::new(h)?, &model, theta0, run)?,
        Method::Dopri5 => simulate(dopri(&args, rtol)?, &model, theta0, run)?,
    };
    if let Some(end) = end_point(&trajectory).filter(|_| trajectory.failure.is_none()) {
        let t = trajectory.t_last();
        println!("at t = {t}:\n");
        print_comparison(&end, &exact.sensitivity(t));
        if let Some(path) = &json {
            write_json(path, &end)?;
            println!("\nwrote {}", path.display());
        }
    }
    if args.table && trajectory.failure.is_none() {
        print_table(&args, &model, &exact, (h, rtol), t_end)?;
    }
    args.run.draw_motion(&title, &trajectory.table, &scene())?;
    let png = args.run.png_or("sensitivity");
    plot(&png, &title, &exact, &trajectory)?;
    println!(
        "wrote {} ({} rows) and {}",
        rows.display(),
        trajectory.table.len(),
        png.display()
    );
    trajectory.outcome()?;
    Ok(())
}

/// Returns DOPRI5 with S-both² at `rtol` and `--atol` (default 0.1 rtol), its first step `--h`
/// if given.
fn dopri(args: &Args, rtol: f64) -> Result<Dopri5<2, 1>, Box<dyn Error>> {
    let atol = args.atol.unwrap_or(0.1 * rtol);
    let dopri = Dopri5::<2, 1>::new(DOPRI5, rtol, atol)?
        .with_post_stabilization(PostStabilization::BothTwice);
    Ok(match args.run.h {
        Some(h) => dopri.with_initial_step(h)?,
        None => dopri,
    })
}

/// Runs `integrator` on `model` released at `theta0` to `t_end`, with the sensitivities in
/// `SEEDS`, through the examples' harness.
fn simulate<I: DifferentiableInParameters<Pendulum, 2, 2>>(
    integrator: I,
    model: &Pendulum,
    theta0: f64,
    (plan, t_end): (&Plan, f64),
) -> Result<Trajectory, Box<dyn Error>> {
    let (seeds, initial) = (model.release_seeds(theta0), model.released(theta0));
    common::simulate_sensitive::<_, _, 2, 1, 2, 3>(
        integrator, seeds, SEEDS, model, initial, t_end, plan,
    )
}

/// Returns the bob's position and its derivatives in the last row of `trajectory`.
fn end_point(trajectory: &Trajectory) -> Option<BobSensitivity> {
    let last = |name: &str| trajectory.column(name)?.last().copied();
    let pair = |seed: &str| {
        Some([
            last(&format!("dq.x/d{seed}"))?,
            last(&format!("dq.y/d{seed}"))?,
        ])
    };
    Some(BobSensitivity {
        position: [last("q.x")?, last("q.y")?],
        d_dg: pair("g")?,
        d_dl: pair("l")?,
        d_dtheta0: pair("theta0")?,
    })
}

/// The quantities of a [`BobSensitivity`] with their names, in print order.
fn quantities(s: &BobSensitivity) -> [(&'static str, f64); 8] {
    [
        ("x", s.position[0]),
        ("y", s.position[1]),
        ("∂x/∂g", s.d_dg[0]),
        ("∂y/∂g", s.d_dg[1]),
        ("∂x/∂l", s.d_dl[0]),
        ("∂y/∂l", s.d_dl[1]),
        ("∂x/∂θ₀", s.d_dtheta0[0]),
        ("∂y/∂θ₀", s.d_dtheta0[1]),
    ]
}

fn print_comparison(ours: &BobSensitivity, exact: &BobSensitivity) {
    println!(
        "{:<8} {:>22} {:>22} {:>12}",
        "", "simulated", "closed form", "difference"
    );
    for ((name, a), (_, b)) in quantities(ours).into_iter().zip(quantities(exact)) {
        println!("{name:<8} {a:>22.15e} {b:>22.15e} {:>12.3e}", a - b);
    }
}

/// Runs `method` (at step `h`, or DOPRI5 at `rtol`) without output from the release to
/// `t_end`; returns the end point and the number of steps. Stops with an error at SIGINT or
/// SIGTERM.
fn end_of_run(
    args: &Args,
    model: &Pendulum,
    (h, rtol): (f64, f64),
    t_end: f64,
) -> Result<(BobSensitivity, usize), Box<dyn Error>> {
    fn run<I: DifferentiableInParameters<Pendulum, 2, 2>>(
        mut integrator: I,
        model: &Pendulum,
        theta0: f64,
        (t_end, fixed_steps): (f64, Option<usize>),
    ) -> Result<(State<2>, ForwardSensitivity<2, 2, 3>, usize), Box<dyn Error>> {
        let (mut state, mut sensitivity) = (model.released(theta0), model.release_seeds(theta0));
        let stop = common::interrupt_flag();
        let mut steps = 0;
        // A fixed step of h = t_end / n may end a rounding short of t_end: count its steps.
        while match fixed_steps {
            Some(n) => steps < n,
            None => state.t < t_end,
        } {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                return Err(format!("interrupted at t = {} (the --table runs)", state.t).into());
            }
            sensitivity.step_toward(&mut integrator, model, &mut state, t_end)?;
            steps += 1;
        }
        Ok((state, sensitivity, steps))
    }
    let theta0 = args.theta0;
    let fixed = (t_end, Some((t_end / h).round() as usize));
    let (state, sensitivity, steps) = match args.method {
        Method::Spook => run(Spook::<2, 1>::new(h)?, model, theta0, fixed)?,
        Method::Rattle => run(Rattle::<2, 1>::new(h)?, model, theta0, fixed)?,
        Method::Dopri5 => run(dopri(args, rtol)?, model, theta0, (t_end, None))?,
    };
    let column = |s: usize| [sensitivity.q[(0, s)], sensitivity.q[(1, s)]];
    Ok((
        BobSensitivity {
            position: [state.q[0], state.q[1]],
            d_dg: column(0),
            d_dl: column(1),
            d_dtheta0: column(2),
        },
        steps,
    ))
}

/// Prints the largest error of the position and of each derivative against the closed form
/// at `h`, `h/2`, …, `h/16` (DOPRI5: at `10⁴ rtol`, `10³ rtol`, …, `rtol`) to `t_end`, with the
/// observed orders (DOPRI5: the steps each run took).
fn print_table(
    args: &Args,
    model: &Pendulum,
    exact: &ReleasedPendulum,
    (h, rtol): (f64, f64),
    t_end: f64,
) -> Result<(), Box<dyn Error>> {
    let adaptive = args.method == Method::Dopri5;
    let reference = exact.sensitivity(t_end);
    let mut hs = Vec::new();
    let mut errors: [Vec<f64>; 4] = Default::default();
    println!(
        "\n{:>12} {:>12} {:>12} {:>12} {:>12}{}",
        if adaptive { "rtol" } else { "h" },
        "position",
        "∂/∂g",
        "∂/∂l",
        "∂/∂θ₀",
        if adaptive { "        steps" } else { "" }
    );
    for k in 0..5 {
        let refined = if adaptive {
            (h, rtol * 10f64.powi(4 - k))
        } else {
            (h / f64::from(1 << k), rtol)
        };
        let (ours, steps) = end_of_run(args, model, refined, t_end)?;
        let pairs = [
            (ours.position, reference.position),
            (ours.d_dg, reference.d_dg),
            (ours.d_dl, reference.d_dl),
            (ours.d_dtheta0, reference.d_dtheta0),
        ];
        print!("{:>12.4e}", if adaptive { refined.1 } else { refined.0 });
        for ((ours, exact), column) in pairs.iter().zip(errors.iter_mut()) {
            let error = (ours[0] - exact[0]).abs().max((ours[1] - exact[1]).abs());
            column.push(error);
            print!(" {error:>12.3e}");
        }
        if adaptive {
            print!(" {steps:>12}");
        }
        println!();
        hs.push(refined.0);
    }
    if adaptive {
        return Ok(());
    }
    print!("{:>12}", "order");
    for column in &errors {
        match loglog_slope(&hs, column) {
            Ok(slope) => print!(" {slope:>12.2}"),
            Err(_) => print!(" {:>12}", "-"),
        }
    }
    println!();
    Ok(())
}

fn write_json(path: &Path, result: &BobSensitivity) -> Result<(), Box<dyn Error>> {
    let json = serde_json::json!({
        "x": result.position[0],
        "y": result.position[1],
        "d_dg": result.d_dg,
        "d_dl": result.d_dl,
        "d_dtheta0": result.d_dtheta0,
    });
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir)?;
    }
    fs::write(path, serde_json::to_string_pretty(&json)?)?;
    Ok(())
}

/// The pendulum as the motion's drawings show it: the pivot, the rod and the bob.
fn scene() -> Sketch<impl Fn(f64, &[f64], &mut Frame)> {
    Sketch::new(|_t, q, frame| {
        frame.anchor((0.0, 0.0)).link((0.0, 0.0), (q[0], q[1]));
        frame.body((q[0], q[1]));
    })
}

/// Draws each sensitivity of `x` over the run against the closed form, and their differences.
fn plot(
    path: &Path,
    title: &str,
    exact: &ReleasedPendulum,
    trajectory: &Trajectory,
) -> Result<(), Box<dyn Error>> {
    let t = trajectory.column("t").unwrap_or_default();
    let names = ["∂x/∂g", "∂x/∂l", "∂x/∂θ₀"];
    let reference: Vec<[f64; 3]> = t
        .iter()
        .map(|&t| {
            let r = exact.sensitivity(t);
            [r.d_dg[0], r.d_dl[0], r.d_dtheta0[0]]
        })
        .collect();
    let mut differences = Panel::new(
        "difference from the closed form",
        "t",
        "|simulated − exact|",
    )
    .y_scale(Scale::Log)
    .legend(Corner::LowerRight);
    let mut panels = Vec::new();
    for (s, (name, seed)) in names.iter().zip(SEEDS).enumerate() {
        let ours = trajectory
            .column(&format!("dq.x/d{seed}"))
            .unwrap_or_default();
        let exact: Vec<(f64, f64)> = t.iter().zip(&reference).map(|(&t, r)| (t, r[s])).collect();
        let errors = t
            .iter()
            .zip(&ours)
            .zip(&reference)
            .map(|((&t, a), r)| (t, (a - r[s]).abs()));
        differences = differences.series(Series::new(*name, errors.collect::<Vec<_>>()));
        let title = if s == 0 {
            format!("{title}: {name}")
        } else {
            name.to_string()
        };
        panels.push(
            Panel::new(title, "t", *name)
                .legend(Corner::UpperLeft)
                .series(Series::new("closed form", exact))
                .series(Series::new(
                    "simulated",
                    t.iter().copied().zip(ours).collect::<Vec<_>>(),
                )),
        );
    }
    panels.push(differences);
    draw_panels(path, (900, 1200), &panels)?;
    Ok(())
}
