//! Robots imported from URDF files (`urdf: { file: .., coordinates: joints }`) against
//! Pinocchio 4.1: the joint-space mass matrix (CRBA), the gravity torques, the nonlinear
//! effects `C(q, v) v + g(q)` (RNEA at zero acceleration) and the forward dynamics (ABA) at 20
//! random states of the UR5 and the Panda of example-robot-data (`robots/`), and of a planar
//! four-bar; the reference data is `tests/data/urdf/*.json`, made by
//! `scripts/urdf_reference.py` (which says how to regenerate it).
//!
//! Pinocchio and the generated code compute the same quantities by different algorithms
//! (recursive Newton–Euler and composite bodies against straight-line code from the
//! differentiated energies), so they agree to rounding: every comparison is norm-wise,
//! `‖ours − theirs‖∞ ≤ 1e-12 ‖theirs‖∞` (the bound; rounding in either code is a few
//! hundred ulps of the largest entry at most for these sizes).

use mechanism::mechanism;
use mechanism::runtime::integrators::stabilized::{constrained_acceleration, Baumgarte};
use mechanism::runtime::{
    AppliedForces, Configuration, Dissipation, HolonomicKinematics, Inertia, InertiaGradient,
    Potential, SMatrix, SVector, State,
};
use serde_json::Value;

mechanism! {
    /// The UR5 of example-robot-data, in joint coordinates.
    pub struct Ur5 {
        urdf: {
            file: "robots/ur5.urdf",
            coordinates: joints,
            ignore: [limits, transmissions, extensions],
        },
        integrators: [rk],
    }
}

mechanism! {
    /// The Franka Panda of example-robot-data, in joint coordinates: seven revolute joints and
    /// two prismatic fingers, the second mimicking the first (a holonomic row), each joint
    /// with an actuator torque (or force) `t1 … t9` and the file's viscous damping.
    pub struct Panda {
        urdf: {
            file: "robots/panda.urdf",
            coordinates: joints,
            ignore: [limits, extensions],
        },
        parameters: {
            t1 = 0.0, t2 = 0.0, t3 = 0.0, t4 = 0.0, t5 = 0.0, t6 = 0.0, t7 = 0.0, t8 = 0.0,
            t9 = 0.0,
        },
        forces: {
            panda_joint1: t1, panda_joint2: t2, panda_joint3: t3, panda_joint4: t4,
            panda_joint5: t5, panda_joint6: t6, panda_joint7: t7,
            panda_finger_joint1: t8, panda_finger_joint2: t9,
        },
        integrators: [rk],
    }
}

mechanism! {
    /// A planar crank-rocker: the file's serial chain ground → crank → coupler → rocker, its
    /// loop closed by the row that puts the rocker's end on the ground pivot at `(0.7, 0)`;
    /// gravity along −y, actuator torques `t1 … t3`.
    pub struct FourBar {
        urdf: {
            file: "robots/four_bar.urdf",
            coordinates: joints,
            gravity: [0.0, -9.81, 0.0],
            ignore: [limits],
        },
        parameters: { t1 = 0.0, t2 = 0.0, t3 = 0.0 },
        holonomic: {
            /// The rocker's end on the ground pivot (the plane's two components).
            #[components(x, y)]
            closure: position(rocker, [0.6, 0.0, 0.0]) - [0.7, 0.0, 0.0],
        },
        forces: { crank_joint: t1, coupler_joint: t2, rocker_joint: t3 },
        integrators: [rk],
    }
}

/// One state of the reference data, read from the JSON.
struct Reference {
    q: Vec<f64>,
    v: Vec<f64>,
    tau: Vec<f64>,
    mass: Vec<Vec<f64>>,
    gravity: Vec<f64>,
    nonlinear: Vec<f64>,
    aba: Vec<f64>,
    potential: f64,
    /// The accelerations and multipliers under the constraint rows, with `tau`.
    constrained: Option<(Vec<f64>, Vec<f64>)>,
}

fn numbers(value: &Value) -> Vec<f64> {
    value
        .as_array()
        .expect("an array")
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect()
}

