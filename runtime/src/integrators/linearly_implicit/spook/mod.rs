//! SPOOK: the regularized and stabilized linearly implicit stepper of Lacoursière (2007).
//!
//! One scheme, two tiers. [`SpookScheme`] holds the method (the step size, per-row overrides
//! of `ε`, `τ`, `γ`) and runs the step of eq. 27–29 once for both tiers: it asks a
//! [`SpookSystem`] to evaluate the model at `q_k`, forms `Σ`, `Υ`, `Γ` and the row right-hand
//! sides, asks the system to solve eq. 29, and commits `q_{k+1} = q_k + h v_{k+1}`. Only the
//! linear algebra differs, behind the system:
//!
//! - [`Spook`] = `SpookScheme<SpookDense<N, M, K>>`, the fixed-size tier: the Schur complements
//!   of eq. 30 with stack-allocated Cholesky factors, and the elimination of the multipliers
//!   when `M` is singular;
//! - [`SparseSpook`] = `SpookScheme<SpookSparse>`, the sparse tier: the quasi-definite
//!   matrix of eq. 29 factored by a sparse `LDLᵀ` whose pattern is analysed once, with the
//!   unknowns numbered body by body and each row right after the last body it touches.

pub(crate) mod dense;
mod factor;
mod jacobian;
pub(crate) mod sparse;
mod sparse_jacobian;
mod sparse_linearization;

pub use dense::SpookDense;
pub use sparse::SpookSparse;

use crate::checkpoint::{fnv1a, Carried, CheckpointError, IntegratorIdentity};
use crate::error::StepError;
use crate::integrators::checks::{check_finite_slice, check_step_size};
use crate::integrators::{DivergenceGuard, StepReport};
use crate::model::{spook_rhs, Regularization, Relaxation};

