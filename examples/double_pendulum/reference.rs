//! The independent reference of `--compare`: the constrained motion integrated in the angles
//! `(θ1, θ2)` of the two rods, where the constraints hold by construction, by classical RK4 —
//! [`DoublePendulum::constrained_reference`] of the hand-written model in
//! `mechanism::runtime::reference`, which shares no code with the generated model or the
//! integrators it checks.
//!
//! Tao–Owhadi's benchmark is small-step variational Euler in the same angles (their eq. 23);
//! RK4 at a step of 1e-4 is converged to round-off over t ≤ 50, which `--compare` checks by
//! halving the step.

use std::error::Error;

use mechanism::models::DoublePendulum;
use mechanism::runtime::reference::DoublePendulum as HandWritten;
use mechanism::runtime::{SVector, State};

/// Returns the reference positions at `initial.t + k·every·h` for `k = 0..=steps/every`,
/// integrating with `steps` RK4 steps of size `h` in angle coordinates.
///
/// Fails unless `initial` lies on the rods (to 1e-12), where the angles are defined.
pub fn positions_every(
    model: &DoublePendulum,
    initial: &State<4>,
    h: f64,
    steps: usize,
    every: usize,
) -> Result<Vec<SVector<f64, 4>>, Box<dyn Error>> {
    let hand = HandWritten {
        m1: model.m1,
        m2: model.m2,
        l1: model.l1,
        l2: model.l2,
        g: model.g,
    };
    let (q, every) = (&initial.q, every.max(1));
    let (dx, dy) = (q[2] - q[0], q[3] - q[1]);
    let off = (q[0].hypot(q[1]) - hand.l1)
        .abs()
        .max((dx.hypot(dy) - hand.l2).abs());
    if off > 1e-12 {
        return Err(format!("the reference needs a state on the rods, |r - l| = {off:e}").into());
    }
    let mut state = *initial;
    let mut out = vec![state.q];
    for _ in 0..steps / every {
        state = hand.constrained_reference(&state, state.t + every as f64 * h, every);
        out.push(state.q);
    }
    Ok(out)
}