/// Reads `tests/data/urdf/{name}.json`: its joint names and states.
fn reference(name: &str) -> (Vec<String>, Vec<Reference>) {
    let path = format!("{}/tests/data/urdf/{name}.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("the reference data is committed");
    let data: Value = serde_json::from_str(&text).expect("valid JSON");
    let joints = data["joints"]
        .as_array()
        .expect("joints")
        .iter()
        .map(|j| j.as_str().expect("a name").to_string())
        .collect();
    let states = data["states"]
        .as_array()
        .expect("states")
        .iter()
        .map(|s| Reference {
            q: numbers(&s["q"]),
            v: numbers(&s["v"]),
            tau: numbers(&s["tau"]),
            mass: s["mass_matrix"]
                .as_array()
                .expect("rows")
                .iter()
                .map(numbers)
                .collect(),
            gravity: numbers(&s["gravity_torques"]),
            nonlinear: numbers(&s["nonlinear_effects"]),
            aba: numbers(&s["aba"]),
            potential: s["potential_energy"].as_f64().expect("a number"),
            constrained: s
                .get("constrained_accelerations")
                .map(|a| (numbers(a), numbers(&s["multipliers"]))),
        })
        .collect();
    (joints, states)
}

/// `‖ours − theirs‖∞ / ‖theirs‖∞`.
fn relative(ours: &[f64], theirs: &[f64]) -> f64 {
    assert_eq!(ours.len(), theirs.len());
    let scale = theirs.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let error = ours
        .iter()
        .zip(theirs)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    error / scale
}

/// The generated model's joint-space dynamics at one state: `M`, `∇V`,
/// `C v + g = Ṁ v − ∂T/∂q + ∇V` and `M⁻¹ (τ − C v − g)`.
fn dynamics<const N: usize, M>(
    model: &M,
    q: &[f64],
    v: &[f64],
    tau: &[f64],
) -> (
    SMatrix<f64, N, N>,
    SVector<f64, N>,
    SVector<f64, N>,
    SVector<f64, N>,
)
where
    M: Inertia<N> + InertiaGradient<N> + Potential<N>,
{
    let q = SVector::<f64, N>::from_column_slice(q);
    let v = SVector::<f64, N>::from_column_slice(v);
    let tau = SVector::<f64, N>::from_column_slice(tau);
    let mut mass = SMatrix::<f64, N, N>::zeros();
    model.mass_matrix(&q, &mut mass);
    let mut gravity = SVector::<f64, N>::zeros();
    model.potential_gradient(&q, &mut gravity);
    let mut kinetic_gradient = SVector::<f64, N>::zeros();
    model.kinetic_gradient(&q, &v, &mut kinetic_gradient);
    let (mut qq, mut qv) = (SMatrix::<f64, N, N>::zeros(), SMatrix::<f64, N, N>::zeros());
    model.kinetic_hessians(&q, &v, &mut qq, &mut qv);
    // Ṁ v = Σ_j ∂(M v)/∂q_j v_j, and ∂(M v)_i/∂q_j = ∂²T/∂q_j∂v_i = qv[(j, i)].
    let nonlinear = qv.transpose() * v - kinetic_gradient + gravity;
    let acceleration = mass
        .cholesky()
        .expect("the mass matrix is positive definite")
        .solve(&(tau - nonlinear));
    (mass, gravity, nonlinear, acceleration)
}

fn check_robot<const N: usize, M>(model: &M, name: &str, coordinates: &[&str])
where
    M: Inertia<N> + InertiaGradient<N> + Potential<N>,
{
    let (joints, states) = reference(name);
    assert_eq!(
        joints, coordinates,
        "the coordinates are Pinocchio's joints, in its order"
    );
    let mut worst = [0.0f64; 4];
    for state in &states {
        let (mass, gravity, nonlinear, acceleration) =
            dynamics::<N, M>(model, &state.q, &state.v, &state.tau);
        let theirs: Vec<f64> = state.mass.iter().flatten().copied().collect();
        let ours: Vec<f64> = (0..N)
            .flat_map(|i| (0..N).map(move |j| (i, j)))
            .map(|(i, j)| mass[(i, j)])
            .collect();
        let errors = [
            relative(&ours, &theirs),
            relative(gravity.as_slice(), &state.gravity),
            relative(nonlinear.as_slice(), &state.nonlinear),
            relative(acceleration.as_slice(), &state.aba),
        ];
        for (w, e) in worst.iter_mut().zip(errors) {
            *w = w.max(e);
        }
    }
    // Pinocchio's potential leaves out the bodies fixed to the root: compare differences.
    let potential = |state: &Reference| model.potential(&SVector::from_column_slice(&state.q));
    let offset = potential(&states[0]) - states[0].potential;
    let potential_error = states.iter().fold(0.0f64, |m, s| {
        m.max((potential(s) - offset - s.potential).abs() / s.potential.abs().max(1.0))
    });
    println!(
        "{name}: largest relative error of M {:.1e}, g {:.1e}, C v + g {:.1e}, ABA {:.1e}, V {:.1e}",
        worst[0], worst[1], worst[2], worst[3], potential_error
    );
    assert!(
        potential_error <= 1e-12,
        "{name}: V differs from Pinocchio by {potential_error:e}"
    );
    for (what, error) in ["M (CRBA)", "g", "C v + g (RNEA)", "ABA"].iter().zip(worst) {
        assert!(
            error <= 1e-12,
            "{name}: {what} differs from Pinocchio by {error:e}"
        );
    }
}

#[test]
fn ur5_agrees_with_pinocchio() {
    check_robot::<6, _>(
        &Ur5::default(),
        "ur5",
        &[
            "shoulder_pan_joint",
            "shoulder_lift_joint",
            "elbow_joint",
            "wrist_1_joint",
            "wrist_2_joint",
            "wrist_3_joint",
        ],
    );
}

#[test]
fn panda_agrees_with_pinocchio() {
    let joints = [
        "panda_joint1",
        "panda_joint2",
        "panda_joint3",
        "panda_joint4",
        "panda_joint5",
        "panda_joint6",
        "panda_joint7",
        "panda_finger_joint1",
        "panda_finger_joint2",
    ];
    assert_eq!(<Panda as Configuration<9>>::COORDINATES, joints);
    check_robot::<9, _>(&Panda::default(), "panda", &joints);
}

/// Returns the model with its actuators set to `tau` minus the joints' damping force, so that
/// the net applied force is `tau` as in Pinocchio's data (which has no damping).
fn actuated<const N: usize, M>(
    model: &M,
    state: &State<N>,
    tau: &[f64],
    set: impl Fn(&mut M, [f64; N]),
) -> M
where
    M: Dissipation<N> + Clone,
{
    let mut damping = SVector::<f64, N>::zeros();
    model.dissipation_force(&state.q, &state.v, &mut damping);
    let mut actuated = model.clone();
    set(&mut actuated, std::array::from_fn(|i| tau[i] - damping[i]));
    actuated
}

/// Checks the accelerations and multipliers of the constrained system (the runtime's index-1
/// solve with the model's own rows) against Pinocchio's KKT solve.
fn check_constrained<const N: usize, const R: usize, M>(
    name: &str,
    model_at: impl Fn(&State<N>, &[f64]) -> M,
) where
    M: InertiaGradient<N> + Potential<N> + HolonomicKinematics<N, R> + AppliedForces<N>,
{
    let (_, states) = reference(name);
    let mut worst = [0.0f64; 2];
    for reference in &states {
        let state = State::new(
            0.0,
            std::array::from_fn(|i| reference.q[i]),
            std::array::from_fn(|i| reference.v[i]),
        );
        let model = model_at(&state, &reference.tau);
        let solved = constrained_acceleration::<_, N, R>(&model, &state, Baumgarte::NONE)
            .expect("the constrained system is regular");
        let (accelerations, multipliers) =
            reference.constrained.as_ref().expect("constrained data");
        worst[0] = worst[0].max(relative(solved.acceleration.as_slice(), accelerations));
        worst[1] = worst[1].max(relative(solved.multipliers.as_slice(), multipliers));
    }
    println!(
        "{name}: largest relative error of the constrained accelerations {:.1e}, multipliers {:.1e}",
        worst[0], worst[1]
    );
    assert!(worst[0] <= 1e-12 && worst[1] <= 1e-12, "{name}: {worst:?}");
}

#[test]
fn panda_fingers_mimic_under_actuation_and_damping() {
    // The file's damping, read as Rayleigh dissipation: 0.003 N·m·s on the arm, 0.3 N·s on
    // the fingers.
    let model = Panda::default();
    let q = SVector::<f64, 9>::zeros();
    let v = SVector::<f64, 9>::from_fn(|i, _| 1.0 + i as f64);
    let mut force = SVector::<f64, 9>::zeros();
    model.dissipation_force(&q, &v, &mut force);
    for i in 0..9 {
        let damping = if i < 7 { 0.003 } else { 0.3 };
        assert!((force[i] + damping * v[i]).abs() <= 1e-15 * v[i].abs());
    }
    check_constrained::<9, 1, _>("panda", |state, tau| {
        actuated(&Panda::default(), state, tau, |m, t| {
            [m.t1, m.t2, m.t3, m.t4, m.t5, m.t6, m.t7, m.t8, m.t9] = t;
        })
    });
}

#[test]
fn four_bar_agrees_with_pinocchio() {
    let joints = ["crank_joint", "coupler_joint", "rocker_joint"];
    check_robot::<3, _>(&FourBar::default(), "four_bar", &joints);
    check_constrained::<3, 2, _>("four_bar", |_, tau| FourBar {
        t1: tau[0],
        t2: tau[1],
        t3: tau[2],
        ..FourBar::default()
    });
}