/// SPOOK for `M` holonomic and `K` nonholonomic constraints on `N` coordinates: one linear
/// solve per step.
///
/// From C. Lacoursière, *Regularized, Stabilized, Variational Methods for Multibodies* (SIMS
/// 2007), §3–4. Each holonomic row `i` has a compliance `εᵢ ≥ 0` and a relaxation time
/// `τᵢ ≥ 0`, each nonholonomic row `j` a compliance `γⱼ ≥ 0` (eq. 27):
///
/// ```text
/// Γ = (1/h) diag(γⱼ),    Σ = (4/h²) diag(εᵢ / (1 + 4τᵢ/h)),    Υ = diag(1 / (1 + 4τᵢ/h))
/// ```
///
/// Linearizing the holonomic constraints (eq. 28), the step from `(q_k, v_k)` solves (eq. 29)
///
/// ```text
/// [ M   −Aᵀ  −Gᵀ ] [ v_{k+1} ]   [ r ]      r = M v_k − h ∇V(q_k) + h f(q_k, v_k, t_k)
/// [ A    Γ    0  ] [    α    ] = [ s ],     s = w(t_k)
/// [ G    0    Σ  ] [    λ    ]   [ t ]      t = −(4/h) Υ g(q_k) + Υ G v_k
/// ```
///
/// with `M`, `A`, `G` evaluated at `q_k`, followed by `q_{k+1} = q_k + h v_{k+1}` (the
/// discretization of eq. 12). Here `A(q) v = w(t)` are the nonholonomic rows
/// ([`Nonholonomic`](crate::model::Nonholonomic); `Γα + A v_{k+1} = w` is eq. 24 with its driving term, relaxed by `γ` as
/// the Rayleigh function of eq. 18–19 prescribes) and `f` is the model's non-potential force
/// ([`AppliedForces`](crate::model::AppliedForces): dissipation `−∂R/∂v` plus the `forces` section), taken explicitly at the
/// start of the step as eq. 29's `h f⁽⁺⁾(k−1, k)`. A model without nonholonomic rows has
/// `K = 0`, the default, and one without forces the zero `AppliedForces`; `mechanism!` emits
/// both, so a model's rows and forces are never dropped silently.
///
/// On the fixed-size tier the system is solved through the Schur complement of eq. 30, block
/// by block (the sparse tier factors the whole quasi-definite matrix instead, see
/// [`SpookSparse`]):
///
/// ```text
/// S_GG = G M⁻¹ Gᵀ + Σ,   S_AA = A M⁻¹ Aᵀ + Γ,   S_AG = A M⁻¹ Gᵀ
/// (S_AA − S_AG S_GG⁻¹ S_AGᵀ) α = (s − A M⁻¹ r) − S_AG S_GG⁻¹ (t − G M⁻¹ r)
/// λ = S_GG⁻¹ (t − G M⁻¹ r − S_AGᵀ α),    v_{k+1} = M⁻¹ (r + Aᵀ α + Gᵀ λ)
/// ```
///
/// Where `mechanism!` generated the whole step for the model
/// ([`Holonomic::spook_step`](crate::model::Holonomic::spook_step): a constant diagonal `M`, no
/// nonholonomic rows), the fixed-size tier runs that instead — the same operations in the same
/// order, specialized to the structural nonzeros, with `Σ` and `Υ` kept between steps — and
/// runs the generic step wherever the generated one declines (a pivot that is not clearly
/// positive, a non-finite value) or the divergence guard rejects its result, so that errors
/// are reported as without it.
///
/// Both factored matrices are symmetric positive definite as soon as `Σ > 0` and `Γ > 0`, even
/// when `G` or `A` is rank deficient (redundant constraints; the scheme is then still linearly
/// stable, Theorem 5.1). With `ε = 0` or `γ = 0` (ideal rows) the rows must be independent, or
/// the step fails with [`StepError::Singular`].
///
/// # Parameters
///
/// Theorem 5.1 proves linear stability for `ε > 0` and `τ > 0`. Eq. 34 also covers the edges:
/// with `ε = 0` and `τ > 0` the eigenvalues of the violation recurrence are inside the unit
/// circle (`τ = 2h`: a double eigenvalue `1/3`), so an ideal row with relaxation is stable;
/// with `τ = 0` they lie on the unit circle (violations are not damped), and with `ε = τ = 0`
/// they are a double `−1`, so violations grow linearly from round-off. That last combination is
/// therefore refused with [`StepError::BadParameter`] (by [`SpookScheme::with_regularization`],
/// and at the step for a model's default): it is not "the ideal constraint" of SHAKE/RATTLE,
/// whose position row is `g_{k+1} = 0`.
///
/// # Accuracy
///
/// Positions and velocities are first order in `h` (the abstract's "first order, fixed time
/// step" stepper): the step is symplectic Euler's — forces at `q_k`, then
/// `q_{k+1} = q_k + h v_{k+1}` — with the constraint impulse of eq. 29 added.
/// The constraint residual is not the position error: the linearization of eq. 28 leaves
/// `|g| = O(h²)` (the paper's Fig. 6), and the compliance leaves a floor. With `ε > 0` a row
/// acts as a stiff spring of compliance `ε` (§3), whose relaxed state is `g ≈ −ε λ` with `λ`
/// the constraint force, so as `h → 0` the residual does not vanish but plateaus at about
/// `ε |λ|`. With the default `ε = 1e-8` on the double pendulum (`m = g = 1`, forces of order 1),
/// `max |g|` over `t ∈ [0, 10]` is `3.6e-4`, `3.6e-6`, `4.3e-8`, `1.6e-8` and `1.3e-8` (to
/// `t = 1`) at `h = 1e-2 … 1e-6`: `O(h²)` down to `h ≈ 1e-4`, then the plateau of about
/// `1e-8`, i.e. `ε` times the rods' tension
/// (`cargo run --release --example double_pendulum -- --method spook --h 1e-5 --t-end 10
/// --save-every 0.01`, column `residual.position`). A residual below the plateau needs a
/// smaller `ε` (per row: [`SpookScheme::with_regularization`]), or RATTLE/SHAKE, which solve
/// `g(q_{k+1}) = 0` to their tolerance.
///
/// A step whose holonomic residual explodes (e.g. `h` far beyond the time scale of the motion)
/// fails with [`StepError::Diverged`] rather than return `Ok`; see [`DivergenceGuard`] and
/// [`SpookScheme::with_divergence_guard`].
///
/// The defaults are each row's [`Holonomic::regularization`](crate::model::Holonomic::regularization) (Lacoursière's `ε = 1e-8`,
/// `τ = 2h`) and [`Nonholonomic::nonholonomic_compliance`](crate::model::Nonholonomic::nonholonomic_compliance) (`γ = 1e-8`), overridable per row.
/// The mass matrix must be constant (`Inertia::CONSTANT_MASS`; a configuration-dependent `M`
/// is left to future work in §4 of the paper, and the step has no velocity terms
/// `∂T/∂q − Ṁv`), else the step fails with [`StepError::Unsupported`]. Its factor is reused
/// while `M` is unchanged; a singular `M` (massless coordinates) is handled by eliminating the
/// multipliers instead, which needs `Σ > 0` and `Γ > 0`. Holonomic constraints are evaluated at `t_k`; an explicit time
/// dependence of `g` (a `g_t` term) is not part of eq. 29 and is ignored, which is why
/// `mechanism!` refuses SPOOK for time-dependent holonomic constraints.
///
/// # Example
///
/// A unit mass in the plane whose velocity along `x` is driven, `ẋ = cos t` (a nonholonomic
/// row with `A = (1, 0)` and `w(t) = cos t`), so that `x(t) = sin t`:
///
/// ```
/// use mechanism_runtime::{
///     AppliedForces, ConstantMass, Holonomic, Inertia, Integrator, Nonholonomic, Potential,
///     SMatrix, SVector, Spook, State,
/// };
/// struct Driven;
/// impl ConstantMass<2> for Driven {}
/// impl Inertia<2> for Driven {
///     const CONSTANT_MASS: bool = true;
///     fn mass_matrix(&self, _q: &SVector<f64, 2>, m: &mut SMatrix<f64, 2, 2>) {
///         *m = SMatrix::identity();
///     }
/// }
/// impl Potential<2> for Driven {
///     fn potential(&self, _q: &SVector<f64, 2>) -> f64 { 0.0 }
///     fn potential_gradient(&self, _q: &SVector<f64, 2>, g: &mut SVector<f64, 2>) {
///         g.fill(0.0);
///     }
/// }
/// impl Holonomic<2, 0> for Driven {
///     const CONSTRAINTS: [&'static str; 0] = [];
///     fn constraints(&self, _: &SVector<f64, 2>, _: f64, _: &mut SVector<f64, 0>) {}
///     fn constraint_jacobian(&self, _: &SVector<f64, 2>, _: f64, _: &mut SMatrix<f64, 0, 2>) {}
/// }
/// impl Nonholonomic<2, 1> for Driven {
///     const NONHOLONOMIC: [&'static str; 1] = ["drive"];
///     fn nonholonomic_matrix(&self, _q: &SVector<f64, 2>, a: &mut SMatrix<f64, 1, 2>) {
///         *a = SMatrix::<f64, 1, 2>::new(1.0, 0.0);
///     }
///     fn nonholonomic_drive(&self, t: f64, w: &mut SVector<f64, 1>) {
///         w[0] = t.cos();
///     }
/// }
/// impl AppliedForces<2> for Driven {}
///
/// let mut spook = Spook::<2, 0, 1>::new(1e-3)?;
/// let mut state = State::new(0.0, [0.0, 0.0], [1.0, 0.0]);
/// for _ in 0..1000 {
///     spook.step(&Driven, &mut state)?;
/// }
/// assert!((state.q[0] - 1f64.sin()).abs() < 1e-3);
/// # Ok::<(), mechanism_runtime::StepError>(())
/// ```
pub type Spook<const N: usize, const M: usize, const K: usize = 0> =
    SpookScheme<SpookDense<N, M, K>>;

