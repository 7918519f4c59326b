//! The stabilized Runge–Kutta methods' step Jacobians (the variational equations of the
//! index-1 system through the step's own stages, then the post-stabilization's derivative:
//! `runtime/.../stabilized/jacobian.rs`) against central differences of the step, at random
//! states: DOPRI5 (an accepted step of the adaptive pair, its size fixed by `with_initial_step`
//! so that the differences see the same size) and the fixed-step RK4, with every
//! post-stabilization that is differentiated, both metrics and with and without Baumgarte's
//! term; on the double pendulum (two rows, quadratic), and on a damped bead on a shaken curve
//! (a rheonomic row whose Hessian varies, so that `∂b/∂q`, `G_t` and `∂g_t/∂p` are all
//! nonzero, a parameter in the mass, the potential, the dissipation and the row); and, for a
//! configuration-dependent mass matrix (the velocity terms `∂T/∂q − Ṁv` and `δM a`), on the
//! double pendulum in its joint angles and on a four-bar linkage in joint angles closed by two
//! rows (with the mass metric, also `δM D`).

use mechanism::mechanism;
use mechanism::models::DoublePendulum;
use mechanism::runtime::integrators::stabilized::{
    AdaptiveRk, Baumgarte, Dopri5, Metric, PostStabilization, StabilizedRk, DOPRI5, RK4,
};
use mechanism::runtime::{State, StepError, StepJacobian};
use proptest::prelude::*;

use super::{chain_state, check_parameter_jacobian, check_step_jacobian};

mechanism! {
    /// A damped bead of mass `m` on the curve `y = a sin(k x + w t)`, which moves, under
    /// gravity `g` along −y.
    pub struct ShakenBead {
        coordinates: [x, y],
        parameters: { m = 1.3, a = 0.4, k = 1.7, w = 2.1, g = 9.81, c = 0.3 },
        kinetic: 0.5 * m * (dot(x).powi(2) + dot(y).powi(2)),
        potential: m * g * y,
        dissipation: 0.5 * c * (dot(x).powi(2) + dot(y).powi(2)),
        holonomic: { curve: y - a * (k * x + w * t).sin() },
        integrators: [rk],
        derivatives: [step_jacobians],
    }
}

mechanism! {
    /// A damped double pendulum in its joint angles (from −y): bobs `m1`, `m2` on massless
    /// rods `l1`, `l2`, so that `M(θ)` depends on `θ₁ − θ₂` and the velocity terms
    /// `∂T/∂q − Ṁv` do not vanish; no rows.
    pub struct AngleDoublePendulum {
        coordinates: [th1, th2],
        parameters: { m1 = 1.0, m2 = 0.7, l1 = 1.0, l2 = 1.3, g = 9.81, c = 0.2 },
        kinetic: 0.5 * (m1 + m2) * l1.powi(2) * dot(th1).powi(2)
            + 0.5 * m2 * l2.powi(2) * dot(th2).powi(2)
            + m2 * l1 * l2 * dot(th1) * dot(th2) * (th1 - th2).cos(),
        potential: -(m1 + m2) * g * l1 * th1.cos() - m2 * g * l2 * th2.cos(),
        dissipation: 0.5 * c * (dot(th1).powi(2) + (dot(th2) - dot(th1)).powi(2)),
        integrators: [rk],
        derivatives: [step_jacobians],
    }
}

mechanism! {
    /// A four-bar linkage in joint angles: three links `l1`, `l2`, `l3` from the pivot at the
    /// origin at angles `θᵢ` from −y, with point masses at their ends, the last end held at the
    /// pivot `(d, 0)` by two rows; `M(θ)` varies and every parameter enters it, the rows or the
    /// potential.
    pub struct FourBar {
        coordinates: [th1, th2, th3],
        parameters: {
            m1 = 1.0, m2 = 0.8, m3 = 0.6, l1 = 1.0, l2 = 1.6, l3 = 1.2, d = 1.5, g = 9.81,
            c = 0.2,
        },
        kinetic: 0.5 * (m1 + m2 + m3) * l1.powi(2) * dot(th1).powi(2)
            + 0.5 * (m2 + m3) * l2.powi(2) * dot(th2).powi(2)
            + 0.5 * m3 * l3.powi(2) * dot(th3).powi(2)
            + (m2 + m3) * l1 * l2 * dot(th1) * dot(th2) * (th1 - th2).cos()
            + m3 * l1 * l3 * dot(th1) * dot(th3) * (th1 - th3).cos()
            + m3 * l2 * l3 * dot(th2) * dot(th3) * (th2 - th3).cos(),
        potential: -g * ((m1 + m2 + m3) * l1 * th1.cos() + (m2 + m3) * l2 * th2.cos()
            + m3 * l3 * th3.cos()),
        dissipation: 0.5 * c * (dot(th1).powi(2) + dot(th2).powi(2) + dot(th3).powi(2)),
        holonomic: {
            x: l1 * th1.sin() + l2 * th2.sin() + l3 * th3.sin() - d,
            y: l1 * th1.cos() + l2 * th2.cos() + l3 * th3.cos(),
        },
        integrators: [rk],
        derivatives: [step_jacobians],
    }
}

