//! Products with the sparse tier's stored matrices: a block-diagonal mass matrix (its blocks
//! dense, row-major, concatenated in body order) and a matrix given by its values on a pattern
//! of `(row, column)` entries, general or symmetric (each unordered pair once). The one copy
//! of each loop, for every integrator and analysis of the tier; none allocates.

/// Writes `out = M x` for the block-diagonal `M` with blocks of `body_sizes` (`Σ sᵦ²` values
/// in `blocks`).
pub(crate) fn block_diagonal_times(
    body_sizes: &[usize],
    blocks: &[f64],
    x: &[f64],
    out: &mut [f64],
) {
    let (mut first, mut offset) = (0, 0);
    for &size in body_sizes {
        let x = &x[first..first + size];
        for (a, out) in out[first..first + size].iter_mut().enumerate() {
            let row = &blocks[offset + a * size..offset + (a + 1) * size];
            *out = row.iter().zip(x).map(|(m, x)| m * x).sum();
        }
        first += size;
        offset += size * size;
    }
}

/// Adds `A x` to `out` for the matrix `A` with `values` on `pattern` (`(row, column)`, each
/// entry once).
pub(crate) fn add_pattern_times(
    pattern: &[(usize, usize)],
    values: &[f64],
    x: &[f64],
    out: &mut [f64],
) {
    for (&(row, col), value) in pattern.iter().zip(values) {
        out[row] += value * x[col];
    }
}

/// Adds `Aᵀ y` to `out` for the matrix `A` with `values` on `pattern`.
pub(crate) fn add_pattern_transpose_times(
    pattern: &[(usize, usize)],
    values: &[f64],
    y: &[f64],
    out: &mut [f64],
) {
    for (&(row, col), value) in pattern.iter().zip(values) {
        out[col] += value * y[row];
    }
}

/// Adds `scale · H x` to `out` for the symmetric `H` with `values` on `pattern`, which lists
/// each unordered pair once in either triangle (the convention of
/// [`SparsePotentialHessian`](crate::model::SparsePotentialHessian)).
pub(crate) fn add_symmetric_pattern_times(
    pattern: &[(usize, usize)],
    values: &[f64],
    scale: f64,
    x: &[f64],
    out: &mut [f64],
) {
    for (&(i, j), value) in pattern.iter().zip(values) {
        let value = scale * value;
        out[i] += value * x[j];
        if i != j {
            out[j] += value * x[i];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_agree_with_the_dense_matrices() {
        // M = diag([[2, 1], [1, 3]], [4]).
        let mut out = [0.0; 3];
        block_diagonal_times(
            &[2, 1],
            &[2.0, 1.0, 1.0, 3.0, 4.0],
            &[1.0, 2.0, 3.0],
            &mut out,
        );
        assert_eq!(out, [4.0, 7.0, 12.0]);
        // A = [[1, 0, 2], [0, 3, 0]].
        let pattern = [(0, 0), (0, 2), (1, 1)];
        let values = [1.0, 2.0, 3.0];
        let mut out = [1.0; 2];
        add_pattern_times(&pattern, &values, &[1.0, 2.0, 3.0], &mut out);
        assert_eq!(out, [8.0, 7.0]);
        let mut out = [0.0; 3];
        add_pattern_transpose_times(&pattern, &values, &[1.0, 2.0], &mut out);
        assert_eq!(out, [1.0, 6.0, 2.0]);
        // H = [[1, 5], [5, 2]] as (0, 0), (1, 0), (1, 1).
        let mut out = [0.0; 2];
        add_symmetric_pattern_times(
            &[(0, 0), (1, 0), (1, 1)],
            &[1.0, 5.0, 2.0],
            2.0,
            &[1.0, 1.0],
            &mut out,
        );
        assert_eq!(out, [12.0, 14.0]);
    }
}
