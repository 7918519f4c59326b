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
mod bordered;
mod dense;
mod error;
pub(crate) mod products;
mod sparse;

pub use block::BlockCholesky;
pub use bordered::BorderedLu;
pub(crate) use dense::mat_vec;
pub use dense::{Cholesky, Lu, SymmetricFactor};
pub use error::LinalgError;
pub use sparse::{Inertia, PivotSign, SparseLdlt, SparseLu};

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

    /// Overwrites each column of the column-major `b` (columns of length `rows`, e.g. the
    /// storage of an `SMatrix<f64, N, C>` with `rows = N`) with `A⁻¹` times it.
    fn solve_columns_in_place(&mut self, b: &mut [f64], rows: usize) -> Result<(), LinalgError> {
        if rows == 0 {
            return Ok(());
        }
        if !b.len().is_multiple_of(rows) {
            return Err(LinalgError::DimensionMismatch {
                expected: rows,
                found: b.len() % rows,
            });
        }
        b.chunks_exact_mut(rows)
            .try_for_each(|column| self.solve_in_place(column))
    }
}

/// Returns the error a [`LinearSolver::solve_in_place`] reports before solving, if any: no
/// factorization (`NotFactored`), a right-hand side of the wrong length (`DimensionMismatch`),
/// or one with a non-finite entry (`NonFinite`) — the same checks, in the same order, for
/// every backend.
pub(crate) fn check_solvable(
    factored: bool,
    dimension: usize,
    b: &[f64],
) -> Result<(), LinalgError> {
    if !factored {
        return Err(LinalgError::NotFactored);
    }
    if b.len() != dimension {
        return Err(LinalgError::DimensionMismatch {
            expected: dimension,
            found: b.len(),
        });
    }
    match b.iter().position(|x| !x.is_finite()) {
        Some(index) => Err(LinalgError::NonFinite { index }),
        None => Ok(()),
    }
}

/// Returns a new solver of type `S` holding the factorization of `a`: how an integrator of the
/// fixed-size tier factors a matrix of one step through the seam, e.g.
/// `factored::<Option<Cholesky<N>>>(&a)`.
///
/// ```
/// use mechanism_runtime::linalg::{factored, Cholesky, LinearSolver};
/// use mechanism_runtime::SMatrix;
/// let a = SMatrix::<f64, 2, 2>::new(4.0, 2.0, 2.0, 3.0);
/// let mut cholesky = factored::<Option<Cholesky<2>>>(&a)?;
/// let mut x = [6.0, 5.0];
/// cholesky.solve_in_place(&mut x)?;
/// assert!((x[0] - 1.0).abs() < 1e-15 && (x[1] - 1.0).abs() < 1e-15);
/// # Ok::<(), mechanism_runtime::linalg::LinalgError>(())
/// ```
pub fn factored<S: LinearSolver + Default>(a: &S::Matrix) -> Result<S, LinalgError> {
    let mut solver = S::default();
    solver.factor(a)?;
    Ok(solver)
}

/// Returns `A⁻¹ b` for a fixed-size `b`, through the seam.
pub(crate) fn solve_vector<S: LinearSolver + ?Sized, const R: usize>(
    solver: &mut S,
    b: &nalgebra::SVector<f64, R>,
) -> Result<nalgebra::SVector<f64, R>, LinalgError> {
    let mut x = *b;
    solver.solve_in_place(x.as_mut_slice())?;
    Ok(x)
}
