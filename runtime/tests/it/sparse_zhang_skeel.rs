//! Verlet, Z&S, Z&Ss, stiff Z&Ss and one-iteration Newmark (both Jacobians) on the sparse
//! tier: the same trajectories as the fixed-size tier, Tao–Owhadi's chain of pendula (§4.2) against RATTLE, second order against
//! an independent reference, no allocation per step, and typed errors.

use crate::support::allocations;
use crate::support::as_fixed::{relative_distance, AsFixed};
use mechanism_runtime::model::SparseConstantMass;
use mechanism_runtime::reference::fit::loglog_slope;
use mechanism_runtime::reference::{DoublePendulum, PendulumChain, SpookLadder};
use mechanism_runtime::{
    DynState, EnergyGuard, Integrator, NewmarkOneIteration, Penalized, Rattle, Rk4,
    SparseIntegrator, SparseNewmarkOneIteration, SparseNewmarkOneIterationStiff, SparseVerlet,
    SparseZhangSkeel, SparseZhangSkeelSimplified, SparseZhangSkeelStiff, State, StepError, Verlet,
    ZhangSkeel, ZhangSkeelSimplified, ZhangSkeelStiff,
};

/// The penalty frequency of Tao–Owhadi's chain (§4.2).
const OMEGA: f64 = 20.0;

/// Returns a fixed-size state with the values of `state`.
fn fixed_state<const N: usize>(state: &DynState) -> State<N> {
    State::new(
        state.t,
        state.q.clone().try_into().unwrap(),
        state.v.clone().try_into().unwrap(),
    )
}

/// Steps `fixed` with `dense` and `model` with `sparse` from `start`, side by side, and returns
/// the largest relative distance between their states over `steps` steps.
fn follow<F, D, Model, S, const N: usize>(
    fixed: &F,
    mut dense: D,
    model: &Model,
    mut sparse: S,
    start: &DynState,
    steps: usize,
) -> f64
where
    D: Integrator<F, N>,
    S: SparseIntegrator<Model>,
{
    let mut sparse_state = start.clone();
    let mut dense_state = fixed_state::<N>(start);
    let mut distance = 0.0f64;
    for _ in 0..steps {
        dense.step(fixed, &mut dense_state).unwrap();
        sparse.step(model, &mut sparse_state).unwrap();
        distance = distance
            .max(relative_distance(&sparse_state.q, dense_state.q.as_slice()))
            .max(relative_distance(&sparse_state.v, dense_state.v.as_slice()));
    }
    distance
}

/// The integrators [`chain_tiers`] compares, in its order.
const TIERED: [&str; 6] = [
    "Verlet",
    "Z&Ss",
    "Z&S",
    "stiff Z&Ss",
    "Newmark-1",
    "Newmark-1 (stiff Jacobian)",
];

/// Compares the integrators of [`TIERED`] on both tiers on the penalized chain of
/// `links = N / 2` links: the largest relative distance of each. Gravity is linear, so the
/// stiff Hessian `Hess(½ω²|g|²)` is the whole `Hess W` and both sparse one-iteration Newmarks
/// follow the fixed-size one.
fn chain_tiers<const N: usize>(h: f64, steps: usize) -> [f64; 6] {
    let model = Penalized::new(PendulumChain::tao_owhadi(N / 2), OMEGA);
    let start = model.model.tao_owhadi_state();
    let fixed = AsFixed(&model);
    [
        follow(
            &fixed,
            Verlet::<N>::new(h).unwrap(),
            &model,
            SparseVerlet::new(&model, h).unwrap(),
            &start,
            steps,
        ),
        follow(
            &fixed,
            ZhangSkeelSimplified::<N>::new(h).unwrap(),
            &model,
            SparseZhangSkeelSimplified::new(&model, h).unwrap(),
            &start,
            steps,
        ),
        follow(
            &fixed,
            ZhangSkeel::<N>::new(h).unwrap(),
            &model,
            SparseZhangSkeel::new(&model, h).unwrap(),
            &start,
            steps,
        ),
        follow(
            &fixed,
            ZhangSkeelStiff::<N>::new(h).unwrap(),
            &model,
            SparseZhangSkeelStiff::new(&model, h).unwrap(),
            &start,
            steps,
        ),
        follow(
            &fixed,
            NewmarkOneIteration::<N>::new(h).unwrap(),
            &model,
            SparseNewmarkOneIteration::new(&model, h).unwrap(),
            &start,
            steps,
        ),
        follow(
            &fixed,
            NewmarkOneIteration::<N>::new(h).unwrap(),
            &model,
            SparseNewmarkOneIterationStiff::new(&model, h).unwrap(),
            &start,
            steps,
        ),
    ]
}

