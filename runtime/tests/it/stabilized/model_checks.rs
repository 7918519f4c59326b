//! The hand-written models are right: derivatives against finite differences, accelerations against the angle equations, multipliers against statics.

use std::f64::consts::{FRAC_PI_4, SQRT_2};

use super::models::*;
use mechanism_runtime::integrators::stabilized::{constrained_acceleration, drift, Baumgarte};
use mechanism_runtime::reference::double_pendulum::DoublePendulum;
use mechanism_runtime::reference::robot_arm::{self, Path, RobotArm};
use mechanism_runtime::{
    Holonomic, HolonomicKinematics, Inertia, InertiaGradient, SMatrix, SVector, State,
};

/// Checks `G`, `g_t` and the acceleration bias of `model` against finite differences of `g`.
fn check_constraint_derivatives<Model: HolonomicKinematics<2, 1>>(
    model: &Model,
    q: SVector<f64, 2>,
    v: SVector<f64, 2>,
    t: f64,
) {
    let eps = 1e-6;
    let g_at = |q: &SVector<f64, 2>, t: f64| {
        let mut g = SVector::<f64, 1>::zeros();
        model.constraints(q, t, &mut g);
        g[0]
    };
    let mut jac = SMatrix::<f64, 1, 2>::zeros();
    model.constraint_jacobian(&q, t, &mut jac);
    for j in 0..2 {
        let mut e = SVector::<f64, 2>::zeros();
        e[j] = eps;
        let fd = (g_at(&(q + e), t) - g_at(&(q - e), t)) / (2.0 * eps);
        assert!(
            (fd - jac[(0, j)]).abs() < 1e-8,
            "G[{j}]: {fd} vs {}",
            jac[(0, j)]
        );
    }
    let mut g_t = SVector::<f64, 1>::zeros();
    model.constraint_time_derivative(&q, t, &mut g_t);
    let fd = (g_at(&q, t + eps) - g_at(&q, t - eps)) / (2.0 * eps);
    assert!((fd - g_t[0]).abs() < 1e-8, "g_t: {fd} vs {}", g_t[0]);
    // Along (q + s v, t + s): d²g/ds² = (G v)_q v + 2 G_t v + g_tt = the bias.
    let along = |s: f64| g_at(&(q + v * s), t + s);
    let h = 1e-4;
    let fd = (along(h) - 2.0 * along(0.0) + along(-h)) / (h * h);
    let mut bias = SVector::<f64, 1>::zeros();
    model.constraint_acceleration_bias(&q, &v, t, &mut bias);
    assert!(
        (fd - bias[0]).abs() < 1e-5 * (1.0 + bias[0].abs()),
        "bias: {fd} vs {}",
        bias[0]
    );
}

#[test]
fn hand_written_model_derivatives_match_finite_differences() {
    let q = SVector::<f64, 2>::new(0.9, -2.1);
    let v = SVector::<f64, 2>::new(0.7, -1.3);
    let t = 0.8;
    let eps = 1e-6;
    for arm in [
        RobotArm::case_one(),
        RobotArm::new(Path::Sine { omega: 1.0 }),
    ] {
        check_constraint_derivatives(&arm, q, v, t);
    }
    let pivot = MovingPivot {
        a: 0.5,
        omega: 2.0,
        l: 1.0,
    };
    check_constraint_derivatives(&pivot, SVector::<f64, 2>::new(0.3, -0.8), v, t);
    // T = ½ vᵀ M v: ∂T/∂q and ∂²T/∂q∂v by differences of M.
    let arm = RobotArm::case_one();
    let kinetic = |q: &SVector<f64, 2>, v: &SVector<f64, 2>| {
        let mut m = SMatrix::<f64, 2, 2>::zeros();
        arm.mass_matrix(q, &mut m);
        0.5 * v.dot(&(m * v))
    };
    let mut grad = SVector::<f64, 2>::zeros();
    let (mut qq, mut qv) = (SMatrix::<f64, 2, 2>::zeros(), SMatrix::<f64, 2, 2>::zeros());
    arm.kinetic_gradient(&q, &v, &mut grad);
    arm.kinetic_hessians(&q, &v, &mut qq, &mut qv);
    // Mixed second differences lose ε_mach/δ²: use δ = 1e-4 for them.
    let mixed = 1e-4;
    for i in 0..2 {
        let mut ei = SVector::<f64, 2>::zeros();
        ei[i] = 1.0;
        let fd = (kinetic(&(q + ei * eps), &v) - kinetic(&(q - ei * eps), &v)) / (2.0 * eps);
        assert!((fd - grad[i]).abs() < 1e-6, "∂T/∂q{i}");
        for j in 0..2 {
            let mut ej = SVector::<f64, 2>::zeros();
            ej[j] = mixed;
            let d = |a: f64, b: f64| kinetic(&(q + ei * (a * mixed)), &(v + ej * b));
            let fd =
                (d(1.0, 1.0) - d(1.0, -1.0) - d(-1.0, 1.0) + d(-1.0, -1.0)) / (4.0 * mixed * mixed);
            assert!(
                (fd - qv[(i, j)]).abs() < 1e-6,
                "∂²T/∂q{i}∂v{j}: {fd} vs {}",
                qv[(i, j)]
            );
        }
    }
}

