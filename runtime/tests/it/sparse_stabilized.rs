//! The stabilized Runge–Kutta methods (Ascher et al. 1995) on the sparse tier: the same
//! trajectories as the fixed-size tier, fourth order against the double pendulum in angle
//! coordinates, Baumgarte's damping of the drift, no allocation per step, and typed errors.

use crate::support::allocations;
use crate::support::as_fixed::{relative_distance, AsFixed};
use mechanism_runtime::integrators::stabilized::{
    Baumgarte, PostStabilization, SparseStabilizedRk, StabilizedRk, RK4,
};
use mechanism_runtime::model::{
    SparseAppliedForces, SparseConstantMass, SparseHolonomic, SparseHolonomicKinematics,
    SparsePotential,
};
use mechanism_runtime::reference::fit::loglog_slope;
use mechanism_runtime::reference::{DoublePendulum, PendulumChain, SpookLadder};
use mechanism_runtime::{DynState, Integrator, SparseIntegrator, State, StepError};

/// Steps `model` from `start` with the fixed-size (`N` coordinates, `M` rows) and the sparse
/// RK4 with `baumgarte` side by side; returns the largest relative distance of their states
/// over `steps` steps of `h`.
fn dense_vs_sparse<Model, const N: usize, const M: usize>(
    model: &Model,
    start: &DynState,
    h: f64,
    steps: usize,
    baumgarte: Baumgarte,
) -> f64
where
    Model: SparseConstantMass + SparsePotential + SparseHolonomicKinematics + SparseAppliedForces,
{
    let mut sparse_state = start.clone();
    let mut dense_state = State::<N>::new(
        start.t,
        start.q.clone().try_into().unwrap(),
        start.v.clone().try_into().unwrap(),
    );
    let mut sparse = SparseStabilizedRk::new(model, RK4, h)
        .unwrap()
        .with_baumgarte(baumgarte);
    let mut dense = StabilizedRk::<N, M, 4>::new(RK4, h)
        .unwrap()
        .with_baumgarte(baumgarte);
    let fixed = AsFixed(model);
    let mut distance = 0.0f64;
    for _ in 0..steps {
        sparse.step(model, &mut sparse_state).unwrap();
        dense.step(&fixed, &mut dense_state).unwrap();
        distance = distance
            .max(relative_distance(&sparse_state.q, dense_state.q.as_slice()))
            .max(relative_distance(&sparse_state.v, dense_state.v.as_slice()));
    }
    assert_eq!(sparse_state.t.to_bits(), dense_state.t.to_bits());
    distance
}

#[test]
fn sparse_tier_follows_the_fixed_size_tier() {
    // Both tiers solve eq. 1.5 at every stage, one by the Schur complement G M⁻¹ Gᵀ, the other
    // by a sparse LDLᵀ of the saddle-point matrix: their states differ by round-off, amplified
    // by the motion's sensitivity. The chains run 1000 steps of h = 0.01 from Tao–Owhadi's
    // state; the ladder 300 steps of h = 1/600 (T = 0.5 s): later its four-bar loop passes
    // close to a configuration where the rows are nearly dependent, the index-1 matrix
    // (ε = 0, unlike SPOOK's) is ill-conditioned there, and both tiers' round-off is amplified
    // to 1e-3 by step 1000 (1e-15 at step 300).
    let baumgarte = Baumgarte::critically_damped(10.0).unwrap();
    let chain = |links| PendulumChain::tao_owhadi(links);
    let cases = [
        (
            "chain of 2",
            dense_vs_sparse::<_, 4, 2>(
                &chain(2),
                &chain(2).tao_owhadi_state(),
                0.01,
                1000,
                Baumgarte::NONE,
            ),
        ),
        (
            "chain of 5, Baumgarte",
            dense_vs_sparse::<_, 10, 5>(
                &chain(5),
                &chain(5).tao_owhadi_state(),
                0.01,
                1000,
                baumgarte,
            ),
        ),
        (
            "ladder of 1, Baumgarte",
            dense_vs_sparse::<_, 16, 14>(
                &SpookLadder::new(1),
                &SpookLadder::new(1).horizontal_state(),
                1.0 / 600.0,
                300,
                baumgarte,
            ),
        ),
    ];
    for (name, distance) in cases {
        println!("{name}: largest relative distance {distance:.2e}");
        assert!(distance < 1e-12, "{name}: {distance:e}");
    }
}

