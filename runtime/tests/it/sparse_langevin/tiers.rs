//! The two tiers with the same seed: the same path up to the round-off of their SPOOK solves,
//! and the same bits for one body.

use crate::support::as_fixed::{relative_distance, AsFixed};
use mechanism_runtime::model::{
    SparseAppliedForces, SparseConstantMass, SparseHolonomic, SparseNonholonomic, SparsePotential,
};
use mechanism_runtime::reference::PendulumChain;
use mechanism_runtime::{
    DynState, Integrator, Langevin, SparseIntegrator, SparseLangevin, SparseSpook, Spook, State,
    Verlet,
};

use super::{seed, spd3, Bodies, Drift};

/// Steps `model` from `start` with GLA around SPOOK on both tiers with the same seed and returns
/// the largest relative distance between their states over `steps` steps.
fn langevin_dense_vs_sparse<Model, const N: usize, const M: usize>(
    model: &Model,
    start: &DynState,
    h: f64,
    steps: usize,
) -> f64
where
    Model: SparseConstantMass
        + SparsePotential
        + SparseHolonomic
        + SparseNonholonomic
        + SparseAppliedForces,
{
    let (gamma, kt, seed) = (0.5, 0.2, seed(11));
    let spook = SparseSpook::new(model, h).unwrap();
    let mut sparse = SparseLangevin::new(model, spook, h, gamma, kt, seed).unwrap();
    let mut fixed = Langevin::new(Spook::<N, M>::new(h).unwrap(), h, gamma, kt, seed).unwrap();
    let mut sparse_state = start.clone();
    let mut fixed_state = State::<N>::new(
        start.t,
        start.q.clone().try_into().unwrap(),
        start.v.clone().try_into().unwrap(),
    );
    let mut distance = 0.0f64;
    for _ in 0..steps {
        sparse.step(model, &mut sparse_state).unwrap();
        fixed.step(&AsFixed(model), &mut fixed_state).unwrap();
        distance = distance
            .max(relative_distance(&sparse_state.q, fixed_state.q.as_slice()))
            .max(relative_distance(&sparse_state.v, fixed_state.v.as_slice()));
    }
    distance
}

/// Jacobi rotations never mix coordinates whose entries of `M` vanish, so the fixed-size tier's
/// eigenbasis of a block-diagonal `M` is the sparse tier's block by block, in the same order;
/// the noise is drawn in coordinate order on both. With the same seed the two tiers therefore
/// follow the same path, up to the round-off of their different SPOOK solves (which the SPOOK
/// tests bound by 1e-12 over 1000 steps without noise).
#[test]
fn both_tiers_follow_the_same_path_with_the_same_noise() {
    let chain = PendulumChain::tao_owhadi(5);
    let on_chain =
        langevin_dense_vs_sparse::<_, 10, 5>(&chain, &chain.tao_owhadi_state(), 0.01, 1000);
    let bodies = Bodies::three(1.0);
    let start = DynState::new(0.0, vec![0.5, -0.2, 0.1, 0.3, -0.4, 0.2], vec![0.0; 6]);
    let on_bodies = langevin_dense_vs_sparse::<_, 6, 0>(&bodies, &start, 0.05, 1000);
    println!(
        "GLA + SPOOK, same seed, 1000 steps: largest relative distance of the tiers' states \
         {on_chain:.1e} (chain of 5) and {on_bodies:.1e} (blocks 2, 3, 1)"
    );
    assert!(on_chain < 1e-10, "{on_chain}");
    assert!(on_bodies < 1e-10, "{on_bodies}");
}

/// One body: the sparse tier's one block is the fixed-size tier's whole `M`, decomposed by the
/// same Jacobi code, and the noise is drawn in the same order, so with the same seed both tiers
/// give the same bits (Verlet with `V = 0` is the free flight of `Drift`).
#[test]
fn one_body_gives_the_fixed_size_bits() {
    let model = Bodies {
        sizes: vec![3],
        blocks: spd3().to_vec(),
        stiffness: 0.0,
    };
    let (gamma, h, kt) = (0.6, 0.1, 0.9);
    let mut sparse = SparseLangevin::new(&model, Drift { h }, h, gamma, kt, seed(3)).unwrap();
    let mut fixed = Langevin::new(Verlet::<3>::new(h).unwrap(), h, gamma, kt, seed(3)).unwrap();
    let (q0, v0) = ([0.1, -0.2, 0.3], [1.0, 0.5, -1.5]);
    let mut a = DynState::new(0.0, q0.to_vec(), v0.to_vec());
    let mut b = State::new(0.0, q0, v0);
    for step in 0..1000 {
        sparse.step(&model, &mut a).unwrap();
        fixed.step(&AsFixed(&model), &mut b).unwrap();
        let bits = |x: &[f64]| x.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a.v), bits(b.v.as_slice()), "v at step {step}");
        assert_eq!(bits(&a.q), bits(b.q.as_slice()), "q at step {step}");
        assert_eq!(a.t.to_bits(), b.t.to_bits());
    }
}
