//! The factored matrix of SPOOK's eq. 29 on the fixed-size tier: factored once per step and
//! solved for the step's right-hand side and, for its Jacobian, for `2N` more.

use nalgebra::{SMatrix, SVector};

use crate::error::StepError;
use crate::integrators::mass_factor::MassFactor;
use crate::linalg::Cholesky;

/// The matrix of eq. 29,
///
/// ```text
/// [ M   −Aᵀ  −Gᵀ ]
/// [ A    Γ    0  ]
/// [ G    0    Σ  ]
/// ```
///
/// factored either through the Schur complements of eq. 30 (`M` invertible) or, for a
/// singular `M`, by eliminating the multipliers (`Σ > 0`, `Γ > 0`). [`solve`](Self::solve)
/// takes any number of right-hand-side columns: one for the step, `2N` for its Jacobian
/// ([`DifferentiableStep`](crate::integrators::DifferentiableStep)).
#[derive(Clone, Copy, Debug)]
pub(super) enum Eq29Factor<const N: usize, const M: usize, const K: usize> {
    /// `M` is invertible: `S_GG = G M⁻¹ Gᵀ + Σ` and, with nonholonomic rows, the reduced
    /// `A M⁻¹ Aᵀ + Γ − S_AG S_GG⁻¹ S_GA` factored.
    Schur {
        mass: Cholesky<N>,
        /// `M⁻¹ Gᵀ`.
        minv_jac_t: SMatrix<f64, N, M>,
        /// `M⁻¹ Aᵀ`.
        minv_a_t: SMatrix<f64, N, K>,
        /// `G`.
        jac: SMatrix<f64, M, N>,
        /// `A`.
        a: SMatrix<f64, K, N>,
        s_gg: Cholesky<M>,
        /// `S_AG = A M⁻¹ Gᵀ` (only with nonholonomic rows).
        s_ag: SMatrix<f64, K, M>,
        /// The reduced complement (only with nonholonomic rows).
        reduced: Option<Cholesky<K>>,
    },
    /// `M` is singular: `M + Gᵀ Σ⁻¹ G + Aᵀ Γ⁻¹ A` factored.
    Primal {
        factor: Cholesky<N>,
        /// `G`, `Σ⁻¹ G`, `A`, `Γ⁻¹ A` and the diagonals of `Σ` and `Γ`.
        jac: SMatrix<f64, M, N>,
        sigma_inv_jac: SMatrix<f64, M, N>,
        a: SMatrix<f64, K, N>,
        gamma_inv_a: SMatrix<f64, K, N>,
        sigma: SVector<f64, M>,
        gamma: SVector<f64, K>,
    },
}

/// What [`Eq29Factor::new`] needs: `M`, `G`, `A` at `q_k` and the diagonals of `Σ` and `Γ`.
pub(super) struct Eq29Matrix<'a, const N: usize, const M: usize, const K: usize> {
    pub mass: &'a SMatrix<f64, N, N>,
    /// Whether `M` is constant (its factor is then cached between steps).
    pub constant_mass: bool,
    pub jac: &'a SMatrix<f64, M, N>,
    pub a: &'a SMatrix<f64, K, N>,
    pub sigma: &'a SVector<f64, M>,
    pub gamma: &'a SVector<f64, K>,
}

impl<const N: usize, const M: usize, const K: usize> Eq29Factor<N, M, K> {
    /// Factors the matrix of eq. 29, with `M`'s factor from `mass_factor` (reused while `M`
    /// is unchanged); returns the factor and the number of factorizations it took. A singular
    /// `M` takes the primal elimination, which fails with [`StepError::Singular`] where a row is
    /// ideal (`ε = 0` or `γ = 0`).
    pub(super) fn new(
        mass_factor: &mut MassFactor<N>,
        matrix: Eq29Matrix<'_, N, M, K>,
        time: f64,
    ) -> Result<(Self, u32), StepError> {
        match mass_factor.factor(matrix.mass, matrix.constant_mass, time) {
            Ok((mass, mass_factorizations)) => Self::schur(mass, &matrix, time)
                .map(|(factor, count)| (factor, mass_factorizations + count)),
            Err(StepError::Singular { .. }) => Self::primal(&matrix, time).map(|f| (f, 1)),
            Err(other) => Err(other),
        }
    }

    fn schur(
        mass: Cholesky<N>,
        matrix: &Eq29Matrix<'_, N, M, K>,
        time: f64,
    ) -> Result<(Self, u32), StepError> {
        let (jac, a) = (matrix.jac, matrix.a);
        let mut minv_jac_t = jac.transpose();
        mass.solve_in_place(&mut minv_jac_t);
        let mut minv_a_t = a.transpose();
        mass.solve_in_place(&mut minv_a_t);
        let mut s_gg = jac * minv_jac_t;
        for row in 0..M {
            s_gg[(row, row)] += matrix.sigma[row];
        }
        let wrap_gg = StepError::linear_algebra("Schur complement G M⁻¹ Gᵀ + Σ", time);
        let s_gg = Cholesky::try_new(&s_gg).map_err(&wrap_gg)?;
        let (s_ag, reduced, count) = if K == 0 {
            (SMatrix::zeros(), None, 1)
        } else {
            let s_ag = a * minv_jac_t;
            let mut s_gg_inv_s_ga = s_ag.transpose();
            s_gg.solve_in_place(&mut s_gg_inv_s_ga);
            let mut reduced = a * minv_a_t - s_ag * s_gg_inv_s_ga;
            for row in 0..K {
                reduced[(row, row)] += matrix.gamma[row];
            }
            let wrap_reduced =
                StepError::linear_algebra("Schur complement A M⁻¹ Aᵀ + Γ − S_AG S_GG⁻¹ S_GA", time);
            let reduced = Cholesky::try_new(&reduced).map_err(&wrap_reduced)?;
            (s_ag, Some(reduced), if M == 0 { 1 } else { 2 })
        };
        Ok((
            Eq29Factor::Schur {
                mass,
                minv_jac_t,
                minv_a_t,
                jac: *jac,
                a: *a,
                s_gg,
                s_ag,
                reduced,
            },
            count,
        ))
    }