/// SPOOK on the sparse tier: a model with sizes known at construction
/// ([`SparseInertia`](crate::model::SparseInertia) and friends), stepped through one sparse
/// `LDLᵀ` of the quasi-definite matrix of eq. 29 per step; see [`SpookSparse`].
pub type SparseSpook = SpookScheme<SpookSparse>;

/// The SPOOK method over a tier's linear algebra `S`: the step size and the divergence guard
/// here, the per-row overrides and every buffer of a step in `S`.
///
/// Use it through [`Spook`] (fixed size) or [`SparseSpook`]; the scheme's equations are in the
/// docs of [`Spook`].
///
/// Why a shared scheme over a [`SpookSystem`] seam, rather than the fixed-size tier expressed
/// through the sparse traits: everything that is SPOOK — the coefficients `Σ`, `Υ`, `Γ` of
/// eq. 27, the right-hand side of eq. 29, the parameter checks, the divergence guard, the
/// update `q_{k+1} = q_k + h v_{k+1}` and keeping the state unchanged on failure — is written
/// once, here, on slices. What differs between the tiers is only how the linear system is
/// stored and solved: small models keep the Schur complements of eq. 30 on stack arrays (no
/// heap, no pattern, and the elimination of the multipliers when `M` is singular), large ones
/// factor the whole quasi-definite matrix on a pattern analysed once. Both tiers are checked
/// against each other in `runtime/tests/it/sparse_spook.rs`. (The dense Schur path is O(N³): on
/// the chain of 10 pendula the sparse tier is already about 4× faster, see
/// `benches/sparse_scaling.rs`, unless the model has the solve or the whole step `mechanism!`
/// generates, see [`Spook`].)
#[derive(Clone, Copy, Debug)]
pub struct SpookScheme<S> {
    h: f64,
    guard: DivergenceGuard,
    system: S,
}

