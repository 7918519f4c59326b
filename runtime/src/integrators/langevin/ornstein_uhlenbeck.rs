//! The exact flow of the Ornstein–Uhlenbeck part of Langevin dynamics, in the eigenbasis of `M`.

// The Jacobi rotation is written with index loops as in every textbook; with const bounds they
// compile to check-free code.
#![allow(clippy::needless_range_loop)]

use nalgebra::{SMatrix, SVector};

use crate::error::StepError;

/// The most cyclic Jacobi sweeps before a symmetric eigendecomposition counts as failed; for a
/// symmetric matrix the method converges quadratically, in well under 10 sweeps for `N ≤ 100`.
const MAX_SWEEPS: usize = 64;

/// The name of the matrix whose eigendecomposition failed, for errors.
const MASS_MATRIX: &str = "mass matrix (eigendecomposition for the Ornstein–Uhlenbeck step)";

/// The exact `h`-flow of `dp = −γ M⁻¹ p dt + √(2γ kT) dW` at a fixed `q`, written for `v = M⁻¹p`.
///
/// With the eigendecomposition `M = Q D Qᵀ` (`Q` orthogonal, `D = diag(d_i) > 0`), the process
/// decouples into scalar Ornstein–Uhlenbeck processes for `ṽ = Qᵀ v`, each solved exactly:
///
/// ```text
/// ṽ_i ← c_i ṽ_i + σ_i ξ_i,   c_i = exp(−γh/d_i),   σ_i = √(kT (1 − c_i²) / d_i),   ξ_i ~ N(0, 1)
/// ```
///
/// so `p = M v` moves as `p ← e^{−γhM⁻¹} p + η`, `Cov η = kT M (I − e^{−2γhM⁻¹})`, which
/// leaves the Maxwell distribution `N(0, kT M)` of `p` invariant for every `h`.
#[derive(Clone, Copy, Debug)]
pub(super) struct OrnsteinUhlenbeck<const N: usize> {
    /// The mass matrix the flow was built for.
    mass: SMatrix<f64, N, N>,
    /// The orthogonal eigenvectors `Q` of `M`, as columns.
    basis: SMatrix<f64, N, N>,
    /// `c_i = exp(−γh/d_i)`.
    decay: SVector<f64, N>,
    /// `σ_i = √(kT (1 − c_i²)/d_i)`.
    spread: SVector<f64, N>,
}

impl<const N: usize> OrnsteinUhlenbeck<N> {
    /// Builds the flow for the symmetric positive definite `mass`; fails with
    /// `NotPositiveDefinite` if an eigenvalue of `mass` is negative (`row` is then the
    /// eigenvalue's index), with `Singular` if one vanishes.
    pub(super) fn try_new(
        mass: &SMatrix<f64, N, N>,
        gamma_h: f64,
        kt: f64,
        t: f64,
    ) -> Result<Self, StepError> {
        if let Some(index) = mass.iter().position(|x| !x.is_finite()) {
            return Err(StepError::NonFinite {
                quantity: "mass matrix",
                index,
                t,
            });
        }
        let (basis, eigenvalues) = symmetric_eigen(mass).ok_or(StepError::Singular {
            matrix: MASS_MATRIX,
            t,
        })?;
        let largest = eigenvalues.iter().fold(0.0f64, |m, d| m.max(d.abs()));
        let tolerance = N.max(1) as f64 * f64::EPSILON * largest;
        if let Some(row) = eigenvalues.iter().position(|&d| d < -tolerance) {
            return Err(StepError::NotPositiveDefinite {
                matrix: MASS_MATRIX,
                row,
                pivot: eigenvalues[row],
                t,
            });
        }
        if eigenvalues.iter().any(|&d| d.is_nan() || d <= tolerance) {
            return Err(StepError::Singular {
                matrix: MASS_MATRIX,
                t,
            });
        }
        let decay = eigenvalues.map(|d| (-gamma_h / d).exp());
        // 1 − c² = −expm1(−2γh/d), accurate when γh/d is small.
        let spread = eigenvalues.map(|d| (kt * -(-2.0 * gamma_h / d).exp_m1() / d).sqrt());
        Ok(OrnsteinUhlenbeck {
            mass: *mass,
            basis,
            decay,
            spread,
        })
    }

    /// Returns whether the flow was built for exactly (bit for bit) this mass matrix.
    pub(super) fn is_for(&self, mass: &SMatrix<f64, N, N>) -> bool {
        self.mass
            .iter()
            .zip(mass.iter())
            .all(|(a, b)| a.to_bits() == b.to_bits())
    }

    /// Returns `v` moved by the flow with the standard normal draws `xi`.
    pub(super) fn apply(&self, v: &SVector<f64, N>, xi: &SVector<f64, N>) -> SVector<f64, N> {
        let mut modal = self.basis.tr_mul(v);
        for i in 0..N {
            modal[i] = self.decay[i] * modal[i] + self.spread[i] * xi[i];
        }
        self.basis * modal
    }
}

