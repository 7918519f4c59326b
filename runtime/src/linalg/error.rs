//! Errors of the linear-solver seam, without the step's context: an integrator puts them in it
//! with [`StepError::linear_algebra`](crate::StepError::linear_algebra) (the matrix's name and
//! the time of the step), so no kernel needs to know about either.

use thiserror::Error;

/// Why a factorization or a solve failed.
#[derive(Clone, Copy, Debug, PartialEq, Error)]
pub enum LinalgError {
    /// An entry of the matrix, or of a right-hand side, is NaN or infinite.
    #[error("entry {index} is not finite")]
    NonFinite {
        /// The first offending entry, in the order the values were given.
        index: usize,
    },
    /// A pivot vanished relative to its column: the matrix is (numerically) singular.
    #[error("pivot {index} is {value:e}, numerically zero: the matrix is singular")]
    ZeroPivot {
        /// The unknown whose pivot vanished, in elimination order.
        index: usize,
        /// The pivot.
        value: f64,
    },
    /// A pivot of a symmetric factorization without pivoting has the wrong sign: the matrix is
    /// not positive definite (or, for a quasi-definite matrix, a regularized block is not
    /// negative definite).
    #[error("pivot {index} is {value:e} but must be {}", if *expected_positive { "positive" } else { "negative" })]
    WrongSignPivot {
        /// The unknown whose pivot has the wrong sign, in elimination order.
        index: usize,
        /// The pivot.
        value: f64,
        /// Whether the pivot had to be positive (else negative).
        expected_positive: bool,
    },
    /// A sparsity pattern handed to the analysis is invalid.
    #[error("invalid sparsity pattern: entry ({row}, {col}) {reason}")]
    Pattern {
        /// Row of the offending entry.
        row: usize,
        /// Column of the offending entry.
        col: usize,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A vector or value array has the wrong length for the analysed pattern.
    #[error("expected {expected} values, got {found}")]
    DimensionMismatch {
        /// The length the analysis fixed.
        expected: usize,
        /// The length given.
        found: usize,
    },
    /// `solve` was called before a successful `factor`.
    #[error("solve called before a successful factorization")]
    NotFactored,
    /// The backend could not allocate or analyse the pattern (at construction only).
    #[error("the symbolic analysis failed: {reason}")]
    Analysis {
        /// The backend's reason.
        reason: &'static str,
    },
}
