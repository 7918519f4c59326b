//! The SPOOK ladder with its top rung held horizontal: a chain of parallelogram swings with a
//! regular rest, for equilibria and modes.
//!
//! [`SpookLadder`] is pinned at one corner only, so under gravity each square cell shears
//! until its rods are collinear: the hanging ladder has no rest where its rows are independent.
//! This model adds one row to it, `u_y = 0` on the top rung (rod 0), which holds that rung
//! horizontal. Every cell is then a parallelogram swing whose rails stay parallel and whose
//! rungs stay horizontal, and the ladder rests hanging straight down
//! ([`HeldLadder::rest`]): rung `k` from `(0, −k l)` to `(l, −k l)`, the rails vertical. Its
//! `L` degrees of freedom are the cells' swing angles; `n = 12L + 4` coordinates, `m = 11L + 4`
//! rows.

use super::spook_ladder::horizontal_state;
use super::SpookLadder;
use crate::model::{
    SparseAppliedForces, SparseConstantMass, SparseHolonomic, SparseHolonomicHessians,
    SparseInertia, SparseNonholonomic, SparsePotential, SparsePotentialHessian,
};

/// The SPOOK ladder with its top rung held horizontal (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct HeldLadder {
    ladder: SpookLadder,
    /// The ladder's Jacobian pattern and the held row's entry.
    pattern: Vec<(usize, usize)>,
}

/// The coordinate `u_y` of rod 0.
const HELD: usize = 3;

impl HeldLadder {
    /// Holds the top rung of `ladder` horizontal.
    pub fn new(ladder: SpookLadder) -> Self {
        let mut pattern = ladder.jacobian_pattern().to_vec();
        pattern.push((ladder.constraint_count(), HELD));
        HeldLadder { ladder, pattern }
    }

    /// The ladder it holds.
    pub fn ladder(&self) -> &SpookLadder {
        &self.ladder
    }

    /// Returns the rest: the horizontal state of [`SpookLadder`] turned by −90° about the pin,
    /// `(x, y) ↦ (y, −x)` for the centres and the directions alike.
    pub fn rest(&self) -> Vec<f64> {
        let horizontal = horizontal_state(self.ladder.rods(), self.ladder.length);
        horizontal
            .q
            .chunks_exact(4)
            .flat_map(|r| [r[1], -r[0], r[3], -r[2]])
            .collect()
    }
}

impl SparseInertia for HeldLadder {
    fn coordinate_count(&self) -> usize {
        self.ladder.coordinate_count()
    }
    fn body_sizes(&self) -> &[usize] {
        self.ladder.body_sizes()
    }
    fn constant_mass(&self) -> bool {
        true
    }
    fn mass_blocks(&self, q: &[f64], blocks: &mut [f64]) {
        self.ladder.mass_blocks(q, blocks);
    }
    fn kinetic_energy(&self, q: &[f64], v: &[f64]) -> f64 {
        self.ladder.kinetic_energy(q, v)
    }
    fn non_finite_parameter(&self) -> Option<(&'static str, f64)> {
        self.ladder.non_finite_parameter()
    }
}

/// Constant `M`, the ladder's.
#[diagnostic::do_not_recommend]
impl SparseConstantMass for HeldLadder {}

impl SparsePotential for HeldLadder {
    fn potential(&self, q: &[f64]) -> f64 {
        self.ladder.potential(q)
    }
    fn potential_gradient(&self, q: &[f64], grad: &mut [f64]) {
        self.ladder.potential_gradient(q, grad);
    }
}

impl SparsePotentialHessian for HeldLadder {
    fn hessian_pattern(&self) -> &[(usize, usize)] {
        self.ladder.hessian_pattern()
    }
    fn potential_hessian(&self, q: &[f64], hess: &mut [f64]) {
        self.ladder.potential_hessian(q, hess);
    }
}

/// The ladder's rows, then `u_y = 0` on rod 0.
impl SparseHolonomic for HeldLadder {
    fn constraint_count(&self) -> usize {
        self.ladder.constraint_count() + 1
    }
    fn jacobian_pattern(&self) -> &[(usize, usize)] {
        &self.pattern
    }
    fn constraints_and_jacobian(&self, q: &[f64], t: f64, g: &mut [f64], jac: &mut [f64]) {
        let (rows, entries) = (g.len().saturating_sub(1), jac.len().saturating_sub(1));
        self.ladder
            .constraints_and_jacobian(q, t, &mut g[..rows], &mut jac[..entries]);
        g[rows] = q[HELD];
        jac[entries] = 1.0;
    }
}

/// The held row is linear: the ladder's Hessians, its weight unused.
impl SparseHolonomicHessians for HeldLadder {
    fn constraint_hessian_pattern(&self) -> &[(usize, usize)] {
        self.ladder.constraint_hessian_pattern()
    }
    fn weighted_constraint_hessian(&self, q: &[f64], t: f64, weights: &[f64], hess: &mut [f64]) {
        let rows = weights.len().saturating_sub(1);
        self.ladder
            .weighted_constraint_hessian(q, t, &weights[..rows], hess);
    }
}

/// No nonholonomic rows.
impl SparseNonholonomic for HeldLadder {}

/// No applied forces.
impl SparseAppliedForces for HeldLadder {}
