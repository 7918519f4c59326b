//! Sparse symmetric `LDLᵀ` with pivots of known sign, on a pattern analysed once.

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::ldlt::factor::LdltRegularization;
use faer::sparse::linalg::cholesky::simplicial::{
    self, SimplicialLdltRef, SymbolicSimplicialCholesky,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMat};
use faer::{Conj, MatMut, Par};

use super::{check_len, symbolic_cholesky, upper_pattern};
use crate::linalg::{check_solvable, LinalgError, LinearSolver};

/// The sign a pivot of [`SparseLdlt`] must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PivotSign {
    /// A positive pivot (a coordinate of a positive definite block).
    Positive,
    /// A negative pivot (a regularized multiplier row, `−Σ`).
    Negative,
}

/// The inertia of a symmetric matrix without zero eigenvalues: how many of its eigenvalues
/// are positive and how many negative ([`SparseLdlt::factor_with_inertia`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Inertia {
    /// The number of positive eigenvalues.
    pub positive: usize,
    /// The number of negative eigenvalues.
    pub negative: usize,
}

/// A sparse symmetric `A = L D Lᵀ` on a pattern analysed once, factored and solved per step
/// without heap allocation.
///
/// # Example
///
/// The quasi-definite `[[2, 1], [1, −1]]`, a coordinate and a multiplier row:
///
/// ```
/// use mechanism_runtime::linalg::{LinearSolver, PivotSign, SparseLdlt};
/// let (mut ldlt, slots) =
///     SparseLdlt::analyse(2, &[(0, 0), (0, 1), (1, 1)], &[PivotSign::Positive, PivotSign::Negative])?;
/// let mut values = vec![0.0; ldlt.value_count()];
/// for (slot, value) in slots.iter().zip([2.0, 1.0, -1.0]) {
///     values[*slot] = value;
/// }
/// ldlt.factor(&values)?;
/// let mut x = [3.0, 0.0];
/// ldlt.solve_in_place(&mut x)?;
/// assert!((x[0] - 1.0).abs() < 1e-15 && (x[1] - 1.0).abs() < 1e-15);
/// # Ok::<(), mechanism_runtime::linalg::LinalgError>(())
/// ```
pub struct SparseLdlt {
    /// The upper triangle of `A`'s pattern, compressed by column.
    pattern: SymbolicSparseColMat<usize>,
    /// The pattern of `L` (simplicial: the patterns here are chains, trees and bands).
    symbolic: SymbolicSimplicialCholesky<usize>,
    /// The values of `L` and `D` after the last successful factorization.
    factor_values: Vec<f64>,
    /// Scratch memory of the numeric factorization and the solve, sized in `analyse`.
    scratch: MemBuffer,
    /// The sign each pivot must have.
    signs: Vec<PivotSign>,
    /// Per-column scale of the upper triangle of `A` (largest absolute entry), refreshed by
    /// each factorization.
    column_scale: Vec<f64>,
    /// Whether `factor_values` holds a successful factorization.
    factored: bool,
}

impl SparseLdlt {
    /// Analyses the symmetric pattern of an `n × n` matrix given by `entries`, with the pivot
    /// signs `signs`; eliminates in index order.
    ///
    /// An entry `(i, j)` stands for both `A_ij` and `A_ji`, so either triangle may be given, and
    /// repeated entries share one value. Every diagonal entry is part of the pattern whether
    /// listed or not. Returns the solver and, for each entry, its slot in the value array that
    /// [`factor`](LinearSolver::factor) takes (the upper triangle, compressed by column). This is
    /// the only step that allocates.
    pub fn analyse(
        n: usize,
        entries: &[(usize, usize)],
        signs: &[PivotSign],
    ) -> Result<(Self, Vec<usize>), LinalgError> {
        if signs.len() != n {
            return Err(LinalgError::DimensionMismatch {
                expected: n,
                found: signs.len(),
            });
        }
        let (pattern, slots) = upper_pattern(n, entries)?;
        let symbolic = symbolic_cholesky(&pattern)?;
        let analysis = LinalgError::Analysis {
            reason: "faer could not size the scratch memory of the factorization",
        };
        let scratch = MemBuffer::try_new(StackReq::any_of(&[
            simplicial::factorize_simplicial_numeric_ldlt_scratch::<usize, f64>(n),
            symbolic.solve_in_place_scratch::<f64>(1),
        ]))
        .map_err(|_| analysis)?;
        let factor_values = vec![0.0; symbolic.len_val()];
        Ok((
            SparseLdlt {
                pattern,
                symbolic,
                factor_values,
                scratch,
                signs: signs.to_vec(),
                column_scale: vec![0.0; n],
                factored: false,
            },
            slots,
        ))
    }

