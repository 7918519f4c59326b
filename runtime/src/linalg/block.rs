//! Block-diagonal root-free Cholesky factorization with blocks of run-time sizes: the mass
//! matrix of a sparse-tier model, one small dense block per body.

// Index loops are how these kernels are written in every textbook (as in `dense.rs`).
#![allow(clippy::needless_range_loop)]

use super::{check_solvable, LinalgError, LinearSolver};

/// `A = L D Lᵀ` of a symmetric positive definite block-diagonal matrix, block by block, with
/// the block sizes fixed at construction; factoring and solving never allocate.
///
/// The matrix is given as its diagonal blocks, each dense and row-major, concatenated in block
/// order (the layout of [`SparseInertia::mass_blocks`](crate::model::SparseInertia::mass_blocks));
/// only the lower triangle of each block is read. Each block is factored as the fixed-size
/// [`Cholesky`](super::Cholesky) factors a matrix, with the same pivot rule: a pivot with
/// `D_jj < −s·ε·|A_jj|` is [`LinalgError::WrongSignPivot`], any other with `D_jj ≤ s·ε·|A_jj|`
/// is [`LinalgError::ZeroPivot`] (`s` the block size); the index of an error is the row of the
/// whole matrix.
///
/// # Example
///
/// ```
/// use mechanism_runtime::linalg::{BlockCholesky, LinearSolver};
/// // diag([2], [[4, 1], [1, 3]])
/// let mut chol = BlockCholesky::new(&[1, 2]);
/// chol.factor(&[2.0, 4.0, 1.0, 1.0, 3.0])?;
/// let mut x = [2.0, 5.0, 4.0];
/// chol.solve_in_place(&mut x)?;
/// assert!((x[0] - 1.0).abs() < 1e-15 && (x[1] - 1.0).abs() < 1e-15 && (x[2] - 1.0).abs() < 1e-15);
/// # Ok::<(), mechanism_runtime::linalg::LinalgError>(())
/// ```
#[derive(Clone, Debug)]
pub struct BlockCholesky {
    sizes: Vec<usize>,
    /// Each block's first row and the offset of its values.
    starts: Vec<(usize, usize)>,
    /// `L` strictly below the diagonal of each block, row-major, in the blocks' layout.
    factor: Vec<f64>,
    /// `D_jj` and `1 / D_jj`, one per row.
    pivots: Vec<f64>,
    inverse_pivots: Vec<f64>,
    /// Scratch of the largest block's size.
    scratch: Vec<f64>,
    factored: bool,
}

impl BlockCholesky {
    /// Creates the solver for blocks of the given sizes (the only allocation).
    pub fn new(sizes: &[usize]) -> Self {
        let mut starts = Vec::with_capacity(sizes.len());
        let (mut first, mut offset) = (0, 0);
        for &s in sizes {
            starts.push((first, offset));
            first += s;
            offset += s * s;
        }
        BlockCholesky {
            sizes: sizes.to_vec(),
            starts,
            factor: vec![0.0; sizes.iter().map(|s| s * s).sum()],
            pivots: vec![0.0; sizes.iter().sum()],
            inverse_pivots: vec![0.0; sizes.iter().sum()],
            scratch: vec![0.0; sizes.iter().copied().max().unwrap_or(0)],
            factored: false,
        }
    }

    /// Returns the order of the matrix (the sum of the block sizes).
    pub fn dimension(&self) -> usize {
        self.inverse_pivots.len()
    }

    /// Returns the number of values [`factor`](LinearSolver::factor) takes, `Σ s²`.
    pub fn value_count(&self) -> usize {
        self.factor.len()
    }

    /// Factors one block of size `s` whose values are `a` into `l` (and its pivots into `d`,
    /// their inverses into `inverse_pivots`), with its first row `first`; `w` is scratch of
    /// length `s`. The arithmetic is that of the fixed-size [`Cholesky`](super::Cholesky).
    fn factor_block(
        a: &[f64],
        l: &mut [f64],
        d: &mut [f64],
        inverse_pivots: &mut [f64],
        w: &mut [f64],
        first: usize,
    ) -> Result<(), LinalgError> {
        let s = d.len();
        let tolerance = s.max(1) as f64 * f64::EPSILON;
        l.copy_from_slice(a);
        for j in 0..s {
            let mut pivot = l[j * s + j];
            for k in 0..j {
                w[k] = l[j * s + k] * d[k];
                pivot -= w[k] * l[j * s + k];
            }
            let threshold = tolerance * a[j * s + j].abs();
            if !(pivot.is_finite() && pivot > threshold) {
                return Err(if pivot < -threshold {
                    LinalgError::WrongSignPivot {
                        index: first + j,
                        value: pivot,
                        expected_positive: true,
                    }
                } else {
                    LinalgError::ZeroPivot {
                        index: first + j,
                        value: pivot,
                    }
                });
            }
            d[j] = pivot;
            let inverse = 1.0 / pivot;
            inverse_pivots[j] = inverse;
            for i in j + 1..s {
                let mut sum = l[i * s + j];
                for k in 0..j {
                    sum -= l[i * s + k] * w[k];
                }
                l[i * s + j] = sum * inverse;
            }
        }
        Ok(())
    }
}

