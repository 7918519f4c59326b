//! The small oscillations of a hanging chain of planar pendula, written in the rods' angles:
//! the reference that equilibria and modes computed in Cartesian coordinates (with the rods
//! as constraint rows) are checked against.
//!
//! Rod `i` (root first) has length `lᵢ` and carries bob `i` of mass `mᵢ` at its lower end; it
//! makes the angle `θᵢ` with the downward vertical, so bob `k` sits at
//! `Σ_{i≤k} lᵢ (sin θᵢ, −cos θᵢ)`. About hanging straight down (`θ = 0`), to second order,
//!
//! ```text
//! T = ½ θ̇ᵀ M θ̇,   Mᵢⱼ = (Σ_{k ≥ max(i,j)} mₖ) lᵢ lⱼ,
//! V = ½ θᵀ K θ,   Kᵢᵢ = g lᵢ Σ_{k ≥ i} mₖ,   Kᵢⱼ = 0 (i ≠ j),
//! ```
//!
//! since bob `k`'s horizontal velocity is `Σ_{i≤k} lᵢ θ̇ᵢ` and its height `−Σ_{i≤k} lᵢ cos θᵢ`.
//! Rod `i`'s tension at rest is the weight below it, `g Σ_{k≥i} mₖ`. A negative `g` gives the
//! inverted chain balanced upright (`K` negated).

use nalgebra::{DMatrix, SymmetricEigen};

/// A hanging chain of planar pendula, in the rods' angles (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct HangingChain {
    masses: Vec<f64>,
    lengths: Vec<f64>,
    gravity: f64,
}

impl HangingChain {
    /// The chain with bob masses `masses` and rod lengths `lengths`, root first, under gravity
    /// `gravity` along `−y`; `None` unless there are as many lengths as masses, at least one,
    /// every mass and length positive and finite and `gravity` finite.
    pub fn new(masses: Vec<f64>, lengths: Vec<f64>, gravity: f64) -> Option<Self> {
        let positive = |x: &f64| x.is_finite() && *x > 0.0;
        (!masses.is_empty()
            && masses.len() == lengths.len()
            && masses.iter().all(positive)
            && lengths.iter().all(positive)
            && gravity.is_finite())
        .then_some(HangingChain {
            masses,
            lengths,
            gravity,
        })
    }

    /// `n` equal bobs of mass `mass` on rods of length `length`.
    pub fn uniform(n: usize, mass: f64, length: f64, gravity: f64) -> Option<Self> {
        HangingChain::new(vec![mass; n], vec![length; n], gravity)
    }

    /// The number of rods.
    pub fn links(&self) -> usize {
        self.masses.len()
    }

    /// The bobs' masses, root first.
    pub fn masses(&self) -> &[f64] {
        &self.masses
    }

    /// The rods' lengths, root first.
    pub fn lengths(&self) -> &[f64] {
        &self.lengths
    }

    /// The gravitational acceleration.
    pub fn gravity(&self) -> f64 {
        self.gravity
    }

    /// `Σ_{k ≥ i} mₖ`: the mass hanging from rod `i`.
    pub fn below(&self, i: usize) -> f64 {
        self.masses.get(i..).map_or(0.0, |m| m.iter().sum())
    }

    /// Rod `i`'s tension at rest, `g Σ_{k ≥ i} mₖ`.
    pub fn tension(&self, i: usize) -> f64 {
        self.gravity * self.below(i)
    }

    /// The angle-coordinate mass and stiffness matrices `(M, K)` at rest.
    pub fn angle_matrices(&self) -> (DMatrix<f64>, DMatrix<f64>) {
        let (n, l) = (self.links(), &self.lengths);
        let mass = DMatrix::from_fn(n, n, |i, j| self.below(i.max(j)) * l[i] * l[j]);
        let stiffness = DMatrix::from_fn(n, n, |i, j| {
            if i == j {
                self.gravity * l[i] * self.below(i)
            } else {
                0.0
            }
        });
        (mass, stiffness)
    }