#[test]
fn sparse_tier_follows_the_fixed_size_tier_on_penalized_chains() {
    // Both tiers run the same scheme on the same equations; only the linear algebra differs
    // (dense LDLᵀ of M + βh² H and Cholesky of M against a sparse LDLᵀ), by round-off per
    // step, which the swinging chain amplifies: for 10 links (Z&Ss) the distance stays at
    // 1e-16 until t ≈ 3, reaches 3e-14 at t = 3.04 and 1e-12 by t = 4, then stays below
    // 6e-12 (measured). h = 0.01 keeps Verlet stable (h ω |∇g| ≈ 0.9 < 2) and 1000 steps cover
    // T = 10; the bound 1e-11 is that plateau with a margin, far below any difference of
    // scheme (a step's O(h³) = 1e-6).
    for (links, distances) in [
        (2, chain_tiers::<4>(0.01, 1000)),
        (5, chain_tiers::<10>(0.01, 1000)),
        (10, chain_tiers::<20>(0.01, 1000)),
    ] {
        println!("chain of {links}: {TIERED:?}: {distances:?}");
        for (name, distance) in TIERED.iter().zip(distances) {
            assert!(distance < 1e-11, "{name}, chain of {links}: {distance:e}");
        }
    }
}

#[test]
fn sparse_tier_follows_the_fixed_size_tier_on_the_penalized_ladder() {
    // L = 1: 4 rods, 16 coordinates, 14 penalized rows (unit rows quadratic, joints linear),
    // ω = 20, h = 1/600 for 1000 steps (T = 1.67 s of the falling ladder, as for SPOOK in
    // `sparse_spook.rs`, before its chaotic amplification of round-off).
    let model = Penalized::new(SpookLadder::new(1), OMEGA);
    let start = model.model.horizontal_state();
    let fixed = AsFixed(&model);
    let h = 1.0 / 600.0;
    let distances = [
        follow(
            &fixed,
            Verlet::<16>::new(h).unwrap(),
            &model,
            SparseVerlet::new(&model, h).unwrap(),
            &start,
            1000,
        ),
        follow(
            &fixed,
            ZhangSkeelSimplified::<16>::new(h).unwrap(),
            &model,
            SparseZhangSkeelSimplified::new(&model, h).unwrap(),
            &start,
            1000,
        ),
        follow(
            &fixed,
            ZhangSkeel::<16>::new(h).unwrap(),
            &model,
            SparseZhangSkeel::new(&model, h).unwrap(),
            &start,
            1000,
        ),
        follow(
            &fixed,
            ZhangSkeelStiff::<16>::new(h).unwrap(),
            &model,
            SparseZhangSkeelStiff::new(&model, h).unwrap(),
            &start,
            1000,
        ),
    ];
    println!("ladder of 1: Verlet, Z&Ss, Z&S, stiff Z&Ss: {distances:?}");
    for (name, distance) in ["Verlet", "Z&Ss", "Z&S", "stiff Z&Ss"]
        .iter()
        .zip(distances)
    {
        assert!(distance < 1e-12, "{name}, ladder of 1: {distance:e}");
    }
}

