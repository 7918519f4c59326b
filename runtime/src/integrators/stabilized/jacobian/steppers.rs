//! `DifferentiableStep` and `DifferentiableInParameters` for the two stabilized Runge–Kutta
//! steppers, [`AdaptiveRk`] (an adaptive step differentiated with its size frozen) and
//! [`StabilizedRk`], over the parent module's [`differentiate`].

use nalgebra::SMatrix;

use super::super::{check_finite, AdaptiveRk, AdaptiveStep, StabilizedRk};
use super::{differentiate, linearize_step, InParameters, IndexOneJacobians, NoParameters, RkStep};
use crate::error::StepError;
use crate::integrators::jacobian::step_and_differentiate;
use crate::integrators::{
    DifferentiableInParameters, DifferentiableStep, ParameterJacobian, StepJacobian, StepReport,
};
use crate::model::{
    AppliedForces, HolonomicHessians, KinematicsJacobians, KinematicsParameterDerivatives,
    ParameterDerivatives, PotentialHessian, VelocityTermJacobians, VelocityTermParameterJacobian,
};
use crate::state::State;

impl<const N: usize, const M: usize, const S: usize> AdaptiveRk<N, M, S> {
    /// The step being differentiated: this pair's method with step size `h`.
    fn differentiated_step(&self, h: f64) -> RkStep<'_, S> {
        RkStep {
            tableau: &self.tableau().method,
            h,
            baumgarte: self.baumgarte(),
            stabilization: self.post_stabilization(),
            metric: self.metric(),
        }
    }

    /// Takes one accepted step toward `t_end` ([`step_toward`](Self::step_toward)) and writes
    /// its Jacobians at the state it started from, with the step size the controller chose held
    /// fixed: `∂(q', v')/∂(q, v)` into `jacobian` and `∂(q', v')/∂p` into `parameters`. On
    /// error `state`, both Jacobians and the integrator (its proposal and carried stage) are
    /// left unchanged.
    ///
    /// The Jacobians are the variational equations of the index-1 system (eq. 1.5 with
    /// Baumgarte's term, linearized: `M δa + Gᵀ δλ = δf − δGᵀλ − δM a`,
    /// `G δa = δφ − δG a`, solved through `G M⁻¹ Gᵀ` for every direction) integrated with the
    /// step's own stages, followed by the derivative of the post-stabilization
    /// (`δ(P r) = δD x + D (G D)⁻¹ (δr − δ(G D) x)` with `P = D (G D)⁻¹`, `x = (G D)⁻¹ r`): the
    /// exact derivative of the step map at the chosen size, as CVODES's forward sensitivities
    /// (the sensitivities take no part in the error test). The first stage is evaluated at the
    /// state the step starts from, also when the pair carries it from the step before
    /// (first same as last, evaluated before that step's stabilization: they differ by the
    /// drift it removed). A configuration-dependent `M` adds its velocity terms' derivatives
    /// ([`VelocityTermJacobians`]) and `δM a` to the right-hand side.
    ///
    /// Fails like `step_toward`, with [`StepError::Unsupported`] for `S-full`
    /// post-stabilization, and with `Singular`/`NotPositiveDefinite` if `M` or `G M⁻¹ Gᵀ` cannot
    /// be factored at a stage.
    pub fn step_toward_with_jacobians<Model, const P: usize>(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        t_end: f64,
        jacobian: &mut StepJacobian<N>,
        parameters: &mut ParameterJacobian<N, P>,
    ) -> Result<AdaptiveStep, StepError>
    where
        Model: VelocityTermJacobians<N>
            + PotentialHessian<N>
            + HolonomicHessians<N, M>
            + KinematicsJacobians<N, M>
            + AppliedForces<N>
            + ParameterDerivatives<N, M, 0, P>
            + KinematicsParameterDerivatives<N, M, P>
            + VelocityTermParameterJacobian<N, P>,
    {
        self.advance_and_differentiate(model, state, t_end, |scheme, before, after, h| {
            differentiate::<Model, InParameters<Model>, N, M, P, S>(
                model,
                &InParameters(model),
                &scheme.differentiated_step(h),
                before,
                after.t,
                jacobian,
                parameters,
            )
        })
    }

    /// [`step_toward`](Self::step_toward) on a copy of `state`, then `differentiate(scheme,
    /// before, after, h)` of the accepted step; writes the new state only when both succeed and
    /// otherwise puts the integrator back as it was (its proposal and carried stage). The
    /// adaptive twin of [`step_and_differentiate`], which cannot pass a stop time.
    fn advance_and_differentiate<Model>(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        t_end: f64,
        differentiate: impl FnOnce(&Self, &State<N>, &State<N>, f64) -> Result<(), StepError>,
    ) -> Result<AdaptiveStep, StepError>
    where
        Model: IndexOneJacobians<N, M>,
    {
        let kept = *self;
        let mut next = *state;
        let step = self.step_toward(model, &mut next, t_end)?;
        match differentiate(self, state, &next, step.h) {
            Ok(()) => {
                *state = next;
                Ok(step)
            }
            Err(error) => {
                *self = kept;
                Err(error)
            }
        }
    }
}

