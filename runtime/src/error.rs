//! Typed errors of the runtime: each variant carries the values that explain it.

use thiserror::Error;

use crate::linalg::LinalgError;

/// Why a step (or the set-up of an integrator) failed.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum StepError {
    /// The step size is not a positive finite number.
    #[error("step size h = {h} is not a positive finite number")]
    BadStepSize {
        /// The rejected step size.
        h: f64,
    },
    /// A method parameter is out of its admissible range.
    #[error("parameter {name} = {value} is invalid: {requirement}")]
    BadParameter {
        /// The parameter's name.
        name: &'static str,
        /// The rejected value.
        value: f64,
        /// What the parameter must satisfy.
        requirement: &'static str,
    },
    /// The state handed to the integrator, or produced by it, contains NaN or infinity.
    #[error("non-finite {quantity}[{index}] at t = {t}")]
    NonFinite {
        /// Which quantity (`q`, `v`, `gradient`, …) was not finite.
        quantity: &'static str,
        /// The first offending component.
        index: usize,
        /// The time of the state the step started from.
        t: f64,
    },
    /// A linear system of the step could not be factored: a pivot (or, for the Langevin
    /// mass factor, an eigenvalue) vanishes relative to the matrix's own scale, so the matrix
    /// is singular or numerically semidefinite. A clearly negative one is
    /// [`NotPositiveDefinite`](Self::NotPositiveDefinite) instead.
    #[error("{matrix} is singular (a pivot vanishes relative to its scale) at t = {t}")]
    Singular {
        /// Which matrix failed (`mass matrix`, `Schur complement`, …).
        matrix: &'static str,
        /// The time of the state the step started from.
        t: f64,
    },
    /// A matrix the scheme requires to be symmetric positive definite (a mass matrix, a Schur
    /// complement) has a clearly negative pivot: it is indefinite or negative definite, e.g. a
    /// negative mass parameter.
    #[error("{matrix} is not positive definite (pivot {pivot:e} in row {row}) at t = {t}")]
    NotPositiveDefinite {
        /// Which matrix failed.
        matrix: &'static str,
        /// The first row whose pivot of `L D Lᵀ` (an eigenvalue, for a diagonal matrix) is
        /// negative.
        row: usize,
        /// That pivot.
        pivot: f64,
        /// The time of the state the step started from.
        t: f64,
    },
    /// The divergence guard ([`DivergenceGuard`](crate::integrators::DivergenceGuard)) caught a
    /// step whose result has left the constraint manifold's neighbourhood: the step is rejected
    /// and the state left unchanged.
    #[error(
        "step diverged at t = {t}: constraint row {row} has |g| = {residual:e}, {relative:e} \
         times its first-order scale |G|₁·|q|∞ + |g(q_k)| (the divergence guard's limit is \
         {limit:e}); reduce the step size, or change the limit with `with_divergence_guard`"
    )]
    Diverged {
        /// The constraint row.
        row: usize,
        /// `|g_row|` after the rejected step.
        residual: f64,
        /// `|g_row|` relative to the row's first-order scale, the guarded quantity.
        relative: f64,
        /// The limit it exceeded.
        limit: f64,
        /// The time of the state the step started from.
        t: f64,
    },
    /// The energy guard ([`EnergyGuard`](crate::integrators::EnergyGuard)) of an unconstrained
    /// or penalized method caught a step whose energy has left the band around the run's
    /// initial energy: the method is beyond its stability limit and the run is blowing up. The
    /// step is rejected and the state left unchanged.
    #[error(
        "step diverged at t = {t}: the energy H = {energy:e} has moved from its initial value \
         {initial:e} by more than {limit:e} times the run's energy scale {scale:e}; reduce the \
         step size, or change the limit with `with_energy_guard`"
    )]
    EnergyDiverged {
        /// `H = T + V` after the rejected step.
        energy: f64,
        /// `H₀`, the energy when the run started.
        initial: f64,
        /// The run's energy scale `E` (the guard's documentation).
        scale: f64,
        /// The limit on `|H − H₀| / E` it exceeded.
        limit: f64,
        /// The time of the state the step started from.
        t: f64,
    },
    /// A hard-constraint integrator (SHAKE, RATTLE, Livens) was handed a state whose
    /// configuration violates a holonomic row beyond the integrator's own tolerance. Such a step
    /// would enforce `g(q_{k+1}) = 0` in one step and turn the offset into a velocity jump of
    /// about `offset / h` (an energy error that grows as `h` shrinks), so it is refused instead.
    #[error(
        "the state at t = {t} is off the constraint manifold: |g| of row {row} is {residual:e}, \
         more than the integrator's tolerance {limit:e}; a hard-constraint step would turn the \
         offset into a velocity jump of about offset/h — start from a configuration with g(q) = 0"
    )]
    OffManifold {
        /// The first violated row.
        row: usize,
        /// `|g_row(q)|` of the handed state.
        residual: f64,
        /// The largest residual the integrator accepts (its Newton tolerance, scaled).
        limit: f64,
        /// The state's time.
        t: f64,
    },
    /// A Newton iteration did not converge.
    #[error("Newton iteration did not converge in {iterations} iterations (residual {residual:e}) at t = {t}")]
    NewtonDiverged {
        /// Iterations performed.
        iterations: usize,
        /// Norm of the last residual.
        residual: f64,
        /// The time of the state the step started from.
        t: f64,
    },
    /// An adaptive integrator's step size fell below what the time `t` can resolve before
    /// the error estimate met the tolerances (a singularity, or tolerances near round-off).
    #[error("step size h = {h:e} underflowed at t = {t} before the error tolerance was met")]
    StepSizeTooSmall {
        /// The last step size tried.
        h: f64,
        /// The time of the state the step started from.
        t: f64,
    },
    /// The model lacks a property the integrator's scheme assumes, e.g. a constant mass matrix.
    #[error("{integrator} cannot step this model: it requires {requirement}")]
    Unsupported {
        /// The integrator.
        integrator: &'static str,
        /// What the scheme needs of the model, and what to use instead.
        requirement: &'static str,
    },
    /// A sparse-tier model's description is inconsistent (sizes, sparsity patterns), or a state
    /// does not fit it; found when an integrator is built for the model or steps it.
    #[error("invalid {what} at index {index}: {reason}")]
    InvalidModel {
        /// What is invalid (`constraint jacobian pattern`, `body sizes`, `state q`, …).
        what: &'static str,
        /// The offending entry, row or length.
        index: usize,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A member of a parameter family (`m[i]`, one value per index of a size) is out of its
    /// admissible range: the [`BadParameter`](Self::BadParameter) of a family, with the index.
    #[error("parameter {family}[{index}] = {value} is invalid: {requirement}")]
    BadParameterMember {
        /// The parameter family's name.
        family: &'static str,
        /// The member's index.
        index: usize,
        /// The rejected value.
        value: f64,
        /// What the member must satisfy.
        requirement: &'static str,
    },
    /// A model's sizes need more memory than the machine has: refused by the generated
    /// `new(sizes)` of a model with families before it allocates
    /// ([`Footprint`](crate::model::size_checks::Footprint)).
    #[error(
        "the model needs about {needed} bytes ({:.1} GiB) at these sizes, more than the \
         {available} bytes ({:.1} GiB) this process can have; choose smaller sizes",
        gib(*.needed),
        gib(*.available)
    )]
    TooLarge {
        /// The estimated bytes of the model and one integrator's working set.
        needed: u64,
        /// The bytes available (the machine's free memory and swap, or a cgroup's limit).
        available: u64,
    },
    /// A linear system of the step could not be factored or solved (sparse tier).
    #[error("{matrix} at t = {t}: {source}")]
    LinearAlgebra {
        /// Which matrix failed (`SPOOK matrix [[M, Gᵀ], [G, −Σ]]`, …).
        matrix: &'static str,
        /// The time of the state the step started from.
        t: f64,
        /// What the solver found.
        source: LinalgError,
    },
}

/// Bytes in GiB, for messages.
fn gib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}

impl StepError {
    /// Returns a closure that puts a [`LinalgError`] of the matrix `matrix` in the context of
    /// the step from time `t`: a vanishing pivot is [`StepError::Singular`], a negative pivot
    /// where a positive one was required [`StepError::NotPositiveDefinite`], a non-finite entry
    /// [`StepError::NonFinite`] (naming the matrix), anything else
    /// [`StepError::LinearAlgebra`]. The kernels behind the seam never see `t`.
    pub fn linear_algebra(matrix: &'static str, t: f64) -> impl Fn(LinalgError) -> StepError {
        move |source| match source {
            LinalgError::ZeroPivot { .. } => StepError::Singular { matrix, t },
            LinalgError::WrongSignPivot {
                index,
                value,
                expected_positive: true,
            } => StepError::NotPositiveDefinite {
                matrix,
                row: index,
                pivot: value,
                t,
            },
            LinalgError::NonFinite { index } => StepError::NonFinite {
                quantity: matrix,
                index,
                t,
            },
            source => StepError::LinearAlgebra { matrix, t, source },
        }
    }
}
