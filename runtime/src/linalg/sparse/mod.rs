//! Sparse factorizations on `faer` for the sparse tier: the only folder that names `faer`
//! ([`SparseLdlt`] in `ldlt.rs`, [`SparseLu`] in `lu.rs`, the pattern analysis they share here).
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

mod ldlt;
mod lu;

pub use ldlt::{Inertia, PivotSign, SparseLdlt};
pub use lu::SparseLu;

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::sparse::linalg::cholesky::simplicial::{
    self, EliminationTreeRef, SymbolicSimplicialCholesky,
};
use faer::sparse::SymbolicSparseColMat;

use super::LinalgError;

/// Returns the upper triangle of the symmetric pattern `entries` of an `n × n` matrix with every
/// diagonal, compressed by column (rows sorted), and each entry's slot in its values.
pub(crate) fn upper_pattern(
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
pub(crate) fn symbolic_cholesky(
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

/// Returns `DimensionMismatch` unless `found == expected`.
pub(crate) fn check_len(expected: usize, found: usize) -> Result<(), LinalgError> {
    if expected == found {
        Ok(())
    } else {
        Err(LinalgError::DimensionMismatch { expected, found })
    }
}
