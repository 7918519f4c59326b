//! The generated TIP3P water cluster (`models::WaterCluster`, Tao–Owhadi 2014 §4.3) against
//! references nobody here generated: central finite differences of its potential and penalty,
//! Newton's third law of its pair forces, exact conservation of total linear momentum by stiff
//! Z&Ss, and a hand-written all-pairs loop of closed-form Coulomb and Lennard-Jones terms.

use mechanism::models::WaterCluster;
use mechanism::runtime::model::{
    SparseHolonomic, SparseInertia, SparsePenalizedPotential, SparsePenaltyHessian, SparsePotential,
};
use mechanism::runtime::{
    DynState, Penalized, SparseIntegrator, SparseLangevin, SparseRattle, SparseZhangSkeelStiff,
};

use crate::support::water_clusters::{max_abs, perturbed_cluster, BETA_T};

/// `∇V` against central differences of `V` at a random 3-molecule cluster. Step `1e-5` Å:
/// truncation `~d²|V‴|/6 ~ 1e-8` (the closest sites are ~1.8 Å apart, `|V‴| ≲ 1e3`), rounding
/// `~ε|V|/d ~ 1e-9`; the bound `1e-6 · max|∇V|` leaves two orders of margin.
#[test]
fn the_potential_gradient_matches_central_differences() {
    let model = WaterCluster::new(3).expect("3 molecules");
    let q = perturbed_cluster(&model, 0.05, 7);
    let mut grad = vec![0.0; q.len()];
    model.potential_gradient(&q, &mut grad);
    let fd = crate::support::central_differences(&|x| vec![model.potential(x)], &q, 1e-5);
    let scale = max_abs(&grad);
    assert!(scale > 1.0, "the pair forces are not trivial: {scale}");
    let mut worst = 0.0f64;
    for (j, column) in fd.iter().enumerate() {
        let error = (grad[j] - column[0]).abs();
        worst = worst.max(error / scale);
        assert!(
            error < 1e-6 * scale,
            "∂V/∂q{j}: {} vs {}",
            grad[j],
            column[0]
        );
    }
    println!("∇V vs central differences: largest error {worst:.2e} of max|∇V| = {scale:.3e}");
}

/// The penalty Hessian `Hess(½ ω²|g|²)` (dense from its pattern, each unordered pair once)
/// against central differences of the penalty's gradient `∇W − ∇V` (`W` the penalized
/// potential), off the constraints; and its pattern is block-diagonal, 9 × 9 per molecule
/// (each molecule's 45 unordered pairs at most), so stiff Z&Ss solves molecule by molecule.
#[test]
fn the_penalty_hessian_matches_central_differences_and_is_block_diagonal() {
    let model = WaterCluster::new(3).expect("3 molecules");
    let (n, omega) = (model.coordinate_count(), 20.0);
    let q = perturbed_cluster(&model, 0.05, 11);
    let pattern = model.penalty_hessian_pattern();
    for &(i, j) in pattern {
        assert_eq!(i / 9, j / 9, "({i}, {j}) couples two molecules");
    }
    assert!(pattern.len() <= 3 * 45, "{} entries", pattern.len());
    let mut values = vec![0.0; pattern.len()];
    model.penalty_hessian(omega, &q, &mut values);
    let hess = crate::support::dense_symmetric(pattern, &values, n);
    let penalty_gradient = |x: &[f64]| {
        let (mut w, mut v) = (vec![0.0; n], vec![0.0; n]);
        model.penalized_potential_gradient(omega, x, &mut w);
        model.potential_gradient(x, &mut v);
        w.iter().zip(&v).map(|(a, b)| a - b).collect::<Vec<_>>()
    };
    // The penalty is a quartic polynomial: truncation `d²|W‴|/6 ~ 1e-8`, rounding of the
    // difference `∇W − ∇V` `~ε|∇V|/d ~ 1e-9`.
    let fd = crate::support::central_differences(&penalty_gradient, &q, 1e-5);
    let scale = max_abs(&hess);
    assert!(scale > 100.0, "ω² = 400 sets the scale: {scale}");
    let mut worst = 0.0f64;
    for (j, column) in fd.iter().enumerate() {
        for (i, value) in column.iter().enumerate() {
            let error = (hess[i * n + j] - value).abs();
            worst = worst.max(error / scale);
            assert!(
                error < 1e-6 * scale,
                "H[{i}, {j}]: {} vs {value}",
                hess[i * n + j]
            );
        }
    }
    println!(
        "penalty Hessian vs central differences: largest error {worst:.2e} of max|H| = {scale:.3e}"
    );
}

