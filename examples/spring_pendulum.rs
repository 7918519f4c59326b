//! The nonlinear spring pendulum in spherical coordinates of Kinon–Betsch–Livens §6.2
//! (eq. 42–46, Table 2): a configuration-dependent mass matrix `m diag(1, r², r² sin²θ)`,
//! stepped with the Livens/Gonzalez scheme, written to CSV and plotted.
//!
//! ```sh
//! cargo run --release --example spring_pendulum                      # Livens, h = 0.01, T = 1
//! cargo run --release --example spring_pendulum -- --t-end 100
//! ```
//!
//! Extra columns: `energy.generalized`, the discrete energy function of eq. 31
//! `E = p·v − ½ v·M(q) v + V(q)` with the momentum `p` the scheme carries (which differs from
//! `M(q) v`, Proposition 5.5), and `momentum.phi`, the azimuthal momentum `p_φ` (the same `p`),
//! conserved by the continuous flow because neither `T` nor `V` depends on `φ`. The summary
//! compares with Kinon–Betsch Fig. 7 (total energy increments of order 1e-4) and Fig. 8
//! (generalized energy increments at round-off).
//!
//! `--method rk4` runs classical RK4 on the index-1 formulation (Ascher et al., the runtime's
//! `StabilizedRk`, with no constraints here), which includes the velocity terms
//! `∂T/∂q − Ṁ(q) v` of the configuration-dependent mass matrix: a non-conserving comparison,
//! whose `momentum.phi` is `(M(q) v)_φ` and whose energy and `p_φ` drift at O(h⁴). The schemes
//! that freeze `M` over a step (SPOOK, Z&S, SHAKE, …) refuse this model, at compile time in
//! `mechanism!` and with `StepError::Unsupported` at run time.

use mechanism_examples as common;

use std::error::Error;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use common::{Column, RunOptions, Trajectory};
use mechanism::models::SpringPendulum;
use mechanism::runtime::integrators::stabilized::RK4;
use mechanism::runtime::{observers, Inertia, Livens, SMatrix, StabilizedRk, State};

/// Which integrator to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Method {
    /// The Livens/Gonzalez energy-consistent scheme (Kinon–Betsch eq. 30).
    Livens,
    /// Classical RK4 on the index-1 formulation (Ascher et al. eq. 1.5; no constraints here).
    Rk4,
}

impl Method {
    /// Returns a short name for titles.
    fn label(self) -> &'static str {
        match self {
            Method::Livens => "Livens",
            Method::Rk4 => "RK4 (index 1)",
        }
    }
}

/// Simulates the spring pendulum of Kinon–Betsch–Livens §6.2 and writes a CSV file and a plot.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Integrator.
    #[arg(long, value_enum, default_value_t = Method::Livens)]
    method: Method,
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
        "spring_pendulum",
        "the bob moves in space (spherical coordinates r, θ, φ), not in a plane",
    )?;
    let model = SpringPendulum::default();
    let h = args.run.h_or(0.01);
    // The rows go to the file while the run goes, so that a killed run leaves them.
    let plan = args
        .run
        .plan(h, args.run.t_end_or(1.0))?
        .stream_to(args.run.csv_or("spring_pendulum"));
    let initial = SpringPendulum::initial_state();
    let trajectory = match args.method {
        Method::Livens => {
            let mut livens = Livens::<3, 0>::new(h)?;
            if let Some(tolerance) = args.tolerance {
                livens = livens.with_tolerance(tolerance)?;
            }
            let columns = [
                Column::new("energy.generalized", |i: &Livens<3, 0>, s: &State<3>| {
                    i.generalized_energy(&model, s)
                }),
                Column::new("momentum.phi", |i: &Livens<3, 0>, s: &State<3>| {
                    i.momentum_at(&model, s)[2]
                }),
            ];
            common::simulate(livens, &model, &model, initial, &plan, columns)?
        }
        Method::Rk4 => {
            let rk4 = StabilizedRk::<3, 0, 4>::new(RK4, h)?;
            let momentum = |s: &State<3>| {
                let mut mass = SMatrix::<f64, 3, 3>::zeros();
                model.mass_matrix(&s.q, &mut mass);
                mass * s.v
            };
            let columns = [
                // Without a separate momentum variable, eq. 31 is the total energy.
                Column::new(
                    "energy.generalized",
                    |_: &StabilizedRk<3, 0, 4>, s: &State<3>| observers::energy(&model, s),
                ),
                Column::new("momentum.phi", |_: &StabilizedRk<3, 0, 4>, s: &State<3>| {
                    momentum(s)[2]
                }),
            ];
            common::simulate(rk4, &model, &model, initial, &plan, columns)?
        }
    };
    let title = format!("spring pendulum, {}, h = {h}", args.method.label());
    common::print_summary(&title, &trajectory);
    print_kinon_betsch_summary(&trajectory);
    common::write_outputs(
        &args.run.csv_or("spring_pendulum"),
        &args.run.png_or("spring_pendulum"),
        &title,
        &trajectory,
        &trajectory.table,
    )
}

/// Prints the numbers to compare with Kinon–Betsch–Livens Fig. 7 and 8.
fn print_kinon_betsch_summary(trajectory: &Trajectory) {
    common::print_kinon_betsch(
        trajectory,
        false,
        [
            "Kinon–Betsch Fig. 7: order 1e-4",
            "Kinon–Betsch Fig. 8: round-off",
        ],
    );
    if let Some(p_phi) = trajectory.column("momentum.phi") {
        println!(
            "  momentum p_phi:          max |p - p0| = {:.3e} (p0 = {})",
            common::max_deviation(&p_phi),
            p_phi.first().copied().unwrap_or(0.0)
        );
    }
}
