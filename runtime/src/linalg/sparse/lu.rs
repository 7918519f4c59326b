//! Sparse `LU` without pivoting on a structurally symmetric pattern analysed once.

use super::{check_len, symbolic_cholesky, upper_pattern};
use crate::linalg::{check_solvable, LinalgError, LinearSolver};

/// A sparse `A = L U` without pivoting on a structurally symmetric pattern analysed once,
/// factored and solved per step without heap allocation.
///
/// For a structurally symmetric `A` whose leading minors do not vanish, `L` (unit lower) and
/// `Uᵀ` have exactly the pattern of the Cholesky factor of the pattern (the elimination tree is
/// that of `A + Aᵀ`), so faer's symbolic Cholesky analysis ([`SparseLdlt`](super::SparseLdlt) uses the same)
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

impl SparseLu {
    /// Overwrites `b` with `A⁻ᵀ b` for the last successful factorization: `Aᵀ = Uᵀ Lᵀ`, a
    /// forward substitution with `Uᵀ` (stored by column below the diagonal, with `U`'s
    /// diagonal) and a backward one with the unit `Lᵀ`; the adjoint of a solve, without
    /// allocating.
    pub fn solve_transpose_in_place(&mut self, b: &mut [f64]) -> Result<(), LinalgError> {
        let n = self.dimension();
        check_solvable(self.factored, n, b)?;
        for j in 0..n {
            let x = b[j] / self.pivots[j];
            b[j] = x;
            for q in self.factor_col_ptr[j]..self.factor_col_ptr[j + 1] {
                b[self.factor_row_idx[q]] -= self.upper[q] * x;
            }
        }
        for j in (0..n).rev() {
            let mut x = b[j];
            for q in self.factor_col_ptr[j]..self.factor_col_ptr[j + 1] {
                x -= self.lower[q] * b[self.factor_row_idx[q]];
            }
            b[j] = x;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // The transposed solve: Aᵀ x = b.
        let mut x = b.clone();
        lu.solve_transpose_in_place(&mut x).unwrap();
        let mut residual = 0.0f64;
        for (j, b) in b.iter().enumerate() {
            let atx: f64 = entries
                .iter()
                .zip(&values)
                .filter(|((_, c), _)| *c == j)
                .map(|((r, _), v)| v * x[*r])
                .sum();
            residual = residual.max((atx - b).abs());
        }
        assert!(residual < 1e-13, "transposed residual {residual:e}");

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
