//! The magnetized rigid body on SO(3) (Tao–Owhadi 2014, §4.5): the Lie-group variational Euler
//! with Cayley (eqs. 34–35) and the variational linearized SO(3) integrator (eqs. 36–37, first
//! order and trapezoidal) against RK4 references written out here, their energy behaviour,
//! ‖RᵀR − I‖, the linearized scheme's stability limit, typed errors and no allocation per step.

use crate::support::allocations;
use mechanism_runtime::integrators::lie_group::{
    body_rate, linearized_trapezoidal, orthogonality_residual, rotation, rotation_state,
    LieGroupEuler, LinearizedSo3, PenalizedRotation,
};
use mechanism_runtime::model::{
    Inertia, Potential, PotentialHessian, PotentialThirdDerivative, RigidBody,
};
use mechanism_runtime::reference::fit::loglog_slope;
use mechanism_runtime::reference::MagnetizedBody;
use mechanism_runtime::{Integrator, SMatrix, SVector, State, StepError};
use nalgebra::{Matrix3, Vector3};

/// The paper's step, penalty frequency and β.
const H: f64 = 0.1;
const OMEGA: f64 = 10.0;
const BETA: f64 = 0.4;

fn hat(w: &Vector3<f64>) -> Matrix3<f64> {
    Matrix3::new(0.0, -w.z, w.y, w.z, 0.0, -w.x, -w.y, w.x, 0.0)
}

/// Returns `exp(ŵ)` by Rodrigues' formula.
fn exp(w: &Vector3<f64>) -> Matrix3<f64> {
    let angle = w.norm();
    let k = hat(&(w / angle));
    Matrix3::identity() + angle.sin() * k + (1.0 - angle.cos()) * k * k
}

fn start() -> State<9> {
    rotation_state(
        0.0,
        &Matrix3::identity(),
        &MagnetizedBody::initial_body_rate(),
    )
}

/// The magnetized body's energy `½|Ω|² + Bμ R₃₃` on SO(3) (`J = I`, `Bμ = 1`).
fn rigid_energy(r: &Matrix3<f64>, omega: &Vector3<f64>) -> f64 {
    0.5 * omega.norm_squared() + r[(2, 2)]
}

/// RK4 on `Ṙ = RΩ̂`, `j Ω̇ = Bμ Γ × e₃` (`Γ = Rᵀe₃`; Euler's equations for `J = j I`, the
/// torque of eq. 35), from `(I, Ω₀)` to `t_end` in steps of `h`.
fn rk4_rigid(body: MagnetizedBody, t_end: f64, h: f64) -> (Matrix3<f64>, Vector3<f64>) {
    let rhs = |r: &Matrix3<f64>, w: &Vector3<f64>| {
        let gamma = r.transpose() * Vector3::z();
        (
            r * hat(w),
            gamma.cross(&Vector3::z()) * (body.b_mu / body.inertia),
        )
    };
    let (mut r, mut w) = (Matrix3::identity(), MagnetizedBody::initial_body_rate());
    for _ in 0..(t_end / h).round() as usize {
        let (k1r, k1w) = rhs(&r, &w);
        let (k2r, k2w) = rhs(&(r + k1r * (h / 2.0)), &(w + k1w * (h / 2.0)));
        let (k3r, k3w) = rhs(&(r + k2r * (h / 2.0)), &(w + k2w * (h / 2.0)));
        let (k4r, k4w) = rhs(&(r + k3r * h), &(w + k3w * h));
        r += (k1r + k2r * 2.0 + k3r * 2.0 + k4r) * (h / 6.0);
        w += (k1w + k2w * 2.0 + k3w * 2.0 + k4w) * (h / 6.0);
    }
    (r, w)
}

