//! SHAKE (Ryckaert, Ciccotti and Berendsen 1977): constrained leapfrog Verlet, on both tiers.

use super::{
    projection_builders, restore_rows, tolerance_rule, Point, Projection, ProjectionAcceleration,
    ProjectionDense, ProjectionModel, ProjectionSparse, ProjectionSystem,
};
use crate::error::StepError;
use crate::integrators::checks::{
    check_constant_mass, check_dyn_state, check_finite_slice, check_mass_is_constant,
    check_parameters, check_sparse_parameters, check_state,
};
use crate::integrators::newton::newton_builders;
use crate::integrators::TierVector;
use crate::integrators::{Integrator, SparseIntegrator, StepReport};
use crate::model::{
    ConstantMass, Holonomic, Inertia, Potential, SparseConstantMass, SparseHolonomic,
    SparseInertia, SparsePotential,
};
use crate::state::{DynState, State};

/// SHAKE for `M` holonomic constraints `g(q) = 0` on `N` coordinates, on the fixed-size tier.
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
/// so `M q̈ = −∇V(q) − G(q)ᵀ λ` is the sign convention of
/// [`multipliers`](ShakeScheme::multipliers). `λ_k` is found by full Newton iteration on
/// `μ = h² λ_k` (a factorization of `G(q⁽ⁱ⁾) M⁻¹ G(q_k)ᵀ` per iteration, see the
/// [module docs](super)), not by the original one-constraint-at-a-time sweep; the iterations are
/// reported in [`StepReport::newton_iterations`]. Positions are second order; the velocity is
/// the staggered `v_{k+½}`, first order as an approximation of `q̇(t_{k+1})`.
///
/// **Starting.** A state holds `v(t_0)`, not `v_{−½}`: call
/// [`stagger_velocity`](ShakeScheme::stagger_velocity) once before the first step, or the `O(h)`
/// error of the initial velocity makes the positions only first order.
///
/// The constraint Jacobian and the acceleration at `q_{k+1}` are carried to the next step and
/// reused when the incoming `(q, t)` match bitwise; call [`reset`](ShakeScheme::reset) after
/// changing the model between steps. The scheme assumes a constant `M` (its factor is reused
/// while `M` is unchanged). Errors: `Singular` if the Newton matrix is singular (e.g. `G` not of
/// full rank), `NewtonDiverged` if Newton does not converge (beyond the scheme's stability limit
/// the step has no solution; see [`ProjectionSparse`]'s *Step size*), `OffManifold` for a fresh state
/// off the constraints; the state is then unchanged.
pub type Shake<const N: usize, const M: usize> = ShakeScheme<ProjectionDense<N, M>>;

/// SHAKE on the sparse tier: the scheme of [`Shake`] for a model with sizes known at
/// construction ([`SparseInertia`] with a constant block-diagonal `M`, [`SparsePotential`],
/// [`SparseHolonomic`]), with the linear algebra of [`ProjectionSparse`].
///
/// # Example
///
/// ```
/// use mechanism_runtime::reference::PendulumChain;
/// use mechanism_runtime::{SparseIntegrator, SparseShake};
///
/// let chain = PendulumChain::tao_owhadi(100);
/// let mut state = chain.tao_owhadi_state();
/// let mut shake = SparseShake::new(&chain, 0.05)?; // patterns analysed, scratch sized
/// shake.stagger_velocity(&chain, &mut state)?;
/// for _ in 0..20 {
///     shake.step(&chain, &mut state)?; // no allocation
/// }
/// assert_eq!(shake.multipliers().len(), 100);
/// # Ok::<(), mechanism_runtime::StepError>(())
/// ```
pub type SparseShake = ShakeScheme<ProjectionSparse>;

/// The SHAKE scheme over a tier's [`ProjectionSystem`] `S`; use it through [`Shake`] or
/// [`SparseShake`], whose docs give the equations.
#[derive(Clone, Debug)]
pub struct ShakeScheme<S: ProjectionSystem> {
    pub(super) core: Projection<S>,
    /// `v_{k+½}` of the step under way.
    velocity: S::Coordinates,
    pub(super) multipliers: S::Rows,
}