/// Newton's third law: the potential is intermolecular pair terms of distances only, so the
/// forces sum to zero and so do their torques about the origin, to round-off relative to the
/// largest force (63 terms per sum: a bound of `63 · 8ε` relative).
#[test]
fn the_pair_forces_obey_newtons_third_law() {
    let model = WaterCluster::new(7).expect("7 molecules");
    let q = perturbed_cluster(&model, 0.05, 3);
    let mut grad = vec![0.0; q.len()];
    model.potential_gradient(&q, &mut grad);
    let (mut force, mut torque) = ([0.0; 3], [0.0; 3]);
    let mut torque_scale = 0.0f64;
    for (x, f) in q.chunks_exact(3).zip(grad.chunks_exact(3)) {
        for d in 0..3 {
            force[d] += f[d];
        }
        let t = [
            x[1] * f[2] - x[2] * f[1],
            x[2] * f[0] - x[0] * f[2],
            x[0] * f[1] - x[1] * f[0],
        ];
        for d in 0..3 {
            torque[d] += t[d];
            torque_scale = torque_scale.max(t[d].abs());
        }
    }
    let bound = 63.0 * 8.0 * f64::EPSILON;
    let scale = max_abs(&grad);
    assert!(
        max_abs(&force) < bound * scale,
        "total force {force:?}, largest {scale}"
    );
    assert!(
        max_abs(&torque) < bound * torque_scale,
        "total torque {torque:?}, largest {torque_scale}"
    );
}

/// Stiff Z&Ss (Tao–Owhadi eq. 19) on `Penalized::new(model, ω = 20)`, `h = 0.05`, `β = 0.4`,
/// 10⁴ steps of the 7-molecule cluster: total linear momentum is conserved to round-off.
///
/// Why exactly: `p_{k+1} − p_k = ½h M(a_k + a_{k+1})` and `M a = −∇W − βh² H a` with `H` the
/// penalty Hessian. Summed over the atoms' x (y, z) components, `Σ∇W = 0` (third law, and the
/// penalty depends on differences only) and `Σ_i H_ij = 0` for each column (translation
/// invariance of each molecule's rows), so `Σ M a = 0`. In floating point each step adds to
/// `p` the rounding of these sums and of the solve: a few ulps of the absolute impulse
/// `I_k = Σ_i |m_i (v_{k+1} − v_k)_i|` plus the rounding of the update `v + Δv`, `ε Σ_i |m_i v_i|`.
/// Accumulated, `|p_K − p_0| ≤ c ε Σ_k (I_k + Σ_i |m_i v_i|)`; the test takes `c = 16` (a
/// 9 × 9 solve with a condition number of ~20 and sums of ~63 terms, errors of random sign),
/// and reports the measured drift beside the bound.
#[test]
fn stiff_zss_conserves_linear_momentum_to_round_off() {
    let model = WaterCluster::new(7).expect("7 molecules");
    let (q, v) = model.initial_cluster(BETA_T, 2014);
    let masses = model.masses();
    let penalized = Penalized::new(model, 20.0);
    let mut zss = SparseZhangSkeelStiff::new(&penalized, 0.05)
        .and_then(|z| z.with_beta(0.4))
        .expect("a valid step size and β");
    let mut state = DynState::new(0.0, q, v);
    let p0 = penalized.model.linear_momentum(&state.v);
    let mut budget = 0.0;
    let mut previous = state.v.clone();
    for _ in 0..10_000 {
        zss.step(&penalized, &mut state).expect("a step");
        for ((m, v), u) in masses.iter().zip(&state.v).zip(&previous) {
            budget += m * (v - u).abs() + m * v.abs();
        }
        previous.copy_from_slice(&state.v);
    }
    let p = penalized.model.linear_momentum(&state.v);
    let drift = (0..3).map(|d| (p[d] - p0[d]).abs()).fold(0.0, f64::max);
    let bound = 16.0 * f64::EPSILON * budget;
    println!("linear momentum drift {drift:.3e} (bound {bound:.3e}, |p0| = {p0:?})");
    assert!(drift < bound, "drift {drift:e} ≥ bound {bound:e}");
    // The molecules stayed molecules. At kT = 1/50 equipartition gives the penalty modes
    // |g| ~ √kT/ω ≈ 7e-3 Å², but Z&Ss at hω ≈ 4.3 (the H–H mode) heats them (see
    // examples/water.rs), and |g| reaches ~0.1 Å² over these 10⁴ steps, its exact value
    // depending on round-off along a chaotic trajectory. 0.25 Å² keeps every bond within ~13 %
    // of its length: a check that nothing blew up, not a tolerance of the scheme.
    let mut g = vec![0.0; penalized.model.constraint_count()];
    let mut jac = vec![0.0; penalized.model.jacobian_pattern().len()];
    penalized
        .model
        .constraints_and_jacobian(&state.q, 0.0, &mut g, &mut jac);
    assert!(
        max_abs(&g) < 0.25,
        "rows of the rigid geometry: {}",
        max_abs(&g)
    );
}

