//! The velocity-Verlet-like update with a carried acceleration that Verlet, push-forward
//! Newmark, Z&S, Z&Ss and stiff Z&Ss share (Tao–Owhadi 2014, eq. 14, 3, 18, 19), written once
//! on slices for both tiers.
//!
//! ```text
//! x_{k+1} = x_k + h v_k + ½ h² a_k
//! v_{k+1} = v_k + ½ h (a_k + a_{k+1}),    a_{k+1} = a(x_{k+1})
//! ```
//!
//! The methods differ only in the acceleration `a(x)` (an [`AccelerationRule`]: `−M⁻¹∇V`,
//! `−(M + βh² Hess V)⁻¹ ∇V`, …), and the tiers only in how a rule's linear algebra is done
//! (a [`CarriedTier`]: [`CarriedDense`] on stack arrays, [`CarriedSparse`] on patterns analysed
//! once).
//!
//! The scheme itself ([`CarriedScheme`]) is here; its seams (the tier, the rule and the
//! capabilities a rule asks of a tier) are in `seams`, the linearly implicit rule in
//! `implicit`, the update and the accept tail it shares with Newmark in `update`.

pub(crate) mod dense;
mod implicit;
mod seams;
pub(crate) mod sparse;
mod sparse_jacobian;
mod update;

pub use dense::CarriedDense;
pub use implicit::{FullHessian, ImplicitAcceleration, RuleName, StiffHessian};
pub use seams::{
    AccelerationRule, CarriedTier, EnergyTerms, ImplicitSolve, MassSolve, NewmarkSystem,
    NewtonIterate, RuleDefaults, ThirdContraction, UsesBeta,
};
pub use sparse::{CarriedSparse, SparseHessian};
pub(crate) use update::{accept, next_position, next_velocity};

use crate::checkpoint::{Carried, CarriedState, CheckpointError, IntegratorIdentity};
use crate::error::StepError;
use crate::integrators::checks::{all_by_fours, check_finite_slice, check_step_size};
use crate::integrators::{EnergyGuard, EnergyWatch, StepReport, TierVector};

/// The default `β`, Tao–Owhadi's choice in their experiments (§4.1, Fig. 1, for Newmark too).
pub(in crate::integrators::linearly_implicit) const DEFAULT_BETA: f64 = 0.4;

/// Returns `BadParameter` unless `β` is finite and non-negative.
pub(in crate::integrators::linearly_implicit) fn check_beta(beta: f64) -> Result<f64, StepError> {
    if beta.is_finite() && beta >= 0.0 {
        Ok(beta)
    } else {
        Err(StepError::BadParameter {
            name: "beta",
            value: beta,
            requirement:
                "must be finite and non-negative (≥ 1/4 for unconditional linear stability)",
        })
    }
}