/// RK4 on the penalized system in ℝ³ˣ³, `(j/2) R̈ = −Bμ e₃e₃ᵀ − 2ω² R (RᵀR − I)` (the
/// Euler–Lagrange equation of `(j/4) tr(ṘᵀṘ) − Bμ R₃₃ − ½ω²‖RᵀR − I‖²`), from `(I, Ω̂₀)`.
fn rk4_penalized(
    body: MagnetizedBody,
    omega: f64,
    t_end: f64,
    h: f64,
) -> (Matrix3<f64>, Matrix3<f64>) {
    let rhs = |r: &Matrix3<f64>, v: &Matrix3<f64>| {
        let mut field = Matrix3::zeros();
        field[(2, 2)] = body.b_mu;
        let c = r.transpose() * r - Matrix3::identity();
        (
            *v,
            (field + r * c * (2.0 * omega * omega)) * (-2.0 / body.inertia),
        )
    };
    let mut r = Matrix3::identity();
    let mut v = hat(&MagnetizedBody::initial_body_rate());
    for _ in 0..(t_end / h).round() as usize {
        let (k1r, k1v) = rhs(&r, &v);
        let (k2r, k2v) = rhs(&(r + k1r * (h / 2.0)), &(v + k1v * (h / 2.0)));
        let (k3r, k3v) = rhs(&(r + k2r * (h / 2.0)), &(v + k2v * (h / 2.0)));
        let (k4r, k4v) = rhs(&(r + k3r * h), &(v + k3v * h));
        r += (k1r + k2r * 2.0 + k3r * 2.0 + k4r) * (h / 6.0);
        v += (k1v + k2v * 2.0 + k3v * 2.0 + k4v) * (h / 6.0);
    }
    (r, v)
}

/// Steps `integrator` from the paper's initial state to `t_end` in steps of its `h`; calls
/// `observe` after each step.
fn run<I: Integrator<M, 9>, M>(
    integrator: &mut I,
    model: &M,
    h: f64,
    t_end: f64,
    mut observe: impl FnMut(&State<9>),
) -> Result<State<9>, StepError> {
    let mut state = start();
    for _ in 0..(t_end / h).round() as usize {
        integrator.step(model, &mut state)?;
        observe(&state);
    }
    Ok(state)
}

#[test]
fn cayley_is_first_order_against_rk4_on_the_rotation_ode() {
    let t_end = 1.0;
    let (r_ref, w_ref) = rk4_rigid(MagnetizedBody::default(), t_end, 1e-4);
    let hs = [0.04, 0.02, 0.01, 0.005];
    let errors: Vec<f64> = hs
        .iter()
        .map(|&h| {
            let body = MagnetizedBody::default();
            let mut euler = LieGroupEuler::new(h).unwrap();
            let state = run(&mut euler, &body, h, t_end, |_| {}).unwrap();
            (rotation(&state.q) - r_ref).norm() + (body_rate(&state) - w_ref).norm()
        })
        .collect();
    let slope = loglog_slope(&hs, &errors).unwrap();
    println!("Cayley: errors {errors:.3?}, slope {slope:.3}");
    assert!((slope - 1.0).abs() < 0.1, "slope {slope}");
}

#[test]
fn linearized_schemes_are_first_and_second_order_against_rk4_on_the_penalized_ode() {
    let t_end = 1.0;
    let model = PenalizedRotation::new(MagnetizedBody::default(), OMEGA);
    let (r_ref, v_ref) = rk4_penalized(model.body, OMEGA, t_end, 1e-4);
    let hs = [0.01, 0.005, 0.0025, 0.00125];
    let error = |state: &State<9>| {
        (rotation(&state.q) - r_ref).norm() + (rotation(&state.v) - v_ref).norm()
    };
    let first: Vec<f64> = hs
        .iter()
        .map(|&h| {
            let mut scheme = LinearizedSo3::new(h, BETA).unwrap();
            error(&run(&mut scheme, &model, h, t_end, |_| {}).unwrap())
        })
        .collect();
    let second: Vec<f64> = hs
        .iter()
        .map(|&h| {
            let mut scheme = linearized_trapezoidal(&model.body, h, BETA).unwrap();
            error(&run(&mut scheme, &model, h, t_end, |_| {}).unwrap())
        })
        .collect();
    let (p1, p2) = (
        loglog_slope(&hs, &first).unwrap(),
        loglog_slope(&hs, &second).unwrap(),
    );
    println!("linearized first order: {first:.3?}, slope {p1:.3}");
    println!("linearized trapezoidal: {second:.3?}, slope {p2:.3}");
    assert!((p1 - 1.0).abs() < 0.1, "first-order slope {p1}");
    assert!((p2 - 2.0).abs() < 0.1, "trapezoidal slope {p2}");
}