/// The four-bar closed at crank angle `th1` (the elbow of the two other links turned the same
/// way every time), its angles moved off the loop by `off`, turning at `rates` (not tangent to
/// the loop: the step is a smooth map off it too).
fn four_bar_state(th1: f64, off: [f64; 3], rates: [f64; 3]) -> State<3> {
    let model = FourBar::default();
    // Direction angles ψ from +x; an angle from −y is θ = ψ + π/2.
    let (x1, y1) = (model.l1 * th1.sin(), -model.l1 * th1.cos());
    let (dx, dy) = (model.d - x1, -y1);
    let r = dx.hypot(dy);
    let beta = ((model.l2.powi(2) + r * r - model.l3.powi(2)) / (2.0 * model.l2 * r)).acos();
    let psi2 = dy.atan2(dx) + beta;
    let (x2, y2) = (x1 + model.l2 * psi2.cos(), y1 + model.l2 * psi2.sin());
    let psi3 = (-y2).atan2(model.d - x2);
    let half_pi = std::f64::consts::FRAC_PI_2;
    let angles = [th1, psi2 + half_pi, psi3 + half_pi];
    State::new(0.0, std::array::from_fn(|i| angles[i] + off[i]), rates)
}

/// The step: short enough that DOPRI5 accepts its first attempt at the tolerances below.
const H: f64 = 0.01;

/// The difference step and the estimate of `κ` (the Schur complements `G M⁻¹ Gᵀ` and `G D`
/// are well conditioned here: `κ ≲ 10²`).
const DIFFERENCES: (f64, f64) = (1e-5, 1e3);

/// Every differentiated post-stabilization with its metric.
fn stabilizations() -> impl Strategy<Value = (PostStabilization, Metric)> {
    (
        prop::sample::select(vec![
            PostStabilization::None,
            PostStabilization::Position,
            PostStabilization::Velocity,
            PostStabilization::Both,
            PostStabilization::BothTwice,
        ]),
        prop::sample::select(vec![Metric::Euclidean, Metric::Mass]),
    )
}

/// DOPRI5 whose first attempt is `H` and accepted.
fn dopri<const N: usize, const M: usize>(
    (stabilization, metric): (PostStabilization, Metric),
    baumgarte: bool,
) -> Dopri5<N, M> {
    let baumgarte = if baumgarte {
        Baumgarte::new(12.0, 70.0).unwrap()
    } else {
        Baumgarte::NONE
    };
    AdaptiveRk::new(DOPRI5, 1e-3, 1e-3)
        .unwrap()
        .with_initial_step(H)
        .unwrap()
        .with_baumgarte(baumgarte)
        .with_post_stabilization(stabilization)
        .with_metric(metric)
}

