//! SPOOK on the sparse tier: the same trajectories as the fixed-size tier, an accurate solve as
//! `ε → 0`, no allocation per step, the ladder's stability and `O(h²)` violation (Lacoursière
//! 2007, §6), and typed errors for bad models and states.

use crate::support::allocations;
use crate::support::as_fixed::{relative_distance, AsFixed};
use mechanism_runtime::model::{
    Inertia, Potential, SparseAppliedForces, SparseConstantMass, SparseHolonomic, SparseInertia,
    SparseNonholonomic, SparsePotential,
};
use mechanism_runtime::reference::fit::loglog_slope;
use mechanism_runtime::reference::{DoublePendulum, PendulumChain, SpookLadder};
use mechanism_runtime::{
    DynState, Integrator, Regularization, Relaxation, SparseIntegrator, SparseSpook, Spook, State,
    StepError,
};

/// Steps `model` from `start` with the fixed-size (`N` coordinates, `M` rows) and the sparse
/// SPOOK side by side and returns the largest relative distances between their states and
/// between their multipliers over `steps` steps of `h`.
fn dense_vs_sparse<Model, const N: usize, const M: usize>(
    model: &Model,
    start: &DynState,
    h: f64,
    steps: usize,
) -> (f64, f64)
where
    Model: SparseConstantMass
        + SparsePotential
        + SparseHolonomic
        + SparseNonholonomic
        + SparseAppliedForces,
{
    let mut sparse_state = start.clone();
    let mut dense_state = State::<N>::new(
        start.t,
        start.q.clone().try_into().unwrap(),
        start.v.clone().try_into().unwrap(),
    );
    let mut sparse = SparseSpook::new(model, h).unwrap();
    let mut dense = Spook::<N, M>::new(h).unwrap();
    let fixed = AsFixed(model);
    let (mut state, mut multipliers) = (0.0f64, 0.0f64);
    for _ in 0..steps {
        sparse.step(model, &mut sparse_state).unwrap();
        dense.step(&fixed, &mut dense_state).unwrap();
        state = state
            .max(relative_distance(&sparse_state.q, dense_state.q.as_slice()))
            .max(relative_distance(&sparse_state.v, dense_state.v.as_slice()));
        multipliers = multipliers.max(relative_distance(
            sparse.multipliers(),
            dense.multipliers().as_slice(),
        ));
    }
    (state, multipliers)
}

/// Compares both tiers on the chain of Tao–Owhadi §4.2 with `M` links (`N = 2M`): the largest
/// relative distance of states and multipliers.
fn chain_dense_vs_sparse<const N: usize, const M: usize>(steps: usize, h: f64) -> f64 {
    let chain = PendulumChain::tao_owhadi(M);
    let (state, multipliers) =
        dense_vs_sparse::<_, N, M>(&chain, &chain.tao_owhadi_state(), h, steps);
    state.max(multipliers)
}

#[test]
fn sparse_tier_follows_the_fixed_size_tier_on_chains() {
    // Both tiers solve the same linear system of eq. 29, one by Schur complements, the other
    // by a sparse LDLᵀ of the whole matrix: their states differ by round-off, amplified by the
    // (damped) chain's sensitivity over 1000 steps.
    for (links, distance) in [
        (2, chain_dense_vs_sparse::<4, 2>(1000, 0.01)),
        (5, chain_dense_vs_sparse::<10, 5>(1000, 0.01)),
        (10, chain_dense_vs_sparse::<20, 10>(1000, 0.01)),
    ] {
        println!("chain of {links}: largest relative distance {distance:.2e}");
        assert!(distance < 1e-12, "chain of {links}: {distance:e}");
    }
}

/// Compares both tiers on the ladder of `links` links (`N = 12L + 4`, `M = 11L + 3`), at
/// `h = 1/600`: the largest relative distance of the states.
fn ladder_dense_vs_sparse<const N: usize, const M: usize>(links: usize, steps: usize) -> f64 {
    let ladder = SpookLadder::new(links);
    dense_vs_sparse::<_, N, M>(&ladder, &ladder.horizontal_state(), 1.0 / 600.0, steps).0
}

