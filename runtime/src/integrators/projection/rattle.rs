//! RATTLE (Andersen 1983): constrained velocity Verlet with a velocity projection.

use nalgebra::SVector;

use super::{check_finite, same_bits, shared_builders, Core};
use crate::error::StepError;
use crate::integrators::explicit::check_state;
use crate::integrators::{Integrator, StepReport};
use crate::linalg::Cholesky;
use crate::model::{Holonomic, Inertia, Potential};
use crate::state::State;

/// RATTLE for `M` holonomic constraints `g(q) = 0` on `N` coordinates.
///
/// From H. C. Andersen, *RATTLE: a "velocity" version of the SHAKE algorithm for molecular
/// dynamics calculations* (J. Comput. Phys. 52, 1983); see also Hairer, Lubich and Wanner,
/// *Geometric Numerical Integration* (2nd ed. 2006), §VII.1.4, and Lacoursière (2007) eq. 13.
/// With `M q̈ = −∇V(q) − G(q)ᵀ λ`:
///
/// ```text
/// v_{k+½}  = v_k − ½ h M⁻¹ (∇V(q_k) + G(q_k)ᵀ λ_k)
/// q_{k+1}  = q_k + h v_{k+½},                               g(q_{k+1}, t_{k+1}) = 0
/// v_{k+1}  = v_{k+½} − ½ h M⁻¹ (∇V(q_{k+1}) + G(q_{k+1})ᵀ μ_k),   G(q_{k+1}) v_{k+1} = 0
/// ```
///
/// The position step is SHAKE's from the predictor `q̃ = q_k + h v_k − ½ h² M⁻¹ ∇V(q_k)`: full
/// Newton iteration on `½ h² λ_k` (an LU factorization of `G(q⁽ⁱ⁾) M⁻¹ G(q_k)ᵀ` per
/// iteration), reported in [`StepReport::newton_iterations`]. The velocity step is linear:
/// with `w = v_{k+½} − ½ h M⁻¹ ∇V(q_{k+1})` and `G = G(q_{k+1})`,
///
/// ```text
/// (G M⁻¹ Gᵀ) ν = G w,    v_{k+1} = w − M⁻¹ Gᵀ ν,    μ_k = 2ν / h
/// ```
///
/// one Cholesky factorization of `G M⁻¹ Gᵀ`, which fails with `Singular` when `G` is not of
/// full rank. RATTLE is symmetric, symplectic on the constraint manifold, second order in
/// positions and velocities, and keeps both `g = 0` and `G v = 0` at every step (GNI
/// §VII.1.4). The velocity constraint is that of a scleronomic `g`: a time
/// derivative `g_t` is not included.
///
/// The constraint Jacobian, `M⁻¹ Gᵀ` and the acceleration at `q_{k+1}` are carried to the next
/// step and reused when the incoming `(q, t)` match bitwise; call [`reset`](Self::reset) after
/// changing the model between steps. The scheme assumes a constant `M` (its Cholesky factor is
/// reused while `M` is unchanged); a configuration-dependent `M(q)` is evaluated where each
/// force is. Errors: `Singular`, `NewtonDiverged` (after `max_iterations` or on a non-finite
/// residual), `NonFinite`; the state is then unchanged.
#[derive(Clone, Copy, Debug)]
pub struct Rattle<const N: usize, const M: usize> {
    core: Core<N, M>,
    multipliers: SVector<f64, M>,
    velocity_multipliers: SVector<f64, M>,
    /// `½ (μ_{k−1} + λ_k)` of the last step, if it continued the step before.
    averaged_multipliers: Option<SVector<f64, M>>,
    /// The end state of the last successful step.
    end: Option<State<N>>,
}

shared_builders!(Rattle);

impl<const N: usize, const M: usize> Rattle<N, M> {
    /// Creates a RATTLE stepper with step size `h`, Newton tolerance factor `1e-13` and at most
    /// 50 Newton iterations per step; fails unless `h` is positive and finite.
    pub fn new(h: f64) -> Result<Self, StepError> {
        Ok(Rattle {
            core: Core::new(h)?,
            multipliers: SVector::zeros(),
            velocity_multipliers: SVector::zeros(),
            averaged_multipliers: None,
            end: None,
        })
    }

