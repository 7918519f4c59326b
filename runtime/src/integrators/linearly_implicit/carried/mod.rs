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

pub(crate) mod dense;
pub(crate) mod sparse;

pub use dense::CarriedDense;
pub use sparse::{CarriedSparse, SparseHessian};

use crate::checkpoint::{Carried, CarriedState, CheckpointError, IntegratorIdentity};
use crate::error::StepError;
use crate::fma::mul_add;
use crate::integrators::checks::{all_by_fours, check_finite_slice, check_step_size};
use crate::integrators::{EnergyGuard, EnergyWatch, StepReport, TierVector};
use crate::model::GeneratedSolve;

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
/// both tiers. Everything the methods share is written once here, on slices: the update
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

/// The storage of a tier: the vector type of the scheme's buffers.
pub trait CarriedTier {
    /// A vector of the model's `n` coordinates: `[f64; N]` or `Vec<f64>`.
    type Vector: TierVector;
}

/// How a method computes the acceleration `a(x)` that the scheme carries, on tier `S`.
pub trait AccelerationRule<Model: ?Sized, S> {
    /// The method's name in errors.
    const NAME: &'static str;

    /// Writes `a(x)` into `out` and returns its cost; `guess` is the previous acceleration,
    /// if any (a Newton starting point), `scratch` a free vector of `n` entries.
    #[allow(clippy::too_many_arguments)]
    fn acceleration(
        &mut self,
        system: &mut S,
        model: &Model,
        x: &[f64],
        guess: Option<&[f64]>,
        beta_h2: f64,
        out: &mut [f64],
        scratch: &mut [f64],
        t: f64,
    ) -> Result<StepReport, StepError>;

    /// Writes `a(x)` into `out` with the code `mechanism!` generated for the model alone — no
    /// generic kernel, no check, no error — and returns its cost; `None` where the model has
    /// no such code or the code declined (a pivot that is not clearly positive, a value that
    /// is not finite). The scheme then runs [`acceleration`](Self::acceleration), which
    /// either succeeds with its generic kernels or reports the culprit, so a `Some` here only
    /// saves time: it is the same arithmetic as `acceleration`'s generated branch. The default
    /// has none.
    #[inline]
    fn generated_acceleration(
        &mut self,
        system: &mut S,
        model: &Model,
        x: &[f64],
        beta_h2: f64,
        out: &mut [f64],
        scratch: &mut [f64],
    ) -> Option<StepReport> {
        let _ = (system, model, x, beta_h2, out, scratch);
        None
    }
}

/// The defaults of a rule: `β` and the rule's settings.
pub trait RuleDefaults: Default {
    /// The default `β` (0 for the explicit rule, which ignores it).
    const DEFAULT_BETA: f64;
}

/// A rule whose scheme has a parameter `β` that the user may set.
pub trait UsesBeta {}

/// The seam of the energy guard ([`EnergyGuard`]): the model's energy on the tier's storage.
pub trait EnergyTerms<Model: ?Sized> {
    /// Returns `H(x, v) = T(x, v) + V(x)`.
    fn energy(&mut self, model: &Model, x: &[f64], v: &[f64]) -> f64;

    /// Returns `(T(x, v), V(x), |∇V(x)|₁)`, the terms of the guard's scale at the start of a
    /// run, with `scratch` (`n` entries) for the gradient.
    fn energy_terms(
        &mut self,
        model: &Model,
        x: &[f64],
        v: &[f64],
        scratch: &mut [f64],
    ) -> (f64, f64, f64);
}

/// The seam of the explicit rules: `∇V` and solves with the mass matrix.
pub trait MassSolve<Model: ?Sized> {
    /// Writes `∇V(x)` into `grad`.
    fn gradient(&mut self, model: &Model, x: &[f64], grad: &mut [f64]);

    /// Overwrites `b` with `M(x)⁻¹ b`; returns the factorizations of `M` it took (0 while a
    /// constant `M` is unchanged, else 1).
    fn solve_mass(
        &mut self,
        model: &Model,
        x: &[f64],
        b: &mut [f64],
        t: f64,
    ) -> Result<u32, StepError>;

    /// Overwrites `b` with `M(x)⁻¹ b` with the code `mechanism!` generated for the model
    /// (`Inertia::mass_solve`), or says why not; the default has none.
    #[inline]
    fn generated_solve_mass(&mut self, model: &Model, x: &[f64], b: &mut [f64]) -> GeneratedSolve {
        let _ = (model, x, b);
        GeneratedSolve::NotGenerated
    }
}

/// Which Hessian an [`ImplicitSolve`] factors with `M`: `Hess V` (Z&S, Z&Ss) ...
#[derive(Clone, Copy, Debug, Default)]
pub struct FullHessian;

/// ... or the Hessian of the stiff part of a split potential (stiff Z&Ss).
#[derive(Clone, Copy, Debug, Default)]
pub struct StiffHessian;

/// The seam of the linearly implicit rules: `a = −(M(x) + βh² H(x))⁻¹ ∇V(x)` with the Hessian
/// `H` that `Which` names, one factorization.
pub trait ImplicitSolve<Model: ?Sized, Which> {
    /// Writes `−(M(x) + βh² H(x))⁻¹ ∇V(x)` into `out`; returns the factorizations (1).
    fn implicit_acceleration(
        &mut self,
        model: &Model,
        x: &[f64],
        beta_h2: f64,
        out: &mut [f64],
        t: f64,
    ) -> Result<u32, StepError>;