#[test]
fn tao_owhadi_chain_agrees_with_rattle() {
    // EXPERIMENTS-M2 §C: n = 10, ω = 20, β = 0.4, Z&S at h = 0.05 on the penalized chain,
    // RATTLE at h = 0.025 on the constrained one (V = +Σy, C1), T = 50. The penalty replaces
    // each rod by a spring of frequency ω ≈ 20 that stretches by |g| ≈ 1e-2 under the chain's
    // tension (measured below), a model error of that order in the positions; RATTLE's own
    // error at h = 0.025 is 2e-3 (its h = 0.05 run differs by that). The pilot measured
    // max |Δq| = 0.034; the bound 0.05 allows that plus the two schemes' O(h²) errors, and a
    // wrong scheme (e.g. a sign of the correction, or first order) misses it by far.
    let chain = PendulumChain::tao_owhadi(10);
    let model = Penalized::new(chain.clone(), OMEGA);
    let (h, steps) = (0.05, 1000);
    let mut zs = SparseZhangSkeel::new(&model, h).unwrap();
    let mut zs_state = chain.tao_owhadi_state();
    let fixed = AsFixed(&chain);
    let mut rattle = Rattle::<20, 10>::new(h / 2.0).unwrap();
    let mut rattle_state = fixed_state::<20>(&zs_state);
    let (mut largest, mut violation) = (0.0f64, 0.0f64);
    let (mut g, mut jac) = (vec![0.0; 10], vec![0.0; 40]);
    use mechanism_runtime::model::SparseHolonomic;
    for _ in 0..steps {
        zs.step(&model, &mut zs_state).unwrap();
        for _ in 0..2 {
            rattle.step(&fixed, &mut rattle_state).unwrap();
        }
        assert!((zs_state.t - rattle_state.t).abs() < 1e-9);
        let distance = zs_state
            .q
            .iter()
            .zip(rattle_state.q.iter())
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        largest = largest.max(distance);
        chain.constraints_and_jacobian(&zs_state.q, 0.0, &mut g, &mut jac);
        violation = g.iter().fold(violation, |m, g| m.max(g.abs()));
    }
    println!("max |Δq| = {largest:.4}, max |g| of Z&S = {violation:.2e}");
    assert!(largest < 0.05, "max |Δq| = {largest}");
    assert!(violation < 2e-2, "max |g| = {violation}");
}

/// Returns the largest error over `t = 0.05, 0.1, …, 1` of a sparse integrator with each step
/// size in `hs` on the penalized chain of two (ω = 20), against RK4 at `h = 2.5e-5` on the
/// hand-written penalized double pendulum with the same parameters: an independent model and
/// method, whose own error (`O(h⁴)`, about 1e-8 here) is far below the errors measured.
fn errors_against_double_pendulum<S>(
    hs: &[f64],
    mut make: impl FnMut(&Penalized<PendulumChain>, f64) -> S,
) -> Vec<f64>
where
    S: SparseIntegrator<Penalized<PendulumChain>>,
{
    let pendulum = Penalized::new(
        DoublePendulum {
            m1: 1.0,
            m2: 1.0,
            l1: 5f64.sqrt(),
            l2: 5f64.sqrt(),
            g: 1.0,
        },
        OMEGA,
    );
    let model = Penalized::new(PendulumChain::tao_owhadi(2), OMEGA);
    // Start off the constraints, moving, so that the stiff springs oscillate.
    let start = DynState::new(0.0, vec![1.1, -2.0, 2.0, -4.05], vec![0.3, 0.2, -0.4, 0.1]);
    let (samples, interval) = (20, 0.05);
    let mut reference = Vec::with_capacity(samples);
    let mut state = fixed_state::<4>(&start);
    let mut rk4 = Rk4::<4>::new(2.5e-5).unwrap();
    for _ in 0..samples {
        for _ in 0..2000 {
            rk4.step(&pendulum, &mut state).unwrap();
        }
        reference.push(state.q);
    }
    hs.iter()
        .map(|&h| {
            let mut integrator = make(&model, h);
            let mut state = start.clone();
            let mut error = 0.0f64;
            for expected in &reference {
                for _ in 0..(interval / h).round() as usize {
                    integrator.step(&model, &mut state).unwrap();
                }
                error = state
                    .q
                    .iter()
                    .zip(expected.iter())
                    .fold(error, |m, (a, b)| m.max((a - b).abs()));
            }
            error
        })
        .collect()
}

