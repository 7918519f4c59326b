//! Newmark's method with `γ = ½`, the nonlinearly implicit relative of Z&S (Tao and Owhadi
//! 2014, §2.1), written once as [`NewmarkScheme`] over the carried-acceleration tiers, with
//! Newton to convergence as its corrector; Newmark with a single Newton iteration per step is
//! the same scheme with another corrector (`one_iteration.rs`), and the push-forward is in
//! `push_forward.rs`.

use nalgebra::SVector;

use super::carried::dense::newton_solve;
use super::carried::{
    accept, check_beta, CarriedDense, CarriedSparse, CarriedTier, NewmarkSystem, DEFAULT_BETA,
};
use crate::checkpoint::{Carried, CarriedState, CheckpointError, IntegratorIdentity};
use crate::error::StepError;
use crate::integrators::checks::{
    check_built_for, check_constant_mass, check_dyn_state, check_finite, check_finite_slice,
    check_mass_is_constant, check_parameters, check_sparse_parameters, check_state,
    check_step_size,
};
use crate::integrators::newton::{newton_builders, Newton};
use crate::integrators::{
    EnergyGuard, EnergyWatch, Integrator, SparseIntegrator, StepReport, TierVector,
};
use crate::model::{ConstantMass, Inertia, PotentialHessian, SparseConstantMass, SparsePotential};
use crate::state::{DynState, State};

/// The default relative tolerance on the Newton residual (and correction); `1e-12` is at the
/// rounding floor of the penalized double pendulum's `∇W` at `ω = 20`.
const DEFAULT_TOLERANCE: f64 = 1e-10;

/// The default maximal number of Newton iterations per solve.
const DEFAULT_MAX_ITERATIONS: usize = 50;

/// The default Newton settings.
pub(super) const DEFAULT_NEWTON: Newton = Newton::preset(DEFAULT_TOLERANCE, DEFAULT_MAX_ITERATIONS);

/// Newmark's method with `γ = ½` (Tao–Owhadi 2014, Integrator 2, eq. 12).
///
/// From M. Tao and H. Owhadi, *Variational and linearly-implicit integrators, with applications*
/// (2014), after N. M. Newmark, *A method of computation for structural dynamics* (1959).
/// For `M q̈ = −∇V(q)`:
///
/// ```text
/// q_{k+1} = q_k + h v_k + h² [(½ − β) a_k + β a_{k+1}]
/// v_{k+1} = v_k + ½ h (a_k + a_{k+1})
/// a_k     = −M⁻¹ ∇V(q_k)
/// ```
///
/// Second order and variational for `γ = ½`, and unconditionally linearly stable if `β ≥ ¼`,
/// but not canonically symplectic in `(q, v)` (see [`PushForwardNewmark`](super::PushForwardNewmark)). Implicit for
/// `β ≠ 0`: each step solves the nonlinear equation in `a = a_{k+1}`
///
/// ```text
/// r(a) = M a + ∇V(q̃ + βh² a) = 0,    q̃ = q_k + h v_k + (½ − β) h² a_k
/// ```
///
/// by Newton's method with the Jacobian `M + βh² Hess V(q̃ + βh² a)` (one LU or Cholesky
/// factorization per iteration), starting from `a_k`. It stops when the residual is small,
/// `|r|_∞ ≤ tol · max(|M a|_∞, |∇V|_∞)`, or when the Newton correction is, `|Δa|_∞ ≤ tol · |a|_∞`
/// (default `tol = 1e-10`, [`with_tolerance`](NewmarkScheme::with_tolerance)). The residual of a stiff
/// potential stalls at the rounding error of `∇V`, a small difference of `O(ω²)` terms for a
/// penalty: about `1e-12` relative for the double pendulum at `ω = 20`, growing like `ω²`,
/// hence the default above that floor and the correction test beyond it. It fails with [`StepError::NewtonDiverged`] after
/// `max_iterations` iterations (default 50, [`with_max_iterations`](NewmarkScheme::with_max_iterations))
/// or on a non-finite residual. A step whose energy has left the band of its run is refused
/// with [`StepError::EnergyDiverged`] ([`EnergyGuard`], [`with_energy_guard`](NewmarkScheme::with_energy_guard);
/// note its paragraph on Newmark at `hω ≫ 1`). The state is unchanged on error.
///
/// `a_{k+1}` is carried to the next step: it is cached with the `q` it was solved at and
/// recomputed as `−M⁻¹ ∇V(q)` (a Cholesky solve with `M`, whose factor is reused while a
/// constant `M` is unchanged) whenever the incoming `q` differs bitwise from it; call
/// [`reset`](NewmarkScheme::reset) after changing the model between steps. The paper assumes a
/// constant `M`; a model whose mass depends on `q` is refused.
///
/// It is the [`NewmarkScheme`] with the corrector [`NewtonSolved`] (fixed-size tier only:
/// Newton's Jacobian is dense here).
pub type Newmark<const N: usize> = NewmarkScheme<CarriedDense<N>, NewtonSolved>;

