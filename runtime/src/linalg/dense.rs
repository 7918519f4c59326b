//! Cholesky and LU factorizations of fixed-size `SMatrix<f64, N, N>`, without heap allocation.

// Index loops are how these kernels are written in every textbook, and with const bounds they
// compile to unrolled, check-free code; iterator chains would obscure the algebra.
#![allow(clippy::needless_range_loop)]

use nalgebra::{SMatrix, SVector};

use super::{check_solvable, LinalgError, LinearSolver};
use crate::fma::mul_add;

/// Returns the relative pivot tolerance `N·ε` below which a matrix counts as singular.
fn pivot_tolerance(n: usize) -> f64 {
    n.max(1) as f64 * f64::EPSILON
}

/// Returns a `NonFinite` error for the first non-finite entry (column-major) of `a`, if any.
fn check_finite<const R: usize, const C: usize>(a: &SMatrix<f64, R, C>) -> Result<(), LinalgError> {
    match a.iter().position(|x| !x.is_finite()) {
        Some(index) => Err(LinalgError::NonFinite { index }),
        None => Ok(()),
    }
}

/// Returns column-major storage `a[col][row]` of a fixed-size matrix.
///
/// The kernels below index plain arrays: with `const N` loop bounds LLVM removes the bounds
/// checks and unrolls the loops, which makes a 4×4 factorization several times faster than
/// indexing `SMatrix` entry by entry.
fn columns<const N: usize>(a: &SMatrix<f64, N, N>) -> [[f64; N]; N] {
    a.data.0
}

/// Returns `a x`, summed column by column as nalgebra's product does, but inlined and unrolled
/// over the const sizes: nalgebra's generic product of small matrices is an out-of-line call
/// with run-time loops (13 % of a SPOOK step of the double pendulum).
#[inline]
pub(crate) fn mat_vec<const R: usize, const C: usize>(
    a: &SMatrix<f64, R, C>,
    x: &SVector<f64, C>,
) -> SVector<f64, R> {
    let mut y = [0.0; R];
    for (column, &xj) in a.data.0.iter().zip(x.iter()) {
        for (yi, &aij) in y.iter_mut().zip(column) {
            *yi = mul_add(aij, xj, *yi);
        }
    }
    SVector::from(y)
}

/// A root-free Cholesky factorization `A = L D Lᵀ` of a symmetric positive definite matrix.
///
/// A non-finite entry is [`LinalgError::NonFinite`]; a pivot with `D_jj < −N·ε·|A_jj|`
/// (indefinite or negative definite, e.g. a negative mass) is
/// [`LinalgError::WrongSignPivot`]; any other pivot with `D_jj ≤ N·ε·|A_jj|` (numerically
/// semidefinite or singular) is [`LinalgError::ZeroPivot`]. Only the lower
/// triangle of the input is read. Without pivoting this is backward stable exactly because the
/// matrix is required to be positive definite; it avoids the square roots of `L Lᵀ`.
#[derive(Clone, Copy, Debug)]
pub struct Cholesky<const N: usize> {
    /// `L` strictly below the diagonal, column-major (`l[col][row]`); the rest is unused.
    l: [[f64; N]; N],
    /// `1 / D_jj`.
    inverse_pivots: [f64; N],
}

impl<const N: usize> Cholesky<N> {
    /// Factors the symmetric positive definite `a`.
    pub fn try_new(a: &SMatrix<f64, N, N>) -> Result<Self, LinalgError> {
        check_finite(a)?;
        Self::factor(a)
    }

    /// Factors `a`, or returns why a pivot is not clearly positive: `WrongSignPivot` for a
    /// clearly negative pivot (`D_jj < −N·ε·|A_jj|`: not positive definite), `ZeroPivot` for a
    /// vanishing or non-finite one (singular).
    fn factor(a: &SMatrix<f64, N, N>) -> Result<Self, LinalgError> {
        let tolerance = pivot_tolerance(N);
        let mut l = columns(a);
        // u[j][i] = L_ij d_j before the division by the pivot (column-major like `l`): the
        // unscaled column, reused by the later pivots and columns, so that the division is the
        // only operation between one pivot and the next column.
        let mut u = [[0.0; N]; N];
        let mut inverse_pivots = [0.0; N];
        for j in 0..N {
            let mut pivot = l[j][j];
            for k in 0..j {
                pivot = mul_add(-u[k][j], l[k][j], pivot);
            }
            let threshold = tolerance * a[(j, j)].abs();
            if !(pivot.is_finite() && pivot > threshold) {
                return Err(if pivot < -threshold {
                    LinalgError::WrongSignPivot {
                        index: j,
                        value: pivot,
                        expected_positive: true,
                    }
                } else {
                    LinalgError::ZeroPivot {
                        index: j,
                        value: pivot,
                    }
                });
            }
            let inverse = 1.0 / pivot;
            inverse_pivots[j] = inverse;
            for i in j + 1..N {
                let mut s = l[j][i];
                for k in 0..j {
                    s = mul_add(-l[k][i], u[k][j], s);
                }
                u[j][i] = s;
                l[j][i] = s * inverse;
            }
        }
        Ok(Cholesky { l, inverse_pivots })
    }