#[test]
fn sparse_integrators_are_second_order() {
    let hs = [0.002, 0.001, 0.0005, 0.00025];
    let slopes = [
        (
            "Verlet",
            errors_against_double_pendulum(&hs, |m, h| SparseVerlet::new(m, h).unwrap()),
        ),
        (
            "Z&Ss",
            errors_against_double_pendulum(&hs, |m, h| {
                SparseZhangSkeelSimplified::new(m, h).unwrap()
            }),
        ),
        (
            "Z&S",
            errors_against_double_pendulum(&hs, |m, h| SparseZhangSkeel::new(m, h).unwrap()),
        ),
        (
            "stiff Z&Ss",
            errors_against_double_pendulum(&hs, |m, h| SparseZhangSkeelStiff::new(m, h).unwrap()),
        ),
        (
            "Newmark-1",
            errors_against_double_pendulum(&hs, |m, h| {
                SparseNewmarkOneIteration::new(m, h).unwrap()
            }),
        ),
        (
            "Newmark-1 (stiff Jacobian)",
            errors_against_double_pendulum(&hs, |m, h| {
                SparseNewmarkOneIterationStiff::new(m, h).unwrap()
            }),
        ),
    ];
    for (name, errors) in slopes {
        let slope = loglog_slope(&hs, &errors).unwrap();
        println!("{name}: errors {errors:?}, slope {slope:.3}");
        assert!((1.8..2.2).contains(&slope), "{name}: slope {slope}");
    }
}

/// Returns the allocations made by `steps` steps of `integrator` after one warm-up step.
fn allocations_per_run<Model, S: SparseIntegrator<Model>>(
    model: &Model,
    mut integrator: S,
    mut state: DynState,
    steps: usize,
) -> usize {
    integrator.step(model, &mut state).unwrap();
    let before = allocations();
    for _ in 0..steps {
        integrator.step(model, &mut state).unwrap();
    }
    allocations() - before
}

/// Asserts that none of the six sparse integrators allocates in a step of `model`.
fn assert_no_allocation<Model>(what: &str, model: &Model, start: &DynState, h: f64)
where
    Model: SparseConstantMass
        + mechanism_runtime::model::SparsePotentialThirdDerivative
        + mechanism_runtime::model::SparseSplitPotential,
{
    let counts = [
        allocations_per_run(
            model,
            SparseVerlet::new(model, h).unwrap(),
            start.clone(),
            20,
        ),
        allocations_per_run(
            model,
            SparseZhangSkeelSimplified::new(model, h).unwrap(),
            start.clone(),
            20,
        ),
        allocations_per_run(
            model,
            SparseZhangSkeel::new(model, h).unwrap(),
            start.clone(),
            20,
        ),
        allocations_per_run(
            model,
            SparseZhangSkeelStiff::new(model, h).unwrap(),
            start.clone(),
            20,
        ),
        allocations_per_run(
            model,
            SparseNewmarkOneIteration::new(model, h).unwrap(),
            start.clone(),
            20,
        ),
        allocations_per_run(
            model,
            SparseNewmarkOneIterationStiff::new(model, h).unwrap(),
            start.clone(),
            20,
        ),
    ];
    assert_eq!(counts, [0; 6], "{what}: {TIERED:?}");
}

#[test]
fn no_allocation_per_step() {
    let chain = Penalized::new(PendulumChain::tao_owhadi(1000), OMEGA);
    assert_no_allocation(
        "chain of 1000",
        &chain,
        &chain.model.tao_owhadi_state(),
        0.01,
    );
    let ladder = Penalized::new(SpookLadder::new(100), OMEGA);
    assert_no_allocation(
        "ladder of 100",
        &ladder,
        &ladder.model.horizontal_state(),
        1e-3,
    );
}