    /// The generalized eigenvalues `ω²` of `K θ = ω² M θ`, ascending, and the eigenvectors
    /// (columns, in angles, of unit length): [`generalized_eigen`] of
    /// [`angle_matrices`](Self::angle_matrices).
    pub fn angle_modes(&self) -> (Vec<f64>, DMatrix<f64>) {
        let (mass, stiffness) = self.angle_matrices();
        // `M` is positive definite for positive masses and lengths (`new` checks them): the
        // bobs' velocity maps' Gram matrix weighted by their masses.
        generalized_eigen(&mass, &stiffness)
            .unwrap_or_else(|| (Vec::new(), DMatrix::zeros(self.links(), 0)))
    }

    /// The bobs' Cartesian positions `(x₀, y₀, x₁, y₁, …)` with rod `i` at angle `angles[i]`
    /// from the downward vertical (the missing angles zero).
    pub fn configuration(&self, angles: &[f64]) -> Vec<f64> {
        let (mut x, mut y) = (0.0, 0.0);
        let mut q = Vec::with_capacity(2 * self.links());
        for (i, l) in self.lengths.iter().enumerate() {
            let theta = angles.get(i).copied().unwrap_or(0.0);
            x += l * theta.sin();
            y -= l * theta.cos();
            q.extend([x, y]);
        }
        q
    }
}

/// The eigenpairs of `K x = λ M x` for a symmetric `K` and a symmetric positive definite `M`,
/// by the Cholesky factor `M = L Lᵀ` and the symmetric eigenproblem of `L⁻¹ K L⁻ᵀ`: the
/// eigenvalues ascending, the eigenvectors as columns of unit length; `None` when `M` is not
/// positive definite or the sizes differ.
pub fn generalized_eigen(
    mass: &DMatrix<f64>,
    stiffness: &DMatrix<f64>,
) -> Option<(Vec<f64>, DMatrix<f64>)> {
    let n = mass.nrows();
    if mass.shape() != (n, n) || stiffness.shape() != (n, n) {
        return None;
    }
    let factor = mass.clone().cholesky()?;
    let lower = factor.l();
    let half = lower.solve_lower_triangular(stiffness)?;
    let c = lower.solve_lower_triangular(&half.transpose())?;
    let eigen = SymmetricEigen::new((&c + c.transpose()) * 0.5);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| eigen.eigenvalues[a].total_cmp(&eigen.eigenvalues[b]));
    let values = order.iter().map(|&k| eigen.eigenvalues[k]).collect();
    let mut vectors = DMatrix::<f64>::zeros(n, n);
    for (column, &k) in order.iter().enumerate() {
        let y = lower
            .transpose()
            .solve_upper_triangular(&eigen.eigenvectors.column(k).into_owned())?;
        vectors.set_column(column, &y.normalize());
    }
    Some((values, vectors))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The double pendulum with `m = 1, 1`, `l = 1, √2`, `g = 1`: `det(K − ω² M) = 0` by hand
    /// gives `ω² = (2 + √2 ∓ √6) / 2`.
    #[test]
    fn double_pendulum_frequencies_by_hand() {
        let chain = HangingChain::new(vec![1.0, 1.0], vec![1.0, 2f64.sqrt()], 1.0).unwrap();
        let (values, vectors) = chain.angle_modes();
        let (root2, root6) = (2f64.sqrt(), 6f64.sqrt());
        for (value, expected) in values
            .iter()
            .zip([(2.0 + root2 - root6) / 2.0, (2.0 + root2 + root6) / 2.0])
        {
            assert!((value - expected).abs() <= 1e-14 * expected);
        }
        assert_eq!(vectors.shape(), (2, 2));
        assert!(HangingChain::new(vec![1.0], vec![1.0, 1.0], 1.0).is_none());
        assert!(HangingChain::uniform(0, 1.0, 1.0, 1.0).is_none());
        assert!(HangingChain::uniform(2, -1.0, 1.0, 1.0).is_none());
    }
}
