//! The two-link planar robot arm of Ascher–Chin–Petzold–Reich (1995) §6, Example 2: the index-1
//! formulation of a constrained arm integrated by explicit Runge–Kutta with Baumgarte's
//! stabilization or a post-stabilization, written to CSV and plotted; `--table` reproduces
//! Tables 6.1–6.3 with the paper's numbers alongside.
//!
//! ```sh
//! cargo run --release --example robot_arm                            # Case I, Heun, S-both², h = .01
//! cargo run --release --example robot_arm -- --case sine --stabilization baumgarte --alpha1 12 --alpha0 70
//! cargo run --release --example robot_arm -- --case sine --method dopri5 --omega 1 --t-end 100
//! cargo run --release --example robot_arm -- --animate out/robot_arm.gif   # links and path
//! cargo run --release --example robot_arm -- --table
//! ```
//!
//! `--case parabola` holds the free end on `y2 = x2² − β` (Case I, default end time 40),
//! `--case sine` at the height `y2 = sin²(ωt)` (Case II, `--omega`, default ½, end time 10).
//! `--method rk2` is Heun's method, the paper's "explicit Runge–Kutta scheme of order 2" (it
//! reproduces Tables 6.1–6.2 where the explicit midpoint rule does not; see the runtime's
//! `stabilized` module), `rk4` classical RK4, both at the fixed step `--h` (default .01);
//! `dopri5` is the error-controlled Dormand–Prince pair with `--rtol` (default 1e-5, the
//! paper's TOL) and `--atol` (default 0.1 rtol), `--h` setting its first step.
//! `--stabilization`: `none` (Baum(0,0)), `baumgarte` (`--alpha1`, `--alpha0`, default 12 and
//! 70), `s-full`, `s-both`, `s-both2` (S-both², the default), `s-vel`, `s-pos`.
//!
//! Extra CSV columns: `drift.position` = `|g|` and `drift.velocity` = `|G v + g_t|` (the
//! paper's drifts; for Case II the common `residual.velocity` = `|G v|` omits the `g_t` of the
//! moving constraint and is not an invariant), `x2`, `y2` (the free end, Fig. 6.2–6.3), and
//! `h` for `dopri5` (the step taken).
//!
//! The models are `mechanism::models::{RobotArmParabola, RobotArmSine}`, written with
//! `mechanism!` in `src/models/robot_arm.rs`.
use mechanism_examples as common;
#[path = "robot_arm/tables.rs"]
mod tables;

use std::error::Error;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use mechanism::models::{RobotArmParabola, RobotArmSine};
use mechanism::pictures::{Frame, Sketch};
use mechanism::runtime::integrators::stabilized::{
    drift, Baumgarte, Dopri5, PostStabilization, StabilizedRk, Tableau, DOPRI5, HEUN, RK4,
};
use mechanism::runtime::{
    AppliedForces, Configuration, HolonomicKinematics, InertiaGradient, Potential, State,
};

use common::stabilization::{Method, Stabilization};
use common::{Column, Plan, RunOptions, Trajectory};
use tables::print_tables;

/// Which constraint the free end obeys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Case {
    /// Case I: the parabola `y2 = x2² − β`, β from the initial state.
    Parabola,
    /// Case II: the prescribed height `y2 = sin²(ωt)`.
    Sine,
}

/// Simulates the two-link robot arm of Ascher et al. (1995) Example 2 and writes a CSV file and
/// a plot, or prints Tables 6.1–6.3.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// The constraint on the free end.
    #[arg(long, value_enum, default_value_t = Case::Parabola)]
    case: Case,
    /// Integrator.
    #[arg(long, value_enum, default_value_t = Method::Rk2)]
    method: Method,
    /// Stabilization.
    #[arg(long, value_enum, default_value_t = Stabilization::BothTwice)]
    stabilization: Stabilization,
    /// Baumgarte's α1 (with --stabilization baumgarte) [default: 12].
    #[arg(long, allow_negative_numbers = true)]
    alpha1: Option<f64>,
    /// Baumgarte's α0 (with --stabilization baumgarte) [default: 70].
    #[arg(long, allow_negative_numbers = true)]
    alpha0: Option<f64>,
    /// Relative tolerance of dopri5 [default: 1e-5].
    #[arg(long, allow_negative_numbers = true)]
    rtol: Option<f64>,
    /// Absolute tolerance of dopri5 [default: 0.1 rtol].
    #[arg(long, allow_negative_numbers = true)]
    atol: Option<f64>,
    /// ω of Case II's y2 = sin²(ωt) [default: 0.5].
    #[arg(long, allow_negative_numbers = true)]
    omega: Option<f64>,
    #[command(flatten)]
    run: RunOptions,
    /// Print Tables 6.1–6.3 of the paper (their own fixed settings) beside ours, instead of one
    /// run.
    #[arg(long, conflicts_with_all = [
        "case", "method", "stabilization", "alpha1", "alpha0", "rtol", "atol", "omega",
        "h", "t_end", "out", "plot",
    ])]
    table: bool,
}

