//! The sparse tier's SHAKE and RATTLE follow the fixed-size tier's step by step on chains and
//! ladders (states and multipliers to `1e-12`), every step meeting the Newton tolerance.

use crate::support::as_fixed::{relative_distance, AsFixed};
use mechanism_runtime::model::{SparseConstantMass, SparseHolonomic, SparsePotential};
use mechanism_runtime::reference::{PendulumChain, SpookLadder};
use mechanism_runtime::{
    DynState, Integrator, Rattle, Shake, SparseIntegrator, SparseRattle, SparseShake,
};

use super::{fixed_state, residuals};

/// The default Newton tolerance factor of SHAKE and RATTLE.
const TOLERANCE: f64 = 1e-13;

/// The largest distances between the tiers over a run: states, multipliers, and the
/// residuals of the sparse tier.
///
/// Multipliers are compared as the displacements `h² λ` they cause, relative to the
/// configuration's size: Newton solves for `μ = h² λ` (SHAKE; `½ h² λ` in RATTLE), which is
/// determined to the round-off of `q`, so `λ` itself carries that round-off amplified by `1/h²`
/// (1e-11 relative on the chain of two at `h = 0.01`, and far more where `G M⁻¹ Gᵀ` is ill
/// conditioned).
#[derive(Debug, Default)]
struct Comparison {
    state: f64,
    multipliers: f64,
    position_residual: f64,
    velocity_residual: f64,
}

/// Steps `model` from `start` with the fixed-size (`N` coordinates, `M` rows) and the sparse
/// SHAKE side by side (both started with `stagger_velocity`) for `steps` steps of `h`.
fn shake_tiers<Model, const N: usize, const M: usize>(
    model: &Model,
    start: &DynState,
    h: f64,
    steps: usize,
) -> Comparison
where
    Model: SparseConstantMass + SparsePotential + SparseHolonomic,
{
    let fixed = AsFixed(model);
    let mut sparse_state = start.clone();
    let mut dense_state = fixed_state::<N>(start);
    let mut sparse = SparseShake::new(model, h).unwrap();
    let mut dense = Shake::<N, M>::new(h).unwrap();
    sparse.stagger_velocity(model, &mut sparse_state).unwrap();
    dense.stagger_velocity(&fixed, &mut dense_state).unwrap();
    let mut comparison = Comparison::default();
    for _ in 0..steps {
        sparse.step(model, &mut sparse_state).unwrap();
        dense.step(&fixed, &mut dense_state).unwrap();
        // SHAKE's velocity is the difference quotient (q_{k+1} − q_k)/h, determined to the
        // round-off of q divided by h: compare it as the displacement h v.
        comparison.state = comparison
            .state
            .max(relative_distance(&sparse_state.q, dense_state.q.as_slice()))
            .max(displacement_distance(
                &sparse_state.v,
                dense_state.v.as_slice(),
                h.sqrt(),
                &sparse_state.q,
            ));
        comparison.multipliers = comparison.multipliers.max(displacement_distance(
            sparse.multipliers(),
            dense.multipliers().as_slice(),
            h,
            &sparse_state.q,
        ));
        let (g, _) = residuals(model, &sparse_state.q, &sparse_state.v);
        comparison.position_residual = comparison.position_residual.max(g);
    }
    comparison
}

/// As [`shake_tiers`] for RATTLE, comparing also the velocity and averaged multipliers.
fn rattle_tiers<Model, const N: usize, const M: usize>(
    model: &Model,
    start: &DynState,
    h: f64,
    steps: usize,
) -> Comparison
where
    Model: SparseConstantMass + SparsePotential + SparseHolonomic,
{
    let fixed = AsFixed(model);
    let mut sparse_state = start.clone();
    let mut dense_state = fixed_state::<N>(start);
    let mut sparse = SparseRattle::new(model, h).unwrap();
    let mut dense = Rattle::<N, M>::new(h).unwrap();
    let mut comparison = Comparison::default();
    for _ in 0..steps {
        sparse.step(model, &mut sparse_state).unwrap();
        dense.step(&fixed, &mut dense_state).unwrap();
        comparison.state = comparison
            .state
            .max(relative_distance(&sparse_state.q, dense_state.q.as_slice()))
            .max(relative_distance(&sparse_state.v, dense_state.v.as_slice()));
        let q = &sparse_state.q;
        let mut multipliers =
            displacement_distance(sparse.multipliers(), dense.multipliers().as_slice(), h, q).max(
                displacement_distance(
                    sparse.velocity_multipliers(),
                    dense.velocity_multipliers().as_slice(),
                    h,
                    q,
                ),
            );
        match (sparse.averaged_multipliers(), dense.averaged_multipliers()) {
            (Some(s), Some(d)) => {
                multipliers = multipliers.max(displacement_distance(s, d.as_slice(), h, q))
            }
            (None, None) => {}
            _ => multipliers = f64::INFINITY,
        }
        comparison.multipliers = comparison.multipliers.max(multipliers);
        let (g, gv) = residuals(model, &sparse_state.q, &sparse_state.v);
        comparison.position_residual = comparison.position_residual.max(g);
        comparison.velocity_residual = comparison.velocity_residual.max(gv);
    }
    comparison
}