    /// Returns the order `n` of the matrix.
    pub fn dimension(&self) -> usize {
        self.signs.len()
    }

    /// Returns the length of the value array [`factor`](LinearSolver::factor) takes: the number
    /// of stored entries of the upper triangle.
    pub fn value_count(&self) -> usize {
        self.pattern.row_idx().len()
    }

    /// Returns the number of stored entries of `L` (with `D` on its diagonal), a measure of fill.
    pub fn factor_entry_count(&self) -> usize {
        self.symbolic.len_val()
    }

    /// Returns `A x` for the matrix of `values`, written into `out` (for residual checks).
    pub fn multiply(&self, values: &[f64], x: &[f64], out: &mut [f64]) -> Result<(), LinalgError> {
        let n = self.dimension();
        for len in [x.len(), out.len()] {
            check_len(n, len)?;
        }
        check_len(self.value_count(), values.len())?;
        out.fill(0.0);
        let (col_ptr, row_idx) = (self.pattern.col_ptr(), self.pattern.row_idx());
        for col in 0..n {
            for p in col_ptr[col]..col_ptr[col + 1] {
                let row = row_idx[p];
                out[row] += values[p] * x[col];
                if row != col {
                    out[col] += values[p] * x[row];
                }
            }
        }
        Ok(())
    }

    /// Factors `A` like [`factor`](LinearSolver::factor) but whatever the pivots' signs, and
    /// returns the inertia: how many pivots are positive and how many negative.
    ///
    /// `A = L D Lᵀ` is a congruence, so by Sylvester's law of inertia these are the numbers of
    /// positive and negative eigenvalues of `A`. A saddle-point matrix `[[K, Gᵀ], [G, 0]]`
    /// with `G` of full row rank `m` has `m` negative eigenvalues plus one per negative
    /// eigenvalue of `K` on `ker G` (Gould 1985), which is how an equilibrium's stability and
    /// how many eigenvalues lie below a shift are counted without an eigensolver. Without
    /// pivoting the factorization of an indefinite matrix is not backward stable in general; a
    /// pivot at or below `n·ε` of its column's largest entry is reported as
    /// [`LinalgError::ZeroPivot`] (a singular or nearly singular `A`), never counted.
    pub fn factor_with_inertia(&mut self, values: &[f64]) -> Result<Inertia, LinalgError> {
        self.factor_numeric(values)?;
        let mut inertia = Inertia::default();
        for k in 0..self.dimension() {
            if self.pivot(k)? > 0.0 {
                inertia.positive += 1;
            } else {
                inertia.negative += 1;
            }
        }
        self.factored = true;
        Ok(inertia)
    }

    /// Returns the pivot `D_k` of the factorization just computed, or
    /// [`LinalgError::ZeroPivot`] if it is at or below `n·ε` times the largest entry of its
    /// column of the upper triangle of `A`.
    fn pivot(&self, k: usize) -> Result<f64, LinalgError> {
        let tolerance = self.dimension().max(1) as f64 * f64::EPSILON;
        // The simplicial factor stores D_k first in column k of L.
        let d = self.factor_values[self.symbolic.col_ptr()[k]];
        if d.abs() <= tolerance * self.column_scale[k] {
            return Err(LinalgError::ZeroPivot { index: k, value: d });
        }
        Ok(d)
    }

    /// Checks every pivot of the factorization just computed for its size and sign.
    fn check_pivots(&self) -> Result<(), LinalgError> {
        for (k, sign) in self.signs.iter().enumerate() {
            let d = self.pivot(k)?;
            let expected_positive = *sign == PivotSign::Positive;
            if (d > 0.0) != expected_positive {
                return Err(LinalgError::WrongSignPivot {
                    index: k,
                    value: d,
                    expected_positive,
                });
            }
        }
        Ok(())
    }