#[test]
fn sparse_ladder_follows_the_fixed_size_tier() {
    // L = 1: 4 rods, 16 coordinates, 14 rows; L = 2: 7 rods, 28 coordinates, 25 rows. The
    // falling ladder is chaotic: the two tiers' round-off (1e-14 per step) doubles about every
    // 0.5 s of motion, so the comparison covers 1000 steps of h = 1/600 (T = 1.67 s) before
    // that amplification, not 1000 steps of the paper's h = 1/60 (1e-5 apart by t = 16).
    for (links, distance) in [
        (1, ladder_dense_vs_sparse::<16, 14>(1, 1000)),
        (2, ladder_dense_vs_sparse::<28, 25>(2, 1000)),
    ] {
        println!("ladder of {links}: largest relative distance {distance:.2e}");
        assert!(distance < 1e-12, "ladder of {links}: {distance:e}");
    }
}

#[test]
fn sparse_chain_of_two_is_the_reference_double_pendulum() {
    // An independent model: the hand-written fixed-size double pendulum with both rods √5.
    let pendulum = DoublePendulum {
        m1: 1.0,
        m2: 1.0,
        l1: 5f64.sqrt(),
        l2: 5f64.sqrt(),
        g: 1.0,
    };
    let chain = PendulumChain::tao_owhadi(2);
    let mut sparse_state = chain.tao_owhadi_state();
    let mut dense_state = State::new(0.0, [1.0, -2.0, 2.0, -4.0], [0.0; 4]);
    let h = 0.01;
    let mut sparse = SparseSpook::new(&chain, h).unwrap();
    let mut dense = Spook::<4, 2>::new(h).unwrap();
    for _ in 0..1000 {
        sparse.step(&chain, &mut sparse_state).unwrap();
        dense.step(&pendulum, &mut dense_state).unwrap();
    }
    let distance = relative_distance(&sparse_state.q, dense_state.q.as_slice())
        .max(relative_distance(&sparse_state.v, dense_state.v.as_slice()));
    assert!(distance < 1e-12, "{distance:e}");
    let energy = chain.energy(&sparse_state.q, &sparse_state.v);
    let dense_energy = Inertia::<4>::kinetic_energy(&pendulum, &dense_state.q, &dense_state.v)
        + Potential::<4>::potential(&pendulum, &dense_state.q);
    assert!((energy - dense_energy).abs() < 1e-11 * dense_energy.abs().max(1.0));
}

/// Returns SPOOK for `model` with every holonomic row regularized by `ε` and `τ = 2h`.
fn spook_with_epsilon<Model>(model: &Model, h: f64, epsilon: f64) -> SparseSpook
where
    Model: SparseInertia + SparseHolonomic + SparseNonholonomic,
{
    let regularization = Regularization {
        epsilon,
        tau: Relaxation::Steps(2.0),
    };
    let mut spook = SparseSpook::new(model, h).unwrap();
    for row in 0..model.constraint_count() {
        spook = spook.with_regularization(row, regularization).unwrap();
    }
    spook
}

#[test]
fn ladder_solve_stays_accurate_as_epsilon_vanishes() {
    // Rows numbered after the bodies they touch keep the quasi-definite LDLᵀ accurate where a
    // fill-reducing order loses 1e-4 at ε = 1e-14 (design notes §1.7).
    for links in [20, 100] {
        let ladder = SpookLadder::new(links);
        for epsilon in [1e-8, 1e-10, 1e-12, 1e-14] {
            let mut spook = spook_with_epsilon(&ladder, 1.0 / 60.0, epsilon);
            let mut state = ladder.horizontal_state();
            let mut worst = 0.0f64;
            for _ in 0..60 {
                spook.step(&ladder, &mut state).unwrap();
                worst = worst.max(spook.system().relative_residual().unwrap());
            }
            println!("L = {links}, ε = {epsilon:e}: largest relative residual {worst:.2e}");
            assert!(worst <= 1e-10, "L = {links}, ε = {epsilon:e}: {worst:e}");
        }
    }
}

