//! A robot imported from its URDF file by `mechanism!`, falling under gravity from a joint
//! configuration (or held there by PD actuators, `--hold`): the UR5 of example-robot-data
//! (`robots/ur5.urdf`, the default) in maximal coordinates (each of its six bodies a position
//! and a rotation matrix, each joint five rows, a constant mass matrix) stepped by SPOOK or
//! RATTLE, or in joint coordinates stepped by DOPRI5 or RK4; the Franka Panda
//! (`robots/panda.urdf`, seven joints and two mimicking fingers) in joint coordinates.
//!
//! ```sh
//! cargo run --release --example robot                                 # UR5, maximal, SPOOK
//! cargo run --release --example robot -- --method rattle --h 0.001
//! cargo run --release --example robot -- --coordinates joints        # DOPRI5, rtol 1e-9
//! cargo run --release --example robot -- --coordinates joints --hold --t-end 2
//! cargo run --release --example robot -- --urdf robots/panda.urdf --coordinates joints
//! cargo run --release --example robot -- --animate out/robot.gif
//! ```
//!
//! The models are compiled from their files, so `--urdf` chooses among the files this example
//! was compiled with; another robot is a `mechanism! { .. urdf: "my_robot.urdf" .. }` of your
//! own. Columns: the CSV contract's (`t`, `q.*`, `v.*` — the bodies' coordinates in maximal
//! coordinates, the joints' in joint coordinates — `energy`, `residual.position`,
//! `residual.velocity`), then `joint.<name>` for each moving joint (its angle or offset) and,
//! in joint coordinates, `torque.<name>`, the actuator's torque (or force). `--hold` turns the
//! actuators into PD controllers about `--pose` (`kp`, `kd`) with the gravity torques there as
//! feed-forward (`tau_i = ∂V/∂θ_i`), and pushes the first joint at 1 rad/s at the start: the
//! controller brings the arm back. It needs `--coordinates joints`, whose coordinates the
//! actuators act on.

use mechanism_examples as common;

use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use common::{Column, RunOptions, Trajectory};
use mechanism::models::{PandaJoints, Ur5, Ur5Joints};
use mechanism::pictures::Sketch;
use mechanism::runtime::checkpoint::ModelIdentity;
use mechanism::runtime::integrators::stabilized::{PostStabilization, DOPRI5, RK4};
use mechanism::runtime::{
    AppliedForces, Configuration, Dopri5, Holonomic, HolonomicKinematics, InertiaGradient,
    Potential, Rattle, SVector, Spook, StabilizedRk, State,
};

/// The robots this example is compiled with.
const ROBOTS: [&str; 2] = ["robots/ur5.urdf", "robots/panda.urdf"];

/// How the robot is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Coordinates {
    /// Each body's centre of mass and rotation matrix, joints as rows (UR5 only).
    Maximal,
    /// The joints' angles and offsets.
    Joints,
}

/// Which integrator steps the robot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Method {
    /// SPOOK (ε = 1e-8, τ = 2h), maximal coordinates.
    Spook,
    /// RATTLE, Newton on the multipliers to 1e-13, maximal coordinates.
    Rattle,
    /// Dormand–Prince 5(4) with error control (`--rtol`), joint coordinates.
    Dopri5,
    /// Classical RK4 at a fixed step, joint coordinates.
    Rk4,
}

/// Simulates a robot imported from a URDF file and writes a CSV file and a plot.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// The robot's URDF file, one of those the example is compiled with: robots/ur5.urdf,
    /// robots/panda.urdf.
    #[arg(long, default_value = "robots/ur5.urdf")]
    urdf: PathBuf,
    /// The coordinates the robot is written in.
    #[arg(long, value_enum, default_value_t = Coordinates::Maximal)]
    coordinates: Coordinates,
    /// Integrator [default: spook in maximal coordinates, dopri5 in joint coordinates].
    #[arg(long, value_enum)]
    method: Option<Method>,
    #[command(flatten)]
    run: RunOptions,
    /// The joints' positions at the start, comma-separated (radians, metres) [default: the
    /// UR5 reaching out, the Panda in its ready pose].
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    pose: Option<Vec<f64>>,
    /// Hold --pose with PD actuators and gravity feed-forward after a push of the first joint
    /// (joint coordinates).
    #[arg(long)]
    hold: bool,
    /// Proportional gain of --hold (N·m/rad).
    #[arg(long, default_value_t = 100.0)]
    kp: f64,
    /// Derivative gain of --hold (N·m·s/rad).
    #[arg(long, default_value_t = 5.0)]
    kd: f64,
    /// Relative tolerance of DOPRI5.
    #[arg(long, default_value_t = 1e-9)]
    rtol: f64,
}