/// Returns the states of a run at `t = 0.1, 0.2, …, t_end` (the times it passes on a grid of `h`
/// dividing 0.1).
fn checkpoints<I: Integrator<M, 9>, M>(
    integrator: &mut I,
    model: &M,
    h: f64,
    t_end: f64,
) -> Vec<State<9>> {
    let mut states = Vec::new();
    run(integrator, model, h, t_end, |s| {
        if (s.t * 10.0 - (s.t * 10.0).round()).abs() < 1e-6 {
            states.push(*s);
        }
    })
    .unwrap();
    states
}

#[test]
fn an_isotropic_body_with_j_not_1_converges_to_its_own_equations() {
    // J = j I enters the Cayley update as τ/j and the linearized schemes as M = (j/2) I,
    // β' = jβ/2: each must follow the RK4 reference of the same body. The error is the largest
    // over t = 0.1, 0.2, …, 1 (at one time, the oscillating penalty mode's phase error makes
    // the first-order error irregular).
    let body = MagnetizedBody {
        b_mu: 0.7,
        inertia: 2.5,
    };
    let model = PenalizedRotation::new(body, OMEGA);
    let times: Vec<f64> = (1..=10).map(|c| 0.1 * c as f64).collect();
    let rigid: Vec<_> = times.iter().map(|&t| rk4_rigid(body, t, 1e-4)).collect();
    let penalized: Vec<_> = times
        .iter()
        .map(|&t| rk4_penalized(body, OMEGA, t, 1e-4))
        .collect();
    let rigid_error = |states: Vec<State<9>>| {
        states
            .iter()
            .zip(&rigid)
            .map(|(s, (r, w))| (rotation(&s.q) - r).norm() + (body_rate(s) - w).norm())
            .fold(0.0, f64::max)
    };
    let penalized_error = |states: Vec<State<9>>| {
        states
            .iter()
            .zip(&penalized)
            .map(|(s, (r, v))| (rotation(&s.q) - r).norm() + (rotation(&s.v) - v).norm())
            .fold(0.0, f64::max)
    };
    let hs = [0.005, 0.0025, 0.00125, 0.000625];
    let mut errors = [Vec::new(), Vec::new(), Vec::new()];
    for &h in &hs {
        let cayley = checkpoints(&mut LieGroupEuler::new(h).unwrap(), &body, h, 1.0);
        let first = checkpoints(&mut LinearizedSo3::new(h, BETA).unwrap(), &model, h, 1.0);
        let mut trapezoidal = linearized_trapezoidal(&body, h, BETA).unwrap();
        let second = checkpoints(&mut trapezoidal, &model, h, 1.0);
        assert!(cayley.len() == 10 && first.len() == 10 && second.len() == 10);
        errors[0].push(rigid_error(cayley));
        errors[1].push(penalized_error(first));
        errors[2].push(penalized_error(second));
    }
    let slopes = errors.each_ref().map(|e| loglog_slope(&hs, e).unwrap());
    println!("j = 2.5: errors {errors:?}, slopes {slopes:.3?}");
    // A wrong j would leave an O(1) error that does not shrink with h.
    for ((name, order, slope), e) in [
        ("Cayley", 1.0, slopes[0]),
        ("first order", 1.0, slopes[1]),
        ("trapezoidal", 2.0, slopes[2]),
    ]
    .into_iter()
    .zip(&errors)
    {
        assert!(
            (slope - order).abs() < 0.15 && e[3] < 1e-2,
            "{name}: slope {slope}"
        );
    }
}