#[test]
fn sparse_steps_do_not_allocate() {
    let ladder = SpookLadder::new(100);
    let mut spook = SparseSpook::new(&ladder, 1.0 / 60.0).unwrap();
    let mut state = ladder.horizontal_state();
    spook.step(&ladder, &mut state).unwrap();
    let before = allocations();
    for _ in 0..100 {
        spook.step(&ladder, &mut state).unwrap();
    }
    assert_eq!(allocations() - before, 0, "ladder");

    let chain = PendulumChain::tao_owhadi(1000);
    let mut spook = SparseSpook::new(&chain, 0.01).unwrap();
    let mut state = chain.tao_owhadi_state();
    let before = allocations();
    for _ in 0..100 {
        spook.step(&chain, &mut state).unwrap();
    }
    assert_eq!(allocations() - before, 0, "chain");
}

/// Returns the Euclidean norm of the ladder's constraint violation at `q`.
fn violation(ladder: &SpookLadder, q: &[f64]) -> f64 {
    let mut g = vec![0.0; ladder.constraint_count()];
    let mut jac = vec![0.0; ladder.jacobian_pattern().len()];
    ladder.constraints_and_jacobian(q, 0.0, &mut g, &mut jac);
    g.iter().map(|g| g * g).sum::<f64>().sqrt()
}

#[test]
fn ladder_survives_the_whiplash_at_h_one_twentieth() {
    // §6: "stable … for h as large as h = 1/20 for N = 20"; T = 30 (EXPERIMENTS-M2 §A.4).
    let ladder = SpookLadder::new(20);
    let h = 1.0 / 20.0;
    let mut spook = SparseSpook::new(&ladder, h).unwrap();
    let mut state = ladder.horizontal_state();
    let start_energy = ladder.energy(&state.q, &state.v);
    let mut worst = 0.0f64;
    for _ in 0..600 {
        spook.step(&ladder, &mut state).unwrap();
        worst = worst.max(violation(&ladder, &state.q));
    }
    let energy = ladder.energy(&state.q, &state.v);
    let rms = worst / (ladder.constraint_count() as f64).sqrt();
    println!(
        "h = 1/20, T = 30: max RMS violation {rms:.3}, E(30) − E(0) = {:.1}",
        energy - start_energy
    );
    // No blow-up: the RMS violation of the 223 rows stays below half a rod length (the pilot
    // of EXPERIMENTS-M2 §A.7 saw 0.23), and SPOOK only dissipates.
    assert!(rms < 0.5, "{rms}");
    assert!(energy <= start_energy, "{energy} > {start_energy}");
}

#[test]
fn ladder_average_violation_is_second_order() {
    // Fig. 6: "the error made on the constraint violation appears to be O(h²)".
    let ladder = SpookLadder::new(20);
    let hs = [1.0 / 60.0, 1.0 / 120.0, 1.0 / 240.0, 1.0 / 480.0];
    let averages: Vec<f64> = hs
        .iter()
        .map(|&h| {
            let mut spook = SparseSpook::new(&ladder, h).unwrap();
            let mut state = ladder.horizontal_state();
            let steps = (2.0 / h).round() as usize;
            let mut sum = 0.0;
            for _ in 0..steps {
                spook.step(&ladder, &mut state).unwrap();
                sum += violation(&ladder, &state.q);
            }
            sum / steps as f64
        })
        .collect();
    let slope = loglog_slope(&hs, &averages).unwrap();
    println!("⟨‖g‖⟩ = {averages:?}, slope {slope:.3}");
    assert!((slope - 2.0).abs() < 0.25, "slope {slope}");
}

