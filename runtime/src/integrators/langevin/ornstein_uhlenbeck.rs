//! The exact flow of the Ornstein–Uhlenbeck part of Langevin dynamics, block by block in the
//! eigenbasis of a block-diagonal `M`.

// The Jacobi rotation is written with index loops as in every textbook.
#![allow(clippy::needless_range_loop)]

use chacha20::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

use crate::linalg::LinalgError;

/// The most cyclic Jacobi sweeps before a symmetric eigendecomposition counts as failed; for a
/// symmetric matrix the method converges quadratically, in well under 10 sweeps for `N ≤ 100`.
const MAX_SWEEPS: usize = 64;

/// The exact `h`-flow of `dp = −γ M⁻¹ p dt + √(2γ kT) dW` at a fixed `q`, written for `v = M⁻¹p`,
/// for a block-diagonal `M = diag(M_1, …, M_B)` (the fixed-size tier is one block of size `N`,
/// the sparse tier one block per body).
///
/// The process does not couple blocks. With the eigendecomposition `M_b = Q_b D_b Q_bᵀ`
/// (`Q_b` orthogonal, `D_b = diag(d_i) > 0`) of each block it decouples further into scalar
/// Ornstein–Uhlenbeck processes for `ṽ = Q_bᵀ v_b`, each solved exactly:
///
/// ```text
/// ṽ_i ← c_i ṽ_i + σ_i ξ_i,   c_i = exp(−γh/d_i),   σ_i = √(kT (1 − c_i²) / d_i),   ξ_i ~ N(0, 1)
/// ```
///
/// so `p = M v` moves as `p ← e^{−γhM⁻¹} p + η`, `Cov η = kT M (I − e^{−2γhM⁻¹})`, which
/// leaves the Maxwell distribution `N(0, kT M)` of `p` invariant for every `h`. A block is
/// decomposed again only when its values change (bit for bit), so a constant `M` is decomposed
/// once. Every buffer is sized in [`new`](Self::new): building and applying never allocate.
#[derive(Clone, Debug)]
pub(super) struct OrnsteinUhlenbeck {
    /// `γh` and `kT`.
    gamma_h: f64,
    kt: f64,
    /// The size of each block, in coordinate order.
    sizes: Vec<usize>,
    /// The blocks of `M(q)` of the current step, each dense (`s × s`), concatenated; written by
    /// the tier before [`prepare`](Self::prepare).
    mass: Vec<f64>,
    /// The blocks the decomposition was built for; NaN for a block not (validly) built.
    built_for: Vec<f64>,
    /// The orthogonal eigenvectors `Q_b` of each block, entry `(i, j)` at `i s + j`.
    basis: Vec<f64>,
    /// `c_i = exp(−γh/d_i)` and `σ_i = √(kT (1 − c_i²)/d_i)`, per coordinate, with the
    /// eigenvalue `d_i` they were computed from.
    decay: Vec<f64>,
    spread: Vec<f64>,
    modal_mass: Vec<f64>,
    /// Scratch: a block being diagonalized, its eigenvalues, modal velocities, normal draws.
    work: Vec<f64>,
    eigenvalues: Vec<f64>,
    modal: Vec<f64>,
    xi: Vec<f64>,
}

impl OrnsteinUhlenbeck {
    /// Sizes the flow for blocks of the given sizes, with `γh` and `kT`.
    pub(super) fn new(sizes: &[usize], gamma_h: f64, kt: f64) -> Self {
        let n: usize = sizes.iter().sum();
        let squares: usize = sizes.iter().map(|s| s * s).sum();
        let largest = sizes.iter().copied().max().unwrap_or(0);
        OrnsteinUhlenbeck {
            gamma_h,
            kt,
            sizes: sizes.to_vec(),
            mass: vec![0.0; squares],
            built_for: vec![f64::NAN; squares],
            basis: vec![0.0; squares],
            decay: vec![0.0; n],
            spread: vec![0.0; n],
            modal_mass: vec![0.0; n],
            work: vec![0.0; largest * largest],
            eigenvalues: vec![0.0; largest],
            modal: vec![0.0; largest],
            xi: vec![0.0; n],
        }
    }

    /// Returns the block sizes.
    pub(super) fn sizes(&self) -> &[usize] {
        &self.sizes
    }

    /// Returns the number of coordinates.
    pub(super) fn coordinate_count(&self) -> usize {
        self.xi.len()
    }