impl LinearSolver for BlockCholesky {
    /// The diagonal blocks, row-major, concatenated.
    type Matrix = [f64];

    fn factor(&mut self, a: &[f64]) -> Result<(), LinalgError> {
        self.factored = false;
        if a.len() != self.factor.len() {
            return Err(LinalgError::DimensionMismatch {
                expected: self.factor.len(),
                found: a.len(),
            });
        }
        if let Some(index) = a.iter().position(|x| !x.is_finite()) {
            return Err(LinalgError::NonFinite { index });
        }
        let (mut first, mut offset) = (0, 0);
        for &s in &self.sizes {
            Self::factor_block(
                &a[offset..offset + s * s],
                &mut self.factor[offset..offset + s * s],
                &mut self.pivots[first..first + s],
                &mut self.inverse_pivots[first..first + s],
                &mut self.scratch,
                first,
            )?;
            first += s;
            offset += s * s;
        }
        self.factored = true;
        Ok(())
    }

    fn solve_in_place(&mut self, b: &mut [f64]) -> Result<(), LinalgError> {
        check_solvable(self.factored, self.dimension(), b)?;
        for block in 0..self.sizes.len() {
            let (first, s) = (self.starts[block].0, self.sizes[block]);
            self.solve_block(block, &mut b[first..first + s]);
        }
        Ok(())
    }
}

impl BlockCholesky {
    /// Overwrites `x` with `A_b⁻¹ x` for block `block` of the last successful factorization
    /// (`x` has the block's size): a solve that touches one body only, for callers that hold
    /// per-body data and have checked the factorization and the sizes.
    pub(crate) fn solve_block(&self, block: usize, x: &mut [f64]) {
        let ((first, offset), s) = (self.starts[block], self.sizes[block]);
        let l = &self.factor[offset..offset + s * s];
        for k in 0..s {
            for i in k + 1..s {
                x[i] -= l[i * s + k] * x[k];
            }
        }
        for i in 0..s {
            x[i] *= self.inverse_pivots[first + i];
        }
        for k in (0..s).rev() {
            let mut sum = x[k];
            for i in k + 1..s {
                sum -= l[i * s + k] * x[i];
            }
            x[k] = sum;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::Cholesky;
    use nalgebra::{Matrix3, Vector3};

    #[test]
    fn agrees_with_the_fixed_size_cholesky_and_reports_bad_blocks() {
        let block = Matrix3::new(4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0);
        let mut values = vec![5.0];
        for i in 0..3 {
            for j in 0..3 {
                values.push(block[(i, j)]);
            }
        }
        let mut chol = BlockCholesky::new(&[1, 3]);
        chol.factor(&values).unwrap();
        let mut x = [10.0, 1.0, -2.0, 0.5];
        chol.solve_in_place(&mut x).unwrap();
        let dense = Cholesky::try_new(&block)
            .unwrap()
            .solve(&Vector3::new(1.0, -2.0, 0.5));
        assert!((x[0] - 2.0).abs() < 1e-15);
        for i in 0..3 {
            assert!((x[i + 1] - dense[i]).abs() < 1e-15);
        }
        values[4] = -3.0; // second row of the 3×3 block: indefinite
        values[1] = 1.0;
        let err = chol.factor(&values).unwrap_err();
        assert!(
            matches!(
                err,
                LinalgError::WrongSignPivot {
                    index: 2,
                    expected_positive: true,
                    ..
                }
            ),
            "{err}"
        );
        assert_eq!(chol.solve_in_place(&mut x), Err(LinalgError::NotFactored));
        values[0] = 0.0;
        assert!(matches!(
            chol.factor(&values),
            Err(LinalgError::ZeroPivot { index: 0, .. })
        ));
    }
}