    /// Writes `−(M(x) + βh² H(x))⁻¹ ∇V(x)` into `out` with the code `mechanism!` generated
    /// for the model (`implicit_acceleration` and its stiff and penalized kin), or says why
    /// not; the default has none.
    #[inline]
    fn generated_implicit_acceleration(
        &mut self,
        model: &Model,
        x: &[f64],
        beta_h2: f64,
        out: &mut [f64],
    ) -> GeneratedSolve {
        let _ = (model, x, beta_h2, out);
        GeneratedSolve::NotGenerated
    }
}

/// The seam of one-iteration Newmark: one Newton iteration on `M a + ∇V(y) = 0` with the
/// Jacobian `M(y) + βh² H(y)`, `H` the Hessian that `Which` names.
pub trait NewtonIterate<Model: ?Sized, Which> {
    /// Writes `a − (M(y) + βh² H(y))⁻¹ (M(y) a + ∇V(y))` into `out`; returns the
    /// factorizations (1).
    fn newton_iterate(
        &mut self,
        model: &Model,
        y: &[f64],
        a: &[f64],
        beta_h2: f64,
        out: &mut [f64],
        t: f64,
    ) -> Result<u32, StepError>;
}

/// The seam of the Newmark scheme ([`NewmarkScheme`](super::NewmarkScheme)) besides the
/// corrector's: the consistent acceleration a run starts (and restarts) from, and the rounding
/// of `βh²` in `q_{k+1} = q̃ + βh² a_{k+1}`.
///
/// Both hooks exist so that each tier keeps, bit for bit, the arithmetic it had before the two
/// tiers shared the scheme: the fixed-size tier started from a Cholesky solve with `M` (never
/// the generated scaling by a constant diagonal's reciprocals, which rounds differently) and
/// multiplied `a_{k+1}` by `β·(h·h)`; the sparse tier solves with its factor of the mass
/// blocks and multiplies by `(β·h)·h`, as in the predictor of the Newton iterate.
pub trait NewmarkSystem<Model: ?Sized>: MassSolve<Model> + EnergyTerms<Model> {
    /// Writes the consistent acceleration `a = −M(q)⁻¹ ∇V(q)` into `out`; returns the
    /// factorizations of `M` it took (0 while a constant `M` is unchanged, else 1). Fails if
    /// `∇V(q)` is not finite or `M` cannot be factored.
    fn start_acceleration(
        &mut self,
        model: &Model,
        q: &[f64],
        out: &mut [f64],
        t: f64,
    ) -> Result<u32, StepError> {
        self.gradient(model, q, out);
        check_finite_slice(out, "gradient", t)?;
        let factorizations = self.solve_mass(model, q, out, t)?;
        out.iter_mut().for_each(|a| *a = -*a);
        Ok(factorizations)
    }

    /// Returns `βh²` as the corrector `q_{k+1} = q̃ + βh² a_{k+1}` multiplies it (default
    /// `(β·h)·h`).
    #[inline(always)]
    fn corrector_coefficient(beta: f64, h: f64) -> f64 {
        beta * h * h
    }
}

/// The seam of full Z&S: `a·V‴(x)·a` as a vector.
pub trait ThirdContraction<Model: ?Sized> {
    /// Writes `a·V‴(x)·a` into `out`.
    fn third_contraction(&mut self, model: &Model, x: &[f64], a: &[f64], out: &mut [f64]);
}

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

/// The accept tail of a carried step on tier `S`, shared by [`CarriedScheme`] and
/// [`NewmarkScheme`](super::NewmarkScheme): checks the energy of `(x_next, v_next)` with the
/// guard (on failure nothing is written), then writes them into `(q, v)` and makes
/// `(x_next, a_next)` the carried configuration and acceleration (the old carried vectors
/// become the next step's scratch).
pub(crate) fn accept<Model: ?Sized, S: CarriedTier + EnergyTerms<Model>>(
    system: &mut S,
    watch: &mut EnergyWatch<S::Vector>,
    model: &Model,
    t: f64,
    (q, v): (&mut [f64], &mut [f64]),
    (x_next, v_next, a_next): (&mut S::Vector, &S::Vector, &mut S::Vector),
    (carried_x, carried_a): (&mut S::Vector, &mut S::Vector),
) -> Result<(), StepError> {
    let (x, w) = (x_next.as_slice(), v_next.as_slice());
    watch.check_and_accept(|| system.energy(model, x, w), x, t)?;
    q.copy_from_slice(x);
    v.copy_from_slice(w);
    std::mem::swap(carried_x, x_next);
    std::mem::swap(carried_a, a_next);
    Ok(())
}

/// Returns `x_{k+1} = x_k + h v_k + ½ h² a_k` for one component, as `½h²·a + (h·v + x)`
/// with each multiply-add fused where the target has FMA ([`mul_add`]): without FMA the
/// bits of `x + h v + ½ h² a` evaluated left to right, with FMA two roundings fewer and
/// two operations shorter on the chain from one step's acceleration to the next.
#[inline(always)]
pub(crate) fn next_position(x: f64, v: f64, a: f64, h: f64) -> f64 {
    mul_add(0.5 * h * h, a, mul_add(h, v, x))
}

/// Returns `v_{k+1} = v_k + ½ h (a_k + a_{k+1})` for one component, as `½h·(a + b) + v`,
/// fused where the target has FMA, as [`next_position`].
#[inline(always)]
pub(crate) fn next_velocity(v: f64, a: f64, b: f64, h: f64) -> f64 {
    mul_add(0.5 * h, a + b, v)
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
