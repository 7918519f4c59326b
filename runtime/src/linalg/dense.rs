//! Cholesky and LU factorizations of fixed-size `SMatrix<f64, N, N>`, without heap allocation.

use nalgebra::{SMatrix, SVector};

use crate::error::StepError;

/// Returns the relative pivot tolerance `N·ε` below which a matrix counts as singular.
fn pivot_tolerance(n: usize) -> f64 {
    n.max(1) as f64 * f64::EPSILON
}

/// Returns a `NonFinite` error for the first non-finite entry (column-major) of `a`, if any.
fn check_finite<const R: usize, const C: usize>(
    a: &SMatrix<f64, R, C>,
    matrix: &'static str,
    t: f64,
) -> Result<(), StepError> {
    match a.iter().position(|x| !x.is_finite()) {
        Some(index) => Err(StepError::NonFinite {
            quantity: matrix,
            index,
            t,
        }),
        None => Ok(()),
    }
}

/// A Cholesky factorization `A = L Lᵀ` of a symmetric positive definite matrix.
///
/// A non-finite entry is [`StepError::NonFinite`]; a pivot with `L_jj² ≤ N·ε·A_jj`
/// (numerically semidefinite, indefinite or singular) is [`StepError::Singular`]. Only the lower
/// triangle of the input is read. Written out rather than wrapping nalgebra's `Cholesky`, which
/// has no pivot check and is about twice as slow at the sizes of fixed-size models.
#[derive(Clone, Copy, Debug)]
pub struct Cholesky<const N: usize> {
    /// `L` on and below the diagonal; the strict upper triangle is unused.
    l: SMatrix<f64, N, N>,
}

impl<const N: usize> Cholesky<N> {
    /// Factors the symmetric positive definite `a`; `matrix` and `t` name the failure in errors.
    pub fn try_new(
        a: &SMatrix<f64, N, N>,
        matrix: &'static str,
        t: f64,
    ) -> Result<Self, StepError> {
        check_finite(a, matrix, t)?;
        let tolerance = pivot_tolerance(N);
        let mut l = *a;
        for j in 0..N {
            let mut d = l[(j, j)];
            for k in 0..j {
                d -= l[(j, k)] * l[(j, k)];
            }
            if !(d.is_finite() && d > tolerance * a[(j, j)].abs()) {
                return Err(StepError::Singular { matrix, t });
            }
            let pivot = d.sqrt();
            l[(j, j)] = pivot;
            for i in j + 1..N {
                let mut s = l[(i, j)];
                for k in 0..j {
                    s -= l[(i, k)] * l[(j, k)];
                }
                l[(i, j)] = s / pivot;
            }
        }
        Ok(Cholesky { l })
    }

