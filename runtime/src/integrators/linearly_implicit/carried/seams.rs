//! The seams of the carried scheme: the storage of a tier ([`CarriedTier`]), the acceleration
//! rule a method is ([`AccelerationRule`], with its defaults), and the capabilities a tier gives
//! the rules: the energy, `∇V` and solves with `M`, the linearly implicit solve, the Newton
//! iterate, the Newmark scheme's start and `a·V‴·a`.

use crate::error::StepError;
use crate::integrators::checks::check_finite_slice;
use crate::integrators::{StepReport, TierVector};
use crate::model::GeneratedSolve;

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

/// The seam of the energy guard ([`EnergyGuard`](crate::integrators::EnergyGuard)): the model's
/// energy on the tier's storage.
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

/// The seam of the Newmark scheme ([`NewmarkScheme`](super::super::NewmarkScheme)) besides the
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