impl<S> Copy for ShakeScheme<S>
where
    S: ProjectionSystem + Copy,
    S::Coordinates: Copy,
    S::Rows: Copy,
{
}

projection_builders!(ShakeScheme);
newton_builders!(
    [S: ProjectionSystem] ShakeScheme<S>,
    core.newton,
    tolerance_rule!(),
    "1e-13",
    "50"
);

impl<S: ProjectionSystem> ShakeScheme<S> {
    fn with_system(h: f64, system: S) -> Result<Self, StepError> {
        Ok(ShakeScheme {
            velocity: system.zero_coordinates(),
            multipliers: system.zero_rows(),
            core: Projection::new(h, system)?,
        })
    }

    /// Returns the multipliers `λ_k` of the last successful step (from `t_k` to `t_{k+1}`), with
    /// `M q̈ = −∇V − Gᵀ λ`.
    ///
    /// **Accuracy.** `λ_k` enters the symmetric two-step scheme at `q_k`, and is a
    /// **second-order** approximation of the exact multiplier `λ(t_k)` when the run was started
    /// with [`stagger_velocity`](Self::stagger_velocity) (it is then RATTLE's
    /// [`averaged_multipliers`](super::RattleScheme::averaged_multipliers) of the same
    /// positions); without it the whole run, positions included, is only first order.
    pub fn multipliers(&self) -> &S::Rows {
        &self.multipliers
    }

    /// Replaces `v(t_0)` by `v_{−½} = v(t_0) + ½ h M⁻¹ ∇V(q_0)`; on error `v` is unchanged.
    fn stagger<Model: ?Sized>(
        &mut self,
        model: &Model,
        t: f64,
        q: &[f64],
        v: &mut [f64],
    ) -> Result<(), StepError>
    where
        S: ProjectionAcceleration<Model>,
    {
        let core = &mut self.core;
        let a = core.direction.as_mut_slice();
        core.system.acceleration_at(model, q, t, a)?;
        let staggered = self.velocity.as_mut_slice();
        for ((s, v), a) in staggered.iter_mut().zip(v.iter()).zip(a.iter()) {
            *s = v - a * (0.5 * core.h);
        }
        check_finite_slice(staggered, "v", t)?;
        v.copy_from_slice(staggered);
        Ok(())
    }

    /// Runs one step from `(t, q, v)`; writes `q_{k+1}`, `v_{k+½}` only on success.
    fn advance<Model: ?Sized>(
        &mut self,
        model: &Model,
        t: f64,
        q: &mut [f64],
        v: &mut [f64],
    ) -> Result<StepReport, StepError>
    where
        S: ProjectionModel<Model>,
    {
        let core = &mut self.core;
        let h = core.h;
        let t_next = t + h;
        let mut factorizations = core.start(model, q, t)?;
        let a = core.system.acceleration(Point::Start);
        for (((p, q), v), a) in core
            .predictor
            .as_mut_slice()
            .iter_mut()
            .zip(q.iter())
            .zip(v.iter())
            .zip(a)
        {
            *p = q + v * h + a * (h * h);
        }
        core.check_predictor(t)?;
        let iterations = core.project(model, t_next, t)?;
        factorizations += iterations;
        let velocity = self.velocity.as_mut_slice();
        core.half_step_velocity(v, h, 1.0 / h, velocity);
        check_finite_slice(velocity, "v", t)?;
        factorizations += core
            .system
            .complete(model, Point::End, core.trial.as_slice(), t)?;

        for (lambda, mu) in self
            .multipliers
            .as_mut_slice()
            .iter_mut()
            .zip(core.mu.as_slice())
        {
            *lambda = mu * (1.0 / (h * h));
        }
        q.copy_from_slice(core.trial.as_slice());
        v.copy_from_slice(velocity);
        core.carry(q, t_next);
        Ok(StepReport {
            factorizations,
            newton_iterations: iterations,
        })
    }
}