    /// Overwrites `b` with `A⁻¹ b`, column by column.
    pub fn solve_in_place<const C: usize>(&self, b: &mut SMatrix<f64, N, C>) {
        for column in b.data.0.iter_mut() {
            self.solve_array(column);
        }
    }

    /// `L y = b`, `z = D⁻¹ y`, `Lᵀ x = z` in place. The back substitution subtracts the terms
    /// of the last unknowns first: they are known earliest, so the unknown just found enters
    /// last and the chain of dependent operations per unknown is one multiply-add.
    fn solve_array(&self, x: &mut [f64; N]) {
        let l = &self.l;
        for k in 0..N {
            for i in k + 1..N {
                x[i] = mul_add(-l[k][i], x[k], x[i]);
            }
        }
        for i in 0..N {
            x[i] *= self.inverse_pivots[i];
        }
        for k in (0..N).rev() {
            let mut s = x[k];
            for i in (k + 1..N).rev() {
                s = mul_add(-l[k][i], x[i], s);
            }
            x[k] = s;
        }
    }

    /// Returns `A⁻¹ b`.
    pub fn solve(&self, b: &SVector<f64, N>) -> SVector<f64, N> {
        let mut x = *b;
        self.solve_in_place(&mut x);
        x
    }
}

/// An LU factorization `P A = L U` with partial (row) pivoting of a general square matrix.
///
/// A non-finite entry is [`LinalgError::NonFinite`]; a pivot with `|U_kk| ≤ N·ε·max_i |A_ik|`
/// (relative to its column, so invariant under column scaling) is [`LinalgError::ZeroPivot`].
/// Written here rather than wrapping nalgebra's `LU`, which needs a `DimMin` bound that generic
/// `const N` cannot satisfy without leaking where-clauses into every signature.
#[derive(Clone, Copy, Debug)]
pub struct Lu<const N: usize> {
    /// `L` (unit diagonal, strictly below) and `U` (on and above), packed, row-major
    /// (`lu[row][col]`) in the pivoted row order.
    lu: [[f64; N]; N],
    /// Row `i` of `P A` is row `perm[i]` of `A`.
    perm: [usize; N],
}

impl<const N: usize> Lu<N> {
    /// Factors the square `a`.
    pub fn try_new(a: &SMatrix<f64, N, N>) -> Result<Self, LinalgError> {
        check_finite(a)?;
        let tolerance = pivot_tolerance(N);
        // Row-major copy, so that a row swap is a swap of two arrays.
        let mut lu = a.transpose().data.0;
        let mut perm = [0usize; N];
        for (i, p) in perm.iter_mut().enumerate() {
            *p = i;
        }
        let mut column_scales = [0.0f64; N];
        for row in &lu {
            for (scale, x) in column_scales.iter_mut().zip(row) {
                *scale = scale.max(x.abs());
            }
        }
        for k in 0..N {
            let column_scale = column_scales[k];
            let mut pivot_row = k;
            for i in k + 1..N {
                if lu[i][k].abs() > lu[pivot_row][k].abs() {
                    pivot_row = i;
                }
            }
            let pivot = lu[pivot_row][k];
            if !(pivot.is_finite() && pivot.abs() > tolerance * column_scale) {
                return Err(LinalgError::ZeroPivot {
                    index: k,
                    value: pivot,
                });
            }
            lu.swap(k, pivot_row);
            perm.swap(k, pivot_row);
            let inverse = 1.0 / pivot;
            let pivot_row = lu[k];
            for row in lu.iter_mut().skip(k + 1) {
                let l = row[k] * inverse;
                row[k] = l;
                for j in k + 1..N {
                    row[j] -= l * pivot_row[j];
                }
            }
        }
        Ok(Lu { lu, perm })
    }

