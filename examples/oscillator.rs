//! Cuell's two-dimensional harmonic oscillator (Cuell 2005 §4.1): 20 000 periods at `h = 0.25`
//! with the variational method — the discrete Lagrange–d'Alembert integrator without
//! constraint rows, which is Cuell's symplectic Euler (eq. 31–32) — against classical RK4.
//!
//! ```sh
//! cargo run --release --example oscillator                           # DLDA, h = 0.25, 20 000 periods
//! cargo run --release --example oscillator -- --method rk4
//! cargo run --release --example oscillator -- --constrained          # x ẋ + y ẏ = 0 as a row
//! cargo run --release --example oscillator -- --t-end 20 --animate out/oscillator.gif
//! ```
//!
//! The variational method keeps the energy and the angular momentum `m (x ẏ − y ẋ)` bounded
//! (no fitted drift) while RK4's decay like `|R(iωh)|^{2n}`, the printed `E/E0` and `L/L0`.
//! `--method spook` runs SPOOK (Lacoursière 2007), which without rows is symplectic Euler too.
//!
//! `--constrained` adds Cuell's velocity constraint `x ẋ + y ẏ = 0` (§5.1) as a nonholonomic
//! row (`A(q) = (x, y)`) and reports its residual, column `residual.nonholonomic`
//! (`|x ẋ + y ẏ|`), and the radius `|q|`, column `radius`. The row is integrable, but the
//! integrators only see it at velocity level: DLDA holds it to round-off at every step while
//! `|q|` grows by `h²|v_k|²` per step (the left-endpoint discrete constraint, runtime docs of
//! `DiscreteLagrangeDAlembert`), i.e. `r⁴ ≈ r0⁴ + 2 (hL/m)² n`, printed next to the measured
//! radius, and the energy follows the radius. SPOOK holds the row at the start of the step,
//! `A(q_k) v_{k+1} = 0` (up to its compliance `γ`), so at the step's end
//! `A(q_{k+1}) v_{k+1} = h|v_{k+1}|²`: bounded, but `O(h)` rather than round-off; its radius
//! obeys the same law. RK4 has no treatment of nonholonomic rows and is refused with
//! `--constrained`.
//!
//! Extra columns: `momentum.angular`; with `--constrained` also `residual.nonholonomic` and
//! `radius`. The models are `mechanism::models::{PlanarOscillator, OscillatorOnCircle}`,
//! written with `mechanism!` in `src/models/planar_oscillator.rs`.

use mechanism_examples as common;

use std::error::Error;
use std::f64::consts::TAU;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use common::{Column, Plan, RunOptions, Trajectory};
use mechanism::models::{OscillatorOnCircle, PlanarOscillator};
use mechanism::pictures::{Animation, Sketch};
use mechanism::runtime::reference::fit;
use mechanism::runtime::{
    DiscreteLagrangeDAlembert, Holonomic, Inertia, Integrator, Nonholonomic, Potential, Rk4,
    SMatrix, SVector, Spook, State,
};

/// Which integrator to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Method {
    /// Discrete Lagrange–d'Alembert (Cuell eq. 53–58); without rows, symplectic Euler (eq. 31–32).
    Dlda,
    /// SPOOK (Lacoursière eq. 24–29); without rows, symplectic Euler.
    Spook,
    /// Classical fourth-order Runge–Kutta, Cuell's non-variational comparison (unconstrained only).
    Rk4,
}

impl Method {
    /// Returns a short name for titles.
    fn label(self) -> &'static str {
        match self {
            Method::Dlda => "DLDA (symplectic Euler)",
            Method::Spook => "SPOOK",
            Method::Rk4 => "RK4",
        }
    }
}

/// Simulates Cuell's planar harmonic oscillator and writes a CSV file and a plot.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Integrator.
    #[arg(long, value_enum, default_value_t = Method::Dlda)]
    method: Method,
    /// Add the velocity constraint x ẋ + y ẏ = 0 as a nonholonomic row (Cuell §5.1).
    #[arg(long)]
    constrained: bool,
    /// Number of periods 2π/ω to simulate [default: 20000]; exclusive with --t-end.
    #[arg(long, allow_negative_numbers = true)]
    periods: Option<f64>,
    /// Mass m.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    m: f64,
    /// Spring stiffness k.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    k: f64,
    #[command(flatten)]
    run: RunOptions,
}

fn main() -> ExitCode {
    common::exit_code(run(common::cli::parse::<Args>()))
}

/// Returns `value` if it is finite and positive, else an error naming the option.
fn positive(name: &str, value: f64) -> Result<f64, Box<dyn Error>> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(format!("--{name} must be a positive number, got {value}").into())
    }
}

