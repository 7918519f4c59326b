//! The Cholesky factor of the mass matrix, reused while a constant mass matrix is unchanged.

use nalgebra::{SMatrix, SVector};

use crate::error::StepError;
use crate::linalg::{Cholesky, LinalgError, LinearSolver};
use crate::model::Inertia;

/// The Cholesky factor of the mass matrix, reused while a constant mass matrix is unchanged.
///
/// The cache is keyed by the matrix itself: a model whose `CONSTANT_MASS` is true is still asked
/// for `M` at every evaluation (cheap: it writes constants), and `M` is refactored whenever it
/// differs from the cached one, so swapping models or changing a mass parameter never reuses a
/// stale factor.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct MassFactor<const N: usize> {
    cached: Option<(SMatrix<f64, N, N>, Cholesky<N>)>,
}

impl<const N: usize> MassFactor<N> {
    /// Returns the factor of `m` and the number of factorizations it took (0 or 1).
    pub(crate) fn factor(
        &mut self,
        m: &SMatrix<f64, N, N>,
        constant: bool,
        t: f64,
    ) -> Result<(Cholesky<N>, u32), StepError> {
        if constant {
            if let Some((cached, chol)) = &self.cached {
                if cached == m {
                    return Ok((*chol, 0));
                }
            }
        }
        let wrap = StepError::linear_algebra("mass matrix", t);
        let mut solver: Option<Cholesky<N>> = None;
        solver.factor(m).map_err(&wrap)?;
        let chol = solver.ok_or(LinalgError::NotFactored).map_err(&wrap)?;
        self.cached = constant.then_some((*m, chol));
        Ok((chol, 1))
    }

    /// Returns the factor of `M(q)` of `model` and the number of factorizations it took.
    pub(crate) fn factor_at<Model: Inertia<N> + ?Sized>(
        &mut self,
        model: &Model,
        q: &SVector<f64, N>,
        t: f64,
    ) -> Result<(Cholesky<N>, u32), StepError> {
        let mut m = SMatrix::<f64, N, N>::zeros();
        model.mass_matrix(q, &mut m);
        self.factor(&m, Model::CONSTANT_MASS, t)
    }
}