    /// Returns the buffer for the blocks of `M(q)` of this step (`Σ s²` values; each block's
    /// entry `(i, j)` at `i s + j` or `j s + i`: only the symmetric part is used).
    pub(super) fn mass_mut(&mut self) -> &mut [f64] {
        &mut self.mass
    }

    /// Returns the blocks of `M(q)` last written.
    pub(super) fn mass(&self) -> &[f64] {
        &self.mass
    }

    /// Decomposes every block whose values changed since it was last decomposed.
    ///
    /// Fails with `WrongSignPivot` (an eigenvalue below `−s ε |M_b|`) or `ZeroPivot` (one within
    /// it, or a decomposition that did not converge) whose `index` is the block's first
    /// coordinate plus the eigenvalue's index in the block; the failed block is decomposed
    /// again next time. The blocks must be finite.
    pub(super) fn prepare(&mut self) -> Result<(), LinalgError> {
        let (mut first, mut offset) = (0, 0);
        for body in 0..self.sizes.len() {
            let s = self.sizes[body];
            let block = offset..offset + s * s;
            let unchanged = self.mass[block.clone()]
                .iter()
                .zip(&self.built_for[block.clone()])
                .all(|(a, b)| a.to_bits() == b.to_bits());
            if !unchanged {
                self.built_for[block.clone()].fill(f64::NAN);
                self.decompose(first, offset, s)?;
                self.built_for[block.clone()].copy_from_slice(&self.mass[block]);
            }
            first += s;
            offset += s * s;
        }
        Ok(())
    }

    /// Decomposes the block of size `s` at `offset` (first coordinate `first`) and sets its
    /// decay and spread.
    fn decompose(&mut self, first: usize, offset: usize, s: usize) -> Result<(), LinalgError> {
        let eigenvalues = &mut self.eigenvalues[..s];
        let converged = symmetric_eigen(
            &self.mass[offset..offset + s * s],
            s,
            &mut self.work[..s * s],
            &mut self.basis[offset..offset + s * s],
            eigenvalues,
        );
        if !converged {
            return Err(LinalgError::ZeroPivot {
                index: first,
                value: f64::NAN,
            });
        }
        let largest = eigenvalues.iter().fold(0.0f64, |m, d| m.max(d.abs()));
        let tolerance = s as f64 * f64::EPSILON * largest;
        if let Some(i) = eigenvalues.iter().position(|&d| d < -tolerance) {
            return Err(LinalgError::WrongSignPivot {
                index: first + i,
                value: eigenvalues[i],
                expected_positive: true,
            });
        }
        if let Some(i) = eigenvalues
            .iter()
            .position(|&d| d.is_nan() || d <= tolerance)
        {
            return Err(LinalgError::ZeroPivot {
                index: first + i,
                value: eigenvalues[i],
            });
        }
        let (gamma_h, kt) = (self.gamma_h, self.kt);
        for (i, &d) in eigenvalues.iter().enumerate() {
            self.modal_mass[first + i] = d;
            self.decay[first + i] = (-gamma_h / d).exp();
            // 1 − c² = −expm1(−2γh/d), accurate when γh/d is small.
            self.spread[first + i] = (kt * -(-2.0 * gamma_h / d).exp_m1() / d).sqrt();
        }
        Ok(())
    }

    /// Moves `v` by the flow of the last [`prepare`](Self::prepare), drawing one standard
    /// normal per coordinate from `rng`, in coordinate order.
    pub(super) fn apply(&mut self, v: &mut [f64], rng: &mut ChaCha8Rng) {
        for xi in &mut self.xi {
            *xi = StandardNormal.sample(rng);
        }
        let (mut first, mut offset) = (0, 0);
        for &s in &self.sizes {
            let q = &self.basis[offset..offset + s * s];
            let v = &mut v[first..first + s];
            let modal = &mut self.modal[..s];
            // ṽ = Qᵀ v, moved mode by mode, then v = Q ṽ.
            for j in 0..s {
                let projection: f64 = (0..s).map(|i| q[i * s + j] * v[i]).sum();
                modal[j] = self.decay[first + j] * projection
                    + self.spread[first + j] * self.xi[first + j];
            }
            for i in 0..s {
                v[i] = (0..s).map(|j| q[i * s + j] * modal[j]).sum();
            }
            first += s;
            offset += s * s;
        }
    }
}

