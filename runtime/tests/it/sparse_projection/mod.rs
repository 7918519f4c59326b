//! SHAKE and RATTLE on the sparse tier: the same trajectories as the fixed-size tier, the
//! constraints held at every step, second order against an independent reference, bounded
//! energy error on Tao–Owhadi's chain, no allocation per step, and typed errors.
//!
//! One module per claim: [`tiers`], [`convergence`], [`allocation`], [`errors`] and
//! [`breakdown`] (where RATTLE stops); the residuals and the fixed-size copy of a state they
//! share are here.

use mechanism_runtime::model::SparseHolonomic;
use mechanism_runtime::{DynState, State};

mod allocation;
mod breakdown;
mod convergence;
mod errors;
mod tiers;

/// Returns `(max_i |g_i(q)| / (1 + s), max_i |(G v)_i| / (1 + s_v))` with `s = max_i Σ_j
/// |G_ij q_j|` and `s_v = max_i Σ_j |G_ij v_j|`: the position residual against the Newton
/// tolerance's scale and the velocity residual against its own.
fn residuals<Model: SparseHolonomic>(model: &Model, q: &[f64], v: &[f64]) -> (f64, f64) {
    let m = model.constraint_count();
    let (mut g, mut jac) = (vec![0.0; m], vec![0.0; model.jacobian_pattern().len()]);
    model.constraints_and_jacobian(q, 0.0, &mut g, &mut jac);
    let (mut gv, mut sq, mut sv) = (vec![0.0; m], vec![0.0; m], vec![0.0; m]);
    for (&(row, col), a) in model.jacobian_pattern().iter().zip(&jac) {
        gv[row] += a * v[col];
        sq[row] += (a * q[col]).abs();
        sv[row] += (a * v[col]).abs();
    }
    let amax = |x: &[f64]| x.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    (amax(&g) / (1.0 + amax(&sq)), amax(&gv) / (1.0 + amax(&sv)))
}

/// Returns the fixed-size copy of `state`.
fn fixed_state<const N: usize>(state: &DynState) -> State<N> {
    State::new(
        state.t,
        state.q.clone().try_into().unwrap(),
        state.v.clone().try_into().unwrap(),
    )
}