/// Newmark's scheme with `γ = ½` (Tao–Owhadi 2014, eq. 12) over a tier `S` of the carried
/// scheme and a corrector `C`: the one implementation behind [`Newmark`],
/// [`NewmarkOneIteration`](super::NewmarkOneIteration), [`SparseNewmarkOneIteration`](super::SparseNewmarkOneIteration) and
/// [`SparseNewmarkOneIterationStiff`](super::SparseNewmarkOneIterationStiff). Use it through those aliases; the equations of each
/// method are in their docs.
///
/// # Design
///
/// The methods share the step
///
/// ```text
/// q̃       = q_k + h v_k + (½ − β) h² a_k
/// a_{k+1} = the corrector's solution of M a + ∇V(q̃ + βh² a) = 0, from a_k
/// q_{k+1} = q̃ + βh² a_{k+1}
/// v_{k+1} = v_k + ½ h (a_k + a_{k+1})
/// ```
///
/// with `a_{k+1}` carried to the next step, keyed bitwise by `q_{k+1}`, and a restart from
/// `a_k = −M⁻¹ ∇V(q_k)` when the incoming `q` is another. That, the checks, the energy guard
/// and leaving the state unchanged on failure are written once here, on slices, for both
/// tiers; they differ in the corrector (a [`NewmarkCorrector`]: one Newton iterate,
/// [`FirstIterate`](super::FirstIterate), through the tier's
/// [`NewtonIterate`](super::carried::NewtonIterate), or Newton to convergence,
/// [`NewtonSolved`]) and in the tier's linear algebra ([`CarriedDense`] or [`CarriedSparse`],
/// the systems of [`CarriedScheme`](super::CarriedScheme), with the hooks of
/// [`NewmarkSystem`]).
#[derive(Clone, Copy, Debug)]
pub struct NewmarkScheme<S: CarriedTier, C> {
    h: f64,
    beta: f64,
    corrector: C,
    system: S,
    /// Whether `carried_a` was computed at `carried_q`.
    carried: bool,
    carried_q: S::Vector,
    carried_a: S::Vector,
    a_k: S::Vector,
    predictor: S::Vector,
    scratch: S::Vector,
    a_next: S::Vector,
    q_next: S::Vector,
    v_next: S::Vector,
    /// The energy guard and the run it measures.
    watch: EnergyWatch<S::Vector>,
}

/// How a [`NewmarkScheme`] finds `a_{k+1}`, the solution of `M a + ∇V(q̃ + βh² a) = 0`, on
/// tier `S`.
pub trait NewmarkCorrector<Model: ?Sized, S> {
    /// The method's name in errors.
    const NAME: &'static str;

    /// Writes `a_{k+1}` into `out` from the predictor `q̃` and the carried `a_k`, and returns
    /// its cost; `scratch` is a free vector of `n` entries. Fails with the culprit where a
    /// value is not finite, a factorization fails or Newton does not converge.
    #[allow(clippy::too_many_arguments)]
    fn correct(
        &mut self,
        system: &mut S,
        model: &Model,
        predictor: &[f64],
        a_k: &[f64],
        beta_h2: f64,
        out: &mut [f64],
        scratch: &mut [f64],
        t: f64,
    ) -> Result<StepReport, StepError>;
}