fn main() -> ExitCode {
    common::exit_code(run(common::cli::parse::<Args>()))
}

/// What the index-1 integrators need of a model, plus the coordinate names for the CSV.
trait ArmModel:
    InertiaGradient<2>
    + Potential<2>
    + HolonomicKinematics<2, 1>
    + AppliedForces<2>
    + Configuration<2>
    + mechanism::runtime::checkpoint::ModelIdentity
{
}

impl<T> ArmModel for T where
    T: mechanism::runtime::checkpoint::ModelIdentity
        + InertiaGradient<2>
        + Potential<2>
        + HolonomicKinematics<2, 1>
        + AppliedForces<2>
        + Configuration<2>
{
}

fn run(args: Args) -> Result<(), Box<dyn Error>> {
    if args.table {
        args.run.refuse_checkpoints(
            "robot_arm --table",
            "it computes a table of many short runs; checkpoint a single --method run instead",
        )?;
        return print_tables();
    }
    let (alpha1, alpha0) = (args.alpha1.unwrap_or(12.0), args.alpha0.unwrap_or(70.0));
    if args.stabilization != Stabilization::Baumgarte
        && (args.alpha1.is_some() || args.alpha0.is_some())
    {
        return Err("--alpha1 and --alpha0 apply to --stabilization baumgarte only".into());
    }
    if args.method != Method::Dopri5 && (args.rtol.is_some() || args.atol.is_some()) {
        return Err("--rtol and --atol apply to --method dopri5 only".into());
    }
    let (baumgarte, post) = args.stabilization.parts(alpha1, alpha0)?;
    let settings = Settings {
        method: args.method,
        baumgarte,
        post,
        h: args.run.h,
        t_end: args.run.t_end_or(match args.case {
            Case::Parabola => 40.0,
            Case::Sine => 10.0,
        }),
        rtol: args.rtol.unwrap_or(1e-5),
        atol: args.atol,
        run: args.run.clone(),
    };
    let (trajectory, title, scene) = match args.case {
        Case::Parabola => {
            if args.omega.is_some() {
                return Err("--omega applies to --case sine only".into());
            }
            let model = RobotArmParabola::default();
            let free_end = move |q: [f64; 2]| model.free_end(&q);
            let title = format!("robot arm, case I (beta = {:.6})", model.beta);
            // The prescribed path y2 = x2² − β, where the arm can reach (|y2| ≤ l1 + l2).
            let (beta, reach) = (model.beta, model.l1 + model.l2);
            let x_max = (reach + beta).sqrt();
            let parabola: Vec<(f64, f64)> = (0..=100)
                .map(|k| -x_max + 2.0 * x_max * f64::from(k) / 100.0)
                .map(|x| (x, x * x - beta))
                .collect();
            let scene = arm_scene(model.l1, model.l2, move |_t| parabola.clone());
            (simulate(&model, free_end, &settings)?, title, scene)
        }
        Case::Sine => {
            let omega = args.omega.unwrap_or(0.5);
            if !(omega.is_finite() && omega > 0.0) {
                return Err(format!("--omega must be a positive number, got {omega}").into());
            }
            let model = RobotArmSine {
                omega,
                ..RobotArmSine::default()
            };
            let free_end = move |q: [f64; 2]| model.free_end(&q);
            let title = format!("robot arm, case II (omega = {omega})");
            // The prescribed height y2 = sin²(ωt) at the frame's time.
            let reach = model.l1 + model.l2;
            let height = move |t: f64| {
                let y = (omega * t).sin().powi(2);
                vec![(-reach, y), (reach, y)]
            };
            let scene = arm_scene(model.l1, model.l2, height);
            (simulate(&model, free_end, &settings)?, title, scene)
        }
    };
    let title = format!("{title}, {}", settings.label(args.stabilization));
    common::print_summary(&title, &trajectory);
    let max_of = |name: &str| {
        trajectory
            .column(name)
            .map_or(0.0, |c| c.into_iter().fold(0.0, f64::max))
    };
    println!(
        "  max drift (Ascher et al.): position |g| = {:.3e}, velocity |G v + g_t| = {:.3e}",
        max_of("drift.position"),
        max_of("drift.velocity")
    );
    args.run.draw_motion(&title, &trajectory.table, &scene)?;
    common::write_outputs(
        &args.run.csv_or("robot_arm"),
        &args.run.png_or("robot_arm"),
        &title,
        &trajectory,
        &trajectory.table,
    )
}

/// A scene of the arm.
type ArmScene = Sketch<Box<dyn Fn(f64, &[f64], &mut Frame)>>;

