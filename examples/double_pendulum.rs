//! The planar double pendulum of Tao–Owhadi (2014) §4.1 in Cartesian coordinates, stepped with
//! any integrator the model is compiled for, written to CSV and plotted; `--compare` reproduces
//! the paper's Fig. 1 (errors and timings of SHAKE, variational Euler, Newmark, one-iteration
//! Newmark, Z&S) and Fig. 2a (the `O(ω⁻²)` model error of the penalty).
//!
//! ```sh
//! cargo run --release --example double_pendulum                      # SPOOK, h = 1/60
//! cargo run --release --example double_pendulum -- --method zs --h 0.1 --omega 20
//! cargo run --release --example double_pendulum -- --compare
//! cargo run --release --example double_pendulum -- --animate out/double_pendulum.gif
//! ```
//!
//! Methods on the hard constraints: `spook`, `shake`, `rattle`, `livens`. Methods on the
//! penalized model `V + ½ω²|g|²` (`--omega`): `zs`, `zss`, `zss-stiff`, `newmark`, `newmark-1`,
//! `pf-newmark` (with `--beta`), `symplectic-euler`, `verlet`. The energy and residual columns
//! always measure the unpenalized model and its hard constraints; penalty methods add the
//! conserved `energy.penalized`, constrained methods their multipliers `lambda.<row>`.
//!
//! The model is `mechanism::models::DoublePendulum`, written with `mechanism!` in
//! `src/models/double_pendulum.rs`.

use mechanism_examples as common;
#[path = "double_pendulum/compare.rs"]
mod compare;
#[path = "double_pendulum/methods.rs"]
mod methods;
#[path = "double_pendulum/reference.rs"]
mod reference;

use std::error::Error;
use std::process::ExitCode;

use clap::Parser;
use common::RunOptions;
use mechanism::models::DoublePendulum;
use mechanism::pictures::{Frame, Sketch};
use methods::{simulate, Method};

/// Simulates the double pendulum of Tao–Owhadi §4.1 and writes a CSV file and a plot.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Integrator.
    #[arg(long, value_enum, default_value_t = Method::Spook)]
    method: Method,
    #[command(flatten)]
    run: RunOptions,
    /// Penalty frequency ω of the penalized methods (V + ½ω²|g|²).
    #[arg(long, default_value_t = 20.0, allow_negative_numbers = true)]
    omega: f64,
    /// Parameter β of Z&S, Z&Ss, stiff Z&Ss and the Newmark methods.
    #[arg(long, default_value_t = 0.4, allow_negative_numbers = true)]
    beta: f64,
    /// Gravity g of V = g (y1 + y2); the paper's V = −g (y1 + y2) is --gravity=-1.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    gravity: f64,
    /// Print the Tao–Owhadi §4.1 comparison tables (Fig. 1, timings, Fig. 2a) instead of one
    /// run; uses --omega, --beta, --gravity, --h [default 0.1] and --t-end [default 10].
    #[arg(long)]
    compare: bool,
}

fn main() -> ExitCode {
    common::exit_code(run(common::cli::parse::<Args>()))
}

fn run(args: Args) -> Result<(), Box<dyn Error>> {
    if !(args.omega.is_finite() && args.omega > 0.0) {
        return Err(format!("--omega must be a positive number, got {}", args.omega).into());
    }
    if !args.gravity.is_finite() {
        return Err(format!("--gravity must be a finite number, got {}", args.gravity).into());
    }
    let model = DoublePendulum {
        g: args.gravity,
        ..DoublePendulum::default()
    };
    if args.compare {
        args.run.refuse_checkpoints(
            "double_pendulum --compare",
            "it computes a table of many short runs; checkpoint a single --method run instead",
        )?;
        args.run.refuse_motion(
            "double_pendulum --compare",
            "the comparison runs many methods and writes tables; animate one --method instead",
        )?;
        let settings = compare::Settings {
            omega: args.omega,
            beta: args.beta,
            h: args.run.h_or(0.1),
            t_end: args.run.t_end_or(10.0),
        };
        return compare::run(&model, &settings);
    }

    let method = args.method;
    let h = args.run.h_or(method.default_h(args.omega));
    let t_end = args.run.t_end_or(10.0);
    // The rows go to the file while the run goes, so that a killed run leaves them.
    let plan = args
        .run
        .plan(h, t_end)?
        .stream_to(args.run.csv_or("double_pendulum"));
    let trajectory = simulate(method, &model, args.omega, args.beta, &plan)?;

    let mut title = format!("{}, h = {h:.4}", method.label());
    if method.is_penalized() {
        title += &format!(", omega = {}", args.omega);
    }
    common::print_summary(&title, &trajectory);
    if let Some(penalized) = trajectory.column("energy.penalized") {
        println!(
            "  max |W - W0| (penalized energy) = {:.3e}",
            common::max_deviation(&penalized)
        );
    }
    args.run.draw_motion(
        &format!("double pendulum, {title}"),
        &trajectory.table,
        &scene(),
    )?;
    common::write_outputs(
        &args.run.csv_or("double_pendulum"),
        &args.run.png_or("double_pendulum"),
        &title,
        &trajectory,
        &trajectory.table,
    )
}

/// Returns what to draw of `q = (x1, y1, x2, y2)`: the rods from the pivot at the origin, the
/// two masses.
fn scene() -> Sketch<impl Fn(f64, &[f64], &mut Frame)> {
    Sketch::new(|_t, q, frame| {
        let (p1, p2) = ((q[0], q[1]), (q[2], q[3]));
        frame.anchor((0.0, 0.0)).link((0.0, 0.0), p1).link(p1, p2);
        frame.body(p1).body(p2);
    })
}