    /// Returns the position multipliers `λ_k` of the last successful step (the step from
    /// `t_k` to `t_{k+1}`), with `M q̈ = −∇V − Gᵀ λ`.
    ///
    /// `λ_k` is a **first-order** approximation of the exact multiplier `λ(t_k)`: its error is
    /// `O(h)`. For a second-order one use
    /// [`averaged_multipliers`](Self::averaged_multipliers).
    pub fn multipliers(&self) -> &SVector<f64, M> {
        &self.multipliers
    }

    /// Returns the velocity multipliers `μ_k` of the last successful step (same sign
    /// convention as [`multipliers`](Self::multipliers)).
    ///
    /// `μ_k` is a **first-order** approximation of `λ(t_{k+1})`: its error is `O(h)`, of the
    /// opposite sign to that of the next step's `λ_{k+1}`.
    pub fn velocity_multipliers(&self) -> &SVector<f64, M> {
        &self.velocity_multipliers
    }

    /// Returns `½ (μ_{k−1} + λ_k)`, a **second-order** approximation of `λ(t_k)` (error
    /// `O(h²)`), `t_k` the start time of the last successful step; `None` unless that step
    /// started from the end state (bit for bit) of the step before it.
    ///
    /// The two forces that act at `q_k`, `−Gᵀμ_{k−1}` in the second half kick of the step
    /// before and `−Gᵀλ_k` in the first half kick of this one, are the one-sided first-order
    /// approximations whose errors cancel to leading order; their mean is SHAKE's multiplier
    /// of the same positions (Hairer–Lubich–Wanner, §VII.1.4).
    pub fn averaged_multipliers(&self) -> Option<&SVector<f64, M>> {
        self.averaged_multipliers.as_ref()
    }
}

#[diagnostic::do_not_recommend]
impl<Model, const N: usize, const M: usize> Integrator<Model, N> for Rattle<N, M>
where
    Model: Inertia<N> + Potential<N> + Holonomic<N, M>,
{
    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError> {
        crate::integrators::checks::check_constant_mass::<Model, N>("RATTLE")?;
        crate::integrators::checks::check_parameters(model)?;
        check_state(state)?;
        let (h, t) = (self.core.h, state.t);
        let t_next = t + h;
        let (start, mut factorizations) = self.core.start(model, state)?;
        let kicked = state.v + start.acceleration * (0.5 * h);
        let predictor = state.q + kicked * h;
        check_finite(&predictor, "q", t)?;
        let projected = self.core.project(model, &predictor, &start, t_next, t)?;
        factorizations += projected.factorizations;
        // v_{k+½} = (q_{k+1} − q_k)/h, without the cancellation of that difference.
        let v_half = kicked - start.minv_jac_t * (projected.mu * (1.0 / h));

        let (end, count) = self
            .core
            .point_at(model, &projected.q, t_next, projected.jac, t)?;
        factorizations += count;
        let w = v_half + end.acceleration * (0.5 * h);
        let schur = Cholesky::try_new(&(end.jac * end.minv_jac_t))
            .map_err(StepError::linear_algebra("G M⁻¹ Gᵀ", t))?;
        factorizations += 1;
        let nu = schur.solve(&(end.jac * w));
        let v_next = w - end.minv_jac_t * nu;
        check_finite(&v_next, "v", t)?;

        let continued = self.end.is_some_and(|end| {
            end.t.to_bits() == state.t.to_bits()
                && same_bits(&end.q, &state.q)
                && same_bits(&end.v, &state.v)
        });
        let lambda = projected.mu * (2.0 / (h * h));
        self.averaged_multipliers = continued.then(|| (self.velocity_multipliers + lambda) * 0.5);
        self.core.carried = Some(end);
        self.multipliers = lambda;
        self.velocity_multipliers = nu * (2.0 / h);
        state.q = projected.q;
        state.v = v_next;
        state.t = t_next;
        self.end = Some(*state);
        Ok(StepReport {
            factorizations,
            newton_iterations: projected.iterations,
        })
    }
}
