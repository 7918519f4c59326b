//! The linear-solver seam: every factorization of a step goes through [`LinearSolver`].
//!
//! Three backends sit behind it:
//!
//! - **dense, fixed size** ([`Cholesky`], [`Lu`], [`SymmetricFactor`]; as a [`LinearSolver`],
//!   `Option<Cholesky<N>>` and so on, empty until the first factorization): `SMatrix<f64, N, N>`
//!   kernels on plain arrays for small models, never on the heap;
//! - **sparse** ([`SparseLdlt`], on `faer`): for the sparse tier, whose sizes are known when a
//!   model is constructed. The pattern is analysed once; each step refills values in place and
//!   factors and solves without allocating; [`SparseLu`], an `LU` without pivoting on a
//!   structurally symmetric pattern (the Newton matrix of SHAKE and RATTLE) on the same
//!   symbolic analysis;
//! - **block diagonal** ([`BlockCholesky`]): the mass matrix of a sparse-tier model, one small
//!   dense block per body.
//!
//! Failures are [`LinalgError`]s that say what went wrong with the matrix (a non-finite entry,
//! a vanishing or wrong-signed pivot), in both backends; no kernel knows the time or the name
//! of the matrix. An integrator puts them in the step's context with
//! [`StepError::linear_algebra`](crate::StepError::linear_algebra) (a vanishing pivot becomes
//! [`StepError::Singular`](crate::StepError::Singular), a negative one
//! [`StepError::NotPositiveDefinite`](crate::StepError::NotPositiveDefinite), …).

mod block;
mod dense;
mod error;
mod sparse;

pub use block::BlockCholesky;
pub use dense::{Cholesky, Lu, SymmetricFactor};
pub use error::LinalgError;
pub use sparse::{PivotSign, SparseLdlt, SparseLu};

/// A factorization that is set up once and then factors and solves at every step.
///
/// Setting up is the implementor's constructor (a sparse solver analyses its pattern there and
/// sizes all scratch memory); `factor` and `solve_in_place` never allocate.
pub trait LinearSolver {
    /// What is factored: a fixed-size matrix, or the values on an analysed pattern.
    type Matrix: ?Sized;

    /// Factors `a`, replacing any previous factorization; on error the solver holds none.
    fn factor(&mut self, a: &Self::Matrix) -> Result<(), LinalgError>;

    /// Overwrites `b` with `A⁻¹ b` for the last successful factorization.
    fn solve_in_place(&mut self, b: &mut [f64]) -> Result<(), LinalgError>;
}
