//! The Cholesky factor of the mass matrix, reused while a constant mass matrix is unchanged.

use nalgebra::{SMatrix, SVector};

use crate::error::StepError;
use crate::linalg::{Cholesky, LinalgError, LinearSolver, PivotSign, SparseLdlt};
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

/// The factor of a block-diagonal mass matrix (one dense block per body, the sparse tier's
/// `M`), reused while the blocks are unchanged: `M⁻¹ b` for Verlet's acceleration and Z&S's
/// third-derivative correction.
///
/// The blocks are factored by the sparse `LDLᵀ` of [`linalg`](crate::linalg) on the
/// block-diagonal pattern, analysed once in [`new`](Self::new): with the bodies' own order there
/// is no fill, so this is one Cholesky-like factorization per body, with every pivot required
/// to be positive (`M` must be positive definite) and no allocation after construction. As for
/// [`MassFactor`], the cache is keyed by the values themselves, so a changed mass parameter is
/// never solved with a stale factor.
#[derive(Debug)]
pub(crate) struct BlockMassFactor {
    ldlt: SparseLdlt,
    /// Value slot of each entry of the blocks' upper triangles, and its index in the blocks.
    slots: Vec<(usize, usize)>,
    values: Vec<f64>,
    /// The blocks of the last successful factorization.
    cached: Vec<f64>,
    factored: bool,
}

impl BlockMassFactor {
    /// Analyses the block-diagonal pattern of bodies with `body_sizes` coordinates each.
    pub(crate) fn new(body_sizes: &[usize]) -> Result<Self, LinalgError> {
        let n = body_sizes.iter().sum();
        let (mut entries, mut indices) = (Vec::new(), Vec::new());
        let (mut first, mut offset) = (0, 0);
        for &size in body_sizes {
            for a in 0..size {
                for c in a..size {
                    entries.push((first + a, first + c));
                    indices.push(offset + a * size + c);
                }
            }
            first += size;
            offset += size * size;
        }
        let (ldlt, slots) = SparseLdlt::analyse(n, &entries, &vec![PivotSign::Positive; n])?;
        Ok(BlockMassFactor {
            values: vec![0.0; ldlt.value_count()],
            ldlt,
            slots: slots.into_iter().zip(indices).collect(),
            cached: vec![0.0; offset],
            factored: false,
        })
    }

    /// Factors the blocks (row-major, concatenated in body order) unless they equal those of
    /// the last successful factorization; returns the number of factorizations (0 or 1).
    pub(crate) fn factor(&mut self, blocks: &[f64]) -> Result<u32, LinalgError> {
        if blocks.len() != self.cached.len() {
            return Err(LinalgError::DimensionMismatch {
                expected: self.cached.len(),
                found: blocks.len(),
            });
        }
        if self.factored && same_slice_bits(blocks, &self.cached) {
            return Ok(0);
        }
        self.factored = false;
        self.values.fill(0.0);
        for &(slot, index) in &self.slots {
            self.values[slot] = blocks[index];
        }
        self.ldlt.factor(&self.values)?;
        self.cached.copy_from_slice(blocks);
        self.factored = true;
        Ok(1)
    }

    /// Overwrites `b` with `M⁻¹ b` for the last successful factorization.
    pub(crate) fn solve_in_place(&mut self, b: &mut [f64]) -> Result<(), LinalgError> {
        self.ldlt.solve_in_place(b)
    }
}

/// Returns whether `a` and `b` are equal bit for bit.
fn same_slice_bits(a: &[f64], b: &[f64]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}