/// Returns what to draw of the arm with rods `l1`, `l2` at `q = (θ1, θ2)`: the two links from
/// the shoulder at the origin, the elbow and the free end, and the prescribed path `path(t)`.
fn arm_scene(l1: f64, l2: f64, path: impl Fn(f64) -> Vec<(f64, f64)> + 'static) -> ArmScene {
    Sketch::new(Box::new(move |t, q, frame| {
        let elbow = (l1 * q[0].cos(), l1 * q[0].sin());
        let end = (
            elbow.0 + l2 * (q[0] + q[1]).cos(),
            elbow.1 + l2 * (q[0] + q[1]).sin(),
        );
        frame.guide(path(t));
        frame
            .anchor((0.0, 0.0))
            .link((0.0, 0.0), elbow)
            .link(elbow, end);
        frame.body(elbow).body(end);
    }))
}

/// The integrator settings of one run.
#[derive(Clone, Debug)]
struct Settings {
    method: Method,
    baumgarte: Baumgarte,
    post: PostStabilization,
    /// The fixed step, or the first step of dopri5.
    h: Option<f64>,
    t_end: f64,
    rtol: f64,
    /// `None` for `0.1 rtol`.
    atol: Option<f64>,
    /// `--save-every`, `--every` and `--out`.
    run: RunOptions,
}

impl Settings {
    /// Returns `plan` streaming its rows to the output file while it goes, so that a killed
    /// run leaves them.
    fn output(&self, plan: Plan) -> Plan {
        plan.stream_to(self.run.csv_or("robot_arm"))
    }

    /// Returns a title fragment naming the method, step or tolerances, and stabilization.
    fn label(&self, stabilization: Stabilization) -> String {
        let stabilization = match stabilization {
            Stabilization::Baumgarte => format!(
                "Baum({}, {})",
                self.baumgarte.alpha1(),
                self.baumgarte.alpha0()
            ),
            other => other
                .to_possible_value()
                .map_or_else(String::new, |v| v.get_name().to_string()),
        };
        match self.method {
            Method::Rk2 => format!("Heun, h = {}, {stabilization}", self.h.unwrap_or(0.01)),
            Method::Rk4 => format!("RK4, h = {}, {stabilization}", self.h.unwrap_or(0.01)),
            Method::Dopri5 => format!(
                "DOPRI5, rtol = {:e}, atol = {:e}, {stabilization}",
                self.rtol,
                self.atol.unwrap_or(0.1 * self.rtol)
            ),
        }
    }
}

/// Runs `settings` on `model` from the paper's initial state; `free_end` gives `(x2, y2)`.
fn simulate<Model: ArmModel>(
    model: &Model,
    free_end: impl Fn([f64; 2]) -> (f64, f64) + Copy + 'static,
    settings: &Settings,
) -> Result<Trajectory, Box<dyn Error>> {
    let initial = RobotArmParabola::initial_state();
    let h = settings.h.unwrap_or(0.01);
    match settings.method {
        Method::Rk2 => Ok(fixed_step(model, free_end, HEUN, h, settings)?),
        Method::Rk4 => Ok(fixed_step(model, free_end, RK4, h, settings)?),
        Method::Dopri5 => {
            let atol = settings.atol.unwrap_or(0.1 * settings.rtol);
            let mut dopri = Dopri5::<2, 1>::new(DOPRI5, settings.rtol, atol)?
                .with_baumgarte(settings.baumgarte)
                .with_post_stabilization(settings.post);
            if let Some(h) = settings.h {
                dopri = dopri.with_initial_step(h)?;
            }
            common::simulate_adaptive(
                dopri,
                model,
                initial,
                settings.t_end,
                columns(model, free_end),
                &settings.output(settings.run.adaptive_plan()?),
            )
        }
    }
}

/// The columns `drift.position`, `drift.velocity` (Ascher et al.'s drifts) and the free end
/// `x2`, `y2`, for any integrator.
fn columns<I, Model: ArmModel>(
    model: &Model,
    free_end: impl Fn([f64; 2]) -> (f64, f64) + Copy + 'static,
) -> Vec<Column<'_, I, 2>> {
    vec![
        Column::new("drift.position", |_: &I, s: &State<2>| {
            drift::<_, 2, 1>(model, s).position
        }),
        Column::new("drift.velocity", |_: &I, s: &State<2>| {
            drift::<_, 2, 1>(model, s).velocity
        }),
        Column::new("x2", move |_: &I, s: &State<2>| {
            free_end([s.q[0], s.q[1]]).0
        }),
        Column::new("y2", move |_: &I, s: &State<2>| {
            free_end([s.q[0], s.q[1]]).1
        }),
    ]
}

/// Runs the fixed-step method `tableau` with step `h` through the common harness.
fn fixed_step<Model: ArmModel, const S: usize>(
    model: &Model,
    free_end: impl Fn([f64; 2]) -> (f64, f64) + Copy + 'static,
    tableau: Tableau<S>,
    h: f64,
    settings: &Settings,
) -> Result<Trajectory, Box<dyn Error>> {
    let plan = settings.output(settings.run.plan(h, settings.t_end)?);
    let rk = StabilizedRk::<2, 1, S>::new(tableau, h)?
        .with_baumgarte(settings.baumgarte)
        .with_post_stabilization(settings.post);
    let initial = RobotArmParabola::initial_state();
    common::simulate(rk, model, model, initial, &plan, columns(model, free_end))
}
