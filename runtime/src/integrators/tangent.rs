//! The chain rule through a step's evaluations of an acceleration `a(x)`: the tangents of the
//! explicit methods (`explicit/jacobian.rs`), of the linearly implicit Zhang–Skeel
//! simplification (`linearly_implicit/zhang_skeel_jacobian.rs`) and of push-forward Newmark
//! (`linearly_implicit/push_forward_jacobian.rs`), whose steps differ only in
//! `a(x)` and so in its derivatives `A = ∂a/∂x`, `A_p = ∂a/∂p`.

use nalgebra::{SMatrix, SVector};

use crate::error::StepError;
use crate::integrators::{ParameterJacobian, StepJacobian};
use crate::state::State;

/// `A = ∂a/∂q` and `A_p = ∂a/∂p` at one configuration.
pub(crate) struct AccelerationJacobian<const N: usize, const P: usize> {
    pub q: SMatrix<f64, N, N>,
    pub p: SMatrix<f64, N, P>,
}

/// A tangent of a step: the derivatives of one vector of `N` with respect to `(q, v, p)`.
#[derive(Clone, Copy)]
pub(crate) struct Tangent<const N: usize, const P: usize> {
    q: SMatrix<f64, N, N>,
    v: SMatrix<f64, N, N>,
    p: SMatrix<f64, N, P>,
}

impl<const N: usize, const P: usize> Tangent<N, P> {
    /// `∂q/∂(q, v, p)` or `∂v/∂(q, v, p)` at the step's start.
    pub(crate) fn start(position: bool) -> Self {
        let (identity, zero) = (SMatrix::identity(), SMatrix::zeros());
        Tangent {
            q: if position { identity } else { zero },
            v: if position { zero } else { identity },
            p: SMatrix::zeros(),
        }
    }

    /// `self + c · other`.
    pub(crate) fn plus(&self, c: f64, other: &Self) -> Self {
        Tangent {
            q: self.q + other.q * c,
            v: self.v + other.v * c,
            p: self.p + other.p * c,
        }
    }

    /// The tangent of `a(x)` for the tangent `self` of `x`: `A δx + A_p δp`.
    pub(crate) fn accelerate(&self, a: &AccelerationJacobian<N, P>) -> Self {
        Tangent {
            q: a.q * self.q,
            v: a.q * self.v,
            p: a.q * self.p + a.p,
        }
    }

    /// The tangent of `a(x)` without the parameters: `A δx`.
    pub(crate) fn accelerate_state(&self, a: &SMatrix<f64, N, N>) -> Self {
        Tangent {
            q: a * self.q,
            v: a * self.v,
            p: a * self.p,
        }
    }
}

/// Writes the tangents of `(q', v')` into the two Jacobians, after checking them.
pub(crate) fn write<const N: usize, const P: usize>(
    (q, v): (Tangent<N, P>, Tangent<N, P>),
    jacobian: &mut StepJacobian<N>,
    parameters: Option<&mut ParameterJacobian<N, P>>,
    t: f64,
) -> Result<(), StepError> {
    let state = StepJacobian {
        q_q: q.q,
        q_v: q.v,
        v_q: v.q,
        v_v: v.v,
    };
    state.check_finite(t)?;
    let by_parameter = ParameterJacobian { q_p: q.p, v_p: v.p };
    if parameters.is_some() {
        by_parameter.check_finite(t)?;
    }
    *jacobian = state;
    if let Some(parameters) = parameters {
        *parameters = by_parameter;
    }
    Ok(())
}

/// The value of `a(x)` and its tangent, for the tangent of `x`.
pub(crate) type Accelerate<'a, const N: usize, const P: usize> = dyn FnMut(&SVector<f64, N>, &Tangent<N, P>) -> Result<(SVector<f64, N>, Tangent<N, P>), StepError>
    + 'a;

/// Returns the tangents of `(q', v')` of a step of the carried update (velocity Verlet,
/// Tao–Owhadi 2014 eq. 14, 18) from `before`, which ended at `after`, with `accelerate` giving
/// `a(x)` and its tangent:
///
/// ```text
/// q' = q + h v + ½h² a(q),            v' = v + ½h (a(q) + a(q'))
/// δq' = δq + h δv + ½h² δa,           δv' = δv + ½h (δa + δa')
/// ```
///
/// with `δa = A δq + A_p δp` at `q` and `δa' = A' δq' + A'_p δp` at `q'` (the carried
/// acceleration is `a(q_k)` itself, so the step is a function of `(q_k, v_k)` alone).
pub(crate) fn carried_tangents<const N: usize, const P: usize>(
    h: f64,
    before: &State<N>,
    after: &State<N>,
    accelerate: &mut Accelerate<'_, N, P>,
) -> Result<(Tangent<N, P>, Tangent<N, P>), StepError> {
    let (dq, dv) = (Tangent::start(true), Tangent::start(false));
    let (_, da) = accelerate(&before.q, &dq)?;
    let dq_next = dq.plus(h, &dv).plus(0.5 * h * h, &da);
    let (_, da_next) = accelerate(&after.q, &dq_next)?;
    Ok((dq_next, dv.plus(0.5 * h, &da).plus(0.5 * h, &da_next)))
}