/// The name under which a [`NewmarkScheme`] with this corrector on tier `S` is checkpointed,
/// and the corrector's settings; the names are those of the steppers before the tiers shared
/// the scheme, so that their checkpoints resume.
pub trait NewmarkCheckpoint<S> {
    /// Returns the stepper's name for `n` coordinates.
    fn checkpoint_name(n: usize) -> String;

    /// Adds the corrector's settings to `identity`; the default has none.
    fn settings(&self, identity: IntegratorIdentity) -> IntegratorIdentity {
        identity
    }
}

/// The corrector of Newmark: Newton's method from `a_k` to convergence, with the Jacobian
/// `M + βh² Hess V` and the settings of a [`Newton`] (fixed-size tier).
#[derive(Clone, Copy, Debug)]
pub struct NewtonSolved {
    newton: Newton,
}

impl Default for NewtonSolved {
    fn default() -> Self {
        NewtonSolved {
            newton: DEFAULT_NEWTON,
        }
    }
}

impl<Model, const N: usize> NewmarkCorrector<Model, CarriedDense<N>> for NewtonSolved
where
    Model: Inertia<N> + PotentialHessian<N> + ?Sized,
{
    const NAME: &'static str = "Newmark";

    fn correct(
        &mut self,
        _system: &mut CarriedDense<N>,
        model: &Model,
        predictor: &[f64],
        a_k: &[f64],
        beta_h2: f64,
        out: &mut [f64],
        _scratch: &mut [f64],
        t: f64,
    ) -> Result<StepReport, StepError> {
        let predictor = SVector::<f64, N>::from_column_slice(predictor);
        check_finite(&predictor, "q", t)?;
        let a_k = SVector::from_column_slice(a_k);
        let solve = newton_solve(model, &predictor, beta_h2, a_k, self.newton, t)?;
        out.copy_from_slice(solve.a.as_slice());
        Ok(StepReport {
            factorizations: solve.factorizations,
            newton_iterations: solve.iterations,
        })
    }
}

impl<const N: usize> NewmarkCheckpoint<CarriedDense<N>> for NewtonSolved {
    fn checkpoint_name(_n: usize) -> String {
        format!("Newmark<{N}>")
    }

    fn settings(&self, identity: IntegratorIdentity) -> IntegratorIdentity {
        identity
            .setting("newton.tolerance", self.newton.tolerance())
            .setting("newton.max_iterations", self.newton.max_iterations() as f64)
    }
}

newton_builders!(
    [const N: usize] Newmark<N>,
    corrector.newton,
    tolerance_rule!(),
    "1e-10",
    "50"
);

impl<S: CarriedTier, C> NewmarkScheme<S, C> {
    /// Creates the scheme with step size `h` (checked), `β = 0.4`, the corrector and the
    /// tier's system; `zero` is a vector of `n` zeros of the tier.
    pub(super) fn with_parts(
        h: f64,
        corrector: C,
        system: S,
        zero: S::Vector,
    ) -> Result<Self, StepError> {
        Ok(NewmarkScheme {
            h: check_step_size(h)?,
            beta: DEFAULT_BETA,
            corrector,
            system,
            carried: false,
            carried_q: zero.clone(),
            carried_a: zero.clone(),
            a_k: zero.clone(),
            predictor: zero.clone(),
            scratch: zero.clone(),
            a_next: zero.clone(),
            q_next: zero.clone(),
            watch: EnergyWatch::new(EnergyGuard::default(), zero.clone()),
            v_next: zero,
        })
    }

    /// Returns the step size `h`.
    pub fn step_size(&self) -> f64 {
        self.h
    }

    /// Returns the parameter `β`.
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// Sets `β` (default 0.4); fails with `BadParameter` unless it is finite and `≥ 0`.
    ///
    /// `β ≥ ¼` makes the method unconditionally linearly stable; smaller values are accepted
    /// (`β = 0` is explicit velocity Verlet) but stable only for small `h`. Forgets the carried
    /// acceleration and the energy guard's run.
    pub fn with_beta(mut self, beta: f64) -> Result<Self, StepError> {
        self.beta = check_beta(beta)?;
        self.reset();
        Ok(self)
    }