/// The rows of eq. 29 at one step, as the tier's system stores them.
#[derive(Debug)]
pub struct SpookRows<'a> {
    /// `g(q_k)` (holonomic rows).
    pub g: &'a [f64],
    /// `G(q_k) v_k`.
    pub jac_v: &'a [f64],
    /// The diagonal of `Σ`, to be written.
    pub sigma: &'a mut [f64],
    /// The holonomic right-hand side `t = −(4/h) Υ g + Υ G v_k`, to be written.
    pub rhs: &'a mut [f64],
    /// The diagonal of `Γ` (nonholonomic rows), to be written.
    pub gamma: &'a mut [f64],
    /// Per-row overrides of the holonomic regularization.
    pub overrides: &'a [Option<Regularization>],
    /// Per-row overrides of the nonholonomic compliance.
    pub compliance_overrides: &'a [Option<f64>],
}

/// The linear algebra of one SPOOK step on one tier: the seam between [`SpookScheme`] and a
/// backend of [`linalg`](crate::linalg).
pub trait SpookSystem<Model: ?Sized> {
    /// Evaluates the model at `(q_k, v_k, t_k)`: `M`, `∇V`, the applied force `f`, `g`, `G`,
    /// `A` and `w`, and forms `r = M v_k − h ∇V + h f` and `G v_k`; fails on a non-finite value
    /// or a model the system was not built for.
    fn evaluate(
        &mut self,
        model: &Model,
        q: &[f64],
        v: &[f64],
        t: f64,
        h: f64,
    ) -> Result<(), StepError>;

    /// Returns the model's default regularization of holonomic row `row`.
    fn model_regularization(model: &Model, row: usize) -> Regularization;

    /// Returns the model's default compliance of nonholonomic row `row`.
    fn model_compliance(model: &Model, row: usize) -> f64;

    /// Returns the rows of the last evaluation and the buffers for their coefficients.
    fn rows(&mut self) -> SpookRows<'_>;

    /// Solves eq. 29 with the coefficients now in the rows (with the code `mechanism!`
    /// generated for `model` where it has some); returns the number of factorizations.
    fn solve(&mut self, model: &Model, t: f64) -> Result<u32, StepError>;

    /// Returns `(v_{k+1}, λ, α)` of the last solve.
    fn solution(&self) -> (&[f64], &[f64], &[f64]);

    /// Writes `q_{k+1} = q_k + h v_{k+1}` and, when `guarded`, evaluates `g(q_{k+1}, t_next)`
    /// and the row norms `|Gᵢ(q_k)|₁` for the divergence guard.
    fn configuration_after(&mut self, model: &Model, q: &[f64], h: f64, t_next: f64, guarded: bool);

    /// Returns `q_{k+1}` of [`configuration_after`](Self::configuration_after).
    fn next_configuration(&self) -> &[f64];

    /// Returns `g(q_k)`, `|Gᵢ(q_k)|₁` and `g(q_{k+1})` of a guarded
    /// [`configuration_after`](Self::configuration_after).
    fn guard_rows(&self) -> (&[f64], &[f64], &[f64]);

    /// Keeps the multipliers of the last solve as those of the last successful step.
    fn accept(&mut self);
}

impl<S> SpookScheme<S> {
    /// Returns the step size `h`.
    pub fn step_size(&self) -> f64 {
        self.h
    }

    /// Replaces the divergence guard (default: [`DivergenceGuard::default`]), which rejects a
    /// step whose constraint residual exploded with [`StepError::Diverged`].
    pub fn with_divergence_guard(mut self, guard: DivergenceGuard) -> Self {
        self.guard = guard;
        self
    }

