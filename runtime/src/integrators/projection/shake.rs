//! SHAKE (Ryckaert, Ciccotti and Berendsen 1977): constrained leapfrog Verlet.

use nalgebra::SVector;

use super::{check_finite, shared_builders, Core};
use crate::error::StepError;
use crate::integrators::explicit::{acceleration, check_state};
use crate::integrators::{Integrator, StepReport};
use crate::model::{Holonomic, Inertia, Potential};
use crate::state::State;

/// SHAKE for `M` holonomic constraints `g(q) = 0` on `N` coordinates.
///
/// From J.-P. Ryckaert, G. Ciccotti and H. J. C. Berendsen, *Numerical integration of the
/// cartesian equations of motion of a system with constraints* (J. Comput. Phys. 23, 1977), the
/// Lagrange-multiplier reference of Tao–Owhadi (2014) §4.1. It is the two-step Verlet scheme
/// `q_{k+1} − 2 q_k + q_{k−1} = −h² M⁻¹ (∇V(q_k) + G(q_k)ᵀ λ_k)` with `g(q_{k+1}) = 0`, the
/// constrained variational integrator of Lacoursière (2007) eq. 12–13. In one-step (leapfrog)
/// form, with the half-step velocity `v_{k−½} = (q_k − q_{k−1}) / h` as the state's velocity:
///
/// ```text
/// q̃       = q_k + h v_{k−½} − h² M⁻¹ ∇V(q_k)
/// q_{k+1} = q̃ − h² M⁻¹ G(q_k)ᵀ λ_k,    g(q_{k+1}, t_{k+1}) = 0
/// v_{k+½} = (q_{k+1} − q_k) / h
/// ```
///
/// so `M q̈ = −∇V(q) − G(q)ᵀ λ` is the sign convention of [`multipliers`](Self::multipliers).
/// `λ_k` is found by full Newton iteration on `μ = h² λ_k` (an LU factorization of
/// `G(q⁽ⁱ⁾) M⁻¹ G(q_k)ᵀ` per iteration), not by the original one-constraint-at-a-time sweep; the
/// iterations are reported in [`StepReport::newton_iterations`]. Positions are second order;
/// the velocity is the staggered `v_{k+½}`, first order as an approximation of `q̇(t_{k+1})`.
///
/// **Starting.** A state holds `v(t_0)`, not `v_{−½}`: call
/// [`stagger_velocity`](Self::stagger_velocity) once before the first step, or the `O(h)`
/// error of the initial velocity makes the positions only first order.
///
/// The constraint Jacobian and the acceleration at `q_{k+1}` are carried to the next step and
/// reused when the incoming `(q, t)` match bitwise; call [`reset`](Self::reset) after changing
/// the model between steps. The scheme assumes a constant `M` (its Cholesky factor is reused
/// while `M` is unchanged); a configuration-dependent `M(q)` is evaluated at `q_k`. Errors:
/// `Singular` if the Newton matrix is singular (e.g. `G` not of full rank), `NewtonDiverged`
/// if Newton does not converge; the state is then unchanged.
#[derive(Clone, Copy, Debug)]
pub struct Shake<const N: usize, const M: usize> {
    core: Core<N, M>,
    multipliers: SVector<f64, M>,
}

shared_builders!(Shake);

impl<const N: usize, const M: usize> Shake<N, M> {
    /// Creates a SHAKE stepper with step size `h`, Newton tolerance factor `1e-13` and at most
    /// 50 Newton iterations per step; fails unless `h` is positive and finite.
    pub fn new(h: f64) -> Result<Self, StepError> {
        Ok(Shake {
            core: Core::new(h)?,
            multipliers: SVector::zeros(),
        })
    }

    /// Returns the multipliers `λ_k` of the last successful step (from `t_k` to `t_{k+1}`), with
    /// `M q̈ = −∇V − Gᵀ λ`.
    ///
    /// **Accuracy.** `λ_k` enters the symmetric two-step scheme at `q_k`, and is a
    /// **second-order** approximation of the exact multiplier `λ(t_k)` when the run was started
    /// with [`stagger_velocity`](Self::stagger_velocity) (it is then RATTLE's
    /// [`averaged_multipliers`](crate::Rattle::averaged_multipliers) of the same positions);
    /// without it the whole run, positions included, is only first order.
    pub fn multipliers(&self) -> &SVector<f64, M> {
        &self.multipliers
    }

    /// Replaces the velocity `v(t_0)` of `state` by the half-step velocity that SHAKE carries,
    /// `v_{−½} = v(t_0) + ½ h M⁻¹ ∇V(q_0)`; on error `state` is unchanged.
    ///
    /// The constraint force of the half step is omitted: it lies in the range of
    /// `M⁻¹ G(q_0)ᵀ`, which the first step's multiplier absorbs, so the first step then equals
    /// RATTLE's and the positions are second order.
    pub fn stagger_velocity<Model>(
        &mut self,
        model: &Model,
        state: &mut State<N>,
    ) -> Result<(), StepError>
    where
        Model: Inertia<N> + Potential<N>,
    {
        crate::integrators::checks::check_parameters(model)?;
        check_state(state)?;
        let (a, _, _) = acceleration(model, &mut self.core.mass, &state.q, state.t)?;
        let v = state.v - a * (0.5 * self.core.h);
        check_finite(&v, "v", state.t)?;
        state.v = v;
        Ok(())
    }
}

#[diagnostic::do_not_recommend]
impl<Model, const N: usize, const M: usize> Integrator<Model, N> for Shake<N, M>
where
    Model: Inertia<N> + Potential<N> + Holonomic<N, M>,
{
    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError> {
        crate::integrators::checks::check_constant_mass::<Model, N>("SHAKE")?;
        crate::integrators::checks::check_parameters(model)?;
        check_state(state)?;
        let (h, t) = (self.core.h, state.t);
        let t_next = t + h;
        let (start, mut factorizations) = self.core.start(model, state)?;
        let predictor = state.q + state.v * h + start.acceleration * (h * h);
        check_finite(&predictor, "q", t)?;
        let projected = self.core.project(model, &predictor, &start, t_next, t)?;
        factorizations += projected.factorizations;
        // v_{k+½} = (q_{k+1} − q_k)/h, without the cancellation of that difference.
        let v_next =
            state.v + start.acceleration * h - start.minv_jac_t * (projected.mu * (1.0 / h));
        check_finite(&v_next, "v", t)?;
        let (end, count) = self
            .core
            .point_at(model, &projected.q, t_next, projected.jac, t)?;
        factorizations += count;

        self.core.carried = Some(end);
        self.multipliers = projected.mu * (1.0 / (h * h));
        state.q = projected.q;
        state.v = v_next;
        state.t = t_next;
        Ok(StepReport {
            factorizations,
            newton_iterations: projected.iterations,
        })
    }
}
