//! Robots imported from URDF files (`mechanism::models::{Ur5, Ur5Joints, PandaJoints, FourBar,
//! FourBarMaximal}`) against Pinocchio 4.1: the joint-space mass matrix (CRBA), the gravity
//! torques, the nonlinear effects `C(q, v) v + g(q)` (RNEA at zero acceleration), the forward
//! dynamics (ABA) and the constrained accelerations (KKT) at 20 random states of the UR5 and
//! the Panda of example-robot-data (`robots/`), and of a planar four-bar; the reference data
//! is `tests/data/urdf/*.json`, made by `scripts/urdf_reference.py` (which says how to
//! regenerate it). The maximal coordinates are checked against the joint coordinates: the
//! same states, energies and motion (RATTLE at order 2, SPOOK at order 1).
//!
//! Pinocchio and the generated code compute the same quantities by different algorithms
//! (recursive Newton–Euler and composite bodies against straight-line code from the
//! differentiated energies), so they agree to rounding: every comparison is norm-wise,
//! `‖ours − theirs‖∞ ≤ 1e-12 ‖theirs‖∞` (the bound; rounding in either code is a few
//! hundred ulps of the largest entry at most for these sizes).

use mechanism::models::{FourBar, FourBarMaximal, PandaJoints, Ur5, Ur5Joints};
use mechanism::runtime::integrators::stabilized::{
    constrained_acceleration, Baumgarte, Dopri5, PostStabilization, DOPRI5,
};
use mechanism::runtime::{
    observers, AppliedForces, Configuration, Dissipation, HolonomicKinematics, Inertia,
    InertiaGradient, Integrator, Potential, Rattle, SMatrix, SVector, Spook, State,
};
use serde_json::Value;

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
        &Ur5Joints::default(),
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
    assert_eq!(<PandaJoints as Configuration<9>>::COORDINATES, joints);
    check_robot::<9, _>(&PandaJoints::default(), "panda", &joints);
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
    let model = PandaJoints::default();
    let q = SVector::<f64, 9>::zeros();
    let v = SVector::<f64, 9>::from_fn(|i, _| 1.0 + i as f64);
    let mut force = SVector::<f64, 9>::zeros();
    model.dissipation_force(&q, &v, &mut force);
    for i in 0..9 {
        let damping = if i < 7 { 0.003 } else { 0.3 };
        assert!((force[i] + damping * v[i]).abs() <= 1e-15 * v[i].abs());
    }
    check_constrained::<9, 1, _>("panda", |state, tau| {
        actuated(&PandaJoints::default(), state, tau, |m, t| {
            [
                m.tau1, m.tau2, m.tau3, m.tau4, m.tau5, m.tau6, m.tau7, m.tau8, m.tau9,
            ] = t;
        })
    });
}

#[test]
fn four_bar_agrees_with_pinocchio() {
    let joints = ["crank_joint", "coupler_joint", "rocker_joint"];
    check_robot::<3, _>(&FourBar::default(), "four_bar", &joints);
    check_constrained::<3, 2, _>("four_bar", |_, tau| FourBar {
        tau1: tau[0],
        tau2: tau[1],
        tau3: tau[2],
        ..FourBar::default()
    });
}

/// `|a − b|` for angles, modulo 2π (an angle read off rotation matrices is in (−π, π]).
fn angle_difference(a: f64, b: f64) -> f64 {
    let d = (a - b).rem_euclid(std::f64::consts::TAU);
    d.min(std::f64::consts::TAU - d)
}

#[test]
fn maximal_states_from_joints_satisfy_the_rows_and_read_back() {
    let (_, states) = reference("ur5");
    let model = Ur5::default();
    for reference in &states {
        let positions: [f64; 6] = std::array::from_fn(|i| reference.q[i]);
        let rates: [f64; 6] = std::array::from_fn(|i| reference.v[i]);
        let state = model.state_from_joints(&positions, &rates);
        assert!(observers::position_residual::<72, 66, _>(&model, &state) < 1e-14);
        assert!(observers::velocity_residual::<72, 66, _>(&model, &state) < 1e-13);
        let read = model.joint_positions(&state.q);
        let read_rates = model.joint_rates(&state.q, &state.v);
        for i in 0..6 {
            assert!(
                angle_difference(read[i], positions[i]) < 1e-13,
                "{read:?} {positions:?}"
            );
            assert!(
                (read_rates[i] - rates[i]).abs() < 1e-13,
                "{read_rates:?} {rates:?}"
            );
        }
        // The energies are the joint-space model's and Pinocchio's (the maximal bodies leave
        // the ground out, as Pinocchio does; here the ground's centre of mass is at z = 0).
        let joints = Ur5Joints::default();
        let q = SVector::<f64, 6>::from(positions);
        let v = SVector::<f64, 6>::from(rates);
        let kinetic = joints.kinetic_energy(&q, &v);
        assert!(
            (model.kinetic_energy(&state.q, &state.v) - kinetic).abs() < 1e-13 * kinetic.max(1.0)
        );
        let potential = model.potential(&state.q) - reference.potential;
        assert!(
            potential.abs() < 1e-12 * reference.potential.abs().max(1.0),
            "{potential}"
        );
    }
    assert_eq!(Ur5::JOINTS, Ur5Joints::JOINTS);
    assert_eq!(
        Ur5Joints::JOINT_EFFORTS,
        [150.0, 150.0, 150.0, 28.0, 28.0, 28.0]
    );
}