/// The report of an accepted adaptive step as [`Integrator::step`]'s.
///
/// [`Integrator::step`]: crate::integrators::Integrator::step
fn report(step: AdaptiveStep) -> StepReport {
    StepReport {
        factorizations: step.factorizations,
        newton_iterations: 0,
    }
}

/// One accepted adaptive step (the controller's size, as
/// [`Integrator::step`](crate::integrators::Integrator::step)), differentiated
/// with that size held fixed.
impl<Model, const N: usize, const M: usize, const S: usize> DifferentiableStep<Model, N>
    for AdaptiveRk<N, M, S>
where
    Model: VelocityTermJacobians<N>
        + PotentialHessian<N>
        + HolonomicHessians<N, M>
        + KinematicsJacobians<N, M>
        + AppliedForces<N>,
{
    fn step_with_jacobian(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        jacobian: &mut StepJacobian<N>,
    ) -> Result<StepReport, StepError> {
        self.advance_and_differentiate(model, state, f64::INFINITY, |scheme, before, after, h| {
            let mut none = ParameterJacobian::<N, 0>::default();
            differentiate::<Model, NoParameters, N, M, 0, S>(
                model,
                &NoParameters,
                &scheme.differentiated_step(h),
                before,
                after.t,
                jacobian,
                &mut none,
            )
        })
        .map(report)
    }
}

impl<Model, const N: usize, const M: usize, const S: usize, const P: usize>
    DifferentiableInParameters<Model, N, P> for AdaptiveRk<N, M, S>
where
    Model: VelocityTermJacobians<N>
        + PotentialHessian<N>
        + HolonomicHessians<N, M>
        + KinematicsJacobians<N, M>
        + AppliedForces<N>
        + ParameterDerivatives<N, M, 0, P>
        + KinematicsParameterDerivatives<N, M, P>
        + VelocityTermParameterJacobian<N, P>,
{
    fn step_with_jacobians(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        jacobian: &mut StepJacobian<N>,
        parameters: &mut ParameterJacobian<N, P>,
    ) -> Result<StepReport, StepError> {
        self.step_toward_with_jacobians(model, state, f64::INFINITY, jacobian, parameters)
            .map(report)
    }

    fn step_toward_with_jacobians(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        t_stop: f64,
        jacobian: &mut StepJacobian<N>,
        parameters: &mut ParameterJacobian<N, P>,
    ) -> Result<StepReport, StepError> {
        AdaptiveRk::step_toward_with_jacobians(self, model, state, t_stop, jacobian, parameters)
            .map(report)
    }

    fn step_toward_with_tangents<const C: usize>(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        t_stop: f64,
        tangents: (&mut SMatrix<f64, N, C>, &mut SMatrix<f64, N, C>),
        dp: &SMatrix<f64, P, C>,
    ) -> Result<StepReport, StepError> {
        let (dq, dv) = tangents;
        self.advance_and_differentiate(model, state, t_stop, |scheme, before, after, h| {
            let linearization = linearize_step::<Model, InParameters<Model>, N, M, P, S>(
                model,
                &InParameters(model),
                &scheme.differentiated_step(h),
                before,
                after.t,
            )?;
            let (q, v) = linearization.tangent(*dq, *dv, *dp);
            check_finite(&q, "tangent ∂q'", after.t)?;
            check_finite(&v, "tangent ∂v'", after.t)?;
            (*dq, *dv) = (q, v);
            Ok(())
        })
        .map(report)
    }
}

