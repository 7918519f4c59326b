//! A torque-free rigid body (principal moments `I = (1, 2, 3)`, identity start, body angular
//! velocity `Ω(0) = (1, 0, 1)`), its orientation a unit quaternion written with `mechanism!`
//! (`mechanism::models::FreeBody`), stepped by Livens, RK4 or DOPRI5 (the last two with a
//! stabilization of `|q|² = 1`, S-both² by default).
//!
//! ```sh
//! cargo run --release --example free_body                         # DOPRI5, rtol 1e-9, T = 20
//! cargo run --release --example free_body -- --method rk4 --h 0.01
//! cargo run --release --example free_body -- --method livens --h 0.01
//! ```
//!
//! Columns: `t`, the quaternion `q.q_w`, `q.q_x`, `q.q_y`, `q.q_z` and its rates `v.*`, `energy`,
//! `residual.position`, `residual.velocity`, then `omega.x`, `omega.y`, `omega.z` (body frame),
//! `R.xx` … `R.zz` (world from body, row by row), `L.x`, `L.y`, `L.z` (the world angular
//! momentum, conserved) and `q.norm`. `Ω(t)` has a closed form in Jacobi elliptic functions
//! (Landau–Lifshitz §37; `k² = 1/3`, `τ = t` here), which `tests/it/rigid_body.rs` checks
//! against. RATTLE, SHAKE and SPOOK are not offered: they assume a constant mass matrix (see
//! `mechanism::models::FreeBody`).

use mechanism_examples as common;
#[path = "rigid_body/run.rs"]
mod rigid_body;

use std::error::Error;
use std::process::ExitCode;

use clap::Parser;
use mechanism::models::FreeBody;

/// Simulates the torque-free body and writes a CSV file and a plot.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    #[command(flatten)]
    options: rigid_body::Options,
}

fn main() -> ExitCode {
    common::exit_code(run(common::cli::parse::<Args>()))
}

fn run(args: Args) -> Result<(), Box<dyn Error>> {
    let options = &args.options;
    options
        .run
        .refuse_motion("free_body", "a free rigid body turns in three dimensions")?;
    let body = FreeBody::default();
    let h = options.run.h_or(0.01);
    let t_end = options.run.t_end_or(20.0);
    let csv = options.run.csv_or("free_body");
    let start = FreeBody::initial_state();
    let trajectory = rigid_body::simulate(options, &body, start, (h, t_end), &csv)?;
    let title = format!("free body, {}", options.label(h));
    common::print_summary(&title, &trajectory);
    rigid_body::print_drifts(
        &trajectory,
        &["energy.generalized", "L.x", "L.y", "L.z", "q.norm"],
    );
    common::write_outputs(
        &csv,
        &options.run.png_or("free_body"),
        &title,
        &trajectory,
        &trajectory.table,
    )
}