use mechanism::runtime::reference::water_pairs::{hand_written, KC};

/// The generated potential and forces equal the hand-written all-pairs loop to `1e-12`
/// relative (the energy relative to the sum of the terms' magnitudes would be tighter; the
/// potential itself is a sum of terms of both signs, so its scale is its largest term).
#[test]
fn the_generated_pair_potential_equals_a_hand_written_loop() {
    for (n, seed) in [(2, 1), (7, 2), (12, 3)] {
        let model = WaterCluster::new(n).expect("a cluster");
        let q = perturbed_cluster(&model, 0.05, seed);
        let (mut generated, mut reference) = (vec![0.0; q.len()], vec![0.0; q.len()]);
        model.potential_gradient(&q, &mut generated);
        let energy = hand_written(&q, &mut reference);
        let v = model.potential(&q);
        let energy_scale = energy.abs().max(KC * 0.834 * 0.834 / 2.0);
        assert!(
            (v - energy).abs() < 1e-12 * energy_scale,
            "N = {n}: V {v} vs {energy}"
        );
        let scale = max_abs(&reference);
        for (k, (g, r)) in generated.iter().zip(&reference).enumerate() {
            assert!(
                (g - r).abs() < 1e-12 * scale,
                "N = {n}: ∂V/∂q{k}: {g} vs {r}"
            );
        }
    }
}

/// The rigid projection of the start keeps each molecule's momentum and makes the velocity
/// tangent to the constraints: `G v = 0` to round-off at the exact geometry.
#[test]
fn rigid_projection_is_tangent_to_the_constraints() {
    let model = WaterCluster::new(7).expect("7 molecules");
    let (q, mut v) = model.initial_cluster(BETA_T, 5);
    let p0 = model.linear_momentum(&v);
    model.project_rigid(&q, &mut v);
    let p = model.linear_momentum(&v);
    assert!(
        (0..3).all(|d| (p[d] - p0[d]).abs() < 1e-14),
        "{p:?} vs {p0:?}"
    );
    let mut g = vec![0.0; model.constraint_count()];
    let mut jac = vec![0.0; model.jacobian_pattern().len()];
    model.constraints_and_jacobian(&q, 0.0, &mut g, &mut jac);
    assert!(
        max_abs(&g) < 1e-13,
        "the start is at the exact geometry: {}",
        max_abs(&g)
    );
    let mut gv = vec![0.0; g.len()];
    for (&(row, col), value) in model.jacobian_pattern().iter().zip(&jac) {
        gv[row] += value * v[col];
    }
    assert!(max_abs(&gv) < 1e-13 * max_abs(&v), "G v = {gv:?}");
}

/// At `N = 100` (4 950 molecule pairs) the generated forces, the penalty Hessian and the steps
/// of GLA around stiff Z&Ss and around RATTLE allocate nothing.
#[test]
fn forces_and_steps_at_n_100_allocate_nothing() {
    let model = WaterCluster::new(100).expect("100 molecules");
    let (q, mut v) = model.initial_cluster(BETA_T, 9);
    model.project_rigid(&q, &mut v);
    let mut grad = vec![0.0; q.len()];
    let mut hess = vec![0.0; model.penalty_hessian_pattern().len()];
    let penalized = Penalized::new(model.clone(), 20.0);
    let (h, gamma, kt) = (0.05, 0.01, 1.0 / BETA_T);
    let inner = SparseZhangSkeelStiff::new(&penalized, h).expect("a step size");
    let mut zss = SparseLangevin::new(&penalized, inner, h, gamma, kt, 1).expect("GLA");
    let inner = SparseRattle::new(&model, h).expect("a step size");
    let mut rattle = SparseLangevin::new(&model, inner, h, gamma, kt, 1).expect("GLA");
    let (mut a, mut b) = (
        DynState::new(0.0, q.clone(), v.clone()),
        DynState::new(0.0, q, v),
    );
    zss.step(&penalized, &mut a).expect("a step");
    rattle.step(&model, &mut b).expect("a step");
    let before = crate::support::allocations();
    for _ in 0..3 {
        model.potential_gradient(&a.q, &mut grad);
        model.penalized_potential_gradient(20.0, &a.q, &mut grad);
        model.penalty_hessian(20.0, &a.q, &mut hess);
        zss.step(&penalized, &mut a).expect("a step");
        rattle.step(&model, &mut b).expect("a step");
    }
    assert_eq!(
        crate::support::allocations() - before,
        0,
        "forces or steps allocated"
    );
}