fn main() -> ExitCode {
    let args = common::cli::parse::<Args>();
    // The maximal coordinates' fixed-size integrators keep their 72 × 72 matrices on the
    // stack: run on a thread with room for them.
    let run = std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || run(args).map_err(|e| e.to_string()))
        .expect("a thread for the run")
        .join()
        .unwrap_or_else(|_| Err("the run panicked".to_string()));
    common::exit_code(run.map_err(Into::into))
}

fn run(args: Args) -> Result<(), Box<dyn Error>> {
    let robot = match ROBOTS.iter().find(|r| args.urdf.ends_with(r)) {
        Some(robot) => *robot,
        None => {
            return Err(format!(
                "--urdf {}: this example is compiled with {}; import another robot with \
                 `mechanism! {{ .. urdf: \"{}\" .. }}` in your own crate",
                args.urdf.display(),
                ROBOTS.join(" and "),
                args.urdf.display()
            )
            .into())
        }
    };
    let method = args.method.unwrap_or(match args.coordinates {
        Coordinates::Maximal => Method::Spook,
        Coordinates::Joints => Method::Dopri5,
    });
    match (args.coordinates, method) {
        (Coordinates::Maximal, Method::Dopri5 | Method::Rk4) => {
            return Err(format!(
                "--method {method:?} steps the joint coordinates here; add --coordinates joints, \
                 or use --method spook or rattle"
            )
            .to_lowercase()
            .into())
        }
        (Coordinates::Joints, Method::Spook | Method::Rattle) => {
            return Err(format!(
                "--method {method:?} needs a constant mass matrix, which the joint coordinates \
                 lack; use --coordinates maximal, or --method dopri5 or rk4"
            )
            .to_lowercase()
            .into())
        }
        _ => {}
    }
    let csv = args.run.csv_or("robot");
    let png = args.run.png_or("robot");
    let t_end = args.run.t_end_or(1.0);
    let name = Path::new(robot)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("robot");
    let (trajectory, title) =
        match (robot, args.coordinates) {
            ("robots/ur5.urdf", Coordinates::Maximal) => {
                if args.hold {
                    return Err(
                        "--hold acts on the joints' coordinates; add --coordinates joints".into(),
                    );
                }
                let model = Ur5::default();
                let pose = pose(&args, [0.0, -0.8, 1.2, -0.4, 1.0, 0.0])?;
                let start = model.state_from_joints(&pose, &[0.0; 6]);
                let h = args.run.h_or(0.001);
                let plan = args.run.plan(h, t_end)?.stream_to(csv.clone());
                let positions = |q: &SVector<f64, 72>| model.joint_positions(q);
                let trajectory = match method {
                    Method::Rattle => {
                        let rattle = Rattle::<72, 66>::new(h)?.with_tolerance(1e-13)?;
                        let columns = joint_columns(&Ur5::JOINTS, positions);
                        common::simulate(rattle, &model, &model, start, &plan, columns)?
                    }
                    _ => {
                        let spook = Spook::<72, 66>::new(h)?;
                        let columns = joint_columns(&Ur5::JOINTS, positions);
                        common::simulate(spook, &model, &model, start, &plan, columns)?
                    }
                };
                draw(
                    &args.run,
                    &trajectory,
                    "UR5 (maximal)",
                    |q| model.link_origins(&SVector::from_column_slice(q)).to_vec(),
                    &Ur5::LINK_PARENTS,
                )?;
                let label = if method == Method::Rattle {
                    "RATTLE"
                } else {
                    "SPOOK"
                };
                let title = format!("{name}, maximal coordinates, {label} h = {h}");
                (trajectory, title)
            }
            ("robots/ur5.urdf", Coordinates::Joints) => {
                let mut model = Ur5Joints::default();
                let pose = pose(&args, [0.0, -0.8, 1.2, -0.4, 1.0, 0.0])?;
                if args.hold {
                    let tau = gravity_torques(&model, &pose);
                    [
                        model.tau1, model.tau2, model.tau3, model.tau4, model.tau5, model.tau6,
                    ] = tau;
                    [
                        model.target1,
                        model.target2,
                        model.target3,
                        model.target4,
                        model.target5,
                        model.target6,
                    ] = pose;
                    (model.kp, model.kd) = (args.kp, args.kd);
                }
                let start = model.state_from_joints(&pose, &kick(&args));
                let torques = |m: &Ur5Joints, s: &State<6>| {
                    actuator_forces(
                        (m.kp, m.kd),
                        [m.tau1, m.tau2, m.tau3, m.tau4, m.tau5, m.tau6],
                        [
                            m.target1, m.target2, m.target3, m.target4, m.target5, m.target6,
                        ],
                        s,
                    )
                };
                let (trajectory, label) = joint_run::<_, 6, 0>(
                    (&args, method),
                    &model,
                    start,
                    t_end,
                    &csv,
                    torques,
                    &Ur5Joints::JOINTS,
                )?;
                draw(
                    &args.run,
                    &trajectory,
                    "UR5 (joints)",
                    |q| model.link_origins(&SVector::from_column_slice(q)).to_vec(),
                    &Ur5Joints::LINK_PARENTS,
                )?;
                (trajectory, format!("{name}, joint coordinates, {label}"))
            }
            ("robots/panda.urdf", Coordinates::Joints) => {
                let mut model = PandaJoints::default();
                let pose = pose(&args, [0.0, -0.5, 0.0, -2.0, 0.0, 1.6, 0.8, 0.02, 0.02])?;
                if args.hold {
                    let tau = gravity_torques(&model, &pose);
                    [
                        model.tau1, model.tau2, model.tau3, model.tau4, model.tau5, model.tau6,
                        model.tau7, model.tau8, model.tau9,
                    ] = tau;
                    [
                        model.target1,
                        model.target2,
                        model.target3,
                        model.target4,
                        model.target5,
                        model.target6,
                        model.target7,
                        model.target8,
                        model.target9,
                    ] = pose;
                    (model.kp, model.kd) = (args.kp, args.kd);
                }
                let start = model.state_from_joints(&pose, &kick(&args));
                let torques = |m: &PandaJoints, s: &State<9>| {
                    actuator_forces(
                        (m.kp, m.kd),
                        [
                            m.tau1, m.tau2, m.tau3, m.tau4, m.tau5, m.tau6, m.tau7, m.tau8, m.tau9,
                        ],
                        [
                            m.target1, m.target2, m.target3, m.target4, m.target5, m.target6,
                            m.target7, m.target8, m.target9,
                        ],
                        s,
                    )
                };
                let (trajectory, label) = joint_run::<_, 9, 1>(
                    (&args, method),
                    &model,
                    start,
                    t_end,
                    &csv,
                    torques,
                    &PandaJoints::JOINTS,
                )?;
                draw(
                    &args.run,
                    &trajectory,
                    "Panda (joints)",
                    |q| model.link_origins(&SVector::from_column_slice(q)).to_vec(),
                    &PandaJoints::LINK_PARENTS,
                )?;
                (trajectory, format!("{name}, joint coordinates, {label}"))
            }
            _ => return Err(
                "the Panda is compiled in joint coordinates only here (its ten bodies in maximal \
                 coordinates are 120 coordinates); add --coordinates joints"
                    .into(),
            ),
        };
    let title = if args.hold {
        format!("{title}, held (kp = {}, kd = {})", args.kp, args.kd)
    } else {
        title
    };
    common::print_summary(&title, &trajectory);
    common::write_outputs(&csv, &png, &title, &trajectory, &trajectory.table)
}

