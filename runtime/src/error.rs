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
    /// A linear system of the step could not be factored.
    #[error("{matrix} is singular or not positive definite at t = {t}")]
    Singular {
        /// Which matrix failed (`mass matrix`, `Schur complement`, …).
        matrix: &'static str,
        /// The time of the state the step started from.
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

impl StepError {
    /// Returns a closure that wraps a [`LinalgError`] with the matrix's name and the step's time.
    pub fn linear_algebra(matrix: &'static str, t: f64) -> impl Fn(LinalgError) -> StepError {
        move |source| StepError::LinearAlgebra { matrix, t, source }
    }
}
