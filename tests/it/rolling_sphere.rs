//! Cuell (2005) §7, Routh's sphere: the rolling rows of `models::RollingSphere` against finite
//! differences of the contact point, the midpoint discrete Lagrange–d'Alembert integrator against
//! the hand-written DOPRI5 reference of eqs. 61–64 (`runtime::reference::rolling_sphere`), and
//! what the scheme keeps: `|q| = 1`, the rolling constraint, bounded energy, no allocation.

use mechanism::models::{body_angular_velocity, rotation_matrix, RollingSphere};
use mechanism::runtime::reference::rolling_sphere::{self as reference, RollingState};
use mechanism::runtime::{
    Inertia, Integrator, MidpointLagrangeDAlembert, Nonholonomic, Potential, SMatrix, SVector,
    State,
};
use nalgebra::Vector3;

type Dla = MidpointLagrangeDAlembert<7, 4>;

fn energy(model: &RollingSphere, s: &State<7>) -> f64 {
    model.kinetic_energy(&s.q, &s.v) + model.potential(&s.q)
}

/// `A(q) v` of the model's four rows.
fn rows(model: &RollingSphere, s: &State<7>) -> SVector<f64, 4> {
    let mut a = SMatrix::<f64, 4, 7>::zeros();
    model.nonholonomic_matrix(&s.q, &mut a);
    a * s.v
}

/// The reference state `(a, q, Ω)` of a model state.
fn to_reference(s: &State<7>) -> RollingState {
    let omega = body_angular_velocity(&s.q.as_slice()[3..7], &s.v.as_slice()[3..7]);
    let mut y = RollingState::zeros();
    for i in 0..7 {
        y[i] = s.q[i];
    }
    for i in 0..3 {
        y[7 + i] = omega[i];
    }
    y
}

/// The contact material point's velocity, from the model's rows (first three), equals the
/// central difference of `a(t) + R(q(t)) s` with the body point `s = −Rᵀe₃ + α e₃` held fixed,
/// along a motion on `|q| = 1`.
#[test]
fn rolling_rows_are_the_contact_point_velocity() {
    let model = RollingSphere::routh();
    let alpha = model.alpha;
    let q0: Vector3<f64> = Vector3::new(0.3, -0.4, 0.2);
    let omega: Vector3<f64> = Vector3::new(0.4, -1.3, 0.8);
    let a_dot = Vector3::new(0.2, 0.9, -0.1);
    // q(t) = exp(q0 + t axis) as a unit quaternion moving at body rate `omega`:
    // q(t) = q_base ⊗ exp(t Ω/2).
    let base = {
        let n = q0.norm();
        let v = q0 * (n.sin() / n);
        [n.cos(), v.x, v.y, v.z]
    };
    let quat = |t: f64| {
        let half = omega * (0.5 * t);
        let n = half.norm();
        let v = half * (n.sin() / n);
        let e = [n.cos(), v.x, v.y, v.z];
        let [w, x, y, z] = base;
        [
            w * e[0] - x * e[1] - y * e[2] - z * e[3],
            w * e[1] + x * e[0] + y * e[3] - z * e[2],
            w * e[2] - x * e[3] + y * e[0] + z * e[1],
            w * e[3] + x * e[2] - y * e[1] + z * e[0],
        ]
    };
    let r0 = rotation_matrix(&base);
    // s = −Rᵀ e₃ + α e₃ at t = 0, then fixed in the body.
    let s = [-r0[2][0], -r0[2][1], -r0[2][2] + alpha];
    let point = |t: f64| {
        let r = rotation_matrix(&quat(t));
        (0..3)
            .map(|i| t * a_dot[i] + (0..3).map(|k| r[i][k] * s[k]).sum::<f64>())
            .collect::<Vec<f64>>()
    };
    let d = 1e-5;
    let (plus, minus) = (point(d), point(-d));
    let fd: Vec<f64> = (0..3).map(|i| (plus[i] - minus[i]) / (2.0 * d)).collect();
    let qd: Vec<f64> = (0..4)
        .map(|i| (quat(d)[i] - quat(-d)[i]) / (2.0 * d))
        .collect();
    let state = State::new(
        0.0,
        [0.0, 0.0, 1.0, base[0], base[1], base[2], base[3]],
        [a_dot.x, a_dot.y, a_dot.z, qd[0], qd[1], qd[2], qd[3]],
    );
    let r = rows(&model, &state);
    for i in 0..3 {
        assert!(
            (r[i] - fd[i]).abs() < 1e-9,
            "row {i}: {} vs {}",
            r[i],
            fd[i]
        );
    }
    assert!(r[3].abs() < 1e-9, "q·q̇ = {}", r[3]);
    // And the independent formula of the reference agrees.
    let y = to_reference(&state);
    let v = reference::RollingSphere::routh().contact_velocity(
        &a_dot,
        &base,
        &Vector3::new(y[7], y[8], y[9]),
    );
    assert!((v - Vector3::new(fd[0], fd[1], fd[2])).norm() < 1e-9);
}