#[test]
fn one_linearized_step_is_the_papers_update_with_the_corrected_force() {
    // Eq. (37) solved by fixed-point iteration (a contraction for 2ω²βh²‖·‖ < 1 at h = 0.02),
    // the corrected f_k and p_{k+1} = p_k + h f_k, R_{k+1} = R_k + 2h p_{k+1}, p = ½Ṙ, from an
    // off-manifold state: nothing shared with the scheme's Z&S route.
    let h = 0.02;
    let r = exp(&Vector3::new(0.3, -0.7, 0.4)) * 1.01
        + Matrix3::from_fn(|i, j| 1e-2 * (i as f64 - j as f64 * 0.5));
    let r_dot = r * hat(&Vector3::new(0.5, -1.0, 0.3)) + Matrix3::from_element(0.05);
    let e33 = Matrix3::from_fn(|i, j| if i == 2 && j == 2 { 1.0 } else { 0.0 });
    let w2 = OMEGA * OMEGA;
    let bh2 = BETA * h * h;
    let mut a = Matrix3::zeros();
    for _ in 0..200 {
        a = -e33
            - (r * r.transpose() * r - r
                + (a * r.transpose() * r + r * a.transpose() * r + r * r.transpose() * a - a)
                    * bh2)
                * (2.0 * w2);
    }
    let f = a
        - (r * a.transpose() * a + a * r.transpose() * a + a * a.transpose() * r)
            * (2.0 * w2 * BETA * BETA * h.powi(4));
    let p_next = r_dot * 0.5 + f * h;
    let r_next = r + p_next * (2.0 * h);

    let model = PenalizedRotation::new(MagnetizedBody::default(), OMEGA);
    let mut scheme = LinearizedSo3::new(h, BETA).unwrap();
    let mut state = State {
        t: 0.0,
        q: row(&r),
        v: row(&r_dot),
    };
    scheme.step(&model, &mut state).unwrap();
    let scale = r_next.norm() + p_next.norm();
    assert!((rotation(&state.q) - r_next).norm() < 1e-13 * scale);
    assert!((rotation(&state.v) * 0.5 - p_next).norm() < 1e-13 * scale);
}

fn row(m: &Matrix3<f64>) -> SVector<f64, 9> {
    SVector::from_row_slice(m.transpose().as_slice())
}

#[test]
fn penalized_rotation_derivatives_match_finite_differences() {
    let model = PenalizedRotation::new(MagnetizedBody::default(), 3.0);
    let r = exp(&Vector3::new(0.9, 0.2, -1.3)) * 1.05
        + Matrix3::from_fn(|i, j| 0.03 * ((i * 3 + j) as f64).sin());
    let q = row(&r);
    let a = SVector::<f64, 9>::from_fn(|k, _| (k as f64 * 0.7).cos());
    let eps = 1e-5;
    let mut grad = SVector::zeros();
    model.potential_gradient(&q, &mut grad);
    let mut hess = SMatrix::<f64, 9, 9>::zeros();
    model.potential_hessian(&q, &mut hess);
    let mut third = SVector::zeros();
    model.potential_third_contraction(&q, &a, &mut third);
    let hessian_scale = hess.abs().max();
    for k in 0..9 {
        let e = SVector::<f64, 9>::ith(k, eps);
        // Central differences: error ε²/6 |V‴| (a quartic: exact to round-off at ~1e-10).
        let fd = (model.potential(&(q + e)) - model.potential(&(q - e))) / (2.0 * eps);
        assert!(
            (fd - grad[k]).abs() < 1e-7 * (1.0 + grad.abs().max()),
            "∇U[{k}]"
        );
        let (mut gp, mut gm) = (SVector::zeros(), SVector::zeros());
        model.potential_gradient(&(q + e), &mut gp);
        model.potential_gradient(&(q - e), &mut gm);
        let column = (gp - gm) / (2.0 * eps);
        assert!(
            (column - hess.column(k)).abs().max() < 1e-7 * hessian_scale,
            "Hess U column {k}"
        );
    }
    // ∇(aᵀ Hess U a) by central differences of the Hessian (a quadratic in R: exact).
    for k in 0..9 {
        let e = SVector::<f64, 9>::ith(k, eps);
        let (mut hp, mut hm) = (SMatrix::zeros(), SMatrix::zeros());
        model.potential_hessian(&(q + e), &mut hp);
        model.potential_hessian(&(q - e), &mut hm);
        let fd = (a.dot(&(hp * a)) - a.dot(&(hm * a))) / (2.0 * eps);
        assert!(
            (fd - third[k]).abs() < 1e-7 * (1.0 + third.abs().max()),
            "a·U‴·a [{k}]"
        );
    }
    // The mass matrix is ½ I for J = I: kinetic energy ¼ tr(ṘᵀṘ).
    let mut m = SMatrix::<f64, 9, 9>::zeros();
    model.mass_matrix(&q, &mut m);
    assert_eq!(m, SMatrix::<f64, 9, 9>::identity() * 0.5);
}