#[test]
fn sparse_rk4_is_fourth_order_on_the_double_pendulum() {
    // The chain of two with both rods √5 is the double pendulum; its reference is integrated in
    // angle coordinates, where there is no constraint (DoublePendulum::constrained_reference).
    let pendulum = DoublePendulum {
        m1: 1.0,
        m2: 1.0,
        l1: 5f64.sqrt(),
        l2: 5f64.sqrt(),
        g: 1.0,
    };
    let chain = PendulumChain::tao_owhadi(2);
    let start = chain.tao_owhadi_state();
    let t_end = 2.0;
    let fixed_start = State::<4>::new(0.0, start.q.clone().try_into().unwrap(), [0.0; 4]);
    let exact = pendulum.constrained_reference(&fixed_start, t_end, 200_000);
    let hs = [0.04, 0.02, 0.01, 0.005];
    let errors: Vec<f64> = hs
        .iter()
        .map(|&h| {
            let mut rk = SparseStabilizedRk::new(&chain, RK4, h).unwrap();
            let mut state = start.clone();
            for _ in 0..(t_end / h).round() as usize {
                rk.step(&chain, &mut state).unwrap();
            }
            relative_distance(&state.q, exact.q.as_slice())
        })
        .collect();
    let slope = loglog_slope(&hs, &errors).unwrap();
    println!("errors {errors:?}, slope {slope:.2}");
    // RK4 on the index-1 ODE is fourth order; the reference's own error (RK4 with h = 1e-5)
    // is ~1e-16, far below the smallest error here.
    assert!((slope - 4.0).abs() < 0.3, "slope {slope}");
}

#[test]
fn baumgarte_rows_follow_their_closed_form() {
    // Each row of the index-1 system obeys g̈ + α1 ġ + α0 g = 0 exactly (eq. 2.1), a linear
    // ODE per row: from g(0) = g0, ġ(0) = 0 and α1 = 2γ, α0 = γ² its solution is
    // g(t) = g0 (1 + γt) e^{−γt}, and g(t) = g0 without Baumgarte. Start the chain of 10 at
    // rest with every rod 1% too long (g0 = (1.01² − 1) l²) and compare at t = 1.
    let chain = PendulumChain::tao_owhadi(10);
    let mut start = chain.tao_owhadi_state();
    start.q.iter_mut().for_each(|q| *q *= 1.01);
    let l2 = chain.length * chain.length;
    let g0 = (1.01f64 * 1.01 - 1.0) * l2;
    for gamma in [0.0, 3.0, 10.0] {
        let mut rk = SparseStabilizedRk::new(&chain, RK4, 0.001)
            .unwrap()
            .with_baumgarte(Baumgarte::critically_damped(gamma).unwrap());
        let mut state = start.clone();
        for _ in 0..1000 {
            rk.step(&chain, &mut state).unwrap();
        }
        let mut g = vec![0.0; 10];
        let mut jac = vec![0.0; chain.jacobian_pattern().len()];
        chain.constraints_and_jacobian(&state.q, state.t, &mut g, &mut jac);
        let expected = g0 * (1.0 + gamma * state.t) * (-gamma * state.t).exp();
        let error = g.iter().fold(0.0f64, |m, g| m.max((g - expected).abs()));
        println!(
            "γ = {gamma}: g(1) = {:.6e} (closed form {expected:.6e}), error {error:.1e}",
            g[9]
        );
        // RK4 with h = 1e-3 on a linear ODE with rates ≤ 10: local error (γh)⁵/120 per step.
        assert!(error < 1e-8 * g0, "γ = {gamma}: {error:e}");
    }
}