/// The chain of two with its first rod listed twice: a rank-deficient `G`.
struct RepeatedRow {
    chain: PendulumChain,
    pattern: Vec<(usize, usize)>,
}

impl RepeatedRow {
    fn new() -> Self {
        let chain = PendulumChain::tao_owhadi(2);
        let mut pattern = chain.jacobian_pattern().to_vec();
        pattern.extend([(2, 0), (2, 1)]);
        RepeatedRow { chain, pattern }
    }
}

/// Implements the inertia and potential of a test model as those of its field `chain`.
macro_rules! chain_bodies {
    ($model:ty) => {
        impl SparseConstantMass for $model {}
        impl SparseInertia for $model {
            fn coordinate_count(&self) -> usize {
                self.chain.coordinate_count()
            }
            fn body_sizes(&self) -> &[usize] {
                self.chain.body_sizes()
            }
            fn constant_mass(&self) -> bool {
                true
            }
            fn mass_blocks(&self, q: &[f64], blocks: &mut [f64]) {
                self.chain.mass_blocks(q, blocks);
            }
            fn kinetic_energy(&self, q: &[f64], v: &[f64]) -> f64 {
                self.chain.kinetic_energy(q, v)
            }
        }
        impl SparsePotential for $model {
            fn potential(&self, q: &[f64]) -> f64 {
                self.chain.potential(q)
            }
            fn potential_gradient(&self, q: &[f64], grad: &mut [f64]) {
                self.chain.potential_gradient(q, grad);
            }
        }
    };
}

chain_bodies!(RepeatedRow);
impl SparseHolonomic for RepeatedRow {
    fn constraint_count(&self) -> usize {
        3
    }
    fn jacobian_pattern(&self) -> &[(usize, usize)] {
        &self.pattern
    }
    fn constraints_and_jacobian(&self, q: &[f64], t: f64, g: &mut [f64], jac: &mut [f64]) {
        self.chain
            .constraints_and_jacobian(q, t, &mut g[..2], &mut jac[..6]);
        g[2] = g[0];
        jac[6] = jac[0];
        jac[7] = jac[1];
    }
}
impl SparseNonholonomic for RepeatedRow {}
impl SparseAppliedForces for RepeatedRow {}

