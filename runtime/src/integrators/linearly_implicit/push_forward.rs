//! Push-forward Newmark (Tao and Owhadi 2014, Integrator 3): Newmark in the coordinates where
//! it is symplectic, as the carried scheme with a Newton-solved acceleration.

use nalgebra::SVector;

use super::carried::dense::newton_solve;
use super::carried::{
    AccelerationRule, CarriedDense, CarriedScheme, RuleDefaults, UsesBeta, DEFAULT_BETA,
};
use super::newmark::{tolerance_rule, DEFAULT_NEWTON};
use super::{check_finite, check_state, MassFactor};
use crate::error::StepError;
use crate::integrators::newton::{newton_builders, Newton};
use crate::integrators::StepReport;
use crate::model::{Inertia, PotentialHessian};
use crate::state::State;

/// Push-forward Newmark (Tao–Owhadi 2014, Integrator 3, eq. 14): Newmark in the coordinates
/// `x = q + βh² M⁻¹ ∇V(q)` (eq. 13), where it preserves the canonical symplectic form.
///
/// For `M ẍ = −∇V(x)`, with the state's `q` holding `x`:
///
/// ```text
/// x_{k+1} = x_k + h v_k + ½ h² a_k
/// v_{k+1} = v_k + ½ h (a_k + a_{k+1})
/// a_k     = −M⁻¹ ∇V(x_k + βh² a_k)
/// ```
///
/// Symplectic, symmetric, second order, and unconditionally linearly stable if `β ≥ ¼`. The
/// map `η(q, v) = (q + βh² M⁻¹ ∇V(q), v)` conjugates it exactly to [`Newmark`](super::Newmark):
/// [`push_forward`](Self::push_forward) applies `η` and [`pull_back`](Self::pull_back) its
/// inverse `q = x + βh² a(x)`. Both differ from the identity by `O(h²)`, so either trajectory
/// approximates the exact flow to second order.
///
/// The third line is a nonlinear equation in `a_k`, `M a + ∇V(x_k + βh² a) = 0`, solved by
/// Newton's method with the Jacobian `M + βh² Hess V(x_k + βh² a)`, with the tolerance, the
/// iteration limit and the errors of [`Newmark`](super::Newmark). Its first Newton iterate from `a = 0` is the
/// Z&Ss acceleration (eq. 18, "partial Newton solve"). Newton starts from `a_k` when solving for
/// `a_{k+1}`, and from 0 when no acceleration is carried. `a_{k+1}` is carried to the next step
/// exactly as in [`ZhangSkeel`](crate::ZhangSkeel); call [`reset`](Self::reset) after changing
/// the model between steps.
///
/// It is the [`CarriedScheme`] with the acceleration [`NewtonAcceleration`] (fixed-size tier
/// only: Newton's Jacobian is dense here).
pub type PushForwardNewmark<const N: usize> = CarriedScheme<CarriedDense<N>, NewtonAcceleration>;

/// The acceleration of push-forward Newmark: `a = −M⁻¹ ∇V(x + βh² a)` solved by Newton.
#[derive(Clone, Copy, Debug)]
pub struct NewtonAcceleration {
    pub(super) newton: Newton,
}

impl Default for NewtonAcceleration {
    fn default() -> Self {
        NewtonAcceleration {
            newton: DEFAULT_NEWTON,
        }
    }
}

impl RuleDefaults for NewtonAcceleration {
    const DEFAULT_BETA: f64 = DEFAULT_BETA;
}

impl UsesBeta for NewtonAcceleration {}

impl<Model, const N: usize> AccelerationRule<Model, CarriedDense<N>> for NewtonAcceleration
where
    Model: Inertia<N> + PotentialHessian<N>,
{
    const NAME: &'static str = "push-forward Newmark";

    fn acceleration(
        &mut self,
        _system: &mut CarriedDense<N>,
        model: &Model,
        x: &[f64],
        guess: Option<&[f64]>,
        beta_h2: f64,
        out: &mut [f64],
        _scratch: &mut [f64],
        t: f64,
    ) -> Result<StepReport, StepError> {
        let guess = guess.map_or_else(SVector::zeros, SVector::from_column_slice);
        let x = SVector::<f64, N>::from_column_slice(x);
        let solve = newton_solve(model, &x, beta_h2, guess, self.newton, t)?;
        out.copy_from_slice(solve.a.as_slice());
        Ok(StepReport {
            factorizations: solve.factorizations,
            newton_iterations: solve.iterations,
        })
    }
}

newton_builders!(
    [const N: usize] PushForwardNewmark<N>,
    rule.newton,
    tolerance_rule!(),
    "1e-10",
    "50"
);

impl<const N: usize> PushForwardNewmark<N> {
    /// Returns `η(state) = (q + βh² M⁻¹ ∇V(q), v)` (eq. 13): the push-forward state of a
    /// [`Newmark`](super::Newmark) state with the same `h` and `β`.
    pub fn push_forward<Model>(
        &self,
        model: &Model,
        state: &State<N>,
    ) -> Result<State<N>, StepError>
    where
        Model: Inertia<N> + PotentialHessian<N>,
    {
        crate::integrators::checks::check_parameters(model)?;
        check_state(state)?;
        let t = state.t;
        let mut grad = SVector::<f64, N>::zeros();
        model.potential_gradient(&state.q, &mut grad);
        check_finite(&grad, "gradient", t)?;
        let (chol, _) = MassFactor::default().factor_at(model, &state.q, t)?;
        let x = state.q + chol.solve(&grad) * (self.beta * self.h * self.h);
        check_finite(&x, "q", t)?;
        Ok(State { q: x, ..*state })
    }

    /// Returns `η⁻¹(state) = (x + βh² a, v)` with `a = −M⁻¹ ∇V(x + βh² a)` solved by Newton:
    /// the [`Newmark`](super::Newmark) state of a push-forward state. Fails like a step's Newton solve.
    pub fn pull_back<Model>(&self, model: &Model, state: &State<N>) -> Result<State<N>, StepError>
    where
        Model: Inertia<N> + PotentialHessian<N>,
    {
        crate::integrators::checks::check_parameters(model)?;
        check_state(state)?;
        let beta_h2 = self.beta * self.h * self.h;
        let guess = self
            .carried_at(state.q.as_slice())
            .map_or_else(SVector::zeros, SVector::from_column_slice);
        let solve = newton_solve(model, &state.q, beta_h2, guess, self.rule.newton, state.t)?;
        let q = state.q + solve.a * beta_h2;
        check_finite(&q, "q", state.t)?;
        Ok(State { q, ..*state })
    }
}