/// The initial states are rolling, and the reference's uniform ball rolls straight at
/// `ȧ = (1, 0, 0)` (exact solution).
#[test]
fn initial_states_roll_and_the_reference_is_exact_on_the_straight_roll() {
    for (model, s) in [
        (
            RollingSphere::uniform_ball(),
            RollingSphere::uniform_ball().uniform_ball_state(),
        ),
        (RollingSphere::routh(), RollingSphere::routh().routh_state()),
    ] {
        assert!(rows(&model, &s).amax() < 1e-15);
        assert!((s.q.as_slice()[3..7].iter().map(|x| x * x).sum::<f64>() - 1.0).abs() < 1e-15);
    }
    let s = RollingSphere::routh().routh_state();
    assert!((s.q[0] + 0.199).abs() < 1e-15 && (s.q[2] - 0.980_03).abs() < 1e-5);
    let ball = reference::RollingSphere::uniform_ball();
    let y0 = to_reference(&RollingSphere::uniform_ball().uniform_ball_state());
    let y = ball.solve(y0, &[3.0], 1e-12).unwrap()[0];
    assert!((y[0] - 3.0).abs() < 1e-10 && (y[8] - 1.0).abs() < 1e-12);
}

/// Max-norm distance of the DLA's `(a, q)` at `t_end` to the reference.
fn error_at(
    h: f64,
    t_end: f64,
    model: &RollingSphere,
    start: State<7>,
    exact: &RollingState,
) -> f64 {
    let mut dla = Dla::new(h).unwrap();
    let s = crate::support::run(
        &mut dla,
        model,
        start,
        crate::support::steps_to(t_end, h),
        |_| {},
    )
    .unwrap();
    (0..7)
        .map(|i| (s.q[i] - exact[i]).abs())
        .fold(0.0, f64::max)
}

/// Second order against DOPRI5 (rtol = atol = 1e-12) on Routh's sphere rocking, `T = 2`.
#[test]
fn midpoint_dla_is_second_order() {
    let model = RollingSphere::routh();
    let start = model.routh_state();
    let exact = reference::RollingSphere::routh()
        .solve(to_reference(&start), &[2.0], 1e-12)
        .unwrap()[0];
    let hs = [0.04, 0.02, 0.01, 0.005];
    let errors: Vec<f64> = hs
        .iter()
        .map(|&h| error_at(h, 2.0, &model, start, &exact))
        .collect();
    let slope = crate::support::report("midpoint DLA, Routh's sphere, T = 2", &hs, &errors);
    assert!((slope - 2.0).abs() < 0.15, "slope {slope}");
}

/// Over 10⁴ steps (`h = 0.01`) of Routh's sphere: `|q| = 1`, the rolling rows and the height
/// of the centre to round-off, and the energy within a bound of order `h²`.
#[test]
fn norm_rolling_and_energy_are_kept() {
    let model = RollingSphere::routh();
    let start = model.routh_state();
    let e0 = energy(&model, &start);
    let shape = reference::RollingSphere::routh();
    let (mut norm, mut roll, mut height, mut de) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    let mut dla = Dla::new(0.01).unwrap();
    crate::support::run(&mut dla, &model, start, 10_000, |s| {
        let q = &s.q.as_slice()[3..7];
        norm = norm.max((q.iter().map(|x| x * x).sum::<f64>().sqrt() - 1.0).abs());
        roll = roll.max(rows(&model, s).amax());
        height = height.max(shape.height_residual(s.q[2], q).abs());
        de = de.max((energy(&model, s) - e0).abs());
    })
    .unwrap();
    println!("max ||q| − 1| = {norm:.2e}, max |A v| = {roll:.2e}, height {height:.2e}, max |ΔE| = {de:.2e}");
    assert!(norm < 1e-13, "norm {norm}");
    assert!(roll < 1e-13, "rolling {roll}");
    assert!(height < 1e-13, "height {height}");
    // Second order: |ΔE| = O(h²) (measured 0.007 h², E ≈ 1): bounded, no drift.
    assert!(de < 0.02 * 0.01f64.powi(2), "energy {de}");
}

/// A step allocates nothing.
#[test]
fn a_step_does_not_allocate() {
    let model = RollingSphere::routh();
    let mut state = model.routh_state();
    let mut dla = Dla::new(0.01).unwrap();
    dla.step(&model, &mut state).unwrap();
    let before = crate::support::allocations();
    for _ in 0..100 {
        dla.step(&model, &mut state).unwrap();
    }
    assert_eq!(crate::support::allocations() - before, 0);
}

/// A failed step (a non-finite parameter) leaves the state unchanged.
#[test]
fn a_failed_step_keeps_the_state() {
    let model = RollingSphere {
        i3: f64::NAN,
        ..RollingSphere::routh()
    };
    let mut state = RollingSphere::routh().routh_state();
    let before = state;
    let mut dla = Dla::new(0.01).unwrap();
    assert!(dla.step(&model, &mut state).is_err());
    assert_eq!(state, before);
}