fn run(args: Args) -> Result<(), Box<dyn Error>> {
    let (m, k) = (positive("m", args.m)?, positive("k", args.k)?);
    let omega = (k / m).sqrt();
    let h = args.run.h_or(0.25);
    let t_end = match (args.periods, args.run.t_end) {
        (Some(_), Some(_)) => return Err("give --periods or --t-end, not both".into()),
        (None, Some(t_end)) => t_end,
        (periods, None) => positive("periods", periods.unwrap_or(20_000.0))? * TAU / omega,
    };
    let name = if args.constrained {
        "oscillator_constrained"
    } else {
        "oscillator"
    };
    // Rows every 100th step by default: 20 000 periods at about 5 000 rows (the summary uses
    // every step). They go to the file while the run goes, so that a killed run leaves them.
    let plan = common::Plan {
        every: args.run.every_or(100),
        ..args.run.plan(h, t_end)?
    }
    .stream_to(args.run.csv_or(name));
    let initial = PlanarOscillator::initial_state();
    let angular = move |s: &State<2>| m * (s.q[0] * s.v[1] - s.q[1] * s.v[0]);

    let trajectory = if args.constrained {
        let model = OscillatorOnCircle { m, k };
        match args.method {
            Method::Dlda => simulate(
                DiscreteLagrangeDAlembert::<2, 1>::new(h)?,
                &model,
                initial,
                &plan,
                angular,
            )?,
            Method::Spook => simulate(Spook::<2, 0, 1>::new(h)?, &model, initial, &plan, angular)?,
            Method::Rk4 => {
                return Err(
                    "RK4 has no treatment of nonholonomic rows; with --constrained use \
                            --method dlda or --method spook"
                        .into(),
                )
            }
        }
    } else {
        let model = PlanarOscillator { m, k };
        match args.method {
            Method::Dlda => simulate(
                DiscreteLagrangeDAlembert::<2, 0>::new(h)?,
                &model,
                initial,
                &plan,
                angular,
            )?,
            Method::Spook => simulate(Spook::<2, 0, 0>::new(h)?, &model, initial, &plan, angular)?,
            Method::Rk4 => simulate(Rk4::<2>::new(h)?, &model, initial, &plan, angular)?,
        }
    };

    let constraint = if args.constrained {
        ", x ẋ + y ẏ = 0"
    } else {
        ""
    };
    let title = format!(
        "planar oscillator{constraint}, {}, h = {h}",
        args.method.label()
    );
    common::print_summary(&title, &trajectory);
    print_cuell_summary(&trajectory, args.method, omega, h, m);
    // The particle on its spring from the origin, with its path so far.
    let particle = Sketch::new(|_t, q, frame| {
        frame.anchor((0.0, 0.0)).link((0.0, 0.0), (q[0], q[1]));
        frame.body((q[0], q[1]));
    });
    args.run.draw_motion_with(
        Animation::new(&title).trails(true),
        &title,
        &trajectory.table,
        &particle,
    )?;
    common::write_outputs(
        &args.run.csv_or(name),
        &args.run.png_or(name),
        &title,
        &trajectory,
        &trajectory.table,
    )
}

/// Runs `integrator` on `model` with the columns `momentum.angular` and, if the model has a
/// constraint row, `residual.nonholonomic` (`max_i |(A v − w)_i|`) and `radius` (`|q|`).
fn simulate<I, Model, const K: usize>(
    integrator: I,
    model: &Model,
    initial: State<2>,
    plan: &Plan,
    angular: impl Fn(&State<2>) -> f64,
) -> Result<Trajectory, Box<dyn Error>>
where
    I: Integrator<Model, 2>,
    Model: mechanism::runtime::Configuration<2>
        + mechanism::runtime::checkpoint::ModelIdentity
        + Inertia<2>
        + Potential<2>
        + Holonomic<2, 0>
        + Nonholonomic<2, K>,
{
    let mut columns = vec![Column::new("momentum.angular", |_: &I, s: &State<2>| {
        angular(s)
    })];
    if K > 0 {
        columns.push(Column::new(
            "residual.nonholonomic",
            |_: &I, s: &State<2>| {
                let (mut a, mut w) = (SMatrix::<f64, K, 2>::zeros(), SVector::<f64, K>::zeros());
                model.nonholonomic_matrix(&s.q, &mut a);
                model.nonholonomic_drive(s.t, &mut w);
                (a * s.v - w).amax()
            },
        ));
        columns.push(Column::new("radius", |_: &I, s: &State<2>| s.q.norm()));
    }
    common::simulate(integrator, model, model, initial, plan, columns)
}

