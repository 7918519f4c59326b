//! Orders of convergence of RK2 and RK4, and DOPRI5's error control.

use super::models::*;
use crate::support::{report, run, steps_to};
use mechanism_runtime::integrators::stabilized::{
    Dopri5, PostStabilization, StabilizedRk, Tableau, DOPRI5, HEUN, MIDPOINT, RK4,
};
use mechanism_runtime::reference::double_pendulum::{initial_state, DoublePendulum};
use mechanism_runtime::reference::fit::loglog_slope;
use mechanism_runtime::reference::robot_arm::{self, Path, RobotArm};
use mechanism_runtime::SVector;

#[test]
fn rk2_and_rk4_converge_with_their_order_on_the_double_pendulum() {
    let hs2 = [1.0 / 50.0, 1.0 / 100.0, 1.0 / 200.0, 1.0 / 400.0];
    let hs4 = [1.0 / 10.0, 1.0 / 20.0, 1.0 / 40.0, 1.0 / 80.0];
    let cases: [(&str, &[f64], Vec<f64>, f64); 6] = [
        (
            "midpoint, no stabilization",
            &hs2,
            pendulum_errors(&hs2, |h| StabilizedRk::<4, 2, 2>::new(MIDPOINT, h).unwrap()),
            2.0,
        ),
        (
            "Heun, no stabilization",
            &hs2,
            pendulum_errors(&hs2, |h| StabilizedRk::<4, 2, 2>::new(HEUN, h).unwrap()),
            2.0,
        ),
        (
            "Heun + S-both²",
            &hs2,
            pendulum_errors(&hs2, |h| {
                StabilizedRk::<4, 2, 2>::new(HEUN, h)
                    .unwrap()
                    .with_post_stabilization(PostStabilization::BothTwice)
            }),
            2.0,
        ),
        (
            "RK4, no stabilization",
            &hs4,
            pendulum_errors(&hs4, |h| StabilizedRk::<4, 2, 4>::new(RK4, h).unwrap()),
            4.0,
        ),
        (
            "RK4 + S-both²",
            &hs4,
            pendulum_errors(&hs4, |h| {
                StabilizedRk::<4, 2, 4>::new(RK4, h)
                    .unwrap()
                    .with_post_stabilization(PostStabilization::BothTwice)
            }),
            4.0,
        ),
        (
            "RK4 + S-full",
            &hs4,
            pendulum_errors(&hs4, |h| {
                StabilizedRk::<4, 2, 4>::new(RK4, h)
                    .unwrap()
                    .with_post_stabilization(PostStabilization::Full)
            }),
            4.0,
        ),
    ];
    for (label, hs, errors, order) in cases {
        let slope = report(
            &format!("double pendulum, {label}: |q − q_ref| at t = 1"),
            hs,
            &errors,
        );
        assert!(
            (slope - order).abs() < 0.25,
            "{label}: slope {slope}, expected {order}"
        );
        assert!(
            errors[errors.len() - 1] > 1e-12,
            "{label}: errors below the reference's accuracy"
        );
    }
}

/// Returns `max(|θ − θ_ref|, |θ̇ − θ̇_ref|)` at `t = 1` of the Case II arm for each step size.
fn arm_errors<const S: usize>(
    arm: &RobotArm,
    tableau: Tableau<S>,
    stabilization: PostStabilization,
    hs: &[f64],
    (q_ref, v_ref): (SVector<f64, 2>, SVector<f64, 2>),
) -> Vec<f64> {
    hs.iter()
        .map(|&h| {
            let mut rk = StabilizedRk::<2, 1, S>::new(tableau, h)
                .unwrap()
                .with_post_stabilization(stabilization);
            let end = run(
                &mut rk,
                arm,
                robot_arm::initial_state(),
                steps_to(1.0, h),
                |_| {},
            )
            .unwrap();
            (end.q - q_ref).amax().max((end.v - v_ref).amax())
        })
        .collect()
}

