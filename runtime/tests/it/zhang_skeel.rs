//! Z&S and Z&Ss (Tao–Owhadi 2014) on the penalized double pendulum and the harmonic oscillator.

use crate::support::{report, run, steps_to};
use mechanism_runtime::observers::energy;
use mechanism_runtime::reference::double_pendulum::{initial_state, DoublePendulum};
use mechanism_runtime::reference::HarmonicOscillator;
use mechanism_runtime::{
    EnergyGuard, Integrator, Penalized, SVector, State, ZhangSkeel, ZhangSkeelSimplified,
};

/// The penalty frequency ω of Tao–Owhadi §4.1.
const OMEGA: f64 = 20.0;

/// The penalized motion `M q̈ = −∇W(q)` from the §4.1 initial state at `t_end`, by classical
/// RK4 at step `h` with the force written out independently of the model
/// ([`DoublePendulum::penalized_reference`]).
fn rk4_reference(t_end: f64, h: f64) -> SVector<f64, 4> {
    DoublePendulum::default()
        .penalized_reference(OMEGA, &initial_state(), t_end, steps_to(t_end, h))
        .q
}

/// Returns the position error at `t_end` of `integrator(h)` for each `h` against `reference`.
fn position_errors<I: Integrator<Penalized<DoublePendulum>, 4>>(
    integrator: impl Fn(f64) -> I,
    hs: &[f64],
    t_end: f64,
    reference: &SVector<f64, 4>,
) -> Vec<f64> {
    let model = Penalized::new(DoublePendulum::default(), OMEGA);
    hs.iter()
        .map(|&h| {
            let end = run(
                &mut integrator(h),
                &model,
                initial_state(),
                steps_to(t_end, h),
                |_| {},
            );
            (end.unwrap().q - reference).amax()
        })
        .collect()
}

const CONVERGENCE_STEPS: [f64; 4] = [0.01, 0.005, 0.0025, 0.00125];
const CONVERGENCE_TIME: f64 = 1.0;

#[test]
fn reference_is_converged() {
    let fine = rk4_reference(CONVERGENCE_TIME, 1e-4);
    let finer = rk4_reference(CONVERGENCE_TIME, 5e-5);
    println!(
        "RK4 reference at t = 1: |q(1e-4) − q(5e-5)| = {:.3e}",
        (fine - finer).amax()
    );
    assert!((fine - finer).amax() < 1e-10);
}

#[test]
fn zhang_skeel_is_second_order() {
    let reference = rk4_reference(CONVERGENCE_TIME, 1e-4);
    let hs = CONVERGENCE_STEPS;
    let errors = position_errors(
        |h| ZhangSkeel::<4>::new(h).unwrap(),
        &hs,
        CONVERGENCE_TIME,
        &reference,
    );
    let slope = report(
        "Z&S, penalized pendulum ω = 20, |q − q_ref| at t = 1",
        &hs,
        &errors,
    );
    assert!(slope >= 1.8, "slope {slope}");
}

#[test]
fn zhang_skeel_simplified_is_second_order() {
    let reference = rk4_reference(CONVERGENCE_TIME, 1e-4);
    let hs = CONVERGENCE_STEPS;
    let errors = position_errors(
        |h| ZhangSkeelSimplified::<4>::new(h).unwrap(),
        &hs,
        CONVERGENCE_TIME,
        &reference,
    );
    let slope = report(
        "Z&Ss, penalized pendulum ω = 20, |q − q_ref| at t = 1",
        &hs,
        &errors,
    );
    assert!(slope >= 1.8, "slope {slope}");
}

#[test]
fn zhang_skeel_energy_error_does_not_drift() {
    // Tao–Owhadi §4.1: h = 0.1, ω = 20, β = 0.4; h ω = 2 does not resolve the penalty.
    let model = Penalized::new(DoublePendulum::default(), OMEGA);
    let (h, steps) = (0.1, 10_000);
    let e0 = energy(&model, &initial_state());
    let mut errors = Vec::with_capacity(steps);
    let mut zs = ZhangSkeel::<4>::new(h).unwrap();
    run(&mut zs, &model, initial_state(), steps, |s| {
        errors.push((energy(&model, s) - e0).abs())
    })
    .unwrap();
    let max = |xs: &[f64]| xs.iter().cloned().fold(0.0, f64::max);
    let tenth = steps / 10;
    let (first, last, all) = (
        max(&errors[..tenth]),
        max(&errors[steps - tenth..]),
        max(&errors),
    );
    println!("Z&S h = 0.1, ω = 20, t ∈ [0, 1000]: max |E − E0| = {all:.3e} (first 10%: {first:.3e}, last 10%: {last:.3e})");
    assert!(all < MAX_ENERGY_ERROR, "max |E − E0| = {all}");
    assert!(last <= 2.0 * first, "energy error grows: {first} -> {last}");
}