    /// Runs one step of eq. 27–29 from `(t, q, v)`; writes `q_{k+1}`, `v_{k+1}` only on
    /// success.
    fn advance<Model: ?Sized>(
        &mut self,
        model: &Model,
        t: f64,
        q: &mut [f64],
        v: &mut [f64],
    ) -> Result<StepReport, StepError>
    where
        S: SpookSystem<Model>,
    {
        let h = self.h;
        self.system.evaluate(model, q, v, t, h)?;

        // Σ, Υ and Γ of eq. 27, and the right-hand side t of eq. 29.
        let rows = self.system.rows();
        let four_over_h = 4.0 / h;
        for row in 0..rows.g.len() {
            let regularization =
                rows.overrides[row].unwrap_or_else(|| S::model_regularization(model, row));
            let (sigma, upsilon) = holonomic_coefficients(&regularization, h)?;
            rows.sigma[row] = sigma;
            rows.rhs[row] = spook_rhs(upsilon, rows.jac_v[row], rows.g[row], four_over_h);
        }
        for row in 0..rows.gamma.len() {
            let compliance =
                rows.compliance_overrides[row].unwrap_or_else(|| S::model_compliance(model, row));
            rows.gamma[row] = nonholonomic_coefficient(compliance, h)?;
        }

        let factorizations = self.system.solve(model, t)?;
        let (v_next, lambda, alpha) = self.system.solution();
        check_finite_slice(lambda, "multipliers", t)?;
        check_finite_slice(alpha, "nonholonomic multipliers", t)?;
        check_finite_slice(v_next, "v", t)?;
        let guarded = !self.guard.is_disabled();
        self.system.configuration_after(model, q, h, t + h, guarded);
        let q_next = self.system.next_configuration();
        check_finite_slice(q_next, "q", t)?;
        if guarded {
            let (g, norms, g_next) = self.system.guard_rows();
            self.guard.check_rows(q, q_next, g, norms, g_next, t)?;
        }
        q.copy_from_slice(self.system.next_configuration());
        v.copy_from_slice(self.system.solution().0);
        self.system.accept();
        Ok(StepReport {
            factorizations,
            newton_iterations: 0,
        })
    }
}

/// Returns `(Σᵢᵢ, Υᵢᵢ)` of eq. 27 for a holonomic row with `regularization` at step size `h`,
/// or why the regularization is invalid: the one per-row rule of the step and of its Jacobian.
fn holonomic_coefficients(
    regularization: &Regularization,
    h: f64,
) -> Result<(f64, f64), StepError> {
    check_regularization(regularization)?;
    Ok(regularization.spook_coefficients(h))
}

/// Returns `Γⱼⱼ = γⱼ / h` of eq. 27 for a nonholonomic row of compliance `γ`, or why `γ` is
/// invalid.
fn nonholonomic_coefficient(compliance: f64, h: f64) -> Result<f64, StepError> {
    check_gamma(compliance)?;
    Ok(compliance / h)
}

/// Returns `BadParameter` unless `γ` is finite and non-negative.
fn check_gamma(gamma: f64) -> Result<(), StepError> {
    if gamma.is_finite() && gamma >= 0.0 {
        Ok(())
    } else {
        Err(StepError::BadParameter {
            name: "gamma",
            value: gamma,
            requirement: "must be finite and non-negative",
        })
    }
}

/// Why SPOOK refuses `ε = 0` together with `τ = 0` (see [`Spook`], "Parameters").
const IDEAL_ROW: &str = "must be positive when epsilon = 0: with ε = τ = 0 the constraint \
    row of eq. 29 is ¼(g_{k+1} + 2g_k + g_{k−1}) = 0, whose violations have the double \
    eigenvalue −1 (eq. 34 with θ = 0, ψ = 1) and grow without bound; use τ > 0 (the default \
    is 2h) or ε > 0, or SHAKE/RATTLE for a constraint held exactly";