/// Prints the relative range, the fitted drift (in units of the initial value per run) and the
/// final ratio of a quantity that the exact flow conserves.
fn print_invariant(name: &str, times: &[f64], values: &[f64]) {
    let first = values.first().copied().unwrap_or(1.0);
    let scale = if first == 0.0 { 1.0 } else { first.abs() };
    let ratios: Vec<f64> = values.iter().map(|x| x / scale).collect();
    let (lo, hi) = ratios
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &r| {
            (lo.min(r), hi.max(r))
        });
    println!(
        "  {name}: max |X - X0|/|X0| = {:.3e}, range X/X0 in [{lo:.6}, {hi:.6}], fitted drift \
         {:+.3e} X0 per run, final X/X0 = {:.6}",
        common::max_deviation(values) / scale,
        fit::slope(times, &ratios).unwrap_or(0.0),
        ratios.last().copied().unwrap_or(1.0)
    );
}

/// Prints the numbers to compare with Cuell §4.1 (Fig. 2–3) and §5.1 (Fig. 4).
fn print_cuell_summary(trajectory: &Trajectory, method: Method, omega: f64, h: f64, m: f64) {
    let omega_h = omega * h;
    let t_end = trajectory.t_last().max(f64::MIN_POSITIVE);
    let times: Vec<f64> = trajectory.times().iter().map(|t| t / t_end).collect();
    let steps = trajectory.summary.steps;
    print_invariant("energy E          ", &times, &trajectory.energy());
    if let Some(angular) = trajectory.column("momentum.angular") {
        print_invariant("angular momentum L", &times, &angular);
    }
    match method {
        Method::Rk4 => {
            // RK4 on ẍ = −ω² x is |R(iωh)| times a rotation: E and L scale by |R|^{2n}.
            let z = omega_h;
            let r2 = (1.0 - z * z / 2.0 + z.powi(4) / 24.0).powi(2) + (z - z.powi(3) / 6.0).powi(2);
            println!(
                "  RK4 predicted E/E0 = L/L0 = |R(iωh)|^(2n) = {:.6} (Cuell Fig. 2: RK4 energy and \
                 momentum decay)",
                r2.powf(steps as f64)
            );
        }
        Method::Dlda | Method::Spook if trajectory.column("radius").is_none() => {
            if omega_h < 2.0 {
                println!(
                    "  symplectic Euler keeps |q|²ω² + |v|² + hω² q·v exactly, so E/E0 stays in \
                     [{:.6}, {:.6}] for q0·v0 = 0 (Cuell Fig. 2: bounded)",
                    1.0 / (1.0 + omega_h / 2.0),
                    1.0 / (1.0 - omega_h / 2.0)
                );
            }
        }
        Method::Dlda | Method::Spook => {}
    }
    let (Some(residual), Some(radius)) = (
        trajectory.column("residual.nonholonomic"),
        trajectory.column("radius"),
    ) else {
        return;
    };
    let speed = |x: &str, y: &str| {
        let (x, y) = (trajectory.column(x)?, trajectory.column(y)?);
        Some(
            x.iter()
                .zip(&y)
                .map(|(x, y)| (x * x + y * y).sqrt())
                .collect::<Vec<_>>(),
        )
    };
    let (Some(speed), Some(radius_now)) = (speed("v.x", "v.y"), speed("q.x", "q.y")) else {
        return;
    };
    let relative = residual
        .iter()
        .zip(radius_now.iter().zip(&speed))
        .map(|(r, (q, v))| r / (q * v).max(f64::MIN_POSITIVE))
        .fold(0.0, f64::max);
    println!(
        "  constraint x ẋ + y ẏ: max |A v| = {:.3e}, max |A v|/(|q||v|) = {relative:.3e} over {:.0} \
         periods (Cuell Fig. 4: bounded)",
        residual.iter().fold(0.0, |m: f64, r| m.max(*r)),
        t_end * omega / TAU,
    );
    let r_end = radius.last().copied().unwrap_or(1.0);
    if method == Method::Dlda {
        let l0 = trajectory
            .column("momentum.angular")
            .and_then(|l| l.first().copied())
            .unwrap_or(0.0);
        let r0 = radius.first().copied().unwrap_or(1.0);
        let predicted = (r0.powi(4) + 2.0 * (h * l0 / m).powi(2) * steps as f64).powf(0.25);
        println!(
            "  radius |q|: {r0} -> {r_end:.4}; the velocity-level row lets |q|² grow by h²|v|² per \
             step, r⁴ ≈ r0⁴ + 2(hL/m)²n predicts {predicted:.4}"
        );
    } else {
        println!(
            "  radius |q|: {} -> {r_end:.4}",
            radius.first().copied().unwrap_or(1.0)
        );
    }
}