/// Bounds max |E − E0| of Z&S over t ∈ [0, 1000] at h = 0.1 (measured 3.3e-2, E0 = −3).
const MAX_ENERGY_ERROR: f64 = 0.1;

/// Runs a stiff oscillator (h ω = 100) for `steps` steps; returns max E/E0, or `None` on a
/// blow-up (energy beyond 10¹² E0 or a non-finite state).
fn stiff_energy_growth<I: Integrator<HarmonicOscillator, 1>>(
    mut integrator: I,
    steps: usize,
) -> Option<f64> {
    let model = HarmonicOscillator {
        mass: 1.0,
        stiffness: 1e4,
    };
    let mut state = State::new(0.0, [1.0], [0.0]);
    let e0 = energy(&model, &state);
    let mut worst = 1.0f64;
    for _ in 0..steps {
        integrator.step(&model, &mut state).ok()?;
        worst = worst.max(energy(&model, &state) / e0);
        if worst > 1e12 {
            return None;
        }
    }
    Some(worst)
}

#[test]
fn linearly_stable_iff_beta_at_least_a_quarter() {
    let h = 1.0; // ω = 100, h ω = 100
    for beta in [0.25, 0.4] {
        let full = stiff_energy_growth(
            ZhangSkeel::<1>::new(h).unwrap().with_beta(beta).unwrap(),
            10_000,
        );
        let simplified = stiff_energy_growth(
            ZhangSkeelSimplified::<1>::new(h)
                .unwrap()
                .with_beta(beta)
                .unwrap(),
            10_000,
        );
        println!("β = {beta}: max E/E0 over 10⁴ steps: Z&S {full:?}, Z&Ss {simplified:?}");
        for growth in [full, simplified] {
            assert!(
                growth.is_some_and(|g| g < MAX_STABLE_GROWTH),
                "β = {beta}: {growth:?}"
            );
        }
    }
    let beta = 0.2;
    let full = stiff_energy_growth(
        ZhangSkeel::<1>::new(h).unwrap().with_beta(beta).unwrap(),
        100,
    );
    let simplified = stiff_energy_growth(
        ZhangSkeelSimplified::<1>::new(h)
            .unwrap()
            .with_beta(beta)
            .unwrap(),
        100,
    );
    println!("β = {beta}: Z&S {full:?}, Z&Ss {simplified:?} (None = blew up within 100 steps)");
    assert!(full.is_none() && simplified.is_none());
}

/// Bounds max E/E0 at h ω = 100, β ∈ {¼, 0.4} over 10⁴ steps (measured 1.0).
const MAX_STABLE_GROWTH: f64 = 2.0;

#[test]
fn growth_matches_the_amplification_factor() {
    // For V = ½ k q², both variants are x' = A x with trace A = 2 − h²ν, det A = 1,
    // ν = k / (m + βh²k); unstable iff |1 − h²ν/2| > 1, with spectral radius |c| + √(c² − 1).
    let (m, k, h, beta) = (1.0, 1e4, 1.0, 0.2);
    let nu = k / (m + beta * h * h * k);
    let c: f64 = 1.0 - 0.5 * h * h * nu;
    let rho = c.abs() + (c * c - 1.0).sqrt();
    let model = HarmonicOscillator {
        mass: m,
        stiffness: k,
    };
    // The growth is measured, so the energy guard, which would stop it, is off.
    let mut zs = ZhangSkeel::<1>::new(h)
        .unwrap()
        .with_beta(beta)
        .unwrap()
        .with_energy_guard(EnergyGuard::disabled());
    let mut state = State::new(0.0, [1.0], [0.0]);
    run(&mut zs, &model, state, 20, |_| {}).unwrap();
    let norm = |s: &State<1>| (s.q[0] * s.q[0] + (s.v[0] / model.omega()).powi(2)).sqrt();
    state = run(&mut zs, &model, state, 20, |_| {}).unwrap();
    let before = norm(&state);
    state = run(&mut zs, &model, state, 50, |_| {}).unwrap();
    let observed = (norm(&state) / before).powf(1.0 / 50.0);
    println!("β = 0.2, h ω = 100: observed growth per step {observed:.6}, predicted {rho:.6}");
    assert!((observed / rho - 1.0).abs() < 1e-3);
}

#[test]
fn harmonic_oscillator_converges_to_the_closed_form() {
    let model = HarmonicOscillator::default();
    let initial = State::new(0.0, [1.0], [0.5]);
    let exact = model.exact(&initial, 2.0);
    let hs = [0.04, 0.02, 0.01, 0.005];
    let errors: Vec<f64> = hs
        .iter()
        .map(|&h| {
            let end = run(
                &mut ZhangSkeel::<1>::new(h).unwrap(),
                &model,
                initial,
                steps_to(2.0, h),
                |_| {},
            );
            (end.unwrap().q - exact.q).amax()
        })
        .collect();
    let slope = report(
        "Z&S, harmonic oscillator, |q − q_exact| at t = 2",
        &hs,
        &errors,
    );
    assert!(slope >= 1.9, "slope {slope}");
}