/// Returns `BadParameter` unless `ε` and `τ` are finite and non-negative and not both zero.
fn check_regularization(regularization: &Regularization) -> Result<(), StepError> {
    let epsilon = regularization.epsilon;
    if !(epsilon.is_finite() && epsilon >= 0.0) {
        return Err(StepError::BadParameter {
            name: "epsilon",
            value: epsilon,
            requirement: "must be finite and non-negative",
        });
    }
    let (name, tau) = match regularization.tau {
        Relaxation::Seconds(tau) => ("tau", tau),
        Relaxation::Steps(k) => ("tau / h", k),
    };
    if !(tau.is_finite() && tau >= 0.0) {
        return Err(StepError::BadParameter {
            name,
            value: tau,
            requirement: "must be finite and non-negative",
        });
    }
    if epsilon == 0.0 && tau == 0.0 {
        return Err(StepError::BadParameter {
            name,
            value: tau,
            requirement: IDEAL_ROW,
        });
    }
    Ok(())
}

/// Returns `BadParameter` unless `row < rows`.
fn check_row(row: usize, rows: usize, requirement: &'static str) -> Result<(), StepError> {
    if row < rows {
        Ok(())
    } else {
        Err(StepError::BadParameter {
            name: "row",
            value: row as f64,
            requirement,
        })
    }
}

/// Creates the scheme around a system, checking the step size.
fn scheme<S>(h: f64, system: S) -> Result<SpookScheme<S>, StepError> {
    Ok(SpookScheme {
        h: check_step_size(h)?,
        guard: DivergenceGuard::default(),
        system,
    })
}

/// The setters shared by both tiers: per-row overrides, validated as they are set.
impl<S: SpookOverrides> SpookScheme<S> {
    /// Overrides the regularization of holonomic row `row`.
    ///
    /// Fails with `BadParameter` if `row` is not a holonomic row, if `ε` or `τ` is negative or
    /// not finite, or if both are zero (see "Parameters" on [`Spook`]).
    pub fn with_regularization(
        mut self,
        row: usize,
        regularization: Regularization,
    ) -> Result<Self, StepError> {
        let overrides = self.system.overrides_mut();
        check_row(
            row,
            overrides.len(),
            "must be less than the number of holonomic constraint rows",
        )?;
        check_regularization(&regularization)?;
        overrides[row] = Some(regularization);
        Ok(self)
    }

    /// Overrides the compliance `γ` of nonholonomic row `row`.
    ///
    /// Fails with `BadParameter` if `row` is not a nonholonomic row, or if `γ` is negative or
    /// not finite.
    pub fn with_nonholonomic_compliance(
        mut self,
        row: usize,
        gamma: f64,
    ) -> Result<Self, StepError> {
        let overrides = self.system.compliance_overrides_mut();
        check_row(
            row,
            overrides.len(),
            "must be less than the number of nonholonomic rows",
        )?;
        check_gamma(gamma)?;
        overrides[row] = Some(gamma);
        Ok(self)
    }
}

/// Where a tier's system keeps the per-row overrides of [`SpookScheme`].
pub trait SpookOverrides {
    /// The holonomic rows' regularization overrides.
    fn overrides_mut(&mut self) -> &mut [Option<Regularization>];
    /// The nonholonomic rows' compliance overrides.
    fn compliance_overrides_mut(&mut self) -> &mut [Option<f64>];
}

impl<S> SpookScheme<S> {
    /// Returns the identity of SPOOK on the tier `tier` with the rows' overrides `overrides`
    /// (hashed: they change the results as `h` does).
    fn spook_identity(&self, tier: &str, overrides: &str) -> IntegratorIdentity {
        IntegratorIdentity::new(format!(
            "{tier} [row overrides {:016x}]",
            fnv1a(overrides.as_bytes(), 0)
        ))
        .setting("h", self.h)
        .setting("divergence_guard", self.guard.limit())
    }
}

/// Writes SPOOK's multipliers of the last step: the next step does not read them (SPOOK solves
/// for them afresh from `q_k`, `v_k`), but a run's multiplier columns do.
fn save_multipliers(out: &mut Carried, holonomic: &[f64], nonholonomic: &[f64]) {
    out.put("multipliers", holonomic);
    out.put("nonholonomic_multipliers", nonholonomic);
}

/// Restores what [`save_multipliers`] wrote, checking both lengths first.
fn restore_multipliers(
    from: &Carried,
    holonomic: &mut [f64],
    nonholonomic: &mut [f64],
) -> Result<(), CheckpointError> {
    let lambda = from.values("multipliers", holonomic.len())?;
    let alpha = from.values("nonholonomic_multipliers", nonholonomic.len())?;
    holonomic.copy_from_slice(lambda);
    nonholonomic.copy_from_slice(alpha);
    Ok(())
}