/// Returns `h² max_i |a_i − b_i| / max(1, |q|∞)`: the distance of two multiplier vectors
/// (or, with `√h` for `h`, of two velocities) as the displacements they cause over a step,
/// relative to the configuration.
fn displacement_distance(a: &[f64], b: &[f64], h: f64, q: &[f64]) -> f64 {
    let scale = q.iter().fold(1.0f64, |m, x| m.max(x.abs()));
    let distance = a
        .iter()
        .zip(b)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    h * h * distance / scale
}

/// Asserts that both tiers agree to `1e-12` (states and multipliers) and that every sparse
/// step met the Newton tolerance (and, for RATTLE, `G v = 0` to round-off).
fn assert_tiers_agree(label: &str, comparison: &Comparison, rattle: bool) {
    println!(
        "{label}: states {:.2e}, multipliers {:.2e}, |g|/(1+s) {:.2e}, |Gv|/(1+s_v) {:.2e}",
        comparison.state,
        comparison.multipliers,
        comparison.position_residual,
        comparison.velocity_residual
    );
    assert!(comparison.state < 1e-12, "{label}: {comparison:?}");
    assert!(comparison.multipliers < 1e-12, "{label}: {comparison:?}");
    // Newton stops at |g| ≤ τ(1 + s); the residual is re-evaluated here, so allow its rounding.
    assert!(
        comparison.position_residual <= 2.0 * TOLERANCE,
        "{label}: {comparison:?}"
    );
    if rattle {
        assert!(
            comparison.velocity_residual < 1e-13,
            "{label}: {comparison:?}"
        );
    }
}

#[test]
fn sparse_tier_follows_the_fixed_size_tier_on_chains() {
    // Both tiers solve the same equations with the same Newton iteration; their linear algebra
    // differs (dense LU with pivoting and Cholesky vs. a sparse LU without pivoting, per-body
    // sums), so they differ by round-off amplified over 1000 steps.
    fn chain<const N: usize, const M: usize>() {
        let chain = PendulumChain::tao_owhadi(M);
        let start = chain.tao_owhadi_state();
        let label = format!("chain of {M}");
        let shake = shake_tiers::<_, N, M>(&chain, &start, 0.01, 1000);
        assert_tiers_agree(&format!("SHAKE, {label}"), &shake, false);
        let rattle = rattle_tiers::<_, N, M>(&chain, &start, 0.01, 1000);
        assert_tiers_agree(&format!("RATTLE, {label}"), &rattle, true);
    }
    chain::<4, 2>();
    chain::<10, 5>();
    chain::<20, 10>();
}

#[test]
fn sparse_ladder_follows_the_fixed_size_tier() {
    // L = 1: 4 rods, 16 coordinates, 14 rows; L = 2: 7 rods, 28 coordinates, 25 rows. Their
    // rows are independent at the horizontal start: the condition number of G M⁻¹ Gᵀ is 40
    // (L = 1), 140 (L = 2), 3e3 (L = 10). But the falling ladder approaches collapsed,
    // nearly singular configurations (for L = 2 the condition number grows to 3e6 at
    // t ≈ 0.83 s, for L = 1 the multipliers jump to 7e6 at t ≈ 0.91 s), where the tiers'
    // round-off is amplified by that condition number. The comparison covers the 400 steps of
    // h = 1/600 before (T = 0.67 s, condition number below 250). RATTLE steps on through
    // those events at h = 1/600 (20 000 steps for L = 1, 2 and 20); at h = 1/60 its Newton
    // iteration fails there with `NewtonDiverged` (L = 20 at t = 6.3), a typed error.
    let (h, steps) = (1.0 / 600.0, 400);
    let ladder = SpookLadder::new(1);
    let start = ladder.horizontal_state();
    assert_tiers_agree(
        "SHAKE, ladder of 1",
        &shake_tiers::<_, 16, 14>(&ladder, &start, h, steps),
        false,
    );
    assert_tiers_agree(
        "RATTLE, ladder of 1",
        &rattle_tiers::<_, 16, 14>(&ladder, &start, h, steps),
        true,
    );
    let ladder = SpookLadder::new(2);
    let start = ladder.horizontal_state();
    assert_tiers_agree(
        "SHAKE, ladder of 2",
        &shake_tiers::<_, 28, 25>(&ladder, &start, h, steps),
        false,
    );
    assert_tiers_agree(
        "RATTLE, ladder of 2",
        &rattle_tiers::<_, 28, 25>(&ladder, &start, h, steps),
        true,
    );
}
