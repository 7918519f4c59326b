//! RATTLE (Andersen 1983): constrained velocity Verlet with a velocity projection, on both
//! tiers.

use super::{
    projection_builders, same_bits, tolerance_rule, Point, Projection, ProjectionDense,
    ProjectionModel, ProjectionSparse, ProjectionSystem,
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
    ConstantMass, Holonomic, Potential, SparseConstantMass, SparseHolonomic, SparseInertia,
    SparsePotential,
};
use crate::state::{DynState, State};

/// RATTLE for `M` holonomic constraints `g(q) = 0` on `N` coordinates, on the fixed-size tier.
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
/// Newton iteration on `½ h² λ_k` (a factorization of `G(q⁽ⁱ⁾) M⁻¹ G(q_k)ᵀ` per iteration),
/// reported in [`StepReport::newton_iterations`]. The velocity step is linear: with
/// `w = v_{k+½} − ½ h M⁻¹ ∇V(q_{k+1})` and `G = G(q_{k+1})`,
///
/// ```text
/// (G M⁻¹ Gᵀ) ν = G w,    v_{k+1} = w − M⁻¹ Gᵀ ν,    μ_k = 2ν / h
/// ```
///
/// one factorization of the symmetric positive definite `G M⁻¹ Gᵀ`, which fails with
/// `Singular` when `G` is not of full rank. RATTLE is symmetric, symplectic on the constraint
/// manifold, second order in positions and velocities, and keeps both `g = 0` and `G v = 0` at
/// every step (GNI §VII.1.4). The velocity constraint is that of a scleronomic `g`: a time
/// derivative `g_t` is not included.
///
/// The constraint Jacobian, `M⁻¹ Gᵀ` and the acceleration at `q_{k+1}` are carried to the next
/// step and reused when the incoming `(q, t)` match bitwise; call [`reset`](RattleScheme::reset)
/// after changing the model between steps. The scheme assumes a constant `M` (its factor is
/// reused while `M` is unchanged). Errors: `Singular`, `NewtonDiverged` (after
/// `max_iterations` or on a non-finite residual; beyond the scheme's stability limit the step
/// has no solution, see [`ProjectionSparse`]'s *Step size*), `NonFinite`, `OffManifold` for a
/// fresh state off the constraints; the state is then unchanged.
pub type Rattle<const N: usize, const M: usize> = RattleScheme<ProjectionDense<N, M>>;

/// RATTLE on the sparse tier: the scheme of [`Rattle`] for a model with sizes known at
/// construction ([`SparseInertia`] with a constant block-diagonal `M`, [`SparsePotential`],
/// [`SparseHolonomic`]), with the linear algebra of [`ProjectionSparse`].
///
/// # Example
///
/// ```
/// use mechanism_runtime::reference::PendulumChain;
/// use mechanism_runtime::{SparseIntegrator, SparseRattle};
///
/// let chain = PendulumChain::tao_owhadi(1000);
/// let mut state = chain.tao_owhadi_state();
/// let mut rattle = SparseRattle::new(&chain, 0.05)?; // patterns analysed, scratch sized
/// for _ in 0..20 {
///     rattle.step(&chain, &mut state)?; // sparse LU per Newton iteration, no allocation
/// }
/// assert!((state.t - 1.0).abs() < 1e-12);
/// # Ok::<(), mechanism_runtime::StepError>(())
/// ```
pub type SparseRattle = RattleScheme<ProjectionSparse>;

/// The RATTLE scheme over a tier's [`ProjectionSystem`] `S`; use it through [`Rattle`] or
/// [`SparseRattle`], whose docs give the equations.
#[derive(Clone, Debug)]
pub struct RattleScheme<S: ProjectionSystem> {
    pub(super) core: Projection<S>,
    /// `v_k + ½ h a_k`, then `w`, and `v_{k+1}` of the step under way.
    kicked: S::Coordinates,
    velocity: S::Coordinates,
    /// `G w`, then `ν`, of the step under way.
    nu: S::Rows,
    pub(super) multipliers: S::Rows,
    pub(super) velocity_multipliers: S::Rows,
    /// `½ (μ_{k−1} + λ_k)` of the last step, valid if it continued the step before.
    averaged_multipliers: S::Rows,
    averaged: bool,
    /// The end state of the last successful step, valid if `ended`.
    end_t: f64,
    end_q: S::Coordinates,
    end_v: S::Coordinates,
    ended: bool,
}

impl<S> Copy for RattleScheme<S>
where
    S: ProjectionSystem + Copy,
    S::Coordinates: Copy,
    S::Rows: Copy,
{
}