/// Returns `max |JᵀΩJ − Ω|` for the one-step map `(q, v) ↦ (q', v')` of `integrator` on the
/// penalized pendulum (unit masses, so `p = v`), with `J` by central differences.
fn symplecticity_defect<I: Integrator<Penalized<DoublePendulum>, 4>>(
    integrator: impl Fn() -> I,
) -> f64 {
    use mechanism_runtime::SMatrix;
    let model = Penalized::new(DoublePendulum::default(), OMEGA);
    let base = State::new(0.0, [0.3, -0.9, 1.2, -2.1], [0.4, -0.3, 0.2, 0.5]);
    let step = |z: &SVector<f64, 8>| {
        let mut s = State::new(0.0, [z[0], z[1], z[2], z[3]], [z[4], z[5], z[6], z[7]]);
        integrator().step(&model, &mut s).unwrap();
        SVector::<f64, 8>::from_iterator(s.q.iter().chain(s.v.iter()).cloned())
    };
    let z0 = SVector::<f64, 8>::from_iterator(base.q.iter().chain(base.v.iter()).cloned());
    let delta = 1e-6;
    let mut jac = SMatrix::<f64, 8, 8>::zeros();
    for j in 0..8 {
        let mut e = SVector::<f64, 8>::zeros();
        e[j] = delta;
        jac.set_column(j, &((step(&(z0 + e)) - step(&(z0 - e))) / (2.0 * delta)));
    }
    let mut omega = SMatrix::<f64, 8, 8>::zeros();
    for i in 0..4 {
        omega[(i, i + 4)] = 1.0;
        omega[(i + 4, i)] = -1.0;
    }
    (jac.transpose() * omega * jac - omega).amax()
}

#[test]
fn third_derivative_correction_makes_zhang_skeel_symplectic() {
    // Z&S is symplectic (Theorem 2.5); Z&Ss drops the O(h⁵) term a·V'''·a and is not (N > 1).
    let h = 0.1;
    let full = symplecticity_defect(|| ZhangSkeel::<4>::new(h).unwrap());
    let simplified = symplecticity_defect(|| ZhangSkeelSimplified::<4>::new(h).unwrap());
    println!("h = 0.1, ω = 20: max |JᵀΩJ − Ω| Z&S = {full:.3e}, Z&Ss = {simplified:.3e}");
    // The Z&S defect is the O(δ²) truncation error of the differences (2.4e-7 at δ = 1e-6).
    assert!(full < 1e-5, "Z&S defect {full}");
    assert!(simplified > 0.1, "Z&Ss defect {simplified}");
}

#[test]
fn carried_acceleration_is_reused_only_at_the_same_configuration() {
    let model = Penalized::new(DoublePendulum::default(), OMEGA);
    let h = 0.05;
    let mut carried = ZhangSkeel::<4>::new(h).unwrap();
    let mut state = initial_state();
    let first = carried.step(&model, &mut state).unwrap();
    let second = carried.step(&model, &mut state).unwrap();
    // Step 1 factors M and solves at x_0 and x_1; step 2 reuses f_1 and M's factor.
    assert_eq!((first.factorizations, second.factorizations), (3, 1));

    // Carrying f is exact: the same bits as recomputing it every step.
    let mut fresh_state = initial_state();
    for _ in 0..2 {
        let mut fresh = ZhangSkeel::<4>::new(h).unwrap();
        fresh.step(&model, &mut fresh_state).unwrap();
    }
    assert_eq!(state, fresh_state);

    // A different incoming q is detected, so the stale f_2 is not used.
    let mut other = initial_state();
    other.q[0] = 0.01;
    let mut expected = other;
    ZhangSkeel::<4>::new(h)
        .unwrap()
        .step(&model, &mut expected)
        .unwrap();
    carried.step(&model, &mut other).unwrap();
    assert_eq!(other, expected);

    // Changing the model at the same q needs reset(): then it matches a fresh integrator.
    let stiffer = Penalized::new(DoublePendulum::default(), 2.0 * OMEGA);
    let mut reset_state = state;
    let mut fresh_state = state;
    carried.reset();
    carried.step(&stiffer, &mut reset_state).unwrap();
    ZhangSkeel::<4>::new(h)
        .unwrap()
        .step(&stiffer, &mut fresh_state)
        .unwrap();
    assert_eq!(reset_state, fresh_state);
}