    /// Computes `L` and `D` of `A` without judging the pivots (the first half of
    /// [`factor`](LinearSolver::factor)); on success the solver is still marked unfactored.
    fn factor_numeric(&mut self, values: &[f64]) -> Result<(), LinalgError> {
        self.factored = false;
        check_len(self.value_count(), values.len())?;
        if let Some(index) = values.iter().position(|x| !x.is_finite()) {
            return Err(LinalgError::NonFinite { index });
        }
        // Each pivot is measured against the largest entry of its column of the upper
        // triangle (its couplings to the unknowns eliminated before it, and the diagonal),
        // read contiguously.
        let col_ptr = self.pattern.col_ptr();
        for (col, scale) in self.column_scale.iter_mut().enumerate() {
            *scale = values[col_ptr[col]..col_ptr[col + 1]]
                .iter()
                .fold(0.0f64, |m, a| m.max(a.abs()));
        }
        let matrix = SparseColMatRef::new(self.pattern.as_ref(), values);
        let stack = MemStack::new(&mut self.scratch);
        // No dynamic regularization: a wrong pivot is reported by `check_pivots`, not patched.
        let result = simplicial::factorize_simplicial_numeric_ldlt::<usize, f64>(
            &mut self.factor_values,
            matrix,
            LdltRegularization::default(),
            &self.symbolic,
            stack,
        );
        if let Err(faer::linalg::cholesky::ldlt::factor::LdltError::ZeroPivot { index }) = result {
            // faer counts from 1 here.
            return Err(LinalgError::ZeroPivot {
                index: index.saturating_sub(1),
                value: 0.0,
            });
        }
        Ok(())
    }
}

impl std::fmt::Debug for SparseLdlt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SparseLdlt")
            .field("dimension", &self.dimension())
            .field("value_count", &self.value_count())
            .field("factor_entry_count", &self.factor_entry_count())
            .field("factored", &self.factored)
            .finish()
    }
}

impl LinearSolver for SparseLdlt {
    /// The values of the upper triangle, in the slots [`SparseLdlt::analyse`] returned.
    type Matrix = [f64];

    fn factor(&mut self, values: &[f64]) -> Result<(), LinalgError> {
        self.factor_numeric(values)?;
        self.check_pivots()?;
        self.factored = true;
        Ok(())
    }

