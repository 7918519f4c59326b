//! Cuell's nonholonomic free particle (Cuell 2005 §3.1): a unit mass in `R³` with
//! `L = ½ (ẋ² + ẏ² + ż²)` and the non-integrable constraint `ż = y ẋ`, stepped with the
//! discrete Lagrange–d'Alembert integrator (Cuell §5–6) or SPOOK, and compared with the closed
//! form of `mechanism::runtime::reference::NonholonomicParticle::exact`.
//!
//! ```sh
//! cargo run --release --example nonholonomic_particle                 # DLDA, h = 0.01, T = 20
//! cargo run --release --example nonholonomic_particle -- --method spook --h 0.001
//! ```
//!
//! Extra columns: `residual.nonholonomic`, `|ż − y ẋ|` of the state; `error.position` and
//! `error.velocity`, the max-norm distance of `q` and `v` to the closed form at the same time;
//! `energy.exact`, the conserved energy `½ (ẋ² (1 + y²) + ẏ²)` of the exact solution, which on
//! the constraint equals `energy`.
//!
//! DLDA enforces the row at the state it returns, `A(q_{k+1}) v_{k+1} = 0`, so the residual is
//! round-off at every step; with `V = 0` each step is an `M`-orthogonal projection of the
//! velocity, so the energy never increases and stays within `O(h)` of `E0`. SPOOK enforces
//! the row at the start of the step, `A(q_k) v_{k+1} = 0` up to its compliance `γ`, so the
//! residual of the returned state is `h |ẏ ẋ|`-sized: `O(h)`, not round-off. Both methods are
//! first order (`error.position` halves with `h`).
//!
//! The model is `mechanism::models::NonholonomicParticle`, written with `mechanism!` in
//! `src/models/nonholonomic_particle.rs`.

use mechanism_examples as common;

use std::error::Error;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use common::{Column, Plan, RunOptions, Trajectory};
use mechanism::models::NonholonomicParticle;
use mechanism::runtime::reference::NonholonomicParticle as ClosedForm;
use mechanism::runtime::{DiscreteLagrangeDAlembert, Integrator, Spook, State};

/// Which integrator to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Method {
    /// Discrete Lagrange–d'Alembert on symplectic Euler (Cuell eq. 53–58).
    Dlda,
    /// SPOOK with the row as a nonholonomic constraint (Lacoursière eq. 24–29).
    Spook,
}

impl Method {
    /// Returns a short name for titles.
    fn label(self) -> &'static str {
        match self {
            Method::Dlda => "DLDA",
            Method::Spook => "SPOOK",
        }
    }
}

/// Simulates the nonholonomic free particle and writes a CSV file and a plot.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Integrator.
    #[arg(long, value_enum, default_value_t = Method::Dlda)]
    method: Method,
    #[command(flatten)]
    run: RunOptions,
}

fn main() -> ExitCode {
    common::exit_code(run(common::cli::parse::<Args>()))
}

fn run(args: Args) -> Result<(), Box<dyn Error>> {
    args.run.refuse_motion(
        "nonholonomic_particle",
        "the particle moves in space (x, y, z), not in a plane",
    )?;
    let model = NonholonomicParticle::default();
    let h = args.run.h_or(0.01);
    // The rows go to the file while the run goes, so that a killed run leaves them.
    let plan = args
        .run
        .plan(h, args.run.t_end_or(20.0))?
        .stream_to(args.run.csv_or("nonholonomic_particle"));
    let initial = NonholonomicParticle::initial_state();
    let trajectory = match args.method {
        Method::Dlda => simulate(
            DiscreteLagrangeDAlembert::<3, 1>::new(h)?,
            &model,
            initial,
            &plan,
        )?,
        Method::Spook => simulate(Spook::<3, 0, 1>::new(h)?, &model, initial, &plan)?,
    };
    let title = format!("nonholonomic particle, {}, h = {h}", args.method.label());
    common::print_summary(&title, &trajectory);
    print_particle_summary(&trajectory);
    common::write_outputs(
        &args.run.csv_or("nonholonomic_particle"),
        &args.run.png_or("nonholonomic_particle"),
        &title,
        &trajectory,
        &trajectory.table,
    )
}

/// Runs `integrator` on `model` with the columns of the module docs.
fn simulate<I: Integrator<NonholonomicParticle, 3>>(
    integrator: I,
    model: &NonholonomicParticle,
    initial: State<3>,
    plan: &Plan,
) -> Result<Trajectory, Box<dyn Error>> {
    let exact = move |s: &State<3>| ClosedForm.exact(&initial, s.t);
    let columns = [
        Column::new("residual.nonholonomic", |_: &I, s: &State<3>| {
            ClosedForm.constraint_residual(s).abs()
        }),
        Column::new("error.position", move |_: &I, s: &State<3>| {
            (s.q - exact(s).q).amax()
        }),
        Column::new("error.velocity", move |_: &I, s: &State<3>| {
            (s.v - exact(s).v).amax()
        }),
        Column::new("energy.exact", move |_: &I, s: &State<3>| {
            ClosedForm.energy(&exact(s))
        }),
    ];
    common::simulate(integrator, model, model, initial, plan, columns)
}

/// Prints the constraint residual, the energy range and the error against the closed form.
fn print_particle_summary(trajectory: &Trajectory) {
    let max = |values: Option<Vec<f64>>| values.unwrap_or_default().into_iter().fold(0.0, f64::max);
    let energy = trajectory.energy();
    let e0 = energy.first().copied().unwrap_or(1.0);
    let (lo, hi) = energy
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &e| {
            (lo.min(e / e0), hi.max(e / e0))
        });
    println!(
        "  constraint ż = y ẋ:     max |ż − y ẋ| = {:.3e} over every step",
        max(trajectory.column("residual.nonholonomic"))
    );
    println!(
        "  energy ½|v|²:           E/E0 in [{lo:.6}, {hi:.6}], final {:.6} (exact: 1)",
        energy.last().copied().unwrap_or(e0) / e0
    );
    let last = |name: &str| {
        trajectory
            .column(name)
            .and_then(|c| c.last().copied())
            .unwrap_or(0.0)
    };
    println!(
        "  closed form:            max |q − q_exact| = {:.3e}, at t = {:.6}: |q − q_exact| = {:.3e}, \
         |v − v_exact| = {:.3e}",
        max(trajectory.column("error.position")),
        trajectory.t_last(),
        last("error.position"),
        last("error.velocity")
    );
}