/// A velocity-Verlet-like scheme with a carried acceleration, over a tier `S` and an
/// acceleration rule `R`: the one implementation behind [`Verlet`](crate::Verlet),
/// [`PushForwardNewmark`](crate::PushForwardNewmark), [`ZhangSkeel`](crate::ZhangSkeel),
/// [`ZhangSkeelSimplified`](crate::ZhangSkeelSimplified),
/// [`ZhangSkeelStiff`](crate::ZhangSkeelStiff) and their sparse-tier twins
/// ([`SparseVerlet`](crate::SparseVerlet), [`SparseZhangSkeel`](crate::SparseZhangSkeel),
/// [`SparseZhangSkeelSimplified`](crate::SparseZhangSkeelSimplified),
/// [`SparseZhangSkeelStiff`](crate::SparseZhangSkeelStiff)). Use it through those aliases; the
/// equations of each method are in their docs.
///
/// # Design
///
/// Like [`SpookScheme`](crate::integrators::linearly_implicit::SpookScheme), one scheme serves
/// both tiers. Everything the methods share is written once in this module (the arithmetic
/// in `update.rs`), on slices: the update
/// `x_{k+1} = x_k + h v_k + ½ h² a_k`, `v_{k+1} = v_k + ½ h (a_k + a_{k+1})`, carrying
/// `a_{k+1}` to the next step keyed bitwise by the `x` it was computed at, the parameter and
/// finiteness checks, the energy guard ([`EnergyGuard`]: a run that blows up is an error, for
/// every method and both tiers, through the seam [`EnergyTerms`]), and leaving the state
/// unchanged on failure. Each method is an
/// [`AccelerationRule`] written once against the small capability seams [`MassSolve`],
/// [`ImplicitSolve`] and [`ThirdContraction`] (so Z&S's `f = a − ½β²h⁴ M⁻¹(a·V‴·a)` exists
/// once). A tier implements those seams with its own storage and backend of
/// [`LinearSolver`](crate::linalg::LinearSolver): [`CarriedDense`] with `SMatrix` kernels
/// (`Option<SymmetricFactor<N>>`, a cached Cholesky factor of `M`), [`CarriedSparse`] with one
/// sparse `LDLᵀ` of `M + βh² H` on the union of the mass blocks' and the Hessian's patterns,
/// analysed when the integrator is built for a model, and a factor of the mass blocks for `M⁻¹`.
/// Rather than expressing the fixed-size tier through the sparse traits, the fixed-size tier
/// keeps its `SMatrix` model traits (what `mechanism!` generates) and its stack storage; the two
/// tiers are checked against each other step by step in `runtime/tests/it/sparse_zhang_skeel.rs`.
///
/// Where `mechanism!` generated the rule's linear algebra for the model (the unrolled `LDLᵀ`
/// of `M + βh² H`, the solve with a constant diagonal `M`), a step first runs a fast path: the
/// update, the generated acceleration and one finiteness test per vector at the end, with no
/// generic kernel, copy through `SMatrix` or intermediate check. Anything it cannot finish (no
/// carried acceleration, a declined pivot, a value that is not finite) reruns the step on the
/// checked path, which gives the same bits (it calls the same generated solve) or the error
/// with its culprit; one step with and without the generated code agrees to rounding
/// (`tests/it/generated_solves/`).
#[derive(Clone, Copy, Debug)]
pub struct CarriedScheme<S: CarriedTier, R> {
    pub(crate) h: f64,
    pub(crate) beta: f64,
    pub(crate) rule: R,
    pub(crate) system: S,
    /// Whether `carried_a` was computed at `carried_x`.
    carried: bool,
    carried_x: S::Vector,
    carried_a: S::Vector,
    x_next: S::Vector,
    a_next: S::Vector,
    v_next: S::Vector,
    scratch: S::Vector,
    /// The energy guard and the run it measures.
    watch: EnergyWatch<S::Vector>,
}

impl<S: CarriedTier, R> CarriedScheme<S, R> {
    /// Creates the scheme with step size `h` (checked), `β`, the rule and the tier's system;
    /// `zero` is a vector of `n` zeros of the tier.
    pub(crate) fn with_parts(
        h: f64,
        beta: f64,
        rule: R,
        system: S,
        zero: S::Vector,
    ) -> Result<Self, StepError> {
        Ok(CarriedScheme {
            h: check_step_size(h)?,
            beta,
            rule,
            system,
            carried: false,
            carried_x: zero.clone(),
            carried_a: zero.clone(),
            x_next: zero.clone(),
            a_next: zero.clone(),
            v_next: zero.clone(),
            watch: EnergyWatch::new(EnergyGuard::default(), zero.clone()),
            scratch: zero,
        })
    }

    /// Returns the step size `h`.
    pub fn step_size(&self) -> f64 {
        self.h
    }

    /// Forgets the acceleration carried from the last step, so the next step recomputes it.
    ///
    /// The carried acceleration is keyed bitwise by the configuration it was computed at, not
    /// by the model: call this after changing a model's parameters between steps, or before
    /// stepping another model from the same `q`.
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

    /// Returns the carried acceleration if it was computed at exactly `q`.
    pub(crate) fn carried_at(&self, q: &[f64]) -> Option<&[f64]> {
        let same = self.carried
            && all_by_fours(self.carried_x.as_slice(), q, |a, b| {
                a.to_bits() == b.to_bits()
            });
        same.then_some(self.carried_a.as_slice())
    }