impl OrnsteinUhlenbeck {
    /// Overwrites `v` with `e^{−γhM⁻¹} v` for the blocks of the last
    /// [`prepare`](Self::prepare): the flow's derivative in `v` with its noise held, block by
    /// block `Q_b diag(c_i) Q_bᵀ`, which is symmetric, so also its transpose.
    pub(super) fn apply_decay(&mut self, v: &mut [f64]) {
        let (mut first, mut offset) = (0, 0);
        for &s in &self.sizes {
            let q = &self.basis[offset..offset + s * s];
            let v = &mut v[first..first + s];
            let modal = &mut self.modal[..s];
            for j in 0..s {
                let projection: f64 = (0..s).map(|i| q[i * s + j] * v[i]).sum();
                modal[j] = self.decay[first + j] * projection;
            }
            for i in 0..s {
                v[i] = (0..s).map(|j| q[i * s + j] * modal[j]).sum();
            }
            first += s;
            offset += s * s;
        }
    }

    /// Writes, for the last [`apply`](Self::apply) from the velocities `v`, the derivative of
    /// the moved `v_i` in the mass `m_i` of a coordinate whose block is diagonal,
    ///
    /// ```text
    /// ∂ṽ_i/∂m_i = c_i′ v_i + σ_i′ ξ_i,   c_i′ = c_i γh/m_i²,
    /// σ_i′ = kT (u_i′/m_i − u_i/m_i²) / (2σ_i),   u_i = 1 − c_i² = 1 − e^{−2γh/m_i}
    /// ```
    ///
    /// (`σ_i′ = 0` where `σ_i = 0`: `kT = 0` or `γ = 0`), with `diagonal[i] = true`; a block with
    /// an off-diagonal entry gets `diagonal[i] = false` (its eigenvectors, in which the noise is
    /// drawn, move with `M`: no derivative in `M` is taken there). A diagonal block's basis is
    /// the identity ([`symmetric_eigen`] rotates nothing), so `m_i` is its eigenvalue.
    pub(super) fn mass_slopes(&self, v: &[f64], slopes: &mut [f64], diagonal: &mut [bool]) {
        let (mut first, mut offset) = (0, 0);
        for &s in &self.sizes {
            let block = &self.mass[offset..offset + s * s];
            let is_diagonal = (0..s).all(|i| (0..s).all(|j| i == j || block[i * s + j] == 0.0));
            for i in first..first + s {
                diagonal[i] = is_diagonal;
                slopes[i] = if is_diagonal {
                    let (m, c, sigma) = (self.modal_mass[i], self.decay[i], self.spread[i]);
                    let decay_slope = c * self.gamma_h / (m * m);
                    let spread_slope = if sigma > 0.0 {
                        let u = -(-2.0 * self.gamma_h / m).exp_m1();
                        let u_slope = -(c * c) * 2.0 * self.gamma_h / (m * m);
                        self.kt * (u_slope / m - u / (m * m)) / (2.0 * sigma)
                    } else {
                        0.0
                    };
                    decay_slope * v[i] + spread_slope * self.xi[i]
                } else {
                    0.0
                };
            }
            first += s;
            offset += s * s;
        }
    }
}