    /// Overwrites `b` with `A⁻¹ b`, column by column.
    pub fn solve_in_place<const C: usize>(&self, b: &mut SMatrix<f64, N, C>) {
        let l = &self.l;
        for mut x in b.column_iter_mut() {
            for i in 0..N {
                let mut s = x[i];
                for k in 0..i {
                    s -= l[(i, k)] * x[k];
                }
                x[i] = s / l[(i, i)];
            }
            for i in (0..N).rev() {
                let mut s = x[i];
                for k in i + 1..N {
                    s -= l[(k, i)] * x[k];
                }
                x[i] = s / l[(i, i)];
            }
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
/// For matrices that may be indefinite, such as `M + βh² Hess V` of a penalized potential.
/// Written here rather than wrapping nalgebra's `LU` because the latter needs a `DimMin` bound
/// that generic `const N` cannot satisfy without leaking where-clauses. A non-finite entry is
/// [`StepError::NonFinite`]; a pivot with `|U_kk| ≤ N·ε·max_i |A_ik|` (relative to its column,
/// so invariant under column scaling) is [`StepError::Singular`].
#[derive(Clone, Copy, Debug)]
pub struct Lu<const N: usize> {
    /// `L` (unit diagonal, strictly below) and `U` (on and above the diagonal), packed.
    lu: SMatrix<f64, N, N>,
    /// Row `i` of `P A` is row `perm[i]` of `A`.
    perm: [usize; N],
}

impl<const N: usize> Lu<N> {
    /// Factors the square `a`; `matrix` and `t` name the failure in errors.
    pub fn try_new(
        a: &SMatrix<f64, N, N>,
        matrix: &'static str,
        t: f64,
    ) -> Result<Self, StepError> {
        check_finite(a, matrix, t)?;
        let tolerance = pivot_tolerance(N);
        let mut lu = *a;
        let mut perm = [0usize; N];
        for (i, p) in perm.iter_mut().enumerate() {
            *p = i;
        }
        for k in 0..N {
            let column_scale = a.column(k).amax();
            let mut pivot_row = k;
            for i in k + 1..N {
                if lu[(i, k)].abs() > lu[(pivot_row, k)].abs() {
                    pivot_row = i;
                }
            }
            let pivot = lu[(pivot_row, k)];
            if !(pivot.is_finite() && pivot.abs() > tolerance * column_scale) {
                return Err(StepError::Singular { matrix, t });
            }
            if pivot_row != k {
                lu.swap_rows(k, pivot_row);
                perm.swap(k, pivot_row);
            }
            for i in k + 1..N {
                let l = lu[(i, k)] / pivot;
                lu[(i, k)] = l;
                for j in k + 1..N {
                    lu[(i, j)] -= l * lu[(k, j)];
                }
            }
        }
        Ok(Lu { lu, perm })
    }

    /// Overwrites `b` with `A⁻¹ b`.
    pub fn solve_in_place(&self, b: &mut SVector<f64, N>) {
        let mut x = SVector::<f64, N>::zeros();
        for (xi, &p) in x.iter_mut().zip(self.perm.iter()) {
            *xi = b[p];
        }
        for i in 0..N {
            let mut s = x[i];
            for j in 0..i {
                s -= self.lu[(i, j)] * x[j];
            }
            x[i] = s;
        }
        for i in (0..N).rev() {
            let mut s = x[i];
            for j in i + 1..N {
                s -= self.lu[(i, j)] * x[j];
            }
            x[i] = s / self.lu[(i, i)];
        }
        *b = x;
    }

    /// Returns `A⁻¹ b`.
    pub fn solve(&self, b: &SVector<f64, N>) -> SVector<f64, N> {
        let mut x = *b;
        self.solve_in_place(&mut x);
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Matrix3, Vector3};
    use proptest::prelude::*;

    #[test]
    fn cholesky_solves_spd_system() {
        let a = Matrix3::new(4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0);
        let b = Vector3::new(1.0, -2.0, 0.5);
        let x = Cholesky::try_new(&a, "a", 0.0).unwrap().solve(&b);
        assert!((a * x - b).amax() < 1e-14);
    }

    #[test]
    fn cholesky_rejects_singular_indefinite_and_nan() {
        let t = 1.5;
        let singular = Matrix3::from_diagonal(&Vector3::new(1.0, 0.0, 1.0));
        let indefinite = Matrix3::from_diagonal(&Vector3::new(1.0, -1.0, 1.0));
        let rank_one = Vector3::new(1.0, 2.0, 3.0) * Vector3::new(1.0, 2.0, 3.0).transpose();
        for a in [singular, indefinite, rank_one] {
            let err = Cholesky::try_new(&a, "m", t).unwrap_err();
            assert_eq!(err, StepError::Singular { matrix: "m", t });
        }
        let mut nan = Matrix3::identity();
        nan[(2, 1)] = f64::NAN;
        let err = Cholesky::try_new(&nan, "m", t).unwrap_err();
        assert_eq!(
            err,
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
        let x = Lu::try_new(&a, "a", 0.0).unwrap().solve(&b);
        assert!((a * x - b).amax() < 1e-14);
        let rank_two = Matrix3::new(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0);
        let err = Lu::try_new(&rank_two, "a", 2.0).unwrap_err();
        assert_eq!(
            err,
            StepError::Singular {
                matrix: "a",
                t: 2.0
            }
        );
        let err = Lu::try_new(&SMatrix::<f64, 3, 3>::zeros(), "a", 2.0).unwrap_err();
        assert_eq!(
            err,
            StepError::Singular {
                matrix: "a",
                t: 2.0
            }
        );
    }

    proptest! {
        #[test]
        fn lu_reconstructs_random_systems(entries in prop::array::uniform16(-10.0f64..10.0),
                                          rhs in prop::array::uniform4(-10.0f64..10.0)) {
            let a = SMatrix::<f64, 4, 4>::from_column_slice(&entries);
            let b = SVector::<f64, 4>::from(rhs);
            if let Ok(lu) = Lu::try_new(&a, "a", 0.0) {
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
            let x = Cholesky::try_new(&a, "a", 0.0).unwrap().solve(&b);
            prop_assert!((a * x - b).amax() <= 1e-10 * (1.0 + b.amax()));
        }
    }
}