/// Runs the joint-space UR5 with DOPRI5 at a tight tolerance from a reference state to
/// `t_end` and returns the joint positions.
fn ur5_joint_space(positions: [f64; 6], rates: [f64; 6], t_end: f64) -> [f64; 6] {
    let model = Ur5Joints::default();
    let mut state = model.state_from_joints(&positions, &rates);
    let mut dopri = Dopri5::<6, 0>::new(DOPRI5, 1e-13, 1e-14)
        .unwrap()
        .with_post_stabilization(PostStabilization::BothTwice);
    dopri.advance_to(&model, &mut state, t_end, |_| {}).unwrap();
    model.joint_positions(&state.q)
}

/// Runs `f` on a thread with a stack of `mib` MiB: the fixed-size integrators keep their
/// `N × N` matrices on the stack, 41 KiB each at `N = 72`, beyond a test thread's 2 MiB.
fn with_stack(mib: usize, f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(mib << 20)
        .spawn(f)
        .expect("a thread")
        .join()
        .expect("the test passes");
}

#[test]
fn maximal_coordinates_move_as_the_joint_coordinates() {
    with_stack(64, maximal_motion);
}

fn maximal_motion() {
    // From a reference state (the arm spread out, its joints turning at about 1 rad/s) for
    // 0.25 s under gravity: RATTLE in maximal coordinates converges at order 2 to DOPRI5's
    // joint-space motion (tolerance 1e-13), SPOOK at order 1. The bounds are the error
    // constants measured at these steps times 2 (the constants C of `C h^p`, which do not
    // depend on a seed: the states are the committed data's).
    let (_, states) = reference("ur5");
    let (positions, rates): ([f64; 6], [f64; 6]) = (
        std::array::from_fn(|i| states[1].q[i]),
        std::array::from_fn(|i| 0.5 * states[1].v[i]),
    );
    let t_end = 0.25;
    let exact = ur5_joint_space(positions, rates, t_end);
    let model = Ur5::default();
    let error = |end: &State<72>| {
        assert!(
            (end.t - t_end).abs() < 1e-12,
            "the steps divide the interval"
        );
        let read = model.joint_positions(&end.q);
        (0..6).fold(0.0f64, |m, i| m.max(angle_difference(read[i], exact[i])))
    };
    let rattle = |h: f64| {
        let mut state = model.state_from_joints(&positions, &rates);
        let mut rattle = Rattle::<72, 66>::new(h)
            .unwrap()
            .with_tolerance(1e-13)
            .unwrap();
        let steps = (t_end / h).round() as usize;
        for _ in 0..steps {
            rattle.step(&model, &mut state).unwrap();
        }
        error(&state)
    };
    let spook = |h: f64| {
        let mut state = model.state_from_joints(&positions, &rates);
        let mut spook = Spook::<72, 66>::new(h).unwrap();
        let steps = (t_end / h).round() as usize;
        for _ in 0..steps {
            spook.step(&model, &mut state).unwrap();
        }
        error(&state)
    };
    let (coarse, fine) = (rattle(5e-3), rattle(2.5e-3));
    let (spook_coarse, spook_fine) = (spook(2.5e-3), spook(1.25e-3));
    println!(
        "RATTLE: error {coarse:.2e} at h = 5e-3, {fine:.2e} at 2.5e-3 (ratio {:.2}); \
         SPOOK: {spook_coarse:.2e} at 2.5e-3, {spook_fine:.2e} at 1.25e-3 (ratio {:.2})",
        coarse / fine,
        spook_coarse / spook_fine
    );
    assert!(
        (3.2..=4.8).contains(&(coarse / fine)),
        "RATTLE is of order 2"
    );
    assert!(
        (1.6..=2.4).contains(&(spook_coarse / spook_fine)),
        "SPOOK is of order 1"
    );
    assert!(fine < 1e-3 && spook_fine < 1e-2);
}