/// The largest `|E − E₀|` over `[t0, t1]` of a sampled energy.
fn max_deviation(samples: &[(f64, f64)], e0: f64, t0: f64, t1: f64) -> f64 {
    samples
        .iter()
        .filter(|(t, _)| *t >= t0 && *t <= t1)
        .map(|(_, e)| (e - e0).abs())
        .fold(0.0, f64::max)
}

#[test]
fn cayley_keeps_r_orthogonal_to_round_off_and_its_energy_error_bounded() {
    let body = MagnetizedBody::default();
    let e0 = rigid_energy(&Matrix3::identity(), &MagnetizedBody::initial_body_rate());
    let mut energies = Vec::new();
    let mut orthogonality: f64 = 0.0;
    for (h, t_end) in [(H, 1000.0), (H / 2.0, 100.0)] {
        let mut euler = LieGroupEuler::new(h).unwrap();
        let mut samples = Vec::new();
        run(&mut euler, &body, h, t_end, |s| {
            let r = rotation(&s.q);
            samples.push((s.t, rigid_energy(&r, &body_rate(s))));
            orthogonality = orthogonality.max(orthogonality_residual(&r));
        })
        .unwrap();
        energies.push(samples);
    }
    let early = max_deviation(&energies[0], e0, 0.0, 100.0);
    let late = max_deviation(&energies[0], e0, 900.0, 1000.0);
    let halved = max_deviation(&energies[1], e0, 0.0, 100.0);
    println!("Cayley h = 0.1: max |E − E₀| on [0, 100] {early:.3e}, on [900, 1000] {late:.3e}; h = 0.05: {halved:.3e}; max ‖RᵀR − I‖ {orthogonality:.2e}");
    // 10 000 steps of round-off (a few ε each) at most: linear accumulation bounds it by 1e-11.
    assert!(orthogonality < 1e-11);
    // A symplectic first-order scheme: energy error O(h), no drift over 10⁴ steps.
    assert!(
        early < 0.2 && late < 1.5 * early,
        "early {early}, late {late}"
    );
    assert!(
        (halved / early - 0.5).abs() < 0.15,
        "O(h): ratio {}",
        halved / early
    );
}

/// What a run of a linearized scheme did: the largest `‖RᵀR − I‖` of the steps it took, the
/// energy `½vᵀMv + U` of each, and the error that ended it early, if any.
struct LinearizedRun {
    max_residual: f64,
    energies: Vec<(f64, f64)>,
    error: Option<StepError>,
}