impl<const N: usize, const M: usize> ShakeScheme<ProjectionDense<N, M>> {
    /// Creates a SHAKE stepper with step size `h`, Newton tolerance factor `1e-13` and at most
    /// 50 Newton iterations per step; fails unless `h` is positive and finite.
    pub fn new(h: f64) -> Result<Self, StepError> {
        Self::with_system(h, ProjectionDense::default())
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
        check_parameters(model)?;
        check_state(state)?;
        self.stagger(model, state.t, state.q.as_slice(), state.v.as_mut_slice())
    }
}

impl ShakeScheme<ProjectionSparse> {
    /// Creates a SHAKE stepper with step size `h` for `model`: analyses the patterns of `G` and
    /// `G M⁻¹ Gᵀ` and sizes every buffer, so that no step allocates; Newton tolerance factor
    /// `1e-13`, at most 50 Newton iterations per step.
    ///
    /// Fails with `BadStepSize` unless `h` is positive and finite, and with `InvalidModel` if
    /// the body sizes do not add up to the number of coordinates, a pattern entry lies outside
    /// the model, or a row has no entry.
    pub fn new<Model>(model: &Model, h: f64) -> Result<Self, StepError>
    where
        Model: SparseInertia + SparseHolonomic + ?Sized,
    {
        Self::with_system(h, ProjectionSparse::new(model)?)
    }

    /// Replaces the velocity `v(t_0)` of `state` by `v_{−½} = v(t_0) + ½ h M⁻¹ ∇V(q_0)`, as
    /// [`Shake::stagger_velocity`](ShakeScheme::stagger_velocity); on error `state` is
    /// unchanged.
    pub fn stagger_velocity<Model>(
        &mut self,
        model: &Model,
        state: &mut DynState,
    ) -> Result<(), StepError>
    where
        Model: SparseInertia + SparsePotential + SparseHolonomic + ?Sized,
    {
        check_sparse_parameters(model)?;
        check_dyn_state(state, model.coordinate_count())?;
        self.core.system.check_model(model)?;
        self.stagger(model, state.t, &state.q, &mut state.v)
    }
}

impl<Model, const N: usize, const M: usize> Integrator<Model, N> for Shake<N, M>
where
    Model: ConstantMass<N> + Potential<N> + Holonomic<N, M>,
{
    crate::checkpoint::carried_access!();

    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError> {
        check_constant_mass::<Model, N>("SHAKE")?;
        check_parameters(model)?;
        check_state(state)?;
        let report = self.advance(
            model,
            state.t,
            state.q.as_mut_slice(),
            state.v.as_mut_slice(),
        )?;
        state.t += self.core.h;
        Ok(report)
    }
}

impl<Model> SparseIntegrator<Model> for SparseShake
where
    Model: SparseConstantMass + SparsePotential + SparseHolonomic + ?Sized,
{
    crate::checkpoint::carried_access!();

    fn step(&mut self, model: &Model, state: &mut DynState) -> Result<StepReport, StepError> {
        check_mass_is_constant(model.constant_mass(), "SHAKE")?;
        check_sparse_parameters(model)?;
        check_dyn_state(state, model.coordinate_count())?;
        self.core.system.check_model(model)?;
        let report = self.advance(model, state.t, &mut state.q, &mut state.v)?;
        state.t += self.core.h;
        Ok(report)
    }
}

/// SHAKE's multipliers of the last step (columns of a run). The staggered velocity
/// `v_{k−½}` is the state's `v`, saved with it; the carried start point is evaluated afresh
/// at `q_k`, as for [`RattleScheme`](super::RattleScheme).
impl<S: ProjectionSystem> crate::checkpoint::CarriedState for ShakeScheme<S> {
    fn identity(&self) -> crate::checkpoint::IntegratorIdentity {
        self.core.identity("Shake")
    }

    fn save(&self, out: &mut crate::checkpoint::Carried) {
        out.put("multipliers", self.multipliers.as_slice());
    }

    fn restore(
        &mut self,
        from: &crate::checkpoint::Carried,
    ) -> Result<(), crate::checkpoint::CheckpointError> {
        restore_rows(from, "multipliers", self.multipliers.as_mut_slice())?;
        self.core.carried = false;
        Ok(())
    }
}