#[test]
fn rk2_and_rk4_converge_with_their_order_on_the_rheonomic_arm() {
    // Case II of Example 2 (y2 = sin²(ωt), ω = 1/2), configuration-dependent M, to t = 1.
    // The velocity error of RK4 reaches its asymptotic regime only below h ≈ 1/200.
    let omega = 0.5;
    let arm = RobotArm::new(Path::Sine { omega });
    let reference = arm_reference(&arm, omega, 1.0);
    let hs = [1.0 / 200.0, 1.0 / 400.0, 1.0 / 800.0, 1.0 / 1600.0];
    let none = PostStabilization::None;
    let both2 = PostStabilization::BothTwice;
    let full = PostStabilization::Full;
    let cases = [
        ("Heun", arm_errors(&arm, HEUN, none, &hs, reference), 2.0),
        (
            "midpoint + S-both²",
            arm_errors(&arm, MIDPOINT, both2, &hs, reference),
            2.0,
        ),
        (
            "Heun + S-full",
            arm_errors(&arm, HEUN, full, &hs, reference),
            2.0,
        ),
        ("RK4", arm_errors(&arm, RK4, none, &hs, reference), 4.0),
        (
            "RK4 + S-both²",
            arm_errors(&arm, RK4, both2, &hs, reference),
            4.0,
        ),
        (
            "RK4 + S-full",
            arm_errors(&arm, RK4, full, &hs, reference),
            4.0,
        ),
    ];
    for (label, errors, order) in cases {
        let title = format!("arm, case II, {label}: |(θ, θ̇) − ref| at t = 1");
        let slope = report(&title, &hs, &errors);
        assert!(
            (slope - order).abs() < 0.3,
            "{label}: slope {slope}, expected {order}"
        );
        let finest = errors[errors.len() - 1];
        assert!(
            finest > 5e-12,
            "{label}: errors below the reference's accuracy"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// DOPRI5: error control.

#[test]
fn dopri5_error_scales_with_the_tolerance() {
    let model = DoublePendulum::default();
    let t_end = 5.0;
    let (q_ref, _) = pendulum_reference(t_end);
    let tolerances = [1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9];
    let mut errors = Vec::new();
    let mut steps = Vec::new();
    for &tol in &tolerances {
        let mut dopri = Dopri5::<4, 2>::new(DOPRI5, tol, 0.1 * tol).unwrap();
        let mut state = initial_state();
        let stats = dopri.advance_to(&model, &mut state, t_end, |_| {}).unwrap();
        assert_eq!(state.t, t_end);
        assert_eq!(stats, dopri.statistics());
        errors.push((state.q - q_ref).amax());
        steps.push(stats.steps());
        println!(
            "DOPRI5 TOL = {tol:.0e}: |q − q_ref| = {:.3e}, accepted {}, rejected {}, \
             evaluations {}",
            errors.last().unwrap(),
            stats.accepted,
            stats.rejected,
            stats.evaluations
        );
        // FSAL without post-stabilization: one evaluation for the first stage, one for the
        // starting-step estimate, then six per attempt.
        assert_eq!(stats.evaluations, 2 + 6 * stats.steps());
    }
    let slope = loglog_slope(&tolerances, &errors).unwrap();
    println!("  log-log slope of the error against TOL = {slope:.3}");
    assert!((0.7..=1.3).contains(&slope), "error ∝ TOL^{slope}");
    for (tol, error) in tolerances.iter().zip(&errors) {
        assert!(*error < 10.0 * tol, "error {error:e} at TOL = {tol:e}");
    }
    // Steps grow like TOL^(−1/5) (order 5): about 1.58× per decade.
    let step_slope = loglog_slope(
        &tolerances,
        &steps.iter().map(|&n| n as f64).collect::<Vec<_>>(),
    )
    .unwrap();
    println!("  log-log slope of the steps against TOL = {step_slope:.3}");
    assert!(
        (-0.3..=-0.12).contains(&step_slope),
        "steps ∝ TOL^{step_slope}"
    );
}

#[test]
fn dopri5_counts_rejected_steps() {
    let model = DoublePendulum::default();
    // A first step of 1 is far too long for TOL = 1e-8: it must be rejected, and counted.
    let mut dopri = Dopri5::<4, 2>::new(DOPRI5, 1e-8, 1e-9)
        .unwrap()
        .with_initial_step(1.0)
        .unwrap();
    let mut state = initial_state();
    let first = dopri.step_toward(&model, &mut state, 10.0).unwrap();
    println!(
        "first step: h = {:.3e} after {} rejections",
        first.h, first.rejected
    );
    assert!(first.rejected >= 2, "{first:?}");
    assert!(first.h < 0.5 && first.error <= 1.0);
    assert_eq!(dopri.statistics().rejected, first.rejected);
    assert_eq!(dopri.statistics().accepted, 1);

    // The arm of Case II at ω = 1 with S-both² (Table 6.3's setting): rejections happen along
    // the way and NSTEP counts them.
    let arm = RobotArm::new(Path::Sine { omega: 1.0 });
    let mut dopri = Dopri5::<2, 1>::new(DOPRI5, 1e-5, 1e-6)
        .unwrap()
        .with_post_stabilization(PostStabilization::BothTwice);
    let mut state = robot_arm::initial_state();
    let mut accepted_seen = 0;
    let stats = dopri
        .advance_to(&arm, &mut state, 10.0, |_| accepted_seen += 1)
        .unwrap();
    println!(
        "arm case II, ω = 1, TOL = 1e-5, S-both², t = 10: {stats:?}, NSTEP = {}",
        stats.steps()
    );
    assert_eq!(accepted_seen, stats.accepted);
    assert!(stats.rejected > 0, "{stats:?}");
    assert_eq!(stats.steps(), stats.accepted + stats.rejected);
    // With a post-stabilization the first stage is recomputed after every accepted step.
    assert_eq!(stats.evaluations, 1 + stats.accepted + 6 * stats.steps());
}
