//! The exact Jacobians of a Newmark step on the fixed-size tier, in the state and in the
//! model's parameters (Tao–Owhadi 2014, Integrator 2, eq. 12, `γ = ½`).
//!
//! A Newmark step from `(q, v)` is
//!
//! ```text
//! q̃  = q + h v + (½ − β) h² a_k,        a_k: M a_k + ∇V(q) = 0
//! q' = q̃ + βh² a',                       a':  M a' + ∇V(q̃ + βh² a') = 0
//! v' = v + ½h (a_k + a')
//! ```
//!
//! where Newton solves for `a'` to convergence, so that `M a' = −∇V(q')`: the acceleration the
//! next step carries is `a(q')` itself, and the step is a function of `(q, v)` alone. Both
//! accelerations are [`SolvedAcceleration`]s (shared with push-forward Newmark), `a_k` at
//! `y = q` with `c = 0` and `a'` at `y = q'` with `c = βh²`; by the implicit function theorem
//! on their equations (not on Newton's iteration), with `K = M + βh² ∇²V(q')`,
//!
//! ```text
//! δa_k = −M⁻¹ (∇²V(q) δq + (M_p a_k + ∂∇V/∂p (q)) δp)
//! δq̃   = δq + h δv + (½ − β) h² δa_k
//! δa'  = −K⁻¹ (∇²V(q') δq̃ + (M_p a' + ∂∇V/∂p (q')) δp)
//! δq'  = δq̃ + βh² δa',        δv' = δv + ½h (δa_k + δa')
//! ```
//!
//! Two factorizations (`M` and `K`) serve all `2N + P` directions. Cost, measured
//! (`cargo bench --bench step -- newmark_step_jacobian`, the penalized double pendulum at
//! `ω = 20`, `h = 0.1`): 820 ns against 401 ns for the step alone (whose Newton iterates
//! factor `K` several times), about one step more. Newmark with one Newton
//! iteration per step ([`NewmarkOneIteration`](super::NewmarkOneIteration)) is not covered:
//! its carried `a'` is not `a(q')`, so its step maps `(q, v, a)`, not `(q, v)`.

use nalgebra::SVector;

use super::newmark::Newmark;
use super::solved_acceleration::SolvedAcceleration;
use crate::error::StepError;
use crate::integrators::jacobian::step_and_differentiate;
use crate::integrators::tangent::{write, AccelerationJacobian, Tangent};
use crate::integrators::{
    DifferentiableInParameters, DifferentiableStep, Integrator, ParameterJacobian, StepJacobian,
    StepReport,
};
use crate::model::{ConstantMass, ParameterDerivatives, PotentialHessian};
use crate::state::State;

impl<Model, const N: usize> DifferentiableStep<Model, N> for Newmark<N>
where
    Model: ConstantMass<N> + PotentialHessian<N>,
    Newmark<N>: Integrator<Model, N>,
{
    fn step_with_jacobian(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        jacobian: &mut StepJacobian<N>,
    ) -> Result<StepReport, StepError> {
        step_and_differentiate(self, model, state, |method, before, after| {
            let tangents = tangents(method, model, before, after, |solved| Ok(solved.in_state()))?;
            write(tangents, jacobian, None, before.t)
        })
    }
}

impl<Model, const N: usize, const P: usize> DifferentiableInParameters<Model, N, P> for Newmark<N>
where
    Model: ConstantMass<N> + PotentialHessian<N> + ParameterDerivatives<N, 0, 0, P>,
    Newmark<N>: Integrator<Model, N>,
{
    fn step_with_jacobians(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        jacobian: &mut StepJacobian<N>,
        parameters: &mut ParameterJacobian<N, P>,
    ) -> Result<StepReport, StepError> {
        step_and_differentiate(self, model, state, |method, before, after| {
            let tangents = tangents(method, model, before, after, |solved| {
                solved.with_parameters(model, before.t)
            })?;
            write(tangents, jacobian, Some(parameters), before.t)
        })
    }
}

/// Returns the tangents of `(q', v')` of the step `method` took from `before` to `after`, as
/// the module docs derive them; `derivatives` gives `A` (and `A_p`) of a solved acceleration.
fn tangents<Model, const N: usize, const P: usize>(
    method: &Newmark<N>,
    model: &Model,
    before: &State<N>,
    after: &State<N>,
    derivatives: impl Fn(&SolvedAcceleration<N>) -> Result<AccelerationJacobian<N, P>, StepError>,
) -> Result<(Tangent<N, P>, Tangent<N, P>), StepError>
where
    Model: ConstantMass<N> + PotentialHessian<N>,
{
    let (h, beta, t) = (method.step_size(), method.beta(), before.t);
    let (a_k, a_next) = method.last_accelerations();
    let start = SolvedAcceleration::at(model, before.q, SVector::from(*a_k), 0.0, t)?;
    let end = SolvedAcceleration::at(model, after.q, SVector::from(*a_next), beta * h * h, t)?;
    let (dq, dv) = (Tangent::start(true), Tangent::start(false));
    let da = dq.accelerate(&derivatives(&start)?);
    let predictor = dq.plus(h, &dv).plus((0.5 - beta) * h * h, &da);
    let da_next = predictor.accelerate(&derivatives(&end)?);
    Ok((
        predictor.plus(beta * h * h, &da_next),
        dv.plus(0.5 * h, &da).plus(0.5 * h, &da_next),
    ))
}