/// A state near the bead's curve at time `t`, moving.
fn bead_state(t: f64, x: f64, off: f64, v: [f64; 2]) -> State<2> {
    let model = ShakenBead::default();
    let y = model.a * (model.k * x + model.w * t).sin() + off;
    State::new(t, [x, y], v)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn dopri5s_jacobians_match_central_differences_on_the_shaken_bead(
        t in 0.0..3.0f64,
        x in -2.0..2.0f64,
        off in -1e-3..1e-3f64,
        v in prop::array::uniform2(-2.0..2.0f64),
        stabilization in stabilizations(),
        baumgarte in any::<bool>(),
    ) {
        let model = ShakenBead::default();
        let state = bead_state(t, x, off, v);
        let dopri = dopri::<2, 1>(stabilization, baumgarte);
        let label = format!("DOPRI5 {:?} {:?} Baumgarte {baumgarte}", stabilization.0, stabilization.1);
        check_step_jacobian(&label, &dopri, &model, &state, DIFFERENCES);
        check_parameter_jacobian::<_, _, 2, 6>(&label, &dopri, &model, &state, DIFFERENCES);
    }

    #[test]
    fn rk4s_jacobians_match_central_differences_on_the_shaken_bead(
        t in 0.0..3.0f64,
        x in -2.0..2.0f64,
        off in -1e-3..1e-3f64,
        v in prop::array::uniform2(-2.0..2.0f64),
        stabilization in stabilizations(),
        baumgarte in any::<bool>(),
    ) {
        let model = ShakenBead::default();
        let state = bead_state(t, x, off, v);
        let baumgarte = if baumgarte { Baumgarte::critically_damped(5.0).unwrap() } else { Baumgarte::NONE };
        let rk4 = StabilizedRk::<2, 1, 4>::new(RK4, H)
            .unwrap()
            .with_baumgarte(baumgarte)
            .with_post_stabilization(stabilization.0)
            .with_metric(stabilization.1);
        let label = format!("RK4 {:?} {:?} {baumgarte:?}", stabilization.0, stabilization.1);
        check_step_jacobian(&label, &rk4, &model, &state, DIFFERENCES);
        check_parameter_jacobian::<_, _, 2, 6>(&label, &rk4, &model, &state, DIFFERENCES);
    }

    #[test]
    fn dopri5s_jacobians_match_central_differences_on_the_double_pendulum(
        angles in prop::array::uniform2(-3.0..3.0f64),
        rates in prop::array::uniform2(-2.0..2.0f64),
        stabilization in stabilizations(),
        baumgarte in any::<bool>(),
    ) {
        let model = DoublePendulum::default();
        let state = chain_state::<4>(&[1.0, 2.0f64.sqrt()], &angles, &rates);
        let dopri = dopri::<4, 2>(stabilization, baumgarte);
        let label = format!("DOPRI5 {:?} {:?} Baumgarte {baumgarte}", stabilization.0, stabilization.1);
        check_step_jacobian(&label, &dopri, &model, &state, DIFFERENCES);
        check_parameter_jacobian::<_, _, 4, 5>(&label, &dopri, &model, &state, DIFFERENCES);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// A configuration-dependent `M` without rows: the velocity terms' derivatives and `δM a`.
    #[test]
    fn jacobians_match_central_differences_on_the_double_pendulum_in_angles(
        angles in prop::array::uniform2(-3.0..3.0f64),
        rates in prop::array::uniform2(-2.0..2.0f64),
        adaptive in any::<bool>(),
    ) {
        let model = AngleDoublePendulum::default();
        let state = State::new(0.0, angles, rates);
        if adaptive {
            let dopri = dopri::<2, 0>((PostStabilization::None, Metric::Euclidean), false);
            check_step_jacobian("DOPRI5, angles", &dopri, &model, &state, DIFFERENCES);
            check_parameter_jacobian::<_, _, 2, 6>("DOPRI5, angles", &dopri, &model, &state, DIFFERENCES);
        } else {
            let rk4 = StabilizedRk::<2, 0, 4>::new(RK4, H).unwrap();
            check_step_jacobian("RK4, angles", &rk4, &model, &state, DIFFERENCES);
            check_parameter_jacobian::<_, _, 2, 6>("RK4, angles", &rk4, &model, &state, DIFFERENCES);
        }
    }

    /// A configuration-dependent `M` with rows: also `δM D` of the mass metric's projector.
    #[test]
    fn jacobians_match_central_differences_on_the_four_bar_in_angles(
        th1 in -3.0..3.0f64,
        off in prop::array::uniform3(-1e-3..1e-3f64),
        rates in prop::array::uniform3(-2.0..2.0f64),
        stabilization in stabilizations(),
        baumgarte in any::<bool>(),
        adaptive in any::<bool>(),
    ) {
        let model = FourBar::default();
        let state = four_bar_state(th1, off, rates);
        let label = format!("four-bar {:?} {:?} Baumgarte {baumgarte}", stabilization.0, stabilization.1);
        if adaptive {
            let dopri = dopri::<3, 2>(stabilization, baumgarte);
            check_step_jacobian(&format!("DOPRI5 {label}"), &dopri, &model, &state, DIFFERENCES);
            check_parameter_jacobian::<_, _, 3, 9>(&format!("DOPRI5 {label}"), &dopri, &model, &state, DIFFERENCES);
        } else {
            let baumgarte = if baumgarte { Baumgarte::critically_damped(5.0).unwrap() } else { Baumgarte::NONE };
            let rk4 = StabilizedRk::<3, 2, 4>::new(RK4, H)
                .unwrap()
                .with_baumgarte(baumgarte)
                .with_post_stabilization(stabilization.0)
                .with_metric(stabilization.1);
            check_step_jacobian(&format!("RK4 {label}"), &rk4, &model, &state, DIFFERENCES);
            check_parameter_jacobian::<_, _, 3, 9>(&format!("RK4 {label}"), &rk4, &model, &state, DIFFERENCES);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    /// The robot arm of Ascher et al. (1995, Example 2) in its joint angles: uniform rods, a
    /// configuration-dependent `M`, the free end on the parabola `y₂ = x₂² − β` (Case I, `β`
    /// put through the start) or at the prescribed height `y₂ = sin²(ωt)` (Case II, rheonomic;
    /// the random start is off that height, the step a smooth map there too), with the paper's
    /// recommended S-both² or any other differentiated stabilization.
    #[test]
    fn jacobians_match_central_differences_on_the_papers_robot_arm(
        angles in (0.3..1.5f64, -2.8..-0.5f64),
        rates in prop::array::uniform2(-1.0..1.0f64),
        t in 0.0..6.0f64,
        stabilization in stabilizations(),
        adaptive in any::<bool>(),
    ) {
        use mechanism::models::{RobotArmParabola, RobotArmSine};
        let state = State::new(t, [angles.0, angles.1], rates);
        let mut parabola = RobotArmParabola::default();
        parabola.beta = parabola.consistent_beta(&[angles.0, angles.1]);
        let sine = RobotArmSine::default();
        let label = format!("robot arm {:?} {:?}", stabilization.0, stabilization.1);
        if adaptive {
            let dopri = dopri::<2, 1>(stabilization, false);
            check_step_jacobian(&format!("DOPRI5 {label}, parabola"), &dopri, &parabola, &state, DIFFERENCES);
            check_parameter_jacobian::<_, _, 2, 6>(&format!("DOPRI5 {label}, parabola"), &dopri, &parabola, &state, DIFFERENCES);
            check_step_jacobian(&format!("DOPRI5 {label}, sine"), &dopri, &sine, &state, DIFFERENCES);
            check_parameter_jacobian::<_, _, 2, 6>(&format!("DOPRI5 {label}, sine"), &dopri, &sine, &state, DIFFERENCES);
        } else {
            let rk4 = StabilizedRk::<2, 1, 4>::new(RK4, H)
                .unwrap()
                .with_post_stabilization(stabilization.0)
                .with_metric(stabilization.1);
            check_step_jacobian(&format!("RK4 {label}, parabola"), &rk4, &parabola, &state, DIFFERENCES);
            check_parameter_jacobian::<_, _, 2, 6>(&format!("RK4 {label}, parabola"), &rk4, &parabola, &state, DIFFERENCES);
            check_step_jacobian(&format!("RK4 {label}, sine"), &rk4, &sine, &state, DIFFERENCES);
            check_parameter_jacobian::<_, _, 2, 6>(&format!("RK4 {label}, sine"), &rk4, &sine, &state, DIFFERENCES);
        }
    }
}

/// The four-bar's start is on its loop (the test's construction of a closed state is right).
#[test]
fn the_four_bar_state_closes_the_loop() {
    use mechanism::runtime::Holonomic;
    let model = FourBar::default();
    for th1 in [-2.9, -1.0, 0.0, 0.7, 2.5] {
        let state = four_bar_state(th1, [0.0; 3], [0.0; 3]);
        let mut g = mechanism::runtime::SVector::<f64, 2>::zeros();
        model.constraints(&state.q, 0.0, &mut g);
        assert!(g.amax() < 1e-12, "{g} at θ₁ = {th1}");
    }
}

/// S-full is refused by name, and a refused step leaves the state and the integrator as they
/// were (the next plain step is the step of a fresh integrator).
#[test]
fn s_full_is_refused_and_nothing_moves() {
    let model = DoublePendulum::default();
    let start = chain_state::<4>(&[1.0, 2.0f64.sqrt()], &[0.3, -0.4], &[0.5, 0.1]);
    let fresh = dopri::<4, 2>((PostStabilization::Full, Metric::Euclidean), false);
    let mut dopri = fresh;
    let mut state = start;
    let mut jacobian = StepJacobian::<4>::default();
    let error = mechanism::runtime::DifferentiableStep::step_with_jacobian(
        &mut dopri,
        &model,
        &mut state,
        &mut jacobian,
    )
    .unwrap_err();
    assert!(
        matches!(error, StepError::Unsupported { requirement, .. } if requirement.contains("S-full")),
        "{error}"
    );
    assert_eq!((state.q, state.v, state.t), (start.q, start.v, start.t));
    assert_eq!(jacobian, StepJacobian::<4>::default());
    let (mut after_refusal, mut after_fresh) = (start, start);
    mechanism::runtime::Integrator::step(&mut dopri, &model, &mut after_refusal).unwrap();
    let mut fresh = fresh;
    mechanism::runtime::Integrator::step(&mut fresh, &model, &mut after_fresh).unwrap();
    assert_eq!(
        (after_refusal.q, after_refusal.v),
        (after_fresh.q, after_fresh.v)
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    /// The Runge–Kutta methods carry tangents through a step without forming the Jacobians
    /// (`step_toward_with_tangents`); the result is the Jacobians times the tangents, and the
    /// step the same, to rounding.
    #[test]
    fn tangents_through_a_step_are_the_jacobians_times_the_tangents(
        t in 0.0..3.0f64,
        x in -2.0..2.0f64,
        v in prop::array::uniform2(-2.0..2.0f64),
        seeds in prop::array::uniform32(-1.0..1.0f64),
        stabilization in stabilizations(),
        adaptive in any::<bool>(),
    ) {
        use mechanism::runtime::{DifferentiableInParameters, ParameterJacobian, SMatrix};
        let model = ShakenBead::default();
        let state = bead_state(t, x, 0.0, v);
        let (dq, dv) = (
            SMatrix::<f64, 2, 3>::from_column_slice(&seeds[..6]),
            SMatrix::<f64, 2, 3>::from_column_slice(&seeds[6..12]),
        );
        let dp = SMatrix::<f64, 6, 3>::from_column_slice(&seeds[12..30]);
        type Tangents<'a> = (&'a mut SMatrix<f64, 2, 3>, &'a mut SMatrix<f64, 2, 3>);
        let check = |full: &mut dyn FnMut(&mut State<2>, &mut StepJacobian<2>, &mut ParameterJacobian<2, 6>),
                     carried: &mut dyn FnMut(&mut State<2>, Tangents)| {
            let (mut a, mut b) = (state, state);
            let (mut j, mut jp) = (StepJacobian::<2>::default(), ParameterJacobian::<2, 6>::default());
            full(&mut a, &mut j, &mut jp);
            let (mut q, mut w) = (dq, dv);
            carried(&mut b, (&mut q, &mut w));
            assert_eq!((a.q, a.v, a.t), (b.q, b.v, b.t));
            let expected_q = j.q_q * dq + j.q_v * dv + jp.q_p * dp;
            let expected_v = j.v_q * dq + j.v_v * dv + jp.v_p * dp;
            let scale = 1.0 + expected_q.amax().max(expected_v.amax());
            assert!((q - expected_q).amax() < 1e-12 * scale, "{q} against {expected_q}");
            assert!((w - expected_v).amax() < 1e-12 * scale, "{w} against {expected_v}");
        };
        if adaptive {
            let dopri = dopri::<2, 1>(stabilization, false);
            check(
                &mut |s, j, jp| { let mut d = dopri; d.step_toward_with_jacobians(&model, s, 10.0, j, jp).unwrap(); },
                &mut |s, tangents| { let mut d = dopri; d.step_toward_with_tangents(&model, s, 10.0, tangents, &dp).unwrap(); },
            );
        } else {
            let rk4 = StabilizedRk::<2, 1, 4>::new(RK4, H)
                .unwrap()
                .with_post_stabilization(stabilization.0)
                .with_metric(stabilization.1);
            check(
                &mut |s, j, jp| { let mut r = rk4; r.step_with_jacobians(&model, s, j, jp).unwrap(); },
                &mut |s, tangents| { let mut r = rk4; r.step_toward_with_tangents(&model, s, 10.0, tangents, &dp).unwrap(); },
            );
        }
    }
}