    /// Overwrites `b` with `A⁻¹ b`.
    pub fn solve_in_place(&self, b: &mut SVector<f64, N>) {
        let mut x = [0.0; N];
        for (xi, &p) in x.iter_mut().zip(self.perm.iter()) {
            *xi = b[p];
        }
        for i in 0..N {
            let mut s = x[i];
            for j in 0..i {
                s -= self.lu[i][j] * x[j];
            }
            x[i] = s;
        }
        for i in (0..N).rev() {
            let mut s = x[i];
            for j in i + 1..N {
                s -= self.lu[i][j] * x[j];
            }
            x[i] = s / self.lu[i][i];
        }
        b.data.0[0] = x;
    }

    /// Returns `A⁻¹ b`.
    pub fn solve(&self, b: &SVector<f64, N>) -> SVector<f64, N> {
        let mut x = *b;
        self.solve_in_place(&mut x);
        x
    }

    /// Returns `A⁻¹ B`, column by column ([`solve`](Self::solve) on each).
    pub fn solve_columns<const C: usize>(&self, b: &SMatrix<f64, N, C>) -> SMatrix<f64, N, C> {
        let mut x = *b;
        for mut column in x.column_iter_mut() {
            let solved = self.solve(&column.clone_owned());
            column.copy_from(&solved);
        }
        x
    }
}

/// A factorization of a symmetric matrix that is usually, but not always, positive definite,
/// such as `M + βh² Hess V` of a penalized potential.
///
/// It tries the root-free [`Cholesky`] factorization first (cheap, and stable whenever it
/// succeeds, because success proves positive definiteness) and falls back to [`Lu`] with
/// partial pivoting when a pivot is not clearly positive.
#[derive(Clone, Copy, Debug)]
pub enum SymmetricFactor<const N: usize> {
    /// The matrix is positive definite.
    Cholesky(Cholesky<N>),
    /// The matrix is indefinite or nearly singular.
    Lu(Lu<N>),
}

impl<const N: usize> SymmetricFactor<N> {
    /// Factors the symmetric `a`.
    pub fn try_new(a: &SMatrix<f64, N, N>) -> Result<Self, LinalgError> {
        check_finite(a)?;
        match Cholesky::factor(a) {
            Ok(cholesky) => Ok(SymmetricFactor::Cholesky(cholesky)),
            Err(_) => Lu::try_new(a).map(SymmetricFactor::Lu),
        }
    }

    /// Returns `A⁻¹ b`.
    pub fn solve(&self, b: &SVector<f64, N>) -> SVector<f64, N> {
        match self {
            SymmetricFactor::Cholesky(cholesky) => cholesky.solve(b),
            SymmetricFactor::Lu(lu) => lu.solve(b),
        }
    }

    /// Returns `A⁻¹ B`, column by column ([`solve`](Self::solve) on each).
    pub fn solve_columns<const C: usize>(&self, b: &SMatrix<f64, N, C>) -> SMatrix<f64, N, C> {
        let mut x = SMatrix::<f64, N, C>::zeros();
        for j in 0..C {
            x.set_column(j, &self.solve(&b.column(j).into_owned()));
        }
        x
    }
}

/// The dense kernels behind the [`LinearSolver`] seam: `None` until the first successful
/// factorization, then the factor; a failed `factor` leaves `None`.
macro_rules! dense_solver {
    ($factor:ident) => {
        impl<const N: usize> LinearSolver for Option<$factor<N>> {
            type Matrix = SMatrix<f64, N, N>;

            fn factor(&mut self, a: &SMatrix<f64, N, N>) -> Result<(), LinalgError> {
                *self = None;
                *self = Some($factor::try_new(a)?);
                Ok(())
            }

            fn solve_in_place(&mut self, b: &mut [f64]) -> Result<(), LinalgError> {
                check_solvable(self.is_some(), N, b)?;
                let factor = self.as_ref().ok_or(LinalgError::NotFactored)?;
                let x = factor.solve(&SVector::<f64, N>::from_column_slice(b));
                b.copy_from_slice(x.as_slice());
                Ok(())
            }
        }
    };
}