    fn solve_in_place(&mut self, b: &mut [f64]) -> Result<(), LinalgError> {
        let n = self.dimension();
        check_solvable(self.factored, n, b)?;
        let ldlt = SimplicialLdltRef::new(&self.symbolic, &self.factor_values);
        let stack = MemStack::new(&mut self.scratch);
        ldlt.solve_in_place_with_conj(
            Conj::No,
            MatMut::from_column_major_slice_mut(b, n, 1),
            Par::Seq,
            stack,
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quasi-definite matrix of a chain of `links` unit masses in the plane, unknowns
    /// numbered per link `(x_i, y_i, λ_i)`, with a random-ish Jacobian and `−σ` on the rows.
    type Problem = (usize, Vec<(usize, usize)>, Vec<f64>, Vec<PivotSign>);

    fn chain(links: usize, sigma: f64) -> Problem {
        let n = 3 * links;
        let (mut entries, mut values) = (Vec::new(), Vec::new());
        for i in 0..links {
            let (x, y, l) = (3 * i, 3 * i + 1, 3 * i + 2);
            let (dx, dy) = (1.0 + 0.1 * (i % 7) as f64, -0.5 + 0.05 * (i % 11) as f64);
            entries.extend([(x, x), (y, y), (l, l), (x, l), (y, l)]);
            values.extend([1.0, 1.0, -sigma, 2.0 * dx, 2.0 * dy]);
            if i > 0 {
                entries.extend([(x - 3, l), (y - 3, l)]);
                values.extend([-2.0 * dx, -2.0 * dy]);
            }
        }
        let signs = (0..n)
            .map(|k| {
                if k % 3 == 2 {
                    PivotSign::Negative
                } else {
                    PivotSign::Positive
                }
            })
            .collect();
        (n, entries, values, signs)
    }

    #[test]
    fn solves_quasi_definite_chain_to_round_off() {
        for sigma in [1.6e-5, 1.6e-8, 1.6e-11, 0.0] {
            let (n, entries, values, signs) = chain(200, sigma);
            let (mut ldlt, slots) = SparseLdlt::analyse(n, &entries, &signs).unwrap();
            let mut a = vec![0.0; ldlt.value_count()];
            for (slot, value) in slots.iter().zip(&values) {
                a[*slot] += value;
            }
            ldlt.factor(&a).unwrap();
            let b: Vec<f64> = (0..n).map(|k| ((k * 7919) % 13) as f64 - 6.0).collect();
            let mut x = b.clone();
            ldlt.solve_in_place(&mut x).unwrap();
            let mut ax = vec![0.0; n];
            ldlt.multiply(&a, &x, &mut ax).unwrap();
            let residual = ax
                .iter()
                .zip(&b)
                .map(|(p, q)| (p - q).abs())
                .fold(0.0, f64::max);
            assert!(residual < 1e-12 * 6.0, "σ = {sigma}: residual {residual:e}");
        }
    }

    #[test]
    fn counts_the_inertia_of_indefinite_matrices() {
        // [[1, 2, 0], [2, 1, 0], [0, 0, −3]]: eigenvalues 3, −1, −3.
        let signs = [PivotSign::Positive; 3];
        let entries = [(0, 0), (0, 1), (1, 1), (2, 2)];
        let (mut ldlt, slots) = SparseLdlt::analyse(3, &entries, &signs).unwrap();
        let mut a = vec![0.0; ldlt.value_count()];
        for (slot, value) in slots.iter().zip([1.0, 2.0, 1.0, -3.0]) {
            a[*slot] = value;
        }
        let inertia = ldlt.factor_with_inertia(&a).unwrap();
        assert_eq!(
            inertia,
            Inertia {
                positive: 1,
                negative: 2
            }
        );
        // The factorization is usable: A x = (3, 3, −3) at x = (1, 1, 1).
        let mut x = [3.0, 3.0, -3.0];
        ldlt.solve_in_place(&mut x).unwrap();
        assert!(x.iter().all(|x| (x - 1.0).abs() < 1e-15));
        // The signs `analyse` was given still apply to `factor`.
        assert!(matches!(
            ldlt.factor(&a),
            Err(LinalgError::WrongSignPivot { index: 1, .. })
        ));
        // A singular matrix is an error, not a count.
        for (slot, value) in slots.iter().zip([1.0, 1.0, 1.0, -3.0]) {
            a[*slot] = value;
        }
        assert!(matches!(
            ldlt.factor_with_inertia(&a),
            Err(LinalgError::ZeroPivot { index: 1, .. })
        ));
    }

    #[test]
    fn reports_bad_pivots_and_inputs_instead_of_patching_them() {
        let signs = [PivotSign::Positive, PivotSign::Positive];
        let (mut ldlt, slots) = SparseLdlt::analyse(2, &[(0, 0), (1, 0), (1, 1)], &signs).unwrap();
        let fill = |values: [f64; 3]| {
            let mut a = [0.0; 3];
            for (slot, value) in slots.iter().zip(values) {
                a[*slot] = value;
            }
            a
        };
        let mut x = [1.0, 1.0];
        assert_eq!(ldlt.solve_in_place(&mut x), Err(LinalgError::NotFactored));
        // Indefinite: the second pivot is 1 − 4 = −3 where + was required.
        let err = ldlt.factor(&fill([1.0, 2.0, 1.0])).unwrap_err();
        assert!(matches!(
            err,
            LinalgError::WrongSignPivot {
                index: 1,
                expected_positive: true,
                ..
            }
        ));
        // Singular: the second pivot is 1 − 1 = 0.
        let err = ldlt.factor(&fill([1.0, 1.0, 1.0])).unwrap_err();
        assert!(matches!(err, LinalgError::ZeroPivot { index: 1, .. }));
        let err = ldlt.factor(&fill([1.0, f64::NAN, 1.0])).unwrap_err();
        assert!(matches!(err, LinalgError::NonFinite { .. }));
        assert_eq!(
            ldlt.factor(&[1.0]),
            Err(LinalgError::DimensionMismatch {
                expected: 3,
                found: 1
            })
        );
        ldlt.factor(&fill([2.0, 1.0, 2.0])).unwrap();
        assert!(matches!(
            ldlt.solve_in_place(&mut [1.0]),
            Err(LinalgError::DimensionMismatch { .. })
        ));
        assert!(matches!(
            SparseLdlt::analyse(2, &[(0, 2)], &signs),
            Err(LinalgError::Pattern { row: 0, col: 2, .. })
        ));
    }
}
