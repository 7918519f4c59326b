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

mod common;
#[path = "double_pendulum/compare.rs"]
mod compare;
#[path = "double_pendulum/reference.rs"]
mod reference;

use std::error::Error;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use common::{Column, Plan, RunOptions, Trajectory};
use mechanism::models::DoublePendulum;
use mechanism::pictures::{Frame, Sketch};
use mechanism::runtime::{
    observers, Holonomic, Livens, Newmark, NewmarkOneIteration, Penalized, PushForwardNewmark,
    Rattle, SVector, Shake, Spook, State, SymplecticEuler, Verlet, ZhangSkeel,
    ZhangSkeelSimplified, ZhangSkeelStiff,
};

/// Which integrator to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Method {
    /// SPOOK (Lacoursière 2007, eq. 27–29) on the hard constraints.
    Spook,
    /// Full Zhang–Skeel (Tao–Owhadi eq. 3) on the penalized model.
    Zs,
    /// Simplified Zhang–Skeel (Tao–Owhadi eq. 18) on the penalized model.
    Zss,
    /// Simplified Zhang–Skeel for stiff systems (Tao–Owhadi eq. 19) on the penalized model.
    ZssStiff,
    /// Newmark, γ = ½, Newton solved to convergence (Tao–Owhadi eq. 12), penalized.
    Newmark,
    /// Newmark with one Newton iteration per step (Tao–Owhadi Fig. 1, row 5), penalized.
    #[value(name = "newmark-1")]
    NewmarkOne,
    /// Push-forward Newmark (Tao–Owhadi eq. 14), penalized; q holds x = q + βh²M⁻¹∇V.
    PfNewmark,
    /// Livens/Gonzalez energy-consistent scheme (Kinon–Betsch eq. 30) on the hard constraints.
    Livens,
    /// SHAKE on the hard constraints; v holds the staggered velocity v_{k+½}.
    Shake,
    /// RATTLE on the hard constraints.
    Rattle,
    /// Symplectic ("variational") Euler on the penalized model.
    SymplecticEuler,
    /// Velocity Verlet on the penalized model.
    Verlet,
}

impl Method {
    /// Returns whether the method runs the penalized model rather than the hard constraints.
    fn is_penalized(self) -> bool {
        !matches!(
            self,
            Method::Spook | Method::Livens | Method::Shake | Method::Rattle
        )
    }

    /// Returns the default step: SPOOK's 1/60, the explicit methods' `0.1/ω` (their stability
    /// limit on the penalty, as in Tao–Owhadi Fig. 1 row 3), the others' `0.1` (rows 2, 4–6).
    fn default_h(self, omega: f64) -> f64 {
        match self {
            Method::Spook => 1.0 / 60.0,
            Method::SymplecticEuler | Method::Verlet => 0.1 / omega,
            _ => 0.1,
        }
    }

    /// Returns a short name for titles.
    fn label(self) -> &'static str {
        match self {
            Method::Spook => "SPOOK",
            Method::Zs => "Z&S",
            Method::Zss => "Z&Ss",
            Method::ZssStiff => "stiff Z&Ss",
            Method::Newmark => "Newmark",
            Method::NewmarkOne => "Newmark (1 iteration)",
            Method::PfNewmark => "push-forward Newmark",
            Method::Livens => "Livens",
            Method::Shake => "SHAKE",
            Method::Rattle => "RATTLE",
            Method::SymplecticEuler => "symplectic Euler",
            Method::Verlet => "Verlet",
        }
    }
}

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
    common::exit_code(run(Args::parse()))
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
    let plan = args.run.plan(h, t_end)?;
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

/// Runs `method` as `plan` says from Tao–Owhadi's initial state.
fn simulate(
    method: Method,
    model: &DoublePendulum,
    omega: f64,
    beta: f64,
    plan: &Plan,
) -> Result<Trajectory, Box<dyn Error>> {
    let h = plan.h;
    let initial = DoublePendulum::initial_state();
    let penalized = Penalized::new(*model, omega);
    match method {
        Method::Spook => {
            let columns = multiplier_columns(|i: &Spook<4, 2>| *i.multipliers());
            common::simulate(Spook::new(h)?, model, model, initial, plan, columns)
        }
        Method::Livens => {
            let mut columns = vec![Column::new(
                "energy.generalized",
                |i: &Livens<4, 2>, s: &State<4>| i.generalized_energy(model, s),
            )];
            columns.extend(multiplier_columns(|i: &Livens<4, 2>| *i.multipliers()));
            common::simulate(Livens::new(h)?, model, model, initial, plan, columns)
        }
        Method::Shake => {
            let mut shake = Shake::<4, 2>::new(h)?;
            let mut start = initial;
            shake.stagger_velocity(model, &mut start)?;
            let columns = multiplier_columns(|i: &Shake<4, 2>| *i.multipliers());
            common::simulate(shake, model, model, start, plan, columns)
        }
        Method::Rattle => {
            let columns = multiplier_columns(|i: &Rattle<4, 2>| *i.multipliers());
            common::simulate(Rattle::new(h)?, model, model, initial, plan, columns)
        }
        Method::Zs => common::simulate(
            ZhangSkeel::new(h)?.with_beta(beta)?,
            &penalized,
            model,
            initial,
            plan,
            penalty_columns(&penalized),
        ),
        Method::Zss => common::simulate(
            ZhangSkeelSimplified::new(h)?.with_beta(beta)?,
            &penalized,
            model,
            initial,
            plan,
            penalty_columns(&penalized),
        ),
        Method::ZssStiff => common::simulate(
            ZhangSkeelStiff::new(h)?.with_beta(beta)?,
            &penalized,
            model,
            initial,
            plan,
            penalty_columns(&penalized),
        ),
        Method::Newmark => common::simulate(
            Newmark::new(h)?.with_beta(beta)?,
            &penalized,
            model,
            initial,
            plan,
            penalty_columns(&penalized),
        ),
        Method::NewmarkOne => common::simulate(
            NewmarkOneIteration::new(h)?.with_beta(beta)?,
            &penalized,
            model,
            initial,
            plan,
            penalty_columns(&penalized),
        ),
        Method::PfNewmark => common::simulate(
            PushForwardNewmark::new(h)?.with_beta(beta)?,
            &penalized,
            model,
            initial,
            plan,
            penalty_columns(&penalized),
        ),
        Method::SymplecticEuler => common::simulate(
            SymplecticEuler::new(h)?,
            &penalized,
            model,
            initial,
            plan,
            penalty_columns(&penalized),
        ),
        Method::Verlet => common::simulate(
            Verlet::new(h)?,
            &penalized,
            model,
            initial,
            plan,
            penalty_columns(&penalized),
        ),
    }
}

/// The column of a penalty method: the energy `T + V + ½ω²|g|²` it conserves.
fn penalty_columns<I>(penalized: &Penalized<DoublePendulum>) -> Vec<Column<'_, I, 4>> {
    vec![Column::new(
        "energy.penalized",
        move |_: &I, s: &State<4>| observers::energy(penalized, s),
    )]
}

/// The columns `lambda.<row>` of a constrained method, one per constraint row.
fn multiplier_columns<I: 'static>(
    multipliers: fn(&I) -> SVector<f64, 2>,
) -> Vec<Column<'static, I, 4>> {
    let rows = <DoublePendulum as Holonomic<4, 2>>::CONSTRAINTS;
    (0..rows.len())
        .map(|k| {
            Column::new(format!("lambda.{}", rows[k]), move |i: &I, _: &State<4>| {
                multipliers(i)[k]
            })
        })
        .collect()
}
