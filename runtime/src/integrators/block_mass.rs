//! The mass matrix of a sparse-tier model, factored block by block and reused while it is
//! unchanged: `M⁻¹` for every sparse-tier integrator that needs it.

use crate::error::StepError;
use crate::integrators::checks::check_finite_slice;
use crate::linalg::{BlockCholesky, LinearSolver};
use crate::model::{SparseInertia, SparsePotential};

/// The factor of the block-diagonal mass matrix of a sparse-tier model (one small dense
/// Cholesky per body, [`BlockCholesky`]), the sparse tier's counterpart of the fixed-size
/// `MassFactor`.
///
/// As there, the cache is keyed by the matrix itself: the model is asked for its blocks at every
/// evaluation, and they are refactored whenever they differ from the cached ones (or the mass is
/// not constant), so a changed mass parameter never reuses a stale factor. All storage is sized
/// in [`BlockMass::new`].
#[derive(Clone, Debug)]
pub(crate) struct BlockMass {
    factor: BlockCholesky,
    /// The blocks of the last evaluation, and those the factor holds.
    blocks: Vec<f64>,
    cached: Vec<f64>,
    valid: bool,
}

impl BlockMass {
    /// Sizes the factor and its buffers for `body_sizes`.
    pub(crate) fn new(body_sizes: &[usize]) -> Self {
        let factor = BlockCholesky::new(body_sizes);
        let values = factor.value_count();
        BlockMass {
            factor,
            blocks: vec![0.0; values],
            cached: vec![0.0; values],
            valid: false,
        }
    }

    /// Factors `M(q)` of `model` unless the cached factor is of the same blocks; returns the
    /// number of factorizations (0 or 1). `t` is the time reported in errors.
    pub(crate) fn factor_at<Model: SparseInertia + ?Sized>(
        &mut self,
        model: &Model,
        q: &[f64],
        t: f64,
    ) -> Result<u32, StepError> {
        model.mass_blocks(q, &mut self.blocks);
        check_finite_slice(&self.blocks, "mass matrix", t)?;
        if self.valid && model.constant_mass() && self.blocks == self.cached {
            return Ok(0);
        }
        self.valid = false;
        self.factor
            .factor(&self.blocks)
            .map_err(StepError::linear_algebra("mass matrix", t))?;
        self.cached.copy_from_slice(&self.blocks);
        self.valid = true;
        Ok(1)
    }

    /// Overwrites `x` with `M⁻¹ x` for the last factor.
    pub(crate) fn solve_in_place(&mut self, x: &mut [f64], t: f64) -> Result<(), StepError> {
        self.factor
            .solve_in_place(x)
            .map_err(StepError::linear_algebra("mass matrix", t))
    }

    /// Overwrites `x` with `M_b⁻¹ x` for body `body` of the last factor (`x` has its size).
    pub(crate) fn solve_body(&self, body: usize, x: &mut [f64]) {
        self.factor.solve_block(body, x);
    }

    /// Writes the acceleration `−M(q)⁻¹ ∇V(q)` of `model` into `out`;
    /// returns the number of factorizations of `M` it took.
    pub(crate) fn acceleration<Model: SparseInertia + SparsePotential + ?Sized>(
        &mut self,
        model: &Model,
        q: &[f64],
        t: f64,
        out: &mut [f64],
    ) -> Result<u32, StepError> {
        model.potential_gradient(q, out);
        check_finite_slice(out, "gradient", t)?;
        let factorizations = self.factor_at(model, q, t)?;
        for x in out.iter_mut() {
            *x = -*x;
        }
        self.solve_in_place(out, t)?;
        check_finite_slice(out, "acceleration", t)?;
        Ok(factorizations)
    }
}