impl<const N: usize, const M: usize, const S: usize> StabilizedRk<N, M, S> {
    /// The step being differentiated: this method with its step size.
    fn differentiated_step(&self) -> RkStep<'_, S> {
        RkStep {
            tableau: self.tableau(),
            h: self.step_size(),
            baumgarte: self.baumgarte(),
            stabilization: self.post_stabilization(),
            metric: self.metric(),
        }
    }
}

/// The fixed-size tier's fixed-step method: the same stages and post-stabilization.
impl<Model, const N: usize, const M: usize, const S: usize> DifferentiableStep<Model, N>
    for StabilizedRk<N, M, S>
where
    Model: VelocityTermJacobians<N>
        + PotentialHessian<N>
        + HolonomicHessians<N, M>
        + KinematicsJacobians<N, M>
        + AppliedForces<N>,
{
    fn step_with_jacobian(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        jacobian: &mut StepJacobian<N>,
    ) -> Result<StepReport, StepError> {
        step_and_differentiate(self, model, state, |scheme, before, after| {
            let mut none = ParameterJacobian::<N, 0>::default();
            differentiate::<Model, NoParameters, N, M, 0, S>(
                model,
                &NoParameters,
                &scheme.differentiated_step(),
                before,
                after.t,
                jacobian,
                &mut none,
            )
        })
    }
}

impl<Model, const N: usize, const M: usize, const S: usize, const P: usize>
    DifferentiableInParameters<Model, N, P> for StabilizedRk<N, M, S>
where
    Model: VelocityTermJacobians<N>
        + PotentialHessian<N>
        + HolonomicHessians<N, M>
        + KinematicsJacobians<N, M>
        + AppliedForces<N>
        + ParameterDerivatives<N, M, 0, P>
        + KinematicsParameterDerivatives<N, M, P>
        + VelocityTermParameterJacobian<N, P>,
{
    fn step_with_jacobians(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        jacobian: &mut StepJacobian<N>,
        parameters: &mut ParameterJacobian<N, P>,
    ) -> Result<StepReport, StepError> {
        step_and_differentiate(self, model, state, |scheme, before, after| {
            differentiate::<Model, InParameters<Model>, N, M, P, S>(
                model,
                &InParameters(model),
                &scheme.differentiated_step(),
                before,
                after.t,
                jacobian,
                parameters,
            )
        })
    }

    fn step_toward_with_tangents<const C: usize>(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        _t_stop: f64,
        (dq, dv): (&mut SMatrix<f64, N, C>, &mut SMatrix<f64, N, C>),
        dp: &SMatrix<f64, P, C>,
    ) -> Result<StepReport, StepError> {
        step_and_differentiate(self, model, state, |scheme, before, after| {
            let linearization = linearize_step::<Model, InParameters<Model>, N, M, P, S>(
                model,
                &InParameters(model),
                &scheme.differentiated_step(),
                before,
                after.t,
            )?;
            let (q, v) = linearization.tangent(*dq, *dv, *dp);
            check_finite(&q, "tangent ∂q'", after.t)?;
            check_finite(&v, "tangent ∂v'", after.t)?;
            (*dq, *dv) = (q, v);
            Ok(())
        })
    }
}