    /// Forgets the acceleration carried from the last step, so that the next step restarts
    /// from `a_k = −M⁻¹ ∇V(q_k)`, and the run the energy guard measures, so that the next step
    /// starts a new one; call it after changing the model between steps.
    pub fn reset(&mut self) {
        self.carried = false;
        self.watch.restart();
    }

    /// Replaces the energy guard (default: [`EnergyGuard::default`]), which rejects a step
    /// whose energy has left the band around the run's initial energy with
    /// [`StepError::EnergyDiverged`] instead of returning `Ok` on a blow-up.
    pub fn with_energy_guard(mut self, guard: EnergyGuard) -> Self {
        self.watch.set_guard(guard);
        self
    }

    /// Returns the accelerations of the last step: the `a_k` it started from and the
    /// `a_{k+1}` it carries (both meaningful only after a step).
    pub(super) fn last_accelerations(&self) -> (&S::Vector, &S::Vector) {
        (&self.a_k, &self.carried_a)
    }

    /// Returns whether the carried acceleration was computed at exactly `q`.
    fn carried_at(&self, q: &[f64]) -> bool {
        self.carried
            && self
                .carried_q
                .as_slice()
                .iter()
                .zip(q)
                .all(|(a, b)| a.to_bits() == b.to_bits())
    }

    /// Runs one step from `(t, q, v)`, whose shapes the tier has checked; writes `q_{k+1}`,
    /// `v_{k+1}` only on success.
    fn advance<Model: ?Sized>(
        &mut self,
        model: &Model,
        t: f64,
        q: &mut [f64],
        v: &mut [f64],
    ) -> Result<StepReport, StepError>
    where
        C: NewmarkCorrector<Model, S>,
        S: NewmarkSystem<Model>,
    {
        let (h, h2, beta_h2) = (self.h, self.h * self.h, self.beta * self.h * self.h);
        let (system, scratch) = (&mut self.system, &mut self.scratch);
        self.watch.begin(q, || {
            system.energy_terms(model, q, v, scratch.as_mut_slice())
        });
        let mut report = StepReport::default();
        if self.carried_at(q) {
            self.a_k
                .as_mut_slice()
                .copy_from_slice(self.carried_a.as_slice());
        } else {
            report.factorizations +=
                self.system
                    .start_acceleration(model, q, self.a_k.as_mut_slice(), t)?;
        }
        let a_k = self.a_k.as_slice();
        for (((p, q), v), a) in self
            .predictor
            .as_mut_slice()
            .iter_mut()
            .zip(&*q)
            .zip(&*v)
            .zip(a_k)
        {
            *p = q + h * v + (0.5 - self.beta) * h2 * a;
        }
        let cost = self.corrector.correct(
            &mut self.system,
            model,
            self.predictor.as_slice(),
            a_k,
            beta_h2,
            self.a_next.as_mut_slice(),
            self.scratch.as_mut_slice(),
            t,
        )?;
        report.factorizations += cost.factorizations;
        report.newton_iterations += cost.newton_iterations;
        let corrector = S::corrector_coefficient(self.beta, h);
        let (a_k, a_next) = (self.a_k.as_slice(), self.a_next.as_slice());
        for (((q_next, p), v_next), (v, (a, b))) in self
            .q_next
            .as_mut_slice()
            .iter_mut()
            .zip(self.predictor.as_slice())
            .zip(self.v_next.as_mut_slice())
            .zip(v.iter().zip(a_k.iter().zip(a_next)))
        {
            *q_next = p + corrector * b;
            *v_next = v + 0.5 * h * (a + b);
        }
        check_finite_slice(self.q_next.as_slice(), "q", t)?;
        check_finite_slice(self.v_next.as_slice(), "v", t)?;
        accept(
            &mut self.system,
            &mut self.watch,
            model,
            t,
            (q, v),
            (&mut self.q_next, &self.v_next, &mut self.a_next),
            (&mut self.carried_q, &mut self.carried_a),
        )?;
        self.carried = true;
        Ok(report)
    }
}

impl<const N: usize, C: Default> NewmarkScheme<CarriedDense<N>, C> {
    /// Creates the stepper with step size `h`, `γ = ½`, `β = 0.4` and the corrector's default
    /// settings (for [`Newmark`]: Newton tolerance `1e-10`, at most 50 iterations); fails
    /// unless `h` is positive and finite.
    pub fn new(h: f64) -> Result<Self, StepError> {
        Self::with_parts(h, C::default(), CarriedDense::default(), [0.0; N])
    }
}