    /// Runs one step from `(t, q, v)` with every check; writes `q_{k+1}`, `v_{k+1}` only on
    /// success.
    ///
    /// The fixed-size tier first tries its fast path (`generated_advance`); where
    /// that has nothing to offer, or anything in it is not finite, it runs this step, which
    /// gives the same result or the error with its culprit.
    pub(crate) fn advance<Model: ?Sized>(
        &mut self,
        model: &Model,
        t: f64,
        q: &mut [f64],
        v: &mut [f64],
    ) -> Result<StepReport, StepError>
    where
        R: AccelerationRule<Model, S>,
        S: EnergyTerms<Model>,
    {
        let h = self.h;
        let beta_h2 = self.beta * h * h;
        let mut report = StepReport::default();
        let (system, scratch) = (&mut self.system, &mut self.scratch);
        self.watch.begin(q, || {
            system.energy_terms(model, q, v, scratch.as_mut_slice())
        });
        if self.carried_at(q).is_none() {
            self.carried = false;
            let cost = self.rule.acceleration(
                &mut self.system,
                model,
                q,
                None,
                beta_h2,
                self.carried_a.as_mut_slice(),
                self.scratch.as_mut_slice(),
                t,
            )?;
            add(&mut report, cost);
            self.carried_x.as_mut_slice().copy_from_slice(q);
            self.carried = true;
        }
        let a_k = self.carried_a.as_slice();
        for (((x, q), v), a) in self
            .x_next
            .as_mut_slice()
            .iter_mut()
            .zip(&*q)
            .zip(&*v)
            .zip(a_k)
        {
            *x = next_position(*q, *v, *a, h);
        }
        check_finite_slice(self.x_next.as_slice(), "q", t)?;
        let cost = self.rule.acceleration(
            &mut self.system,
            model,
            self.x_next.as_slice(),
            Some(self.carried_a.as_slice()),
            beta_h2,
            self.a_next.as_mut_slice(),
            self.scratch.as_mut_slice(),
            t,
        )?;
        add(&mut report, cost);
        let (a_k, a_next) = (self.carried_a.as_slice(), self.a_next.as_slice());
        for (((v_next, v), a), b) in self
            .v_next
            .as_mut_slice()
            .iter_mut()
            .zip(&*v)
            .zip(a_k)
            .zip(a_next)
        {
            *v_next = next_velocity(*v, *a, *b, h);
        }
        check_finite_slice(self.v_next.as_slice(), "v", t)?;
        accept(
            &mut self.system,
            &mut self.watch,
            model,
            t,
            (q, v),
            (&mut self.x_next, &self.v_next, &mut self.a_next),
            (&mut self.carried_x, &mut self.carried_a),
        )?;
        Ok(report)
    }
}

/// Adds the cost of one acceleration to the step's report.
fn add(report: &mut StepReport, cost: StepReport) {
    report.factorizations += cost.factorizations;
    report.newton_iterations += cost.newton_iterations;
}

impl<S: CarriedTier, R: UsesBeta> CarriedScheme<S, R> {
    /// Returns the parameter `β`.
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// Sets `β` (default 0.4); fails with `BadParameter` unless it is finite and `≥ 0`.
    ///
    /// `β ≥ ¼` makes the method unconditionally linearly stable (`β > ¼ + O(ε)` for stiff
    /// Z&Ss); smaller values are accepted (`β = 0` is explicit velocity Verlet) but stable only
    /// for small `h`.
    pub fn with_beta(mut self, beta: f64) -> Result<Self, StepError> {
        self.beta = check_beta(beta)?;
        self.carried = false;
        Ok(self)
    }
}

/// The carried acceleration `a_k` (with the `x_k` it was computed at) and the energy guard's
/// run. The acceleration is saved rather than recomputed: recomputing it costs a factorization,
/// and for a rule that starts a Newton iteration from the previous acceleration
/// (push-forward Newmark) it is the warm start, which changes the next step's bits.
impl<S: CarriedTier, R> CarriedState for CarriedScheme<S, R> {
    fn identity(&self) -> IntegratorIdentity {
        IntegratorIdentity::new(format!(
            "CarriedScheme<{}>",
            crate::checkpoint::short_type_name::<R>()
        ))
        .setting("h", self.h)
        .setting("beta", self.beta)
        .setting("energy_guard", self.watch.limit())
        .setting("n", self.carried_x.as_slice().len() as f64)
    }

    fn save(&self, out: &mut Carried) {
        out.put_flag("carried", self.carried);
        out.put("carried.x", self.carried_x.as_slice());
        out.put("carried.a", self.carried_a.as_slice());
        self.watch.save(out);
    }

    fn restore(&mut self, from: &Carried) -> Result<(), CheckpointError> {
        let n = self.carried_x.as_slice().len();
        let carried = from.flag("carried")?;
        let x = from.values("carried.x", n)?;
        let a = from.values("carried.a", n)?;
        let mut watch = self.watch.clone();
        watch.restore(from)?;
        self.carried = carried;
        self.carried_x.as_mut_slice().copy_from_slice(x);
        self.carried_a.as_mut_slice().copy_from_slice(a);
        self.watch = watch;
        Ok(())
    }
}