/// The joints' rates at the start: at rest, or with `--hold` the first joint turning at
/// 1 rad/s, a push the controller brings back.
fn kick<const J: usize>(args: &Args) -> [f64; J] {
    std::array::from_fn(|k| if args.hold && k == 0 { 1.0 } else { 0.0 })
}

/// Returns `--pose` (checked against the robot's joints), or `default`.
fn pose<const J: usize>(args: &Args, default: [f64; J]) -> Result<[f64; J], Box<dyn Error>> {
    match &args.pose {
        None => Ok(default),
        Some(values) => <[f64; J]>::try_from(values.as_slice()).map_err(|_| {
            format!(
                "--pose has {} values; the robot has {J} moving joints",
                values.len()
            )
            .into()
        }),
    }
}

/// The gravity torques `∂V/∂θ` at `pose`: the feed-forward that holds the robot there.
fn gravity_torques<const J: usize, M: Potential<J>>(model: &M, pose: &[f64; J]) -> [f64; J] {
    let mut gradient = SVector::<f64, J>::zeros();
    model.potential_gradient(&SVector::from(*pose), &mut gradient);
    gradient.into()
}

/// The actuators' torques `tau + kp (target − θ) − kd θ̇` at `state`.
fn actuator_forces<const J: usize>(
    (kp, kd): (f64, f64),
    tau: [f64; J],
    target: [f64; J],
    state: &State<J>,
) -> [f64; J] {
    std::array::from_fn(|i| tau[i] + kp * (target[i] - state.q[i]) - kd * state.v[i])
}

