//! The update of the carried schemes, one component at a time, and the accept tail of a step
//! that they share with the Newmark scheme.

use super::seams::{CarriedTier, EnergyTerms};
use crate::error::StepError;
use crate::fma::mul_add;
use crate::integrators::{EnergyWatch, TierVector};

/// The accept tail of a carried step on tier `S`, shared by
/// [`CarriedScheme`](super::CarriedScheme) and [`NewmarkScheme`](super::super::NewmarkScheme):
/// checks the energy of `(x_next, v_next)` with the guard (on failure nothing is written), then
/// writes them into `(q, v)` and makes `(x_next, a_next)` the carried configuration and
/// acceleration (the old carried vectors become the next step's scratch).
pub(crate) fn accept<Model: ?Sized, S: CarriedTier + EnergyTerms<Model>>(
    system: &mut S,
    watch: &mut EnergyWatch<S::Vector>,
    model: &Model,
    t: f64,
    (q, v): (&mut [f64], &mut [f64]),
    (x_next, v_next, a_next): (&mut S::Vector, &S::Vector, &mut S::Vector),
    (carried_x, carried_a): (&mut S::Vector, &mut S::Vector),
) -> Result<(), StepError> {
    let (x, w) = (x_next.as_slice(), v_next.as_slice());
    watch.check_and_accept(|| system.energy(model, x, w), x, t)?;
    q.copy_from_slice(x);
    v.copy_from_slice(w);
    std::mem::swap(carried_x, x_next);
    std::mem::swap(carried_a, a_next);
    Ok(())
}

/// Returns `x_{k+1} = x_k + h v_k + ½ h² a_k` for one component, as `½h²·a + (h·v + x)`
/// with each multiply-add fused where the target has FMA ([`mul_add`]): without FMA the
/// bits of `x + h v + ½ h² a` evaluated left to right, with FMA two roundings fewer and
/// two operations shorter on the chain from one step's acceleration to the next.
#[inline(always)]
pub(crate) fn next_position(x: f64, v: f64, a: f64, h: f64) -> f64 {
    mul_add(0.5 * h * h, a, mul_add(h, v, x))
}

/// Returns `v_{k+1} = v_k + ½ h (a_k + a_{k+1})` for one component, as `½h·(a + b) + v`,
/// fused where the target has FMA, as [`next_position`].
#[inline(always)]
pub(crate) fn next_velocity(v: f64, a: f64, b: f64, h: f64) -> f64 {
    mul_add(0.5 * h, a + b, v)
}
