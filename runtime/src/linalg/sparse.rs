//! Sparse symmetric `LDLᵀ` on `faer` for the sparse tier: the only file that names `faer`.
//!
//! The pattern is analysed once ([`SparseLdlt::analyse`]: elimination tree, pattern of `L`,
//! scratch memory); every step then refills the values in place and runs the numeric
//! factorization and the solve without touching the heap. faer's sparse API moves between
//! versions, so the version is pinned in `Cargo.toml` and nothing else in the crate sees it.
//!
//! # Elimination order
//!
//! There is no fill-reducing permutation: unknowns are eliminated in index order, so the caller
//! numbers them well. For the quasi-definite SPOOK matrix `[[M, Gᵀ], [G, −Σ]]` the order also
//! decides the accuracy as `Σ → 0`: eliminating a multiplier before the coordinates it couples
//! puts a pivot `≈ −σ` on the diagonal and updates the coordinate block by `‖G‖²/σ`
//! (Gill–Saunders–Shinnerl 1996), while numbering every row right after the coordinates it
//! touches keeps the relative residual at 1e-12 down to `ε = 1e-14` (measured in
//! `shared/design/large-models.md` §1.7; AMD gave 1.8e-4). The natural order of such a numbering
//! is also banded for chains and ladders, so it needs no permutation of `A` per step.
//!
//! # Pivots
//!
//! `LDLᵀ` without pivoting exists for every symmetric quasi-definite matrix (Vanderbei 1995),
//! and each pivot's sign is known in advance: positive for coordinates, negative for the rows of
//! `−Σ`. After every factorization each pivot `d_k` is checked for its expected sign and against
//! `n·ε` times the largest entry of its column in the upper triangle; a violation is a typed
//! [`LinalgError`], never a silently regularized pivot.

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::ldlt::factor::LdltRegularization;
use faer::sparse::linalg::cholesky::simplicial::{
    self, EliminationTreeRef, SimplicialLdltRef, SymbolicSimplicialCholesky,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMat};
use faer::{Conj, MatMut, Par};

use super::{check_solvable, LinalgError, LinearSolver};

