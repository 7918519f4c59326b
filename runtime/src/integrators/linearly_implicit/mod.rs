//! Linearly implicit integrators: one or two linear solves per step, no Newton iteration.

mod spook;
mod zhang_skeel;

pub use spook::Spook;
pub use zhang_skeel::{ZhangSkeel, ZhangSkeelSimplified};

use nalgebra::SMatrix;

use crate::error::StepError;
use crate::linalg::Cholesky;

/// The Cholesky factor of the mass matrix, reused while a constant mass matrix is unchanged.
///
/// The cache is keyed by the matrix itself: a model whose `CONSTANT_MASS` is true is still asked
/// for `M` every step (cheap: it writes constants), and `M` is refactored whenever it differs
/// from the cached one, so swapping models or changing a mass parameter never reuses a stale
/// factor.
#[derive(Clone, Copy, Debug, Default)]
struct MassFactor<const N: usize> {
    cached: Option<(SMatrix<f64, N, N>, Cholesky<N>)>,
}

impl<const N: usize> MassFactor<N> {
    /// Returns the factor of `m` and the number of factorizations it took (0 or 1).
    fn factor(
        &mut self,
        m: &SMatrix<f64, N, N>,
        constant: bool,
        t: f64,
    ) -> Result<(Cholesky<N>, u32), StepError> {
        if constant {
            if let Some((cached, chol)) = &self.cached {
                if cached == m {
                    return Ok((*chol, 0));
                }
            }
        }
        let chol = Cholesky::try_new(m, "mass matrix", t)?;
        self.cached = constant.then_some((*m, chol));
        Ok((chol, 1))
    }
}

/// Returns `BadStepSize` unless `h` is a positive finite number.
fn check_step_size(h: f64) -> Result<f64, StepError> {
    if h.is_finite() && h > 0.0 {
        Ok(h)
    } else {
        Err(StepError::BadStepSize { h })
    }
}

/// Returns `NonFinite` for the first non-finite component of `x`, named `quantity`.
fn check_finite<const R: usize, const C: usize>(
    x: &SMatrix<f64, R, C>,
    quantity: &'static str,
    t: f64,
) -> Result<(), StepError> {
    match x.iter().position(|c| !c.is_finite()) {
        Some(index) => Err(StepError::NonFinite { quantity, index, t }),
        None => Ok(()),
    }
}

/// Returns `NonFinite` if the time or any component of `q` or `v` of `state` is not finite.
fn check_state<const N: usize>(state: &crate::state::State<N>) -> Result<(), StepError> {
    if !state.t.is_finite() {
        return Err(StepError::NonFinite {
            quantity: "t",
            index: 0,
            t: state.t,
        });
    }
    check_finite(&state.q, "q", state.t)?;
    check_finite(&state.v, "v", state.t)
}