#[test]
fn four_bar_in_maximal_coordinates_keeps_its_loop_and_energy() {
    // From a closed configuration, the loop in maximal coordinates (17 rows on 18 body
    // coordinates) moves as in joint coordinates: RATTLE keeps every row and the energy.
    let joints = FourBar::default();
    let maximal = FourBarMaximal::default();
    let (a, b) = (0.3f64, 0.7f64);
    let elbow = ((0.8f64 * 0.8 + (b - a).powi(2) - 0.6 * 0.6) / (2.0 * 0.8 * (b - a))).acos();
    let (x, y) = (a + 0.8 * elbow.cos(), 0.8 * elbow.sin());
    let knee = (-y).atan2(b - x) - elbow;
    let positions = [0.0, elbow, knee];
    let start = joints.state_from_joints(&positions, &[0.0; 3]);
    assert!(observers::position_residual::<3, 2, _>(&joints, &start) < 1e-14);
    let mut state = maximal.state_from_joints(&positions, &[0.0; 3]);
    assert!(observers::position_residual::<36, 35, _>(&maximal, &state) < 1e-14);
    let energy = observers::energy(&maximal, &state);
    assert!((energy - observers::energy(&joints, &start)).abs() < 1e-12);
    let mut reference = start;
    let mut dopri = Dopri5::<3, 2>::new(DOPRI5, 1e-12, 1e-13)
        .unwrap()
        .with_post_stabilization(PostStabilization::BothTwice);
    dopri
        .advance_to(&joints, &mut reference, 0.5, |_| {})
        .unwrap();
    let mut rattle = Rattle::<36, 35>::new(1e-3)
        .unwrap()
        .with_tolerance(1e-13)
        .unwrap();
    for _ in 0..500 {
        rattle.step(&maximal, &mut state).unwrap();
    }
    assert!(observers::position_residual::<36, 35, _>(&maximal, &state) < 1e-11);
    assert!((observers::energy(&maximal, &state) - energy).abs() < 1e-4);
    let read = maximal.joint_positions(&state.q);
    let exact = joints.joint_positions(&reference.q);
    for i in 0..3 {
        assert!(
            angle_difference(read[i], exact[i]) < 1e-3,
            "{read:?} {exact:?}"
        );
    }
}

mechanism::mechanism! {
    /// A damped spatial two-link arm in joint coordinates, a torque on each joint.
    pub struct DampedArm {
        urdf: { file: "tests/data/urdf/damped_arm.urdf", coordinates: joints },
        parameters: { tau = 0.0 },
        forces: { shoulder: tau, elbow: -0.5 * tau },
        integrators: [rk],
    }
}

mechanism::mechanism! {
    /// The same arm in maximal coordinates: the torques and the damping act through the
    /// joints' angles `θ(q)`.
    pub struct DampedArmMaximal {
        urdf: "tests/data/urdf/damped_arm.urdf",
        parameters: { tau = 0.0 },
        forces: { shoulder: tau, elbow: -0.5 * tau },
        integrators: [rk],
    }
}

#[test]
fn joint_torques_and_damping_act_alike_in_both_formulations() {
    // Driven by joint torques and damped by the joints' `<dynamics damping>`, from the same
    // joint state, DOPRI5 at a tight tolerance in both formulations gives the same joint
    // motion (to its tolerance), and the energy decreases by the dissipated work.
    let joints = DampedArm {
        tau: 1.5,
        ..DampedArm::default()
    };
    let maximal = DampedArmMaximal {
        tau: 1.5,
        ..DampedArmMaximal::default()
    };
    let (positions, rates) = ([0.4, -0.7], [1.0, -2.0]);
    let mut reference = joints.state_from_joints(&positions, &rates);
    let mut state = maximal.state_from_joints(&positions, &rates);
    assert!(observers::position_residual::<24, 22, _>(&maximal, &state) < 1e-14);
    let mut dopri = Dopri5::<2, 0>::new(DOPRI5, 1e-12, 1e-13)
        .unwrap()
        .with_post_stabilization(PostStabilization::BothTwice);
    dopri
        .advance_to(&joints, &mut reference, 1.0, |_| {})
        .unwrap();
    let mut dopri = Dopri5::<24, 22>::new(DOPRI5, 1e-12, 1e-13)
        .unwrap()
        .with_post_stabilization(PostStabilization::BothTwice);
    dopri.advance_to(&maximal, &mut state, 1.0, |_| {}).unwrap();
    let (read, exact) = (
        maximal.joint_positions(&state.q),
        joints.joint_positions(&reference.q),
    );
    let (read_rates, exact_rates) = (
        maximal.joint_rates(&state.q, &state.v),
        joints.joint_rates(&reference.q, &reference.v),
    );
    println!("damped arm: joints {read:?} against {exact:?}, rates {read_rates:?} against {exact_rates:?}");
    for i in 0..2 {
        assert!(
            angle_difference(read[i], exact[i]) < 1e-8,
            "{read:?} {exact:?}"
        );
        assert!(
            (read_rates[i] - exact_rates[i]).abs() < 1e-7,
            "{read_rates:?} {exact_rates:?}"
        );
    }
    // The damping is the file's: −∂R/∂v along the joints is −d θ̇.
    let mut force = SVector::<f64, 2>::zeros();
    joints.dissipation_force(&reference.q, &reference.v, &mut force);
    assert!((force[0] + 0.5 * reference.v[0]).abs() < 1e-15);
    assert!((force[1] + 0.2 * reference.v[1]).abs() < 1e-15);
}
