//! The exact Jacobians of a push-forward Newmark step on the fixed-size tier, in the state and
//! in the model's parameters (Tao–Owhadi 2014, Integrator 3, eq. 14).
//!
//! Push-forward Newmark is the carried update (`x' = x + h v + ½h² a(x)`,
//! `v' = v + ½h (a(x) + a(x'))`) with the acceleration defined by the nonlinear equation
//! `F(a, x; p) = M a + ∇V(x + βh² a) = 0`, which the step solves by Newton. By the implicit
//! function theorem on that converged equation (not on the iteration), with `y = x + βh² a`,
//! `K = M + βh² ∇²V(y)` (Newton's own matrix) and `M` constant,
//!
//! ```text
//! A   = ∂a/∂x   = −K⁻¹ ∇²V(y)
//! A_p = ∂a/∂p_j = −K⁻¹ (M_j a + ∂∇V/∂p_j (y))
//! ```
//!
//! ([`SolvedAcceleration`], shared with Newmark). `a` is solved again at `x` and `x'` from the step's carried `a(x')` (to Newton's tolerance,
//! the accuracy the step itself has), and the tangents of the update are the chain rule
//! through `a` at both ([`carried_tangents`], shared with Verlet and Z&Ss). Unlike Z&Ss, no
//! third derivative enters: the equation holds `∇V` only.

use nalgebra::SVector;

use super::carried::dense::newton_solve;
use super::push_forward::PushForwardNewmark;
use super::solved_acceleration::SolvedAcceleration;
use crate::error::StepError;
use crate::integrators::jacobian::step_and_differentiate;
use crate::integrators::tangent::{carried_tangents, write, Tangent};
use crate::integrators::{
    DifferentiableInParameters, DifferentiableStep, Integrator, ParameterJacobian, StepJacobian,
    StepReport,
};
use crate::model::{ConstantMass, ParameterDerivatives, PotentialHessian};
use crate::state::State;

impl<Model, const N: usize> DifferentiableStep<Model, N> for PushForwardNewmark<N>
where
    Model: ConstantMass<N> + PotentialHessian<N>,
    PushForwardNewmark<N>: Integrator<Model, N>,
{
    fn step_with_jacobian(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        jacobian: &mut StepJacobian<N>,
    ) -> Result<StepReport, StepError> {
        step_and_differentiate(self, model, state, |method, before, after| {
            let mut accelerate = |x: &SVector<f64, N>, tangent: &Tangent<N, 0>| {
                let solved = method.solved_acceleration(model, x, after)?;
                Ok((solved.a, tangent.accelerate(&solved.in_state())))
            };
            let tangents = carried_tangents(method.h, before, after, &mut accelerate)?;
            write(tangents, jacobian, None, before.t)
        })
    }
}

impl<Model, const N: usize, const P: usize> DifferentiableInParameters<Model, N, P>
    for PushForwardNewmark<N>
where
    Model: ConstantMass<N> + PotentialHessian<N> + ParameterDerivatives<N, 0, 0, P>,
    PushForwardNewmark<N>: Integrator<Model, N>,
{
    fn step_with_jacobians(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        jacobian: &mut StepJacobian<N>,
        parameters: &mut ParameterJacobian<N, P>,
    ) -> Result<StepReport, StepError> {
        step_and_differentiate(self, model, state, |method, before, after| {
            let mut accelerate = |x: &SVector<f64, N>, tangent: &Tangent<N, P>| {
                let solved = method.solved_acceleration(model, x, after)?;
                let a_jacobian = solved.with_parameters(model, before.t)?;
                Ok((solved.a, tangent.accelerate(&a_jacobian)))
            };
            let tangents = carried_tangents(method.h, before, after, &mut accelerate)?;
            write(tangents, jacobian, Some(parameters), before.t)
        })
    }
}

impl<const N: usize> PushForwardNewmark<N> {
    /// Solves `M a + ∇V(x + βh² a) = 0` by the step's Newton (from the step's carried `a` at
    /// `after.q`, with its settings) and returns `a` with `A = −K⁻¹ ∇²V(y)`.
    fn solved_acceleration<Model>(
        &self,
        model: &Model,
        x: &SVector<f64, N>,
        after: &State<N>,
    ) -> Result<SolvedAcceleration<N>, StepError>
    where
        Model: ConstantMass<N> + PotentialHessian<N>,
    {
        let (t, beta_h2) = (after.t, self.beta * self.h * self.h);
        let guess = self
            .carried_at(after.q.as_slice())
            .map_or_else(SVector::zeros, SVector::from_column_slice);
        let a = newton_solve(model, x, beta_h2, guess, self.rule.newton, t)?.a;
        SolvedAcceleration::at(model, x + a * beta_h2, a, beta_h2, t)
    }
}
