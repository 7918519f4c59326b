//! The Geometric Langevin Algorithm on the sparse tier (Tao–Owhadi 2014 §4.3): the block-wise
//! Ornstein–Uhlenbeck step against its closed form, equipartition against the exact stationary
//! covariance of the discrete chain and against the fixed-size tier on the same model, the same
//! bits as the fixed-size tier for one body, no allocation per step, typed errors.
//!
//! One module per claim: the [`ornstein_uhlenbeck`] step, [`equipartition`], the two
//! [`tiers`] on the same noise, [`allocation`] and [`errors`]; the test bodies, the free-flight
//! inner integrator and the seed they share are here.

use mechanism_runtime::model::{
    SparseAppliedForces, SparseConstantMass, SparseHolonomic, SparseInertia, SparseNonholonomic,
    SparsePotential,
};
use mechanism_runtime::{DynState, SparseIntegrator, StepError, StepReport};
use nalgebra::DMatrix;

mod allocation;
mod equipartition;
mod errors;
mod ornstein_uhlenbeck;
mod tiers;

/// Returns the seed `default`, or the one in `MECHANISM_TEST_SEED` (the tolerances below hold
/// for any seed: they are 5 standard errors of the estimators).
fn seed(default: u64) -> u64 {
    let seed = std::env::var("MECHANISM_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default);
    println!("seed {seed}");
    seed
}

/// Free bodies with constant, non-diagonal mass blocks in a potential `V = ½ k |q|²` (`k = 0`:
/// free), without constraints.
struct Bodies {
    sizes: Vec<usize>,
    blocks: Vec<f64>,
    stiffness: f64,
}

/// Returns `R Rᵀ + ½ I` for a fixed `3 × 3` matrix `R`, row-major: eigenvalues ≥ ½.
fn spd3() -> [f64; 9] {
    let r = DMatrix::from_row_slice(3, 3, &[1.0, 0.3, -0.2, 0.1, 0.8, 0.4, -0.6, 0.2, 1.1]);
    let m = &r * r.transpose() + DMatrix::identity(3, 3) * 0.5;
    let mut out = [0.0; 9];
    for i in 0..3 {
        for j in 0..3 {
            out[3 * i + j] = m[(i, j)];
        }
    }
    out
}

impl Bodies {
    /// Three bodies: a 2 × 2 block, a 3 × 3 block and a point mass.
    fn three(stiffness: f64) -> Self {
        let mut blocks = vec![2.0, 0.6, 0.6, 1.0];
        blocks.extend(spd3());
        blocks.push(0.7);
        Bodies {
            sizes: vec![2, 3, 1],
            blocks,
            stiffness,
        }
    }

    /// Returns the whole mass matrix, dense, to compute closed forms independently.
    fn dense_mass(&self) -> DMatrix<f64> {
        let n = self.coordinate_count();
        let mut m = DMatrix::zeros(n, n);
        let (mut first, mut offset) = (0, 0);
        for &s in &self.sizes {
            for i in 0..s {
                for j in 0..s {
                    m[(first + i, first + j)] = self.blocks[offset + s * i + j];
                }
            }
            first += s;
            offset += s * s;
        }
        m
    }
}

impl SparseConstantMass for Bodies {}

impl SparseInertia for Bodies {
    fn coordinate_count(&self) -> usize {
        self.sizes.iter().sum()
    }
    fn body_sizes(&self) -> &[usize] {
        &self.sizes
    }
    fn constant_mass(&self) -> bool {
        true
    }
    fn mass_blocks(&self, _q: &[f64], blocks: &mut [f64]) {
        blocks.copy_from_slice(&self.blocks);
    }
    fn kinetic_energy(&self, _q: &[f64], v: &[f64]) -> f64 {
        let (mut first, mut offset, mut energy) = (0, 0, 0.0);
        for &s in &self.sizes {
            for i in 0..s {
                for j in 0..s {
                    energy += 0.5 * v[first + i] * self.blocks[offset + s * i + j] * v[first + j];
                }
            }
            first += s;
            offset += s * s;
        }
        energy
    }
}

impl SparsePotential for Bodies {
    fn potential(&self, q: &[f64]) -> f64 {
        0.5 * self.stiffness * q.iter().map(|x| x * x).sum::<f64>()
    }
    fn potential_gradient(&self, q: &[f64], grad: &mut [f64]) {
        for (g, x) in grad.iter_mut().zip(q) {
            *g = self.stiffness * x;
        }
    }
}

impl SparseHolonomic for Bodies {
    fn constraint_count(&self) -> usize {
        0
    }
    fn jacobian_pattern(&self) -> &[(usize, usize)] {
        &[]
    }
    fn constraints_and_jacobian(&self, _q: &[f64], _t: f64, _g: &mut [f64], _jac: &mut [f64]) {}
}

impl SparseNonholonomic for Bodies {}
impl SparseAppliedForces for Bodies {}

/// The free flight `q ← q + h v`, `v` unchanged: an inner integrator that leaves the
/// Ornstein–Uhlenbeck step's velocities as they are.
#[derive(Debug)]
struct Drift {
    h: f64,
}

impl<Model: ?Sized> SparseIntegrator<Model> for Drift {
    fn step(&mut self, _model: &Model, state: &mut DynState) -> Result<StepReport, StepError> {
        for (q, v) in state.q.iter_mut().zip(&state.v) {
            *q += self.h * v;
        }
        state.t += self.h;
        Ok(StepReport::default())
    }
}

/// Returns `e^{−γh M⁻¹}` from nalgebra's own symmetric eigendecomposition of `M`.
fn friction_exponential(mass: &DMatrix<f64>, gamma_h: f64) -> DMatrix<f64> {
    let eigen = mass.clone().symmetric_eigen();
    let decay = eigen.eigenvalues.map(|d| (-gamma_h / d).exp());
    &eigen.eigenvectors * DMatrix::from_diagonal(&decay) * eigen.eigenvectors.transpose()
}