dense_solver!(Cholesky);
dense_solver!(Lu);
dense_solver!(SymmetricFactor);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::StepError;
    use nalgebra::{Matrix3, Vector3};
    use proptest::prelude::*;

    /// Solves `a x = b` through the seam, whatever the backend.
    fn solve_through_seam<S: LinearSolver + ?Sized>(
        solver: &mut S,
        a: &S::Matrix,
        b: &[f64],
    ) -> Result<Vec<f64>, LinalgError> {
        solver.factor(a)?;
        let mut x = b.to_vec();
        solver.solve_in_place(&mut x)?;
        Ok(x)
    }

    #[test]
    fn dense_and_sparse_backends_agree_through_the_seam() {
        use crate::linalg::{PivotSign, SparseLdlt};
        // The quasi-definite [[M, Gᵀ], [G, −σ]] of one pendulum bob: unknowns (x, y, λ).
        let a = Matrix3::new(2.0, 0.0, 0.6, 0.0, 2.0, -1.6, 0.6, -1.6, -1e-5);
        let b = [1.0, -2.0, 0.5];
        let mut lu: Option<Lu<3>> = None;
        let dense = solve_through_seam(&mut lu, &a, &b).unwrap();
        let mut symmetric: Option<SymmetricFactor<3>> = None;
        let fallback = solve_through_seam(&mut symmetric, &a, &b).unwrap();
        let entries = [(0, 0), (1, 1), (2, 2), (0, 2), (1, 2)];
        let signs = [
            PivotSign::Positive,
            PivotSign::Positive,
            PivotSign::Negative,
        ];
        let (mut ldlt, slots) = SparseLdlt::analyse(3, &entries, &signs).unwrap();
        let mut values = vec![0.0; ldlt.value_count()];
        for (&(i, j), slot) in entries.iter().zip(slots) {
            values[slot] = a[(i, j)];
        }
        let sparse = solve_through_seam(&mut ldlt, &values[..], &b).unwrap();
        for x in [&fallback, &sparse] {
            for (u, v) in x.iter().zip(&dense) {
                assert!(
                    (u - v).abs() < 1e-12 * v.abs().max(1.0),
                    "{x:?} vs {dense:?}"
                );
            }
        }
        // The indefinite matrix is no Cholesky matrix, through the seam as well.
        let mut cholesky: Option<Cholesky<3>> = None;
        let err = solve_through_seam(&mut cholesky, &a, &b).unwrap_err();
        assert!(
            matches!(err, LinalgError::WrongSignPivot { index: 2, .. }),
            "{err}"
        );
        assert!(cholesky.is_none());
        assert_eq!(
            cholesky.solve_in_place(&mut [0.0; 3]),
            Err(LinalgError::NotFactored)
        );
    }

    #[test]
    fn cholesky_solves_spd_system() {
        let a = Matrix3::new(4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0);
        let b = Vector3::new(1.0, -2.0, 0.5);
        let x = Cholesky::try_new(&a).unwrap().solve(&b);
        assert!((a * x - b).amax() < 1e-14);
    }

    #[test]
    fn cholesky_rejects_singular_indefinite_and_nan() {
        let t = 1.5;
        let singular = Matrix3::from_diagonal(&Vector3::new(1.0, 0.0, 1.0));
        let indefinite = Matrix3::from_diagonal(&Vector3::new(1.0, -1.0, 1.0));
        let rank_one = Vector3::new(1.0, 2.0, 3.0) * Vector3::new(1.0, 2.0, 3.0).transpose();
        for a in [singular, rank_one] {
            let err = Cholesky::try_new(&a).unwrap_err();
            assert!(matches!(err, LinalgError::ZeroPivot { .. }), "{err}");
            let err = StepError::linear_algebra("m", t)(err);
            assert_eq!(err, StepError::Singular { matrix: "m", t });
        }
        // A clearly negative pivot is named as such, with its row and value.
        let err = Cholesky::try_new(&indefinite).unwrap_err();
        assert_eq!(
            err,
            LinalgError::WrongSignPivot {
                index: 1,
                value: -1.0,
                expected_positive: true
            }
        );
        let err = StepError::linear_algebra("m", t)(err);
        assert_eq!(
            err,
            StepError::NotPositiveDefinite {
                matrix: "m",
                row: 1,
                pivot: -1.0,
                t
            }
        );
        assert_eq!(
            err.to_string(),
            "m is not positive definite (pivot -1e0 in row 1) at t = 1.5"
        );
        let mut nan = Matrix3::identity();
        nan[(2, 1)] = f64::NAN;
        let err = Cholesky::try_new(&nan).unwrap_err();
        assert_eq!(err, LinalgError::NonFinite { index: 5 });
        assert_eq!(
            StepError::linear_algebra("m", t)(err),
            StepError::NonFinite {
                quantity: "m",
                index: 5,
                t
            }
        );
    }

    #[test]
    fn lu_solves_indefinite_system_and_rejects_singular() {
        let a = Matrix3::new(0.0, 1.0, 2.0, 1.0, -3.0, 0.0, 2.0, 0.0, 1.0);
        let b = Vector3::new(1.0, 2.0, 3.0);
        let x = Lu::try_new(&a).unwrap().solve(&b);
        assert!((a * x - b).amax() < 1e-14);
        let rank_two = Matrix3::new(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0);
        let err = Lu::try_new(&rank_two).unwrap_err();
        assert!(
            matches!(err, LinalgError::ZeroPivot { index: 2, .. }),
            "{err}"
        );
        let err = Lu::try_new(&SMatrix::<f64, 3, 3>::zeros()).unwrap_err();
        assert!(
            matches!(err, LinalgError::ZeroPivot { index: 0, .. }),
            "{err}"
        );
    }

    #[test]
    fn symmetric_factor_falls_back_to_lu_for_indefinite_matrices() {
        let spd = Matrix3::new(4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0);
        let indefinite = Matrix3::new(1.0, 2.0, 0.0, 2.0, 1.0, 0.5, 0.0, 0.5, -3.0);
        let b = Vector3::new(1.0, -2.0, 0.5);
        let f = SymmetricFactor::try_new(&spd).unwrap();
        assert!(matches!(f, SymmetricFactor::Cholesky(_)));
        assert!((spd * f.solve(&b) - b).amax() < 1e-14);
        let f = SymmetricFactor::try_new(&indefinite).unwrap();
        assert!(matches!(f, SymmetricFactor::Lu(_)));
        assert!((indefinite * f.solve(&b) - b).amax() < 1e-14);
        let singular = Matrix3::new(1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0);
        assert!(matches!(
            SymmetricFactor::try_new(&singular).unwrap_err(),
            LinalgError::ZeroPivot { .. }
        ));
    }

    proptest! {
        #[test]
        fn symmetric_factor_solves_random_symmetric_systems(entries in prop::array::uniform16(-10.0f64..10.0),
                                                            rhs in prop::array::uniform4(-10.0f64..10.0)) {
            let r = SMatrix::<f64, 4, 4>::from_column_slice(&entries);
            let a = r + r.transpose();
            let b = SVector::<f64, 4>::from(rhs);
            if let Ok(f) = SymmetricFactor::try_new(&a) {
                let x = f.solve(&b);
                let cond = a.norm() * a.try_inverse().map_or(f64::INFINITY, |i| i.norm());
                prop_assert!((a * x - b).amax() <= 1e-13 * cond * (1.0 + b.amax()));
            }
        }

        #[test]
        fn cholesky_solves_multiple_right_hand_sides(entries in prop::array::uniform16(-10.0f64..10.0),
                                                     rhs in prop::array::uniform8(-10.0f64..10.0)) {
            let r = SMatrix::<f64, 4, 4>::from_column_slice(&entries);
            let a = r.transpose() * r + SMatrix::<f64, 4, 4>::identity();
            let b = SMatrix::<f64, 4, 2>::from_column_slice(&rhs);
            let mut x = b;
            Cholesky::try_new(&a).unwrap().solve_in_place(&mut x);
            prop_assert!((a * x - b).amax() <= 1e-10 * (1.0 + b.amax()));
        }

        #[test]
        fn lu_reconstructs_random_systems(entries in prop::array::uniform16(-10.0f64..10.0),
                                          rhs in prop::array::uniform4(-10.0f64..10.0)) {
            let a = SMatrix::<f64, 4, 4>::from_column_slice(&entries);
            let b = SVector::<f64, 4>::from(rhs);
            if let Ok(lu) = Lu::try_new(&a) {
                let x = lu.solve(&b);
                let cond = a.norm() * a.try_inverse().map_or(f64::INFINITY, |i| i.norm());
                prop_assert!((a * x - b).amax() <= 1e-13 * cond * (1.0 + b.amax()));
            }
        }

        #[test]
        fn cholesky_solves_random_spd_systems(entries in prop::array::uniform16(-10.0f64..10.0),
                                              rhs in prop::array::uniform4(-10.0f64..10.0)) {
            let r = SMatrix::<f64, 4, 4>::from_column_slice(&entries);
            let a = r.transpose() * r + SMatrix::<f64, 4, 4>::identity();
            let b = SVector::<f64, 4>::from(rhs);
            let x = Cholesky::try_new(&a).unwrap().solve(&b);
            prop_assert!((a * x - b).amax() <= 1e-10 * (1.0 + b.amax()));
        }
    }
}
