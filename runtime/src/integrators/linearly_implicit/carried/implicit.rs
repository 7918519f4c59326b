//! The linearly implicit acceleration of Z&Ss and stiff Z&Ss ([`ImplicitAcceleration`]), and
//! the Hessians it factors with `M` ([`FullHessian`], [`StiffHessian`]).

use super::seams::{AccelerationRule, ImplicitSolve, RuleDefaults, UsesBeta};
use super::DEFAULT_BETA;
use crate::error::StepError;
use crate::integrators::checks::check_finite_slice;
use crate::integrators::StepReport;
use crate::model::GeneratedSolve;

/// Which Hessian an [`ImplicitSolve`] factors with `M`: `Hess V` (Z&S, Z&Ss) ...
#[derive(Clone, Copy, Debug, Default)]
pub struct FullHessian;

/// ... or the Hessian of the stiff part of a split potential (stiff Z&Ss).
#[derive(Clone, Copy, Debug, Default)]
pub struct StiffHessian;

/// The linearly implicit acceleration `a = −(M + βh² H)⁻¹ ∇V` with `H = Hess V` (Z&Ss,
/// eq. 18) or with the stiff Hessian (stiff Z&Ss, eq. 19), by `Which`.
#[derive(Clone, Copy, Debug, Default)]
pub struct ImplicitAcceleration<Which>(pub(crate) Which);

impl<Which: Default> RuleDefaults for ImplicitAcceleration<Which> {
    const DEFAULT_BETA: f64 = DEFAULT_BETA;
}

impl<Which> UsesBeta for ImplicitAcceleration<Which> {}

impl<Model: ?Sized, S, Which> AccelerationRule<Model, S> for ImplicitAcceleration<Which>
where
    S: ImplicitSolve<Model, Which>,
    Which: RuleName,
{
    const NAME: &'static str = Which::NAME;

    fn acceleration(
        &mut self,
        system: &mut S,
        model: &Model,
        x: &[f64],
        _guess: Option<&[f64]>,
        beta_h2: f64,
        out: &mut [f64],
        _scratch: &mut [f64],
        t: f64,
    ) -> Result<StepReport, StepError> {
        let factorizations = system.implicit_acceleration(model, x, beta_h2, out, t)?;
        check_finite_slice(out, "acceleration", t)?;
        Ok(StepReport {
            factorizations,
            newton_iterations: 0,
        })
    }

    // Always inlined, down to the generated code, so that the fast path is one function
    // with its vectors in registers (see `dense::written_if_solved`).
    #[inline(always)]
    fn generated_acceleration(
        &mut self,
        system: &mut S,
        model: &Model,
        x: &[f64],
        beta_h2: f64,
        out: &mut [f64],
        _scratch: &mut [f64],
    ) -> Option<StepReport> {
        (system.generated_implicit_acceleration(model, x, beta_h2, out) == GeneratedSolve::Solved)
            .then_some(StepReport {
                factorizations: 1,
                newton_iterations: 0,
            })
    }
}

/// The name of the method an [`ImplicitAcceleration`] with this Hessian is.
pub trait RuleName {
    /// The method's name in errors.
    const NAME: &'static str;
}

impl RuleName for FullHessian {
    const NAME: &'static str = "Z&Ss";
}

impl RuleName for StiffHessian {
    const NAME: &'static str = "stiff Z&Ss";
}