/// Returns `(Q, d)` with `a = Q diag(d) Qᵀ` for the symmetric part of `a`, by cyclic Jacobi
/// rotations (Golub and Van Loan, *Matrix Computations*, 4th ed., §8.5), or `None` if the
/// off-diagonal part does not vanish within [`MAX_SWEEPS`] sweeps.
fn symmetric_eigen<const N: usize>(
    a: &SMatrix<f64, N, N>,
) -> Option<(SMatrix<f64, N, N>, SVector<f64, N>)> {
    let mut a = (a + a.transpose()) * 0.5;
    let mut q = SMatrix::<f64, N, N>::identity();
    let scale = a.norm();
    for _ in 0..MAX_SWEEPS {
        let mut off = 0.0;
        for p in 0..N {
            for r in p + 1..N {
                off += a[(p, r)] * a[(p, r)];
            }
        }
        // Off-diagonal entries of this size move the eigenvalues by round-off only.
        if off.sqrt() <= 4.0 * N as f64 * f64::EPSILON * scale {
            return Some((q, a.diagonal()));
        }
        for p in 0..N {
            for r in p + 1..N {
                let apr = a[(p, r)];
                if apr == 0.0 {
                    continue;
                }
                // The rotation that zeroes a_pr: t = tan θ is the smaller root of
                // t² + 2ζt − 1 = 0, ζ = (a_rr − a_pp) / (2 a_pr).
                let zeta = (a[(r, r)] - a[(p, p)]) / (2.0 * apr);
                let t = zeta.signum() / (zeta.abs() + (zeta * zeta + 1.0).sqrt());
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..N {
                    let (akp, akr) = (a[(k, p)], a[(k, r)]);
                    a[(k, p)] = c * akp - s * akr;
                    a[(k, r)] = s * akp + c * akr;
                }
                for k in 0..N {
                    let (apk, ark) = (a[(p, k)], a[(r, k)]);
                    a[(p, k)] = c * apk - s * ark;
                    a[(r, k)] = s * apk + c * ark;
                }
                for k in 0..N {
                    let (qkp, qkr) = (q[(k, p)], q[(k, r)]);
                    q[(k, p)] = c * qkp - s * qkr;
                    q[(k, r)] = s * qkp + c * qkr;
                }
                // Zero in exact arithmetic; set it so, rather than to its rounding error.
                a[(p, r)] = 0.0;
                a[(r, p)] = 0.0;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn flow_of_a_diagonal_mass_is_the_scalar_formula() {
        let mass = SMatrix::<f64, 2, 2>::from_diagonal(&SVector::<f64, 2>::new(2.0, 0.5));
        let (gamma, h, kt) = (0.3, 0.1, 1.7);
        let ou = OrnsteinUhlenbeck::try_new(&mass, gamma * h, kt, 0.0).unwrap();
        let v = SVector::<f64, 2>::new(1.0, -2.0);
        let xi = SVector::<f64, 2>::new(0.5, 1.5);
        let moved = ou.apply(&v, &xi);
        for (i, m) in [2.0, 0.5].into_iter().enumerate() {
            let c = f64::exp(-gamma * h / m);
            let expected = c * v[i] + (kt * (1.0 - c * c) / m).sqrt() * xi[i];
            assert!((moved[i] - expected).abs() < 1e-14, "{moved} vs {expected}");
        }
    }

    #[test]
    fn rejects_indefinite_and_non_finite_mass() {
        let indefinite = SMatrix::<f64, 2, 2>::new(1.0, 2.0, 2.0, 1.0);
        assert!(matches!(
            OrnsteinUhlenbeck::try_new(&indefinite, 0.1, 1.0, 3.0),
            Err(StepError::NotPositiveDefinite { t: 3.0, .. })
        ));
        let semidefinite = SMatrix::<f64, 2, 2>::new(1.0, 1.0, 1.0, 1.0);
        assert!(matches!(
            OrnsteinUhlenbeck::try_new(&semidefinite, 0.1, 1.0, 3.0),
            Err(StepError::Singular { t: 3.0, .. })
        ));
        let nan = SMatrix::<f64, 2, 2>::new(1.0, f64::NAN, 0.0, 1.0);
        assert!(matches!(
            OrnsteinUhlenbeck::try_new(&nan, 0.1, 1.0, 3.0),
            Err(StepError::NonFinite {
                quantity: "mass matrix",
                index: 2,
                t: 3.0
            })
        ));
    }

    proptest! {
        #[test]
        fn jacobi_reconstructs_random_symmetric_matrices(entries in prop::array::uniform16(-10.0f64..10.0)) {
            let r = SMatrix::<f64, 4, 4>::from_column_slice(&entries);
            let a = r + r.transpose();
            let (q, d) = symmetric_eigen(&a).unwrap();
            let identity = SMatrix::<f64, 4, 4>::identity();
            prop_assert!((q.transpose() * q - identity).amax() < 1e-13);
            let rebuilt = q * SMatrix::<f64, 4, 4>::from_diagonal(&d) * q.transpose();
            prop_assert!((rebuilt - a).amax() < 1e-13 * (1.0 + a.amax()));
        }
    }
}