/// Writes `q` (`s × s`, entry `(i, j)` at `i s + j`, orthogonal) and `d` with
/// `a = Q diag(d) Qᵀ` for the symmetric part of the `s × s` matrix `a`, by cyclic Jacobi
/// rotations (Golub and Van Loan, *Matrix Computations*, 4th ed., §8.5), using `work` (`s²`
/// values); returns `false` if the off-diagonal part does not vanish within [`MAX_SWEEPS`]
/// sweeps.
fn symmetric_eigen(a: &[f64], s: usize, work: &mut [f64], q: &mut [f64], d: &mut [f64]) -> bool {
    let at = |i: usize, j: usize| i * s + j;
    for i in 0..s {
        for j in 0..s {
            work[at(i, j)] = 0.5 * (a[at(i, j)] + a[at(j, i)]);
            q[at(i, j)] = if i == j { 1.0 } else { 0.0 };
        }
    }
    let a = work;
    let scale = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    for _ in 0..MAX_SWEEPS {
        let mut off = 0.0;
        for p in 0..s {
            for r in p + 1..s {
                off += a[at(p, r)] * a[at(p, r)];
            }
        }
        // Off-diagonal entries of this size move the eigenvalues by round-off only.
        if off.sqrt() <= 4.0 * s as f64 * f64::EPSILON * scale {
            for i in 0..s {
                d[i] = a[at(i, i)];
            }
            return true;
        }
        for p in 0..s {
            for r in p + 1..s {
                let apr = a[at(p, r)];
                if apr == 0.0 {
                    continue;
                }
                // The rotation that zeroes a_pr: t = tan θ is the smaller root of
                // t² + 2ζt − 1 = 0, ζ = (a_rr − a_pp) / (2 a_pr).
                let zeta = (a[at(r, r)] - a[at(p, p)]) / (2.0 * apr);
                let t = zeta.signum() / (zeta.abs() + (zeta * zeta + 1.0).sqrt());
                let c = 1.0 / (t * t + 1.0).sqrt();
                let sn = t * c;
                for k in 0..s {
                    let (akp, akr) = (a[at(k, p)], a[at(k, r)]);
                    a[at(k, p)] = c * akp - sn * akr;
                    a[at(k, r)] = sn * akp + c * akr;
                }
                for k in 0..s {
                    let (apk, ark) = (a[at(p, k)], a[at(r, k)]);
                    a[at(p, k)] = c * apk - sn * ark;
                    a[at(r, k)] = sn * apk + c * ark;
                }
                for k in 0..s {
                    let (qkp, qkr) = (q[at(k, p)], q[at(k, r)]);
                    q[at(k, p)] = c * qkp - sn * qkr;
                    q[at(k, r)] = sn * qkp + c * qkr;
                }
                // Zero in exact arithmetic; set it so, rather than to its rounding error.
                a[at(p, r)] = 0.0;
                a[at(r, p)] = 0.0;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use chacha20::rand_core::SeedableRng;
    use nalgebra::{SMatrix, SVector};
    use proptest::prelude::*;

    #[test]
    fn flow_of_diagonal_blocks_is_the_scalar_formula() {
        // Two blocks: [2] and diag(0.5, 3) given with its off-diagonal zeros.
        let (gamma, h, kt) = (0.3, 0.1, 1.7);
        let mut ou = OrnsteinUhlenbeck::new(&[1, 2], gamma * h, kt);
        ou.mass_mut().copy_from_slice(&[2.0, 0.5, 0.0, 0.0, 3.0]);
        ou.prepare().unwrap();
        let mut v = [1.0, -2.0, 0.25];
        let start = v;
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let mut draws = ChaCha8Rng::seed_from_u64(9);
        ou.apply(&mut v, &mut rng);
        for (i, m) in [2.0, 0.5, 3.0].into_iter().enumerate() {
            let xi: f64 = StandardNormal.sample(&mut draws);
            let c = f64::exp(-gamma * h / m);
            let expected = c * start[i] + (kt * (1.0 - c * c) / m).sqrt() * xi;
            assert!((v[i] - expected).abs() < 1e-14, "{v:?}[{i}] vs {expected}");
        }
    }

    #[test]
    fn rejects_indefinite_and_semidefinite_blocks_naming_the_coordinate() {
        let mut ou = OrnsteinUhlenbeck::new(&[1, 2], 0.1, 1.0);
        ou.mass_mut().copy_from_slice(&[1.0, 1.0, 2.0, 2.0, 1.0]);
        // The second block [[1, 2], [2, 1]] has the eigenvalues −1 and 3.
        assert!(matches!(
            ou.prepare(),
            Err(LinalgError::WrongSignPivot { index: 1 | 2, value, expected_positive: true })
                if (value + 1.0).abs() < 1e-14
        ));
        ou.mass_mut().copy_from_slice(&[1.0, 1.0, 1.0, 1.0, 1.0]);
        assert!(matches!(
            ou.prepare(),
            Err(LinalgError::ZeroPivot { index: 1 | 2, .. })
        ));
    }

    proptest! {
        #[test]
        fn jacobi_reconstructs_random_symmetric_matrices(entries in prop::array::uniform16(-10.0f64..10.0)) {
            let r = SMatrix::<f64, 4, 4>::from_column_slice(&entries);
            let a = r + r.transpose();
            let (mut work, mut q, mut d) = ([0.0; 16], [0.0; 16], [0.0; 4]);
            prop_assert!(symmetric_eigen(a.as_slice(), 4, &mut work, &mut q, &mut d));
            // Entry (i, j) at 4i + j is row-major: nalgebra reads it as Qᵀ.
            let q = SMatrix::<f64, 4, 4>::from_row_slice(&q);
            let identity = SMatrix::<f64, 4, 4>::identity();
            prop_assert!((q.transpose() * q - identity).amax() < 1e-13);
            let rebuilt = q * SMatrix::<f64, 4, 4>::from_diagonal(&SVector::from(d)) * q.transpose();
            prop_assert!((rebuilt - a).amax() < 1e-13 * (1.0 + a.amax()));
        }
    }
}
