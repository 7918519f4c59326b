//! The bordered system `[A B; C 0]` of a Newton step with rows (Livens, the midpoint
//! discrete Lagrange–d'Alembert integrator) and of its implicit-function-theorem Jacobian,
//! solved by the Schur complement of `A`.

use nalgebra::{SMatrix, SVector};

use super::{LinalgError, Lu};

/// The block matrix `[A B; C 0]` with `A` (`N × N`) factored by LU and the Schur complement
/// `C A⁻¹ B` (`M × M`) factored by LU: it solves
///
/// ```text
/// A x + B y = r,   C x = s    ⇒    y = (C A⁻¹ B)⁻¹ (C A⁻¹ r − s),   x = A⁻¹ r − A⁻¹ B y
/// ```
///
/// for any number of right-hand sides, with `A⁻¹ B` kept from the factorization. Requires `A`
/// invertible (the caller factors it and names it in errors) and `B`, `C` of full rank `M`.
///
/// # Example
///
/// `[[2, 1], [1, 0]]`, a coordinate and one row:
///
/// ```
/// use mechanism_runtime::linalg::{BorderedLu, Lu};
/// use nalgebra::{SMatrix, SVector};
/// let a = Lu::try_new(&SMatrix::<f64, 1, 1>::new(2.0))?;
/// let (b, c) = (SMatrix::<f64, 1, 1>::new(1.0), SMatrix::<f64, 1, 1>::new(1.0));
/// let bordered = BorderedLu::new(a, &b, c)?;
/// let (x, y) = bordered.solve(&SVector::<f64, 1>::new(3.0), &SVector::<f64, 1>::new(1.0));
/// assert!((x[0] - 1.0).abs() < 1e-15 && (y[0] - 1.0).abs() < 1e-15);
/// # Ok::<(), mechanism_runtime::linalg::LinalgError>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct BorderedLu<const N: usize, const M: usize> {
    a: Lu<N>,
    /// `A⁻¹ B`.
    a_inv_b: SMatrix<f64, N, M>,
    c: SMatrix<f64, M, N>,
    /// The factor of `C A⁻¹ B` (empty without rows, `M = 0`).
    schur: Lu<M>,
}

impl<const N: usize, const M: usize> BorderedLu<N, M> {
    /// Factors the Schur complement `C A⁻¹ B` of `a`'s factor (an error names a singular or
    /// non-finite Schur complement; the caller names a failure of `A`'s own factorization).
    pub fn new(
        a: Lu<N>,
        b: &SMatrix<f64, N, M>,
        c: SMatrix<f64, M, N>,
    ) -> Result<Self, LinalgError> {
        let a_inv_b = a.solve_columns(b);
        let schur = Lu::try_new(&(c * a_inv_b))?;
        Ok(BorderedLu {
            a,
            a_inv_b,
            c,
            schur,
        })
    }

    /// Returns `(x, y)` of `A x + B y = r`, `C x = s` for the `K` columns of `r` and `s`.
    pub fn solve_columns<const K: usize>(
        &self,
        r: &SMatrix<f64, N, K>,
        s: &SMatrix<f64, M, K>,
    ) -> (SMatrix<f64, N, K>, SMatrix<f64, M, K>) {
        let x = self.a.solve_columns(r);
        let y = self.schur.solve_columns(&(self.c * x - s));
        (x - self.a_inv_b * y, y)
    }

    /// Returns `(x, y)` of `A x + B y = r`, `C x = s`.
    pub fn solve(
        &self,
        r: &SVector<f64, N>,
        s: &SVector<f64, M>,
    ) -> (SVector<f64, N>, SVector<f64, M>) {
        self.solve_columns(r, s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_against_the_assembled_block_matrix() {
        // A nonsymmetric A, B ≠ Cᵀ: the block matrix assembled and solved by LU.
        let a = SMatrix::<f64, 3, 3>::new(4.0, 1.0, 0.5, -1.0, 3.0, 0.2, 0.3, 0.1, 2.0);
        let b = SMatrix::<f64, 3, 2>::new(1.0, 0.0, 0.5, 1.0, 0.0, -1.0);
        let c = SMatrix::<f64, 2, 3>::new(1.0, 2.0, 0.0, 0.0, 1.0, 1.0);
        let mut block = SMatrix::<f64, 5, 5>::zeros();
        block.fixed_view_mut::<3, 3>(0, 0).copy_from(&a);
        block.fixed_view_mut::<3, 2>(0, 3).copy_from(&b);
        block.fixed_view_mut::<2, 3>(3, 0).copy_from(&c);
        let rhs = SVector::<f64, 5>::new(1.0, -2.0, 0.5, 0.25, -1.0);
        let exact = block.lu().solve(&rhs).unwrap();
        let bordered = BorderedLu::new(Lu::try_new(&a).unwrap(), &b, c).unwrap();
        let (x, y) = bordered.solve(
            &rhs.fixed_rows::<3>(0).into(),
            &rhs.fixed_rows::<2>(3).into(),
        );
        for (got, want) in x.iter().chain(y.iter()).zip(exact.iter()) {
            assert!(
                (got - want).abs() <= 1e-14 * exact.amax(),
                "{got} vs {want}"
            );
        }
    }

    #[test]
    fn without_rows_it_is_a_solve_with_a() {
        let a = SMatrix::<f64, 2, 2>::new(2.0, 1.0, 1.0, 3.0);
        let bordered = BorderedLu::<2, 0>::new(
            Lu::try_new(&a).unwrap(),
            &SMatrix::zeros(),
            SMatrix::zeros(),
        )
        .unwrap();
        let (x, _) = bordered.solve(&SVector::<f64, 2>::new(3.0, 4.0), &SVector::zeros());
        assert!((a * x - SVector::<f64, 2>::new(3.0, 4.0)).amax() < 1e-15);
    }

    #[test]
    fn a_singular_schur_complement_is_an_error() {
        let a = SMatrix::<f64, 2, 2>::identity();
        let b = SMatrix::<f64, 2, 1>::new(1.0, 0.0);
        let c = SMatrix::<f64, 1, 2>::new(0.0, 1.0);
        assert!(BorderedLu::new(Lu::try_new(&a).unwrap(), &b, c).is_err());
    }
}