/// The sign a pivot of [`SparseLdlt`] must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PivotSign {
    /// A positive pivot (a coordinate of a positive definite block).
    Positive,
    /// A negative pivot (a regularized multiplier row, `−Σ`).
    Negative,
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

    /// Checks every pivot of the factorization just computed for its sign and size.
    fn check_pivots(&self) -> Result<(), LinalgError> {
        let n = self.dimension();
        let tolerance = n.max(1) as f64 * f64::EPSILON;
        let col_ptr = self.symbolic.col_ptr();
        for (k, sign) in self.signs.iter().enumerate() {
            // The simplicial factor stores D_k first in column k of L.
            let d = self.factor_values[col_ptr[k]];
            let expected_positive = *sign == PivotSign::Positive;
            if d.abs() <= tolerance * self.column_scale[k] {
                return Err(LinalgError::ZeroPivot { index: k, value: d });
            }
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
}

/// Returns the upper triangle of the symmetric pattern `entries` of an `n × n` matrix with every
/// diagonal, compressed by column (rows sorted), and each entry's slot in its values.
fn upper_pattern(
    n: usize,
    entries: &[(usize, usize)],
) -> Result<(SymbolicSparseColMat<usize>, Vec<usize>), LinalgError> {
    // Upper-triangle (col, row) pairs, with every diagonal, sorted and deduplicated.
    let mut upper: Vec<(usize, usize)> = Vec::with_capacity(entries.len() + n);
    for &(row, col) in entries {
        if row >= n || col >= n {
            return Err(LinalgError::Pattern {
                row,
                col,
                reason: "lies outside the matrix",
            });
        }
        upper.push((row.max(col), row.min(col)));
    }
    upper.extend((0..n).map(|k| (k, k)));
    upper.sort_unstable();
    upper.dedup();
    let mut col_ptr = vec![0usize; n + 1];
    for &(col, _) in &upper {
        col_ptr[col + 1] += 1;
    }
    for k in 0..n {
        col_ptr[k + 1] += col_ptr[k];
    }
    let row_idx: Vec<usize> = upper.iter().map(|&(_, row)| row).collect();
    let slots = entries
        .iter()
        .map(|&(row, col)| {
            let (col, row) = (row.max(col), row.min(col));
            let start = col_ptr[col];
            // The entry is in `upper`, which is sorted by row within each column.
            start + row_idx[start..col_ptr[col + 1]].partition_point(|&r| r < row)
        })
        .collect();
    Ok((
        SymbolicSparseColMat::new_checked(n, n, col_ptr, None, row_idx),
        slots,
    ))
}

/// Returns faer's simplicial symbolic Cholesky factorization (elimination tree and pattern of
/// `L`) of the upper pattern `pattern`, eliminating in index order.
fn symbolic_cholesky(
    pattern: &SymbolicSparseColMat<usize>,
) -> Result<SymbolicSimplicialCholesky<usize>, LinalgError> {
    let n = pattern.ncols();
    let analysis = LinalgError::Analysis {
        reason: "faer could not build the elimination tree or the pattern of L",
    };
    let mut memory = MemBuffer::try_new(StackReq::any_of(&[
        simplicial::prefactorize_symbolic_cholesky_scratch::<usize>(n, pattern.row_idx().len()),
        simplicial::factorize_simplicial_symbolic_cholesky_scratch::<usize>(n),
    ]))
    .map_err(|_| analysis)?;
    let stack = MemStack::new(&mut memory);
    let mut etree = vec![0isize; n];
    let mut col_counts = vec![0usize; n];
    simplicial::prefactorize_symbolic_cholesky(
        &mut etree,
        &mut col_counts,
        pattern.as_ref(),
        stack,
    );
    simplicial::factorize_simplicial_symbolic_cholesky(
        pattern.as_ref(),
        // SAFETY: `etree` was just filled by `prefactorize_symbolic_cholesky` on `pattern`.
        unsafe { EliminationTreeRef::from_inner(&etree) },
        &col_counts,
        stack,
    )
    .map_err(|_| analysis)
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

/// Returns `DimensionMismatch` unless `found == expected`.
fn check_len(expected: usize, found: usize) -> Result<(), LinalgError> {
    if expected == found {
        Ok(())
    } else {
        Err(LinalgError::DimensionMismatch { expected, found })
    }
}

impl LinearSolver for SparseLdlt {
    /// The values of the upper triangle, in the slots [`SparseLdlt::analyse`] returned.
    type Matrix = [f64];

    fn factor(&mut self, values: &[f64]) -> Result<(), LinalgError> {
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

/// A sparse `A = L U` without pivoting on a structurally symmetric pattern analysed once,
/// factored and solved per step without heap allocation.
///
/// For a structurally symmetric `A` whose leading minors do not vanish, `L` (unit lower) and
/// `Uᵀ` have exactly the pattern of the Cholesky factor of the pattern (the elimination tree is
/// that of `A + Aᵀ`), so faer's symbolic Cholesky analysis ([`SparseLdlt`] uses the same)
/// fixes the storage once, and the numeric factorization is an up-looking two-sided
/// elimination written here: at step `k`, column `k` of `U` solves `L₁₁ u = A[..k, k]` and row
/// `k` of `L` solves `U₁₁ᵀ l = A[k, ..k]ᵀ` on the row pattern of the factor, then
/// `U_kk = A_kk − l·u`. Unknowns are eliminated in index order, so the caller numbers them
/// well (banded for chains and ladders).
///
/// # When no pivoting is safe
///
/// Gaussian elimination without pivoting is stable for symmetric positive definite matrices
/// (then `U = D Lᵀ` and this is `LDLᵀ`) and for small perturbations of them: the use here is
/// the Newton matrix `G(q⁽ⁱ⁾) M⁻¹ G(q_k)ᵀ` of SHAKE and RATTLE, an `O(h)` perturbation of the
/// SPD `G M⁻¹ Gᵀ` when `G` has full rank. Each pivot is checked: `|U_kk| ≤ n·ε·s_k`, `s_k` the
/// largest entry of row and column `k` of `A`, or a non-finite pivot, is
/// [`LinalgError::ZeroPivot`] (a rank-deficient `G`, or a matrix that needs pivoting), never a
/// silently wrong solve.
///
/// # Example
///
/// ```
/// use mechanism_runtime::linalg::{LinearSolver, SparseLu};
/// // [[4, 1, 0], [2, 5, 1], [0, 3, 6]]: the pattern is symmetric, the values are not.
/// let entries = [(0, 0), (0, 1), (1, 0), (1, 1), (1, 2), (2, 1), (2, 2)];
/// let (mut lu, slots) = SparseLu::analyse(3, &entries)?;
/// let mut values = vec![0.0; lu.value_count()];
/// for (slot, value) in slots.iter().zip([4.0, 1.0, 2.0, 5.0, 1.0, 3.0, 6.0]) {
///     values[*slot] = value;
/// }
/// lu.factor(&values)?;
/// let mut x = [5.0, 8.0, 9.0];
/// lu.solve_in_place(&mut x)?;
/// assert!(x.iter().all(|x| (x - 1.0).abs() < 1e-15));
/// # Ok::<(), mechanism_runtime::linalg::LinalgError>(())
/// ```
#[derive(Clone, Debug)]
pub struct SparseLu {
    /// The full (both triangles) pattern of `A`, compressed by column, rows sorted.
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    /// For each stored entry `(i, j)`, the position of `(j, i)`.
    mirror: Vec<usize>,
    /// The strictly lower pattern of the factor, by column, rows sorted: `L` and `Uᵀ` share it.
    factor_col_ptr: Vec<usize>,
    factor_row_idx: Vec<usize>,
    /// Row `k` of the factor: `(j, position)` for each `L_kj ≠ 0`, `j < k` ascending.
    factor_row_ptr: Vec<usize>,
    factor_rows: Vec<(usize, usize)>,
    /// `L` below the diagonal, `Uᵀ` below the diagonal, and the diagonal of `U`.
    lower: Vec<f64>,
    upper: Vec<f64>,
    pivots: Vec<f64>,
    /// Scatter vectors of the up-looking step, zero between steps.
    column: Vec<f64>,
    row: Vec<f64>,
    factored: bool,
}

impl SparseLu {
    /// Analyses the pattern `entries` (`(row, col)` pairs) of an `n × n` matrix; the pattern is
    /// symmetrized (an entry `(i, j)` also stores `(j, i)`, whose value is then zero unless
    /// given) and every diagonal is part of it.
    ///
    /// Returns the solver and, for each entry, its slot in the value array that
    /// [`factor`](LinearSolver::factor) takes. This is the only step that allocates.
    pub fn analyse(
        n: usize,
        entries: &[(usize, usize)],
    ) -> Result<(Self, Vec<usize>), LinalgError> {
        let (upper, _) = upper_pattern(n, entries)?;
        let symbolic = symbolic_cholesky(&upper)?;

        // The full pattern: every entry and its mirror, every diagonal, sorted by column.
        let mut full: Vec<(usize, usize)> = Vec::with_capacity(2 * entries.len() + n);
        for &(row, col) in entries {
            full.extend([(col, row), (row, col)]);
        }
        full.extend((0..n).map(|k| (k, k)));
        full.sort_unstable();
        full.dedup();
        let mut col_ptr = vec![0usize; n + 1];
        for &(col, _) in &full {
            col_ptr[col + 1] += 1;
        }
        for k in 0..n {
            col_ptr[k + 1] += col_ptr[k];
        }
        let row_idx: Vec<usize> = full.iter().map(|&(_, row)| row).collect();
        let position = |row: usize, col: usize| {
            let start = col_ptr[col];
            start + row_idx[start..col_ptr[col + 1]].partition_point(|&r| r < row)
        };
        let mirror = full.iter().map(|&(col, row)| position(col, row)).collect();
        let slots = entries
            .iter()
            .map(|&(row, col)| position(row, col))
            .collect();

        // The factor's strictly lower pattern, rows sorted within each column.
        let (l_ptr, l_idx) = (symbolic.col_ptr(), symbolic.row_idx());
        let mut factor_col_ptr = vec![0usize; n + 1];
        let mut factor_row_idx = Vec::with_capacity(l_idx.len());
        for j in 0..n {
            let first = factor_row_idx.len();
            factor_row_idx.extend(l_idx[l_ptr[j]..l_ptr[j + 1]].iter().filter(|&&i| i > j));
            factor_row_idx[first..].sort_unstable();
            factor_col_ptr[j + 1] = factor_row_idx.len();
        }
        let mut factor_row_ptr = vec![0usize; n + 1];
        for &i in &factor_row_idx {
            factor_row_ptr[i + 1] += 1;
        }
        for k in 0..n {
            factor_row_ptr[k + 1] += factor_row_ptr[k];
        }
        let mut next = factor_row_ptr.clone();
        let mut factor_rows = vec![(0, 0); factor_row_idx.len()];
        for j in 0..n {
            let column = factor_col_ptr[j]..factor_col_ptr[j + 1];
            for (p, &i) in column.clone().zip(&factor_row_idx[column]) {
                factor_rows[next[i]] = (j, p);
                next[i] += 1;
            }
        }
        let entries_of_factor = factor_row_idx.len();
        Ok((
            SparseLu {
                col_ptr,
                row_idx,
                mirror,
                factor_col_ptr,
                factor_row_idx,
                factor_row_ptr,
                factor_rows,
                lower: vec![0.0; entries_of_factor],
                upper: vec![0.0; entries_of_factor],
                pivots: vec![0.0; n],
                column: vec![0.0; n],
                row: vec![0.0; n],
                factored: false,
            },
            slots,
        ))
    }

    /// Returns the order `n` of the matrix.
    pub fn dimension(&self) -> usize {
        self.pivots.len()
    }

    /// Returns the length of the value array [`factor`](LinearSolver::factor) takes: the number
    /// of stored entries of the symmetrized pattern.
    pub fn value_count(&self) -> usize {
        self.row_idx.len()
    }

    /// Returns the number of stored entries of `L` below the diagonal (the same for `Uᵀ`).
    pub fn factor_entry_count(&self) -> usize {
        self.factor_row_idx.len()
    }
}

impl LinearSolver for SparseLu {
    /// The values of the symmetrized pattern, in the slots [`SparseLu::analyse`] returned.
    type Matrix = [f64];

    fn factor(&mut self, values: &[f64]) -> Result<(), LinalgError> {
        self.factored = false;
        check_len(self.value_count(), values.len())?;
        if let Some(index) = values.iter().position(|x| !x.is_finite()) {
            return Err(LinalgError::NonFinite { index });
        }
        let n = self.dimension();
        let tolerance = n.max(1) as f64 * f64::EPSILON;
        for k in 0..n {
            // Scatter A[..=k, k] into `column` and A[k, ..=k] into `row`.
            let mut scale = 0.0f64;
            for p in self.col_ptr[k]..self.col_ptr[k + 1] {
                let i = self.row_idx[p];
                let (a, mirrored) = (values[p], values[self.mirror[p]]);
                scale = scale.max(a.abs()).max(mirrored.abs());
                if i <= k {
                    self.column[i] = a;
                    self.row[i] = mirrored;
                }
            }
            let mut pivot = self.column[k];
            self.column[k] = 0.0;
            self.row[k] = 0.0;
            for &(j, p) in &self.factor_rows[self.factor_row_ptr[k]..self.factor_row_ptr[k + 1]] {
                let u = self.column[j];
                let l = self.row[j] / self.pivots[j];
                self.column[j] = 0.0;
                self.row[j] = 0.0;
                // Rows of column j above k were computed in earlier steps; p holds row k.
                for q in self.factor_col_ptr[j]..p {
                    let i = self.factor_row_idx[q];
                    self.column[i] -= self.lower[q] * u;
                    self.row[i] -= self.upper[q] * l;
                }
                self.upper[p] = u;
                self.lower[p] = l;
                pivot -= l * u;
            }
            if !(pivot.is_finite() && pivot.abs() > tolerance * scale) {
                self.column.fill(0.0);
                self.row.fill(0.0);
                return Err(LinalgError::ZeroPivot {
                    index: k,
                    value: pivot,
                });
            }
            self.pivots[k] = pivot;
        }
        self.factored = true;
        Ok(())
    }

    fn solve_in_place(&mut self, b: &mut [f64]) -> Result<(), LinalgError> {
        let n = self.dimension();
        check_solvable(self.factored, n, b)?;
        for j in 0..n {
            let x = b[j];
            for q in self.factor_col_ptr[j]..self.factor_col_ptr[j + 1] {
                b[self.factor_row_idx[q]] -= self.lower[q] * x;
            }
        }
        for j in (0..n).rev() {
            let mut x = b[j];
            for q in self.factor_col_ptr[j]..self.factor_col_ptr[j + 1] {
                x -= self.upper[q] * b[self.factor_row_idx[q]];
            }
            b[j] = x / self.pivots[j];
        }
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

    #[test]
    fn lu_solves_a_nonsymmetric_matrix_with_fill_and_reports_a_singular_one() {
        // A chain with an arrow row (fill), diagonally dominant, values not symmetric.
        let n = 40;
        let mut entries = Vec::new();
        let mut values = Vec::new();
        for i in 0..n {
            entries.push((i, i));
            values.push(6.0 + (i % 3) as f64);
            if i > 0 {
                entries.extend([(i, i - 1), (i - 1, i)]);
                values.extend([1.0 + 0.1 * (i % 5) as f64, -0.7 + 0.05 * (i % 7) as f64]);
            }
            if i > 1 {
                entries.extend([(i, 0), (0, i)]);
                values.extend([0.3, -0.2]);
            }
        }
        let (mut lu, slots) = SparseLu::analyse(n, &entries).unwrap();
        let mut a = vec![0.0; lu.value_count()];
        for (slot, value) in slots.iter().zip(&values) {
            a[*slot] += value;
        }
        lu.factor(&a).unwrap();
        let b: Vec<f64> = (0..n).map(|k| ((k * 7919) % 13) as f64 - 6.0).collect();
        let mut x = b.clone();
        lu.solve_in_place(&mut x).unwrap();
        let mut residual = 0.0f64;
        for (i, b) in b.iter().enumerate() {
            let ax: f64 = entries
                .iter()
                .zip(&values)
                .filter(|((r, _), _)| *r == i)
                .map(|((_, c), v)| v * x[*c])
                .sum();
            residual = residual.max((ax - b).abs());
        }
        assert!(residual < 1e-13, "residual {residual:e}");

        // Rows 0 and 2 equal: singular, reported at the first vanishing pivot.
        let entries = [
            (0, 0),
            (0, 1),
            (1, 0),
            (1, 1),
            (1, 2),
            (2, 1),
            (0, 2),
            (2, 0),
            (2, 2),
        ];
        let (mut lu, slots) = SparseLu::analyse(3, &entries).unwrap();
        let mut a = vec![0.0; lu.value_count()];
        for (slot, value) in slots
            .iter()
            .zip([2.0, 1.0, 0.5, 3.0, 1.5, 1.0, 2.0, 2.0, 2.0])
        {
            a[*slot] = value;
        }
        let mut x = [1.0; 3];
        assert_eq!(lu.solve_in_place(&mut x), Err(LinalgError::NotFactored));
        assert!(matches!(
            lu.factor(&a),
            Err(LinalgError::ZeroPivot { index: 2, .. })
        ));
        assert_eq!(lu.solve_in_place(&mut x), Err(LinalgError::NotFactored));
    }
}
