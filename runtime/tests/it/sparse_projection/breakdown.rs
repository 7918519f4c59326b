//! Where RATTLE breaks down: in the ladder's whiplash at the paper's step, and on a long chain
//! above its stability limit (a typed error, the state kept), not below it.

use mechanism_runtime::reference::pendulum_chain::{projection_step, projection_step_limit};
use mechanism_runtime::reference::{PendulumChain, SpookLadder};
use mechanism_runtime::{DynState, SparseIntegrator, SparseRattle, StepError};

use super::residuals;

#[test]
fn rattle_breaks_down_in_the_ladders_whiplash_at_the_papers_step() {
    // Lacoursière (2007) §6: "plain SHAKE break[s] down completely when whiplash occurs", where
    // SPOOK runs (sparse_spook.rs). RATTLE has SHAKE's positions; L = 20, h = 1/60, Newton
    // tolerance 1e-10 (EXPERIMENTS-M2 §A.5): a typed error before T = 10, never Ok with nonsense.
    let ladder = SpookLadder::new(20);
    let mut rattle = SparseRattle::new(&ladder, 1.0 / 60.0)
        .unwrap()
        .with_tolerance(1e-10)
        .unwrap();
    let mut state = ladder.horizontal_state();
    let failure = (0..600).find_map(|_| rattle.step(&ladder, &mut state).err());
    println!("{failure:?} at t = {:.2}", state.t);
    assert!(
        matches!(failure, Some(StepError::NewtonDiverged { .. })),
        "{failure:?}"
    );
}

/// Runs RATTLE (tolerance `1e-12`, as the chain example) on Tao–Owhadi's chain of `links` with
/// step `h` for `⌈t_end / h⌉` steps or until the first failure; returns the last good state, the failure and
/// the most Newton iterations of a step. A failed step must leave the state unchanged.
fn chain_run(links: usize, h: f64, t_end: f64) -> (DynState, Option<StepError>, u32) {
    let chain = PendulumChain::tao_owhadi(links);
    let mut rattle = SparseRattle::new(&chain, h)
        .unwrap()
        .with_tolerance(1e-12)
        .unwrap();
    let mut state = chain.tao_owhadi_state();
    let mut most = 0;
    for _ in 0..(t_end / h).ceil() as usize {
        let before = state.clone();
        match rattle.step(&chain, &mut state) {
            Ok(report) => most = most.max(report.newton_iterations),
            Err(err) => {
                assert_eq!(state.q, before.q, "a failed step changed q");
                assert_eq!(state.v, before.v, "a failed step changed v");
                return (state, Some(err), most);
            }
        }
    }
    (state, None, most)
}

#[test]
fn rattle_runs_a_long_chain_below_its_stability_limit_and_breaks_down_above() {
    // Tao–Owhadi's chain of 10 000 at the example's former default h = 0.05 fails at
    // t = 0.10: not Newton's fault (it stalls at a positive minimum of |g| with a line search
    // too) but Verlet's stability limit across the taut chain, √(l/(n g)) = 0.0150.
    let (links, chain) = (10_000, PendulumChain::tao_owhadi(10_000));
    let limit = projection_step_limit(links, chain.length, chain.gravity);
    assert!((limit - 0.01495).abs() < 1e-4, "{limit}");
    let h = projection_step(links, chain.length, chain.gravity, 0.05);
    assert_eq!(h, 0.01, "the largest 0.05 / k below 0.8 × {limit}");
    let (state, failure, most) = chain_run(links, h, 1.0);
    assert!(failure.is_none(), "{failure:?} at t = {}", state.t);
    assert!(most <= 2, "{most} Newton iterations in a step");
    let (q_residual, v_residual) = residuals(&chain, &state.q, &state.v);
    assert!(
        q_residual < 2e-12 && v_residual < 1e-10,
        "{q_residual:e} {v_residual:e}"
    );
    // Above the limit the step's equations lose their solution: a typed error, state kept.
    for h in [0.05, 1.25 * limit] {
        let (state, failure, _) = chain_run(links, h, 1.0);
        assert!(
            matches!(failure, Some(StepError::NewtonDiverged { .. })),
            "h = {h}: {failure:?} at t = {}",
            state.t
        );
    }
}