#[test]
fn index_one_acceleration_matches_the_angle_equations() {
    let model = DoublePendulum::default();
    for y in [
        [0.3, -0.8, 1.1, -0.4],
        [2.0, 0.5, -0.3, 2.2],
        [0.0, FRAC_PI_4, 0.0, 0.0],
    ] {
        let (q, v, expected) = cartesian(y);
        let state = State { t: 0.0, q, v };
        let solved = constrained_acceleration::<_, 4, 2>(&model, &state, Baumgarte::NONE).unwrap();
        let error = (solved.acceleration - expected).amax();
        assert!(error < 1e-13, "acceleration error {error:e} at {y:?}");
    }
}

#[test]
fn multipliers_have_the_sign_of_eq_1_1() {
    // Hanging at rest: M v̇ = f − Gᵀλ balances gravity with λ1 = (m1 + m2) g / 2 and
    // λ2 = m2 g / (2 l2) for g_1 = x1² + y1² − l1², g_2 = |x2 − x1|² − l2².
    let model = DoublePendulum::default();
    let state = State::new(0.0, [0.0, -1.0, 0.0, -1.0 - SQRT_2], [0.0; 4]);
    let solved = constrained_acceleration::<_, 4, 2>(&model, &state, Baumgarte::NONE).unwrap();
    assert!(solved.acceleration.amax() < 1e-15);
    assert!(
        (solved.multipliers[0] - 1.0).abs() < 1e-15,
        "{}",
        solved.multipliers
    );
    assert!((solved.multipliers[1] - 1.0 / (2.0 * SQRT_2)).abs() < 1e-15);
}

#[test]
fn configuration_dependent_mass_terms_reproduce_the_papers_force() {
    // M v̇ + Gᵀλ = f of Example 2 as printed: checks −∇V + ∂T/∂q − Ṁv and the applied-force
    // path (gravity moved from V to f_a gives the same accelerations).
    for (arm, t) in [
        (RobotArm::case_one(), 0.0),
        (RobotArm::new(Path::Sine { omega: 1.0 }), 0.7),
    ] {
        let state = State::new(t, [1.1, -2.3], [0.8, -1.7]);
        let solved = constrained_acceleration::<_, 2, 1>(&arm, &state, Baumgarte::NONE).unwrap();
        let mut m = SMatrix::<f64, 2, 2>::zeros();
        let mut jac = SMatrix::<f64, 1, 2>::zeros();
        arm.mass_matrix(&state.q, &mut m);
        arm.constraint_jacobian(&state.q, t, &mut jac);
        let residual = m * solved.acceleration + jac.transpose() * solved.multipliers
            - arm.paper_force(&state.q, &state.v);
        assert!(residual.amax() < 1e-11, "{residual}");
        let forced = RobotArm {
            gravity_as_force: true,
            ..arm
        };
        let other = constrained_acceleration::<_, 2, 1>(&forced, &state, Baumgarte::NONE).unwrap();
        assert!((other.acceleration - solved.acceleration).amax() < 1e-12);
    }
}

#[test]
fn reduced_arm_reference_is_converged() {
    // Halving the reference's step changes the end state by far less than the errors judged.
    let arm = RobotArm::new(Path::Sine { omega: 0.5 });
    let (q, v) = arm_reference(&arm, 0.5, 1.0);
    let y0 = robot_arm::initial_state();
    let y = reference_rk4(
        |t, [th1, w1]| [w1, reduced_arm(&arm, 0.5, t, th1, w1).2],
        [y0.q[0], y0.v[0]],
        2e-4,
        5000,
    );
    let (q2, v2, _) = reduced_arm(&arm, 0.5, 1.0, y[0], y[1]);
    let difference = (q - SVector::from(q2))
        .amax()
        .max((v - SVector::from(v2)).amax());
    println!("reduced arm reference: h = 1e-4 vs 2e-4 differ by {difference:.2e}");
    assert!(difference < 1e-12, "{difference}");
    // It lies on the rheonomic constraint.
    let d = drift::<_, 2, 1>(&arm, &State { t: 1.0, q, v });
    assert!(d.position < 1e-14 && d.velocity < 1e-13, "{d:?}");
}
