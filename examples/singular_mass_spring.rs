//! The mass-spring system with redundant coordinates and a singular mass matrix of
//! Kinon–Betsch–Livens §6.1 (eq. 36–41, Table 1), stepped with the Livens/Gonzalez scheme (or
//! SPOOK), written to CSV and plotted.
//!
//! ```sh
//! cargo run --release --example singular_mass_spring                 # Livens, h = 0.1, T = 10
//! cargo run --release --example singular_mass_spring -- --initial small --method spook
//! ```
//!
//! The mass matrix is singular everywhere, so neither the Hamiltonian methods nor the
//! penalty methods apply; the interconnection constraint fixes the massless direction. Extra
//! columns: `energy.generalized` (eq. 31 with the scheme's momentum; with a constant mass matrix
//! it equals the total energy, Proposition 5.5) and `lambda.interconnection`. The summary
//! compares with Kinon–Betsch Fig. 3 (energy increments at round-off) and Fig. 4 (the
//! constraint satisfied to the Newton tolerance).

use mechanism_examples as common;

use std::error::Error;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use common::{Column, RunOptions, Trajectory};
use mechanism::models::SingularMassSpring;
use mechanism::runtime::{Livens, Spook, State};

/// Which integrator to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Method {
    /// The Livens/Gonzalez energy-consistent scheme (Kinon–Betsch eq. 30).
    Livens,
    /// SPOOK (Lacoursière 2007) on the constraint.
    Spook,
}

/// Which initial state to start from (the paper does not print its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Initial {
    /// x1 = 0.5, second spring stretched at unit rate: large, nonlinear oscillations.
    Default,
    /// x1 = 0.1 at rest: small, nearly linear oscillations.
    Small,
}

/// Simulates the singular mass-spring system of Kinon–Betsch–Livens §6.1 and writes a CSV file
/// and a plot.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Integrator.
    #[arg(long, value_enum, default_value_t = Method::Livens)]
    method: Method,
    /// Initial state.
    #[arg(long, value_enum, default_value_t = Initial::Default)]
    initial: Initial,
    #[command(flatten)]
    run: RunOptions,
    /// Newton tolerance of Livens (relative; the paper's ε_Newton is 1e-9).
    #[arg(long)]
    tolerance: Option<f64>,
}

fn main() -> ExitCode {
    common::exit_code(run(common::cli::parse::<Args>()))
}

fn run(args: Args) -> Result<(), Box<dyn Error>> {
    args.run.refuse_motion(
        "singular_mass_spring",
        "its masses move on a line (redundant coordinates x1, q2, x2), with nothing to draw in a plane",
    )?;
    let model = SingularMassSpring::default();
    let h = args.run.h_or(0.1);
    // The rows go to the file while the run goes, so that a killed run leaves them.
    let plan = args
        .run
        .plan(h, args.run.t_end_or(10.0))?
        .stream_to(args.run.csv_or("singular_mass_spring"));
    let initial = match args.initial {
        Initial::Default => SingularMassSpring::initial_state(),
        Initial::Small => SingularMassSpring::initial_state_small(),
    };
    let (trajectory, label) = match args.method {
        Method::Livens => {
            let mut livens = Livens::<3, 1>::new(h)?;
            if let Some(tolerance) = args.tolerance {
                livens = livens.with_tolerance(tolerance)?;
            }
            let columns = [
                Column::new("energy.generalized", |i: &Livens<3, 1>, s: &State<3>| {
                    i.generalized_energy(&model, s)
                }),
                Column::new(
                    "lambda.interconnection",
                    |i: &Livens<3, 1>, _: &State<3>| i.multipliers()[0],
                ),
            ];
            let trajectory = common::simulate(livens, &model, &model, initial, &plan, columns)?;
            (trajectory, "Livens")
        }
        Method::Spook => {
            let columns = [Column::new(
                "lambda.interconnection",
                |i: &Spook<3, 1>, _: &State<3>| i.multipliers()[0],
            )];
            let trajectory = common::simulate(
                Spook::<3, 1>::new(h)?,
                &model,
                &model,
                initial,
                &plan,
                columns,
            )?;
            (trajectory, "SPOOK")
        }
    };
    let title = format!("singular mass-spring, {label}, h = {h}");
    common::print_summary(&title, &trajectory);
    print_kinon_betsch_summary(&trajectory);
    common::write_outputs(
        &args.run.csv_or("singular_mass_spring"),
        &args.run.png_or("singular_mass_spring"),
        &title,
        &trajectory,
        &trajectory.table,
    )
}

/// Prints the numbers to compare with Kinon–Betsch–Livens Fig. 3 and 4.
fn print_kinon_betsch_summary(trajectory: &Trajectory) {
    common::print_kinon_betsch(
        trajectory,
        true,
        ["Kinon–Betsch Fig. 3, their scheme: round-off", ""],
    );
    println!(
        "  constraint (38):         max |g| = {:.3e}  (Kinon–Betsch Fig. 4, their scheme: to the \
         Newton tolerance)",
        trajectory.summary.max_position_residual
    );
}