#[test]
fn redundant_ideal_rows_fail_with_a_pivot_error_and_regularized_ones_step() {
    let model = RepeatedRow::new();
    let start = model.chain.tao_owhadi_state();
    // With ε > 0 SPOOK tolerates the repeated row (Theorem 5.1).
    let mut spook = SparseSpook::new(&model, 0.01).unwrap();
    let mut state = start.clone();
    for _ in 0..100 {
        spook.step(&model, &mut state).unwrap();
    }
    // With ε = 0 the matrix is singular: a typed error naming the matrix, state unchanged.
    let mut spook = spook_with_epsilon(&model, 0.01, 0.0);
    let mut state = start.clone();
    let err = spook.step(&model, &mut state).unwrap_err();
    assert!(
        matches!(
            err,
            StepError::Singular {
                matrix: "SPOOK matrix [[M, Gᵀ, Aᵀ], [G, −Σ, 0], [A, 0, −Γ]]",
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(state, start);
}

#[test]
fn bad_states_and_foreign_models_are_typed_errors() {
    let ladder = SpookLadder::new(2);
    let mut spook = SparseSpook::new(&ladder, 0.01).unwrap();
    let good = ladder.horizontal_state();

    let mut state = good.clone();
    state.v[3] = f64::NAN;
    let err = spook.step(&ladder, &mut state).unwrap_err();
    assert!(
        matches!(
            err,
            StepError::NonFinite {
                quantity: "v",
                index: 3,
                ..
            }
        ),
        "{err}"
    );

    let mut state = DynState::new(0.0, vec![0.0; 3], vec![0.0; 3]);
    let err = spook.step(&ladder, &mut state).unwrap_err();
    assert!(
        matches!(
            err,
            StepError::InvalidModel {
                what: "state q",
                ..
            }
        ),
        "{err}"
    );

    let other = SpookLadder::new(3);
    let mut state = other.horizontal_state();
    let err = spook.step(&other, &mut state).unwrap_err();
    assert!(
        matches!(
            err,
            StepError::InvalidModel {
                what: "body sizes",
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(state, other.horizontal_state());

    for h in [0.0, -1.0, f64::NAN] {
        assert!(matches!(
            SparseSpook::new(&ladder, h),
            Err(StepError::BadStepSize { .. })
        ));
    }
}

/// The chain of three with the last bob's horizontal velocity driven, `ẋ₂ = w(t) = ½ cos t`, as
/// a nonholonomic row, and a compliance of its own.
struct DrivenChain {
    chain: PendulumChain,
    drive_pattern: [(usize, usize); 1],
}

impl DrivenChain {
    fn new() -> Self {
        DrivenChain {
            chain: PendulumChain::tao_owhadi(3),
            drive_pattern: [(0, 4)],
        }
    }
}

chain_bodies!(DrivenChain);
impl SparseHolonomic for DrivenChain {
    fn constraint_count(&self) -> usize {
        3
    }
    fn jacobian_pattern(&self) -> &[(usize, usize)] {
        self.chain.jacobian_pattern()
    }
    fn constraints_and_jacobian(&self, q: &[f64], t: f64, g: &mut [f64], jac: &mut [f64]) {
        self.chain.constraints_and_jacobian(q, t, g, jac);
    }
}
impl SparseNonholonomic for DrivenChain {
    fn nonholonomic_count(&self) -> usize {
        1
    }
    fn nonholonomic_pattern(&self) -> &[(usize, usize)] {
        &self.drive_pattern
    }
    fn nonholonomic_matrix(&self, _q: &[f64], a: &mut [f64]) {
        a[0] = 1.0;
    }
    fn nonholonomic_drive(&self, t: f64, w: &mut [f64]) {
        w[0] = 0.5 * t.cos();
    }
    fn nonholonomic_compliance(&self, _row: usize) -> f64 {
        1e-6
    }
}
impl SparseAppliedForces for DrivenChain {}

#[test]
fn sparse_nonholonomic_rows_follow_the_fixed_size_tier_and_their_drive() {
    let model = DrivenChain::new();
    let h = 1e-3;
    let mut sparse_state = model.chain.tao_owhadi_state();
    let mut dense_state =
        State::<6>::new(0.0, sparse_state.q.clone().try_into().unwrap(), [0.0; 6]);
    let mut sparse = SparseSpook::new(&model, h).unwrap();
    let mut dense = Spook::<6, 3, 1>::new(h).unwrap();
    let fixed = AsFixed(&model);
    let mut distance = 0.0f64;
    for _ in 0..1000 {
        let t = sparse_state.t;
        sparse.step(&model, &mut sparse_state).unwrap();
        dense.step(&fixed, &mut dense_state).unwrap();
        distance = distance
            .max(relative_distance(&sparse_state.q, dense_state.q.as_slice()))
            .max(relative_distance(&sparse_state.v, dense_state.v.as_slice()))
            .max(relative_distance(
                sparse.nonholonomic_multipliers(),
                dense.nonholonomic_multipliers().as_slice(),
            ));
        // Eq. 29's row A v_{k+1} + (γ/h) α = w(t_k) holds to round-off.
        let alpha = sparse.nonholonomic_multipliers()[0];
        let row = sparse_state.v[4] + 1e-6 / h * alpha - 0.5 * t.cos();
        assert!(row.abs() < 1e-12, "{row:e}");
    }
    println!("driven chain: largest relative distance {distance:.2e}");
    assert!(distance < 1e-12, "{distance:e}");
}