#[test]
fn sparse_steps_do_not_allocate() {
    let chain = PendulumChain::tao_owhadi(1000);
    let mut state = chain.tao_owhadi_state();
    let mut rk = SparseStabilizedRk::new(&chain, RK4, 0.01)
        .unwrap()
        .with_baumgarte(Baumgarte::critically_damped(10.0).unwrap());
    rk.step(&chain, &mut state).unwrap();
    let before = allocations();
    for _ in 0..20 {
        rk.step(&chain, &mut state).unwrap();
    }
    assert_eq!(allocations() - before, 0, "allocations in 20 steps");
}

#[test]
fn sparse_errors_are_typed() {
    let chain = PendulumChain::tao_owhadi(3);
    let start = chain.tao_owhadi_state();
    // Post-stabilization exists on the fixed-size tier only.
    let mut rk = SparseStabilizedRk::new(&chain, RK4, 0.01)
        .unwrap()
        .with_post_stabilization(PostStabilization::BothTwice);
    let mut state = start.clone();
    assert!(matches!(
        rk.step(&chain, &mut state),
        Err(StepError::Unsupported { .. })
    ));
    assert_eq!(state, start);
    // A model of other sizes than the one the integrator was built for.
    let mut rk = SparseStabilizedRk::new(&chain, RK4, 0.01).unwrap();
    let other = PendulumChain::tao_owhadi(4);
    let mut other_state = other.tao_owhadi_state();
    assert!(matches!(
        rk.step(&other, &mut other_state),
        Err(StepError::InvalidModel { .. })
    ));
    // A state of the wrong length, and a non-finite one.
    let mut short = DynState::new(0.0, vec![0.0; 4], vec![0.0; 4]);
    assert!(matches!(
        rk.step(&chain, &mut short),
        Err(StepError::InvalidModel { .. })
    ));
    let mut nan = start.clone();
    nan.v[3] = f64::NAN;
    assert!(matches!(
        rk.step(&chain, &mut nan),
        Err(StepError::NonFinite { .. })
    ));
    // A non-finite parameter is named.
    let mut broken = chain.clone();
    broken.gravity = f64::INFINITY;
    let mut state = start.clone();
    assert!(matches!(
        rk.step(&broken, &mut state),
        Err(StepError::BadParameter {
            name: "gravity",
            ..
        })
    ));
    // A step far beyond the explicit method's stability limit is a divergence, not Ok.
    let mut rk = SparseStabilizedRk::new(&chain, RK4, 5.0).unwrap();
    let mut state = start.clone();
    let result = (0..20).try_for_each(|_| rk.step(&chain, &mut state).map(|_| ()));
    assert!(
        matches!(
            result,
            Err(StepError::Diverged { .. }
                | StepError::NonFinite { .. }
                | StepError::Singular { .. })
        ),
        "{result:?}"
    );
}

#[test]
fn rk4_with_baumgarte_breaks_down_in_the_ladders_whiplash() {
    // Lacoursière (2007) §6: "Runge–Kutta fourth order with Baumgarte stabilization … break[s]
    // down completely when whiplash occurs", where SPOOK runs (sparse_spook.rs). L = 20,
    // h = 1/60, γ = 10 and γ = 1/h (EXPERIMENTS-M2 §A.5): a typed error before T = 10, never
    // an Ok with nonsense.
    let ladder = SpookLadder::new(20);
    let h = 1.0 / 60.0;
    for gamma in [10.0, 1.0 / h] {
        let mut rk = SparseStabilizedRk::new(&ladder, RK4, h)
            .unwrap()
            .with_baumgarte(Baumgarte::critically_damped(gamma).unwrap());
        let mut state = ladder.horizontal_state();
        let failure = (0..600).find_map(|_| rk.step(&ladder, &mut state).err());
        println!("γ = {gamma}: {failure:?} at t = {:.2}", state.t);
        assert!(
            matches!(
                failure,
                Some(StepError::Diverged { .. } | StepError::NonFinite { .. })
            ),
            "γ = {gamma}: {failure:?}"
        );
    }
}
