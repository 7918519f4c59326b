//! A heavy symmetric top about a fixed point (moments `I = diag(1, 1, 0.4)` about the fixed
//! point, `m g l = 4.905`), tilted by 0.3 rad about the world's x axis and spinning at
//! `Ω = (0, 0, 20)` about its symmetry axis; its orientation a unit quaternion written with
//! `mechanism!` (`mechanism::models::HeavyTop`), stepped by Livens, RK4 or DOPRI5 (the last two
//! with a stabilization of `|q|² = 1`, S-both² by default); or, with `--coordinates matrix`,
//! its rotation matrix on `RᵀR = I` (`mechanism::models::HeavyTopMatrix`, a constant mass
//! matrix), which RATTLE, SHAKE and SPOOK step as well.
//!
//! ```sh
//! cargo run --release --example heavy_top                         # DOPRI5, rtol 1e-9, T = 10
//! cargo run --release --example heavy_top -- --method rk4 --h 0.001
//! cargo run --release --example heavy_top -- --method livens --h 0.001
//! cargo run --release --example heavy_top -- --coordinates matrix --method rattle
//! ```
//!
//! Columns: `t`, the quaternion `q.q_w`, `q.q_x`, `q.q_y`, `q.q_z` and its rates `v.*`, `energy`,
//! `residual.position`, `residual.velocity` (with `--coordinates matrix`: `q.r_xx` … `q.r_zz`
//! and their rates instead of the quaternion), then `omega.x`, `omega.y`, `omega.z` (body frame),
//! `R.xx` … `R.zz` (world from body, row by row), `L.x`, `L.y`, `L.z` (world angular momentum)
//! and `q.norm` (quaternion form). The invariants are the energy, `L.z` (gravity has no torque
//! about the vertical) and, for a symmetric top, `omega.z`. RATTLE, SHAKE and SPOOK assume a
//! constant mass matrix, so they step only the matrix form (see `mechanism::models`).

use mechanism_examples as common;
#[path = "rigid_body/run.rs"]
mod rigid_body;

use std::error::Error;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use mechanism::models::{HeavyTop, HeavyTopMatrix};

/// How the top's orientation is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Coordinates {
    /// A unit quaternion (w, x, y, z): Livens, RK4, DOPRI5.
    Quaternion,
    /// The rotation matrix, nine coordinates on RᵀR = I: also RATTLE, SHAKE, SPOOK.
    Matrix,
}

/// Simulates the heavy top and writes a CSV file and a plot.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    #[command(flatten)]
    options: rigid_body::Options,
    /// Coordinates of the orientation.
    #[arg(long, value_enum, default_value_t = Coordinates::Quaternion)]
    coordinates: Coordinates,
}

fn main() -> ExitCode {
    common::exit_code(run(common::cli::parse::<Args>()))
}

fn run(args: Args) -> Result<(), Box<dyn Error>> {
    let options = &args.options;
    options
        .run
        .refuse_motion("heavy_top", "a spinning top moves in three dimensions")?;
    let h = options.run.h_or(0.001);
    let t_end = options.run.t_end_or(10.0);
    let csv = options.run.csv_or("heavy_top");
    let trajectory = match args.coordinates {
        Coordinates::Quaternion => {
            let top = HeavyTop::default();
            rigid_body::simulate(options, &top, HeavyTop::initial_state(), (h, t_end), &csv)?
        }
        Coordinates::Matrix => {
            let top = HeavyTopMatrix::default();
            let start = HeavyTopMatrix::initial_state();
            rigid_body::simulate_projected(options, &top, start, (h, t_end), &csv)?
        }
    };
    let title = format!("heavy top ({:?}), {}", args.coordinates, options.label(h))
        .replace("(Quaternion)", "(quaternion)")
        .replace("(Matrix)", "(rotation matrix)");
    common::print_summary(&title, &trajectory);
    rigid_body::print_drifts(
        &trajectory,
        &["energy.generalized", "L.z", "omega.z", "q.norm"],
    );
    common::write_outputs(
        &csv,
        &options.run.png_or("heavy_top"),
        &title,
        &trajectory,
        &trajectory.table,
    )
}