/// Runs GLA with friction `gamma` around `inner` on `model` for `steps` steps from `state` and
/// returns `2T/f` (the kinetic temperature in units of `kT = 1/β`) averaged over the steps
/// after the first tenth, with its batch-means error (20 batches).
fn kinetic_temperature<Model, I>(
    model: &Model,
    inner: I,
    state: &mut DynState,
    (h, gamma, steps, dof): (f64, f64, usize, usize),
) -> mechanism::runtime::simulation::Estimate
where
    Model: SparseInertia,
    mechanism::runtime::LangevinScheme<I, DynState>: SparseIntegrator<Model>,
{
    let kt = 1.0 / BETA_T;
    let mut gla = SparseLangevin::new(model, inner, h, gamma, kt, 77).expect("GLA");
    let burn_in = steps / 10;
    let mut means = mechanism::runtime::simulation::BatchMeans::new((steps - burn_in) / 20);
    for k in 0..steps {
        gla.step(model, state).expect("a step");
        if k >= burn_in {
            means.push(2.0 * model.kinetic_energy(&state.q, &state.v) / (dof as f64 * kt));
        }
    }
    means.estimate()
}

/// A bound 7-molecule start at the exact geometry: the seeded random cluster quenched by RATTLE
/// + GLA with strong friction (`γ = 5`, 2000 steps), as `examples/water.rs` starts.
fn quenched(model: &WaterCluster) -> DynState {
    let (q, mut v) = model.initial_cluster(BETA_T, 2014);
    model.project_rigid(&q, &mut v);
    let mut state = DynState::new(0.0, q, v);
    let rattle = SparseRattle::new(model, 0.05).expect("a step size");
    kinetic_temperature(model, rattle, &mut state, (0.05, 5.0, 2000, 42));
    state
}

/// SHAKE (RATTLE) + GLA samples the target kinetic temperature of the rigid cluster (`6N`
/// degrees of freedom): `2⟨T⟩/(6N kT)` within 3 batch-means errors of 1. The friction is
/// raised to `γ = 1` (the invariant measure does not depend on it) so that 40 000 steps
/// decorrelate.
#[test]
fn shake_gla_samples_the_target_kinetic_temperature() {
    let model = WaterCluster::new(7).expect("7 molecules");
    let mut state = quenched(&model);
    let rattle = SparseRattle::new(&model, 0.05)
        .and_then(|r| r.with_tolerance(1e-10))
        .expect("a step size");
    let estimate = kinetic_temperature(&model, rattle, &mut state, (0.05, 1.0, 40_000, 42));
    println!(
        "SHAKE + GLA: 2T/(f kT) = {:.4} ± {:.4}",
        estimate.mean, estimate.error
    );
    assert!(
        (estimate.mean - 1.0).abs() < 3.0 * estimate.error,
        "{:.4} ± {:.4}",
        estimate.mean,
        estimate.error
    );
}

/// Stiff Z&Ss + GLA on the penalized cluster (`9N` degrees of freedom) samples the target
/// kinetic temperature within 3σ at `h = 0.025` (at the paper's `h = 0.05` and `γ = 0.01` it
/// is ~1.3 × too hot, the integrator's heating outpacing the weak friction: see
/// `examples/water.rs`).
#[test]
fn stiff_zss_gla_at_half_the_step_samples_the_target_kinetic_temperature() {
    let model = WaterCluster::new(7).expect("7 molecules");
    let mut state = quenched(&model);
    let penalized = Penalized::new(model, 20.0);
    let zss = SparseZhangSkeelStiff::new(&penalized, 0.025)
        .and_then(|z| z.with_beta(0.4))
        .expect("a step size");
    let estimate = kinetic_temperature(&penalized, zss, &mut state, (0.025, 1.0, 80_000, 63));
    println!(
        "Z&Ss + GLA, h = 0.025: 2T/(f kT) = {:.4} ± {:.4}",
        estimate.mean, estimate.error
    );
    assert!(
        (estimate.mean - 1.0).abs() < 3.0 * estimate.error,
        "{:.4} ± {:.4}",
        estimate.mean,
        estimate.error
    );
}

/// The same seed gives the same trajectory bit for bit.
#[test]
fn the_same_seed_gives_the_same_bytes() {
    let model = WaterCluster::new(7).expect("7 molecules");
    let penalized = Penalized::new(model, 20.0);
    let run = || {
        let (q, v) = penalized.model.initial_cluster(BETA_T, 3);
        let mut state = DynState::new(0.0, q, v);
        let zss = SparseZhangSkeelStiff::new(&penalized, 0.05).expect("a step size");
        kinetic_temperature(&penalized, zss, &mut state, (0.05, 0.01, 500, 63));
        state
    };
    let (a, b) = (run(), run());
    let bits = |x: &[f64]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&a.q), bits(&b.q));
    assert_eq!(bits(&a.v), bits(&b.v));
}