impl<Model, C, const N: usize> Integrator<Model, N> for NewmarkScheme<CarriedDense<N>, C>
where
    Model: ConstantMass<N> + PotentialHessian<N>,
    C: NewmarkCorrector<Model, CarriedDense<N>> + NewmarkCheckpoint<CarriedDense<N>>,
{
    crate::checkpoint::carried_access!();

    fn admit_energy_exchange(&mut self, energy: f64) {
        self.watch.admit(energy);
    }

    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError> {
        check_constant_mass::<Model, N>(C::NAME)?;
        check_parameters(model)?;
        check_state(state)?;
        let t = state.t;
        let report = self.advance(model, t, state.q.as_mut_slice(), state.v.as_mut_slice())?;
        state.t = t + self.h;
        Ok(report)
    }
}

impl<Model, C> SparseIntegrator<Model> for NewmarkScheme<CarriedSparse, C>
where
    Model: SparseConstantMass + SparsePotential + ?Sized,
    C: NewmarkCorrector<Model, CarriedSparse> + NewmarkCheckpoint<CarriedSparse>,
    CarriedSparse: NewmarkSystem<Model>,
{
    crate::checkpoint::carried_access!();

    fn admit_energy_exchange(&mut self, energy: f64) {
        self.watch.admit(energy);
    }

    fn step(&mut self, model: &Model, state: &mut DynState) -> Result<StepReport, StepError> {
        check_mass_is_constant(model.constant_mass(), C::NAME)?;
        check_sparse_parameters(model)?;
        check_dyn_state(state, model.coordinate_count())?;
        check_built_for(
            model.body_sizes() == self.system.body_sizes(),
            "body sizes",
            model.body_sizes().len(),
        )?;
        let t = state.t;
        let report = self.advance(model, t, &mut state.q, &mut state.v)?;
        state.t = t + self.h;
        Ok(report)
    }
}

/// The carried acceleration (with its configuration; zeros when none is carried), which is
/// also the next corrector's starting point (a warm start that changes the next step's bits),
/// and the energy guard's run.
impl<S: CarriedTier, C: NewmarkCheckpoint<S>> CarriedState for NewmarkScheme<S, C> {
    fn identity(&self) -> IntegratorIdentity {
        let n = self.carried_q.as_slice().len();
        self.corrector.settings(
            IntegratorIdentity::new(C::checkpoint_name(n))
                .setting("h", self.h)
                .setting("beta", self.beta)
                .setting("energy_guard", self.watch.limit()),
        )
    }

    fn save(&self, out: &mut Carried) {
        out.put_flag("carried", self.carried);
        if self.carried {
            out.put("carried.q", self.carried_q.as_slice());
            out.put("carried.a", self.carried_a.as_slice());
        } else {
            let zeros = vec![0.0; self.carried_q.as_slice().len()];
            out.put("carried.q", &zeros);
            out.put("carried.a", &zeros);
        }
        self.watch.save(out);
    }

    fn restore(&mut self, from: &Carried) -> Result<(), CheckpointError> {
        let n = self.carried_q.as_slice().len();
        let carried = from.flag("carried")?;
        let q = from.values("carried.q", n)?;
        let a = from.values("carried.a", n)?;
        let mut watch = self.watch.clone();
        watch.restore(from)?;
        self.carried = carried;
        self.carried_q.as_mut_slice().copy_from_slice(q);
        self.carried_a.as_mut_slice().copy_from_slice(a);
        self.watch = watch;
        Ok(())
    }
}

/// The stopping rule of Newmark's Newton iteration, for the docs of the builders of Newmark
/// and push-forward Newmark.
macro_rules! tolerance_rule {
    () => {
        "A solve stops when `|M a + ∇V|_∞ ≤ tolerance · max(|M a|_∞, |∇V|_∞)` or when the Newton correction is `|Δa|_∞ ≤ tolerance · |a|_∞`; past the iteration cap a step fails with `NewtonDiverged`."
    };
}

pub(super) use tolerance_rule;