#[test]
fn typed_errors_and_unchanged_state() {
    let model = Penalized::new(PendulumChain::tao_owhadi(3), OMEGA);
    let start = model.model.tao_owhadi_state();
    assert!(matches!(
        SparseZhangSkeel::new(&model, 0.0),
        Err(StepError::BadStepSize { .. })
    ));
    assert!(matches!(
        SparseZhangSkeelStiff::new(&model, 0.1)
            .unwrap()
            .with_beta(f64::NAN),
        Err(StepError::BadParameter { name: "beta", .. })
    ));
    assert!(matches!(
        SparseNewmarkOneIterationStiff::new(&model, 0.1)
            .unwrap()
            .with_beta(-1.0),
        Err(StepError::BadParameter { name: "beta", .. })
    ));
    assert!(matches!(
        SparseNewmarkOneIteration::new(&model, f64::INFINITY),
        Err(StepError::BadStepSize { .. })
    ));

    // A non-finite state.
    let mut zs = SparseZhangSkeel::new(&model, 0.05).unwrap();
    let mut state = start.clone();
    state.v[3] = f64::NAN;
    assert!(matches!(
        zs.step(&model, &mut state),
        Err(StepError::NonFinite {
            quantity: "v",
            index: 3,
            ..
        })
    ));
    // A state of the wrong size, and a model the integrator was not built for.
    let mut short = DynState::new(0.0, vec![0.0; 4], vec![0.0; 4]);
    assert!(matches!(
        zs.step(&model, &mut short),
        Err(StepError::InvalidModel { .. })
    ));
    let other = Penalized::new(PendulumChain::tao_owhadi(2), OMEGA);
    let mut other_state = other.model.tao_owhadi_state();
    assert!(matches!(
        zs.step(&other, &mut other_state),
        Err(StepError::InvalidModel {
            what: "body sizes",
            ..
        })
    ));
    // A non-finite parameter is named.
    let broken = Penalized::new(PendulumChain::tao_owhadi(3), f64::INFINITY);
    let mut state = start.clone();
    let mut verlet = SparseVerlet::new(&broken, 0.01).unwrap();
    assert!(matches!(
        verlet.step(&broken, &mut state),
        Err(StepError::BadParameter { name: "omega", .. })
    ));
    assert_eq!(state, start);

    // Compressed rods (c = |d|² − l² = −3.75 < 0) make Hess W indefinite: 2ω²c = −3000 across
    // each rod, and M + βh² Hess W has a negative eigenvalue 1 − 0.4 · 0.05² · 3000 = −2.
    let two = Penalized::new(PendulumChain::tao_owhadi(2), OMEGA);
    let compressed = DynState::new(0.0, vec![0.5, -1.0, 1.0, -2.0], vec![0.0; 4]);
    for (name, result) in [
        (
            "Z&Ss",
            SparseZhangSkeelSimplified::new(&two, 0.05)
                .unwrap()
                .step(&two, &mut compressed.clone()),
        ),
        (
            "stiff Z&Ss",
            SparseZhangSkeelStiff::new(&two, 0.05)
                .unwrap()
                .step(&two, &mut compressed.clone()),
        ),
        (
            "Z&S",
            SparseZhangSkeel::new(&two, 0.05)
                .unwrap()
                .step(&two, &mut compressed.clone()),
        ),
        (
            "Newmark-1",
            SparseNewmarkOneIteration::new(&two, 0.05)
                .unwrap()
                .step(&two, &mut compressed.clone()),
        ),
        (
            "Newmark-1 (stiff Jacobian)",
            SparseNewmarkOneIterationStiff::new(&two, 0.05)
                .unwrap()
                .step(&two, &mut compressed.clone()),
        ),
    ] {
        match result {
            Err(StepError::NotPositiveDefinite { matrix, .. }) => {
                assert!(matrix.contains("positive definite"), "{name}: {matrix}")
            }
            other => panic!("{name}: expected NotPositiveDefinite, got {other:?}"),
        }
    }
    // The fixed-size tier factors the same indefinite matrix by LU instead (its step from this
    // state multiplies the energy by 1.5·10⁴, which the energy guard would refuse).
    let mut dense = ZhangSkeelSimplified::<4>::new(0.05)
        .unwrap()
        .with_energy_guard(EnergyGuard::disabled());
    let mut dense_state = fixed_state::<4>(&compressed);
    dense.step(&AsFixed(&two), &mut dense_state).unwrap();
}
