//! Argument and state checks shared by every integrator: each returns the typed error that
//! names what is wrong and where, so that no integrator panics or silently propagates NaN.

use nalgebra::SMatrix;

use crate::error::StepError;
use crate::model::Inertia;
use crate::state::{DynState, State};

/// Returns `BadStepSize` unless `h` is a positive finite number.
pub(crate) fn check_step_size(h: f64) -> Result<f64, StepError> {
    if h.is_finite() && h > 0.0 {
        Ok(h)
    } else {
        Err(StepError::BadStepSize { h })
    }
}

/// Returns `NonFinite` for the first non-finite component of `x`, named `quantity`.
pub(crate) fn check_finite<const R: usize, const C: usize>(
    x: &SMatrix<f64, R, C>,
    quantity: &'static str,
    t: f64,
) -> Result<(), StepError> {
    check_finite_slice(x.as_slice(), quantity, t)
}

/// Returns `NonFinite` for the first non-finite component of `x`, named `quantity`.
pub(crate) fn check_finite_slice(
    x: &[f64],
    quantity: &'static str,
    t: f64,
) -> Result<(), StepError> {
    match x.iter().position(|c| !c.is_finite()) {
        Some(index) => Err(StepError::NonFinite { quantity, index, t }),
        None => Ok(()),
    }
}

/// Returns `NonFinite` if the time or any component of `q` or `v` of `state` is not finite,
/// and `InvalidModel` unless `q` and `v` have the model's `n` components.
pub(crate) fn check_dyn_state(state: &DynState, n: usize) -> Result<(), StepError> {
    for (what, len) in [("state q", state.q.len()), ("state v", state.v.len())] {
        if len != n {
            return Err(StepError::InvalidModel {
                what,
                index: len,
                reason: "its length differs from the model's number of coordinates",
            });
        }
    }
    if !state.t.is_finite() {
        return Err(StepError::NonFinite {
            quantity: "t",
            index: 0,
            t: state.t,
        });
    }
    check_finite_slice(&state.q, "q", state.t)?;
    check_finite_slice(&state.v, "v", state.t)
}

/// Returns `NonFinite` if the time or any component of `q` or `v` of `state` is not finite.
pub(crate) fn check_state<const N: usize>(state: &State<N>) -> Result<(), StepError> {
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

/// Returns whether `a` and `b` are equal bit for bit (so `−0.0 ≠ 0.0` and `NaN = NaN`): the
/// test for "is this the state a carried quantity was computed at".
pub(crate) fn same_bits<const R: usize, const C: usize>(
    a: &SMatrix<f64, R, C>,
    b: &SMatrix<f64, R, C>,
) -> bool {
    a.iter()
        .zip(b.iter())
        .all(|(x, y)| x.to_bits() == y.to_bits())
}

/// Returns `BadParameter` unless a Newton tolerance is finite and positive.
pub(crate) fn check_tolerance(tolerance: f64) -> Result<f64, StepError> {
    if tolerance.is_finite() && tolerance > 0.0 {
        Ok(tolerance)
    } else {
        Err(StepError::BadParameter {
            name: "tolerance",
            value: tolerance,
            requirement: "must be finite and positive",
        })
    }
}

/// Returns `BadParameter` unless a Newton iteration limit is at least 1.
pub(crate) fn check_max_iterations(max_iterations: usize) -> Result<usize, StepError> {
    if max_iterations == 0 {
        Err(StepError::BadParameter {
            name: "max_iterations",
            value: 0.0,
            requirement: "must be at least 1",
        })
    } else {
        Ok(max_iterations)
    }
}

/// Returns `Unsupported` unless `Model`'s mass matrix is constant.
///
/// The schemes that step `M v̇ = −∇V + …` with `M` frozen at one configuration (SPOOK,
/// Zhang–Skeel, Newmark, SHAKE, RATTLE, the explicit ones, Cuell's) have no velocity terms
/// `∂T/∂q − Ṁ v`: with a configuration-dependent `M` they would integrate different equations
/// without any other sign of it, so they refuse such a model. `mechanism!` refuses the same
/// combinations at compile time; both read
/// [`Capabilities::varying_mass`](crate::capabilities::Capabilities::varying_mass).
pub(crate) fn check_constant_mass<Model: Inertia<N>, const N: usize>(
    integrator: &'static str,
) -> Result<(), StepError> {
    if Model::CONSTANT_MASS {
        Ok(())
    } else {
        Err(StepError::Unsupported {
            integrator,
            requirement: crate::capabilities::constant_mass_requirement(),
        })
    }
}