    /// With a singular `M` (massless coordinates, Kinon–Betsch §6.1), eliminates the
    /// multipliers, `λ = Σ⁻¹ (t − G v)` and `α = Γ⁻¹ (s − A v)`, which leaves
    /// `(M + Gᵀ Σ⁻¹ G + Aᵀ Γ⁻¹ A) v = r + Gᵀ Σ⁻¹ t + Aᵀ Γ⁻¹ s`: positive definite when the
    /// constraints fix every massless direction, and only defined for `Σ > 0`, `Γ > 0`.
    fn primal(matrix: &Eq29Matrix<'_, N, M, K>, time: f64) -> Result<Self, StepError> {
        let ideal = StepError::Singular {
            matrix: "mass matrix (and an ideal row, ε = 0 or γ = 0, so no regularized form \
                     exists)",
            t: time,
        };
        let (jac, a) = (matrix.jac, matrix.a);
        let mut sigma_inv_jac = *jac;
        for row in 0..M {
            let sigma = matrix.sigma[row];
            if sigma <= 0.0 {
                return Err(ideal);
            }
            sigma_inv_jac.row_mut(row).scale_mut(1.0 / sigma);
        }
        let mut gamma_inv_a = *a;
        for row in 0..K {
            let gamma = matrix.gamma[row];
            if gamma <= 0.0 {
                return Err(ideal);
            }
            gamma_inv_a.row_mut(row).scale_mut(1.0 / gamma);
        }
        let primal = matrix.mass + jac.transpose() * sigma_inv_jac + a.transpose() * gamma_inv_a;
        let wrap =
            StepError::linear_algebra("M + Gᵀ Σ⁻¹ G + Aᵀ Γ⁻¹ A (singular mass matrix)", time);
        let factor = Cholesky::try_new(&primal).map_err(&wrap)?;
        Ok(Eq29Factor::Primal {
            factor,
            jac: *jac,
            sigma_inv_jac,
            a: *a,
            gamma_inv_a,
            sigma: *matrix.sigma,
            gamma: *matrix.gamma,
        })
    }

    /// Solves eq. 29 for the right-hand sides `(r, s, t)`, column by column: returns
    /// `(v, α, λ)`.
    pub(super) fn solve<const C: usize>(
        &self,
        r: &SMatrix<f64, N, C>,
        s: &SMatrix<f64, K, C>,
        t: &SMatrix<f64, M, C>,
    ) -> (SMatrix<f64, N, C>, SMatrix<f64, K, C>, SMatrix<f64, M, C>) {
        match self {
            Eq29Factor::Schur {
                mass,
                minv_jac_t,
                minv_a_t,
                jac,
                a,
                s_gg,
                s_ag,
                reduced,
            } => {
                let mut minv_r = *r;
                mass.solve_in_place(&mut minv_r);
                let mut b_g = t - jac * minv_r;
                let Some(reduced) = reduced else {
                    s_gg.solve_in_place(&mut b_g);
                    let v = minv_r + minv_jac_t * b_g;
                    return (v, SMatrix::zeros(), b_g);
                };
                // Eliminate λ, then solve the reduced system for α.
                let b_a = s - a * minv_r;
                let mut s_gg_inv_b_g = b_g;
                s_gg.solve_in_place(&mut s_gg_inv_b_g);
                let mut alpha = b_a - s_ag * s_gg_inv_b_g;
                reduced.solve_in_place(&mut alpha);
                b_g -= s_ag.transpose() * alpha;
                s_gg.solve_in_place(&mut b_g);
                let v = minv_r + minv_a_t * alpha + minv_jac_t * b_g;
                (v, alpha, b_g)
            }
            Eq29Factor::Primal {
                factor,
                jac,
                sigma_inv_jac,
                a,
                gamma_inv_a,
                sigma,
                gamma,
            } => {
                let mut sigma_inv_t = *t;
                for (mut row, sigma) in sigma_inv_t.row_iter_mut().zip(sigma.iter()) {
                    row /= *sigma;
                }
                let mut gamma_inv_s = *s;
                for (mut row, gamma) in gamma_inv_s.row_iter_mut().zip(gamma.iter()) {
                    row /= *gamma;
                }
                let mut v = r + jac.transpose() * sigma_inv_t + a.transpose() * gamma_inv_s;
                factor.solve_in_place(&mut v);
                let lambda = sigma_inv_t - sigma_inv_jac * v;
                let alpha = gamma_inv_s - gamma_inv_a * v;
                (v, alpha, lambda)
            }
        }
    }
}