/// The columns `joint.<name>` of the joints' positions.
fn joint_columns<'a, I, const N: usize, const J: usize>(
    joints: &'a [&'static str; J],
    positions: impl Fn(&SVector<f64, N>) -> [f64; J] + Copy + 'a,
) -> Vec<Column<'a, I, N>> {
    joints
        .iter()
        .enumerate()
        .map(|(k, joint)| {
            Column::new(format!("joint.{joint}"), move |_: &I, s: &State<N>| {
                positions(&s.q)[k]
            })
        })
        .collect()
}

/// Runs a robot in joint coordinates (`R` rows: the mimics) with DOPRI5 or RK4, with the
/// columns `joint.<name>` and `torque.<name>`; returns the trajectory and the method's label.
fn joint_run<'a, M, const J: usize, const R: usize>(
    run: (&Args, Method),
    model: &'a M,
    start: State<J>,
    t_end: f64,
    csv: &Path,
    torques: impl Fn(&M, &State<J>) -> [f64; J] + Copy + 'a,
    joints: &'a [&'static str; J],
) -> Result<(Trajectory, String), Box<dyn Error>>
where
    M: ModelIdentity
        + Configuration<J>
        + InertiaGradient<J>
        + Potential<J>
        + HolonomicKinematics<J, R>
        + Holonomic<J, R>
        + AppliedForces<J>,
{
    let (args, method) = run;
    match method {
        Method::Rk4 => {
            let h = args.run.h_or(1e-4);
            let plan = args.run.plan(h, t_end)?.stream_to(csv.to_path_buf());
            let rk4 = StabilizedRk::<J, R, 4>::new(RK4, h)?
                .with_post_stabilization(PostStabilization::BothTwice);
            let columns = actuated_columns(joints, model, torques);
            let trajectory = common::simulate(rk4, model, model, start, &plan, columns)?;
            Ok((trajectory, format!("RK4 h = {h}")))
        }
        _ => {
            let mut dopri = Dopri5::<J, R>::new(DOPRI5, args.rtol, 0.1 * args.rtol)?
                .with_post_stabilization(PostStabilization::BothTwice);
            if let Some(h) = args.run.h {
                dopri = dopri.with_initial_step(h)?;
            }
            let plan = args.run.adaptive_plan()?.stream_to(csv.to_path_buf());
            let columns = actuated_columns(joints, model, torques);
            let trajectory = common::simulate_adaptive(dopri, model, start, t_end, columns, &plan)?;
            Ok((trajectory, format!("DOPRI5 rtol = {:.0e}", args.rtol)))
        }
    }
}

/// The columns `joint.<name>` and `torque.<name>` of a robot in joint coordinates (its first
/// `J` coordinates are its joints).
fn actuated_columns<'a, I, M, const J: usize>(
    joints: &'a [&'static str; J],
    model: &'a M,
    torques: impl Fn(&M, &State<J>) -> [f64; J] + Copy + 'a,
) -> Vec<Column<'a, I, J>> {
    let mut columns = joint_columns(joints, |q: &SVector<f64, J>| std::array::from_fn(|k| q[k]));
    for (k, joint) in joints.iter().enumerate() {
        columns.push(Column::new(
            format!("torque.{joint}"),
            move |_: &I, s: &State<J>| torques(model, s)[k],
        ));
    }
    columns
}

/// Draws `--animate` and `--paths`: the links as lines between their origins, projected
/// obliquely (the world's x to the right, z up, y receding up and to the left).
fn draw(
    run: &RunOptions,
    trajectory: &Trajectory,
    title: &str,
    origins: impl Fn(&[f64]) -> Vec<[f64; 3]>,
    parents: &[usize],
) -> Result<(), Box<dyn Error>> {
    if run.animate.is_none() && run.paths.is_none() {
        return Ok(());
    }
    let project = |[x, y, z]: [f64; 3]| (x - 0.5 * y, z + 0.3 * y);
    let scene = Sketch::new(|_t, q: &[f64], frame| {
        let points: Vec<(f64, f64)> = origins(q).into_iter().map(project).collect();
        frame.anchor(points[0]);
        for (child, &parent) in parents.iter().enumerate() {
            if child != parent && points[child] != points[parent] {
                frame.link(points[parent], points[child]);
            }
        }
        if let Some(&tip) = points.last() {
            frame.body(tip);
        }
    });
    run.draw_motion(title, &trajectory.table, &scene)
}