/// Runs a linearized scheme on the penalized body with `omega` at the paper's `h` to `t_end`.
fn linearized_run<I: Integrator<PenalizedRotation<MagnetizedBody>, 9>>(
    scheme: &mut I,
    omega: f64,
    t_end: f64,
) -> LinearizedRun {
    let model = PenalizedRotation::new(MagnetizedBody::default(), omega);
    let energy = |s: &State<9>| model.kinetic_energy(&s.q, &s.v) + model.potential(&s.q);
    let mut run_ = LinearizedRun {
        max_residual: 0.0,
        energies: vec![(0.0, energy(&start()))],
        error: None,
    };
    let result = run(scheme, &model, H, t_end, |s| {
        run_.max_residual = run_
            .max_residual
            .max(orthogonality_residual(&rotation(&s.q)));
        run_.energies.push((s.t, energy(s)));
    });
    run_.error = result.err();
    run_
}

/// Runs both linearized schemes (first order, trapezoidal) with `omega` to `t_end`.
fn both_linearized(omega: f64, t_end: f64) -> [(&'static str, LinearizedRun); 2] {
    let body = MagnetizedBody::default();
    [
        (
            "first order",
            linearized_run(&mut LinearizedSo3::new(H, BETA).unwrap(), omega, t_end),
        ),
        (
            "trapezoidal",
            linearized_run(
                &mut linearized_trapezoidal(&body, H, BETA).unwrap(),
                omega,
                t_end,
            ),
        ),
    ]
}

/// Asserts that a run diverged: it left SO(3)'s neighbourhood, or the energy guard refused it
/// on the way there.
fn assert_diverged(name: &str, omega: f64, run: &LinearizedRun) {
    println!(
        "{name}, ω = {omega}: max ‖RᵀR − I‖ {:.3e} up to t = {:.1}, then {:?}",
        run.max_residual,
        run.energies.last().map_or(0.0, |e| e.0),
        run.error
    );
    // The penalty mode grows geometrically until R is far from SO(3) (‖RᵀR − I‖ ≫ O(Bμ/ω²))
    // and the step fails or the run ends with it there.
    let refused = matches!(run.error, Some(StepError::EnergyDiverged { .. }));
    assert!(
        run.max_residual > 1.0 || refused,
        "{name} at ω = {omega} did not diverge"
    );
}

#[test]
fn linearized_schemes_are_stable_at_omega_10_and_diverge_at_omega_20() {
    // h·2√2·ω = 2.83 (ω = 10) and 5.66 (ω = 20) against the limit 2/√(1 − 4β/2) = 4.47.
    for (name, run) in both_linearized(10.0, 100.0) {
        assert!(
            run.error.is_none(),
            "{name} at ω = 10 failed: {:?}",
            run.error
        );
        let e0 = run.energies[0].1;
        let (first_half, second_half) = (
            max_deviation(&run.energies, e0, 0.0, 50.0),
            max_deviation(&run.energies, e0, 50.0, 100.0),
        );
        println!(
            "{name}, ω = 10: max |E − E₀| {first_half:.3e} on [0, 50], {second_half:.3e} on [50, 100], max ‖RᵀR − I‖ {:.3e}",
            run.max_residual
        );
        // Bounded energy error (variational), no drift.
        assert!(
            first_half < 0.3 && second_half < 1.5 * first_half,
            "{name}: energy"
        );
        // O(Bμ/ω²): near, but not on, SO(3).
        assert!(
            run.max_residual < 0.1 && run.max_residual > 1e-3,
            "{name}: ‖RᵀR − I‖ = {}",
            run.max_residual
        );
    }
    for (name, run) in both_linearized(20.0, 100.0) {
        assert_diverged(name, 20.0, &run);
    }
}

#[test]
fn both_linearized_schemes_diverge_just_beyond_the_linear_stability_limit() {
    // The linear limit ω_max = 4.47 / (2√2 h) = 15.8 at h = 0.1, β = 0.4 is necessary for
    // stability: 5% beyond it, both diverge. (It is not sufficient along the tumbling motion:
    // both already diverge from ω ≈ 13.75–14, see `LinearizedSo3`.)
    for (name, run) in both_linearized(16.6, 100.0) {
        assert_diverged(name, 16.6, &run);
    }
}

#[test]
fn no_allocation_per_step() {
    let body = MagnetizedBody::default();
    let model = PenalizedRotation::new(body, OMEGA);
    let mut euler = LieGroupEuler::new(H).unwrap();
    let mut first = LinearizedSo3::new(H, BETA).unwrap();
    let mut second = linearized_trapezoidal(&body, H, BETA).unwrap();
    let (mut a, mut b, mut c) = (start(), start(), start());
    let before = allocations();
    for _ in 0..100 {
        euler.step(&body, &mut a).unwrap();
        first.step(&model, &mut b).unwrap();
        second.step(&model, &mut c).unwrap();
    }
    assert_eq!(allocations() - before, 0);
}

/// An anisotropic body: the Cayley scheme's scalar cubic does not apply.
struct Anisotropic;

impl RigidBody for Anisotropic {
    fn inertia(&self) -> Matrix3<f64> {
        Matrix3::from_diagonal(&Vector3::new(1.0, 2.0, 3.0))
    }
    fn potential(&self, _r: &Matrix3<f64>) -> f64 {
        0.0
    }
    fn potential_gradient(&self, _r: &Matrix3<f64>) -> Matrix3<f64> {
        Matrix3::zeros()
    }
}

#[test]
fn bad_input_is_a_typed_error_and_leaves_the_state_unchanged() {
    let body = MagnetizedBody::default();
    let mut euler = LieGroupEuler::new(H).unwrap();
    // Off SO(3): a scaled rotation.
    let mut state = rotation_state(0.0, &(Matrix3::identity() * 1.001), &Vector3::x());
    let before = state;
    let error = euler.step(&body, &mut state);
    assert!(
        matches!(error, Err(StepError::OffManifold { row: 0, .. })),
        "{error:?}"
    );
    assert_eq!(state, before);
    // Ṙ not tangent: RᵀṘ not skew.
    let mut state = start();
    state.v[0] = 0.5;
    assert!(matches!(
        euler.step(&body, &mut state),
        Err(StepError::OffManifold { row: 1, .. })
    ));
    // A non-finite parameter and state.
    let nan_body = MagnetizedBody {
        b_mu: f64::NAN,
        inertia: 1.0,
    };
    assert!(matches!(
        euler.step(&nan_body, &mut start()),
        Err(StepError::BadParameter { name: "Bμ", .. })
    ));
    let mut state = start();
    state.v[4] = f64::INFINITY;
    assert!(matches!(
        euler.step(&body, &mut state),
        Err(StepError::NonFinite {
            quantity: "v",
            index: 4,
            ..
        })
    ));
    // An anisotropic body.
    assert!(matches!(
        euler.step(&Anisotropic, &mut start()),
        Err(StepError::Unsupported { .. })
    ));
    assert!(matches!(
        LieGroupEuler::new(-0.1),
        Err(StepError::BadStepSize { .. })
    ));
    assert!(matches!(
        LinearizedSo3::new(H, f64::NAN),
        Err(StepError::BadParameter { name: "beta", .. })
    ));
    assert!(matches!(
        linearized_trapezoidal(&Anisotropic, H, BETA),
        Err(StepError::Unsupported { .. })
    ));
    // A huge state makes M + β'h² Hess U overflow: a typed error, not a panic.
    let model = PenalizedRotation::new(body, OMEGA);
    let mut state = rotation_state(0.0, &(Matrix3::identity() * 1e110), &Vector3::x());
    let before = state;
    let error = LinearizedSo3::new(H, BETA)
        .unwrap()
        .step(&model, &mut state);
    assert!(
        matches!(error, Err(StepError::NonFinite { .. })),
        "{error:?}"
    );
    assert_eq!(state, before);
}