projection_builders!(RattleScheme);
newton_builders!(
    [S: ProjectionSystem] RattleScheme<S>,
    core.newton,
    tolerance_rule!(),
    "1e-13",
    "50"
);

impl<S: ProjectionSystem> RattleScheme<S> {
    fn with_system(h: f64, system: S) -> Result<Self, StepError> {
        Ok(RattleScheme {
            kicked: system.zero_coordinates(),
            velocity: system.zero_coordinates(),
            nu: system.zero_rows(),
            multipliers: system.zero_rows(),
            velocity_multipliers: system.zero_rows(),
            averaged_multipliers: system.zero_rows(),
            averaged: false,
            end_t: 0.0,
            end_q: system.zero_coordinates(),
            end_v: system.zero_coordinates(),
            ended: false,
            core: Projection::new(h, system)?,
        })
    }

    /// Returns the position multipliers `λ_k` of the last successful step (the step from
    /// `t_k` to `t_{k+1}`), with `M q̈ = −∇V − Gᵀ λ`.
    ///
    /// `λ_k` is a **first-order** approximation of the exact multiplier `λ(t_k)`: its error is
    /// `O(h)`. For a second-order one use
    /// [`averaged_multipliers`](Self::averaged_multipliers).
    pub fn multipliers(&self) -> &S::Rows {
        &self.multipliers
    }

    /// Returns the velocity multipliers `μ_k` of the last successful step (same sign
    /// convention as [`multipliers`](Self::multipliers)).
    ///
    /// `μ_k` is a **first-order** approximation of `λ(t_{k+1})`: its error is `O(h)`, of the
    /// opposite sign to that of the next step's `λ_{k+1}`.
    pub fn velocity_multipliers(&self) -> &S::Rows {
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
    pub fn averaged_multipliers(&self) -> Option<&S::Rows> {
        self.averaged.then_some(&self.averaged_multipliers)
    }

    /// Runs one step from `(t, q, v)`; writes `q_{k+1}`, `v_{k+1}` only on success.
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
        let kicked = self.kicked.as_mut_slice();
        let a = core.system.acceleration(Point::Start);
        for (((kicked, p), (q, v)), a) in kicked
            .iter_mut()
            .zip(core.predictor.as_mut_slice())
            .zip(q.iter().zip(v.iter()))
            .zip(a)
        {
            *kicked = v + a * (0.5 * h);
            *p = q + *kicked * h;
        }
        core.check_predictor(t)?;
        let iterations = core.project(model, t_next, t)?;
        factorizations += iterations;
        // v_{k+½} = (q_{k+1} − q_k)/h, without the cancellation of that difference.
        let velocity = self.velocity.as_mut_slice();
        core.half_step_velocity(kicked, 0.0, 1.0 / h, velocity);
        factorizations += core
            .system
            .complete(model, Point::End, core.trial.as_slice(), t)?;

        // w = v_{k+½} + ½ h a_{k+1}; (G M⁻¹ Gᵀ) ν = G w; v_{k+1} = w − M⁻¹ Gᵀ ν.
        let a = core.system.acceleration(Point::End);
        for ((w, v_half), a) in kicked.iter_mut().zip(velocity.iter()).zip(a) {
            *w = v_half + a * (0.5 * h);
        }
        let nu = self.nu.as_mut_slice();
        core.system.jacobian_times(Point::End, kicked, nu);
        core.system.solve_projection(nu, t)?;
        factorizations += 1;
        core.system
            .constraint_direction(Point::End, nu, core.direction.as_mut_slice());
        for ((v_next, w), d) in velocity
            .iter_mut()
            .zip(kicked.iter())
            .zip(core.direction.as_slice())
        {
            *v_next = w - d;
        }
        check_finite_slice(velocity, "v", t)?;

        let continued = self.ended
            && self.end_t.to_bits() == t.to_bits()
            && same_bits(self.end_q.as_slice(), q)
            && same_bits(self.end_v.as_slice(), v);
        let lambda_scale = 2.0 / (h * h);
        for ((lambda, averaged), (mu, previous)) in self
            .multipliers
            .as_mut_slice()
            .iter_mut()
            .zip(self.averaged_multipliers.as_mut_slice())
            .zip(
                core.mu
                    .as_slice()
                    .iter()
                    .zip(self.velocity_multipliers.as_slice()),
            )
        {
            *lambda = mu * lambda_scale;
            *averaged = (previous + *lambda) * 0.5;
        }
        self.averaged = continued;
        for (velocity_multiplier, nu) in self
            .velocity_multipliers
            .as_mut_slice()
            .iter_mut()
            .zip(nu.iter())
        {
            *velocity_multiplier = nu * (2.0 / h);
        }
        q.copy_from_slice(core.trial.as_slice());
        v.copy_from_slice(velocity);
        core.carry(q, t_next);
        self.end_t = t_next;
        self.end_q.as_mut_slice().copy_from_slice(q);
        self.end_v.as_mut_slice().copy_from_slice(v);
        self.ended = true;
        Ok(StepReport {
            factorizations,
            newton_iterations: iterations,
        })
    }
}

impl<const N: usize, const M: usize> RattleScheme<ProjectionDense<N, M>> {
    /// Creates a RATTLE stepper with step size `h`, Newton tolerance factor `1e-13` and at most
    /// 50 Newton iterations per step; fails unless `h` is positive and finite.
    pub fn new(h: f64) -> Result<Self, StepError> {
        Self::with_system(h, ProjectionDense::default())
    }
}

impl RattleScheme<ProjectionSparse> {
    /// Creates a RATTLE stepper with step size `h` for `model`: analyses the patterns of `G`
    /// and `G M⁻¹ Gᵀ` and sizes every buffer, so that no step allocates; Newton tolerance
    /// factor `1e-13`, at most 50 Newton iterations per step.
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
}

impl<Model, const N: usize, const M: usize> Integrator<Model, N> for Rattle<N, M>
where
    Model: ConstantMass<N> + Potential<N> + Holonomic<N, M>,
{
    crate::checkpoint::carried_access!();

    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError> {
        check_constant_mass::<Model, N>("RATTLE")?;
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

impl<Model> SparseIntegrator<Model> for SparseRattle
where
    Model: SparseConstantMass + SparsePotential + SparseHolonomic + ?Sized,
{
    crate::checkpoint::carried_access!();

    fn step(&mut self, model: &Model, state: &mut DynState) -> Result<StepReport, StepError> {
        self.core.system.linearization.invalidate();
        check_mass_is_constant(model.constant_mass(), "RATTLE")?;
        check_sparse_parameters(model)?;
        check_dyn_state(state, model.coordinate_count())?;
        self.core.system.check_model(model)?;
        let report = self.advance(model, state.t, &mut state.q, &mut state.v)?;
        state.t += self.core.h;
        Ok(report)
    }
}

/// RATTLE's multipliers of the last step and the end state that keys the averaged ones
/// (columns of a run). The start point the scheme carries (`G`, `M⁻¹Gᵀ` and the acceleration
/// at `q_k`) is not saved: a resumed step evaluates it afresh at `q_k` with the same
/// functions, which gives the same bits, at the cost of one evaluation.
impl<S: ProjectionSystem> crate::checkpoint::CarriedState for RattleScheme<S> {
    fn identity(&self) -> crate::checkpoint::IntegratorIdentity {
        self.core.identity("Rattle")
    }

    fn save(&self, out: &mut crate::checkpoint::Carried) {
        out.put("multipliers", self.multipliers.as_slice());
        out.put("velocity_multipliers", self.velocity_multipliers.as_slice());
        out.put("averaged_multipliers", self.averaged_multipliers.as_slice());
        out.put_flag("averaged", self.averaged);
        out.put("end.t", &[self.end_t]);
        out.put("end.q", self.end_q.as_slice());
        out.put("end.v", self.end_v.as_slice());
        out.put_flag("ended", self.ended);
    }

    fn restore(
        &mut self,
        from: &crate::checkpoint::Carried,
    ) -> Result<(), crate::checkpoint::CheckpointError> {
        let m = self.multipliers.as_slice().len();
        let n = self.end_q.as_slice().len();
        let multipliers = from.values("multipliers", m)?;
        let velocity_multipliers = from.values("velocity_multipliers", m)?;
        let averaged_multipliers = from.values("averaged_multipliers", m)?;
        let averaged = from.flag("averaged")?;
        let end_t = from.scalar("end.t")?;
        let end_q = from.values("end.q", n)?;
        let end_v = from.values("end.v", n)?;
        let ended = from.flag("ended")?;
        self.multipliers.as_mut_slice().copy_from_slice(multipliers);
        self.velocity_multipliers
            .as_mut_slice()
            .copy_from_slice(velocity_multipliers);
        self.averaged_multipliers
            .as_mut_slice()
            .copy_from_slice(averaged_multipliers);
        self.averaged = averaged;
        self.end_t = end_t;
        self.end_q.as_mut_slice().copy_from_slice(end_q);
        self.end_v.as_mut_slice().copy_from_slice(end_v);
        self.ended = ended;
        self.core.carried = false;
        Ok(())
    }
}
