//! A chain of `n` planar pendula in Cartesian coordinates (Tao–Owhadi 2014, §4.2), as a
//! hand-written model of the sparse tier.
//!
//! Bob `i` has coordinates `(x_i, y_i)` at `q[2i], q[2i+1]` and hangs from bob `i − 1` (bob 0
//! from the origin) on a massless rod of length `l`:
//!
//! ```text
//! M     = m I₂ₙ
//! V     = m g Σᵢ y_i                                   (gravity along −y)
//! g_i   = (x_i − x_{i−1})² + (y_i − y_{i−1})² − l²,    (x_{−1}, y_{−1}) = (0, 0)
//! ∂g_i  = 2 d_i at bob i and −2 d_i at bob i − 1,      d_i = p_i − p_{i−1}
//! ```
//!
//! Tao–Owhadi print `V = −Σ y_i`, which starts their chain inverted; `shared/EXPERIMENTS-M2.md`
//! §C (ambiguity C1) resolves it to the hanging chain, as here. Their run has `m = g = 1`,
//! `l = √5` and starts at rest at `x_i = i + 1`, `y_i = −2(i + 1)` (0-based `i`):
//! [`PendulumChain::tao_owhadi`] and [`PendulumChain::tao_owhadi_state`].

use crate::model::{
    SparseAppliedForces, SparseConstantMass, SparseHolonomic, SparseHolonomicHessians,
    SparseHolonomicKinematics, SparseInertia, SparseNonholonomic, SparsePenalizedHessian,
    SparsePenalizedPotential, SparsePenalizedThirdDerivative, SparsePenaltyHessian,
    SparsePotential, SparsePotentialHessian,
};
use crate::state::DynState;

/// A chain of planar pendula with equal masses and rod lengths.
#[derive(Clone, Debug, PartialEq)]
pub struct PendulumChain {
    /// Mass `m` of every bob.
    pub mass: f64,
    /// Length `l` of every rod.
    pub length: f64,
    /// Gravitational acceleration `g`, along `−y`.
    pub gravity: f64,
    /// Two coordinates per bob.
    body_sizes: Vec<usize>,
    /// The structural nonzeros of the constraint Jacobian, row by row.
    pattern: Vec<(usize, usize)>,
    /// The block-tridiagonal pattern of the Hessians (penalty, penalized potential, constraint
    /// Hessians): per link `i`, the upper triangle of bob `i`'s 2×2 block, then the block
    /// coupling bob `i − 1` to bob `i`.
    hessian_pattern: Vec<(usize, usize)>,
}

impl PendulumChain {
    /// Creates a chain of `links` bobs of mass `mass` on rods of length `length`.
    pub fn new(links: usize, mass: f64, length: f64, gravity: f64) -> Self {
        let mut pattern = Vec::with_capacity(4 * links);
        for i in 0..links {
            if i > 0 {
                pattern.extend([(i, 2 * i - 2), (i, 2 * i - 1)]);
            }
            pattern.extend([(i, 2 * i), (i, 2 * i + 1)]);
        }
        let mut hessian_pattern = Vec::with_capacity(7 * links);
        for i in 0..links {
            let (x, y) = (2 * i, 2 * i + 1);
            hessian_pattern.extend([(x, x), (x, y), (y, y)]);
            if i > 0 {
                let (px, py) = (x - 2, y - 2);
                hessian_pattern.extend([(px, x), (px, y), (py, x), (py, y)]);
            }
        }
        PendulumChain {
            mass,
            length,
            gravity,
            body_sizes: vec![2; links],
            pattern,
            hessian_pattern,
        }
    }

    /// Returns the chain of Tao–Owhadi §4.2 with `links` bobs: `m = g = 1`, `l = √5`.
    pub fn tao_owhadi(links: usize) -> Self {
        PendulumChain::new(links, 1.0, 5f64.sqrt(), 1.0)
    }

    /// Returns the number of bobs.
    pub fn links(&self) -> usize {
        self.body_sizes.len()
    }

    /// Returns Tao–Owhadi's initial state: at rest, bob `i` at `(i + 1, −2(i + 1))`, on the
    /// constraints exactly for `l = √5`.
    pub fn tao_owhadi_state(&self) -> DynState {
        tao_owhadi_state(self.links())
    }

    /// Returns the total energy `T + V`.
    pub fn energy(&self, q: &[f64], v: &[f64]) -> f64 {
        self.kinetic_energy(q, v) + self.potential(q)
    }

    /// Returns `d_i = p_i − p_{i−1}` for bob `i`.
    fn link(q: &[f64], i: usize) -> (f64, f64) {
        let (px, py) = if i == 0 {
            (0.0, 0.0)
        } else {
            (q[2 * i - 2], q[2 * i - 1])
        };
        (q[2 * i] - px, q[2 * i + 1] - py)
    }
}

/// Returns Tao–Owhadi's initial state of a chain of `links` bobs: at rest, bob `i` at
/// `(i + 1, −2(i + 1))` (0-based), on the constraints exactly for rods of length `√5`.
pub fn tao_owhadi_state(links: usize) -> DynState {
    let q = (0..links)
        .flat_map(|i| [(i + 1) as f64, -2.0 * (i + 1) as f64])
        .collect();
    DynState::new(0.0, q, vec![0.0; 2 * links])
}

/// The fraction of [`projection_step_limit`] that [`projection_step`] stays below: margin for
/// the tension's growth past the hanging weight as the chain swings.
pub const PROJECTION_STEP_SAFETY: f64 = 0.8;

/// Returns `√(l / (n |g|))`, the largest step at which SHAKE and RATTLE are stable on a chain
/// of `links` bobs hanging on rods of length `l` under gravity `g` (`∞` without gravity).
///
/// Both schemes apply the constraint forces along `G(q_k)`, at the start of the step: the
/// tension is implicit, its direction explicit. Across a taut chain they are therefore
/// Störmer–Verlet on the transverse motion, whose stiffness is the tension's,
/// `Σ_i λ_i Hess g_i`. Beads of mass `m` a distance `l` apart on a string of tension `T` have
/// transverse frequencies up to `ω = 2 √(T / (m l))`, and Verlet is stable only for `h ω < 2`,
/// so `h < √(m l / T)`. The tension is largest at the pivot, where it carries the weight
/// `n m |g|` hanging below (Tao–Owhadi's start, tilted by `atan ½`, carries `cos(atan ½) = 0.89`
/// of it); the mass cancels.
///
/// Beyond the limit the highest transverse mode grows by a factor of about `h²ω²` per step
/// until the step's equations `g(q̃ − M⁻¹ G(q_k)ᵀ μ) = 0` have no solution: Newton, with or
/// without a line search, stalls at a positive minimum of `|g|` and the step fails with
/// `NewtonDiverged`. Measured with RATTLE (tolerance `1e-12`) from Tao–Owhadi's start to
/// `t = 50`: `n = 1000` runs at `h = 0.045` and fails at `0.05` (`t = 5.55`) against the limit
/// `0.047`; `n = 10 000` runs at `h = 0.015` and fails at `0.016` (`t = 0.59`) and `0.05`
/// (`t = 0.10`) against `0.0150`.
pub fn projection_step_limit(links: usize, length: f64, gravity: f64) -> f64 {
    (length / (links as f64 * gravity.abs())).sqrt()
}

/// Returns the step for SHAKE and RATTLE on a chain (arguments of [`projection_step_limit`]):
/// the largest `largest / k`, `k = 1, 2, …`, at most [`PROJECTION_STEP_SAFETY`] times the
/// stability limit, so that every multiple of `largest` stays on the step grid. NaN unless
/// `largest` and `length` are positive and finite and `gravity` is finite.
pub fn projection_step(links: usize, length: f64, gravity: f64, largest: f64) -> f64 {
    let valid = |x: f64| x.is_finite() && x > 0.0;
    if !(valid(largest) && valid(length) && gravity.is_finite()) {
        return f64::NAN;
    }
    let limit = PROJECTION_STEP_SAFETY * projection_step_limit(links, length, gravity);
    largest / (largest / limit).ceil().max(1.0)
}

/// Constant `M`; `do_not_recommend` keeps the library's models out of the list of
/// implementers in the error for a model without the marker.
#[diagnostic::do_not_recommend]
impl SparseConstantMass for PendulumChain {}

impl SparseInertia for PendulumChain {
    fn coordinate_count(&self) -> usize {
        2 * self.links()
    }
    fn body_sizes(&self) -> &[usize] {
        &self.body_sizes
    }
    fn constant_mass(&self) -> bool {
        true
    }
    fn non_finite_parameter(&self) -> Option<(&'static str, f64)> {
        [
            ("mass", self.mass),
            ("length", self.length),
            ("gravity", self.gravity),
        ]
        .into_iter()
        .find(|(_, value)| !value.is_finite())
    }
    fn mass_blocks(&self, _q: &[f64], blocks: &mut [f64]) {
        for block in blocks.chunks_exact_mut(4) {
            block.copy_from_slice(&[self.mass, 0.0, 0.0, self.mass]);
        }
    }
    fn kinetic_energy(&self, _q: &[f64], v: &[f64]) -> f64 {
        0.5 * self.mass * v.iter().map(|v| v * v).sum::<f64>()
    }
}

impl SparsePotential for PendulumChain {
    fn potential(&self, q: &[f64]) -> f64 {
        self.mass * self.gravity * q.iter().skip(1).step_by(2).sum::<f64>()
    }
    fn potential_gradient(&self, _q: &[f64], grad: &mut [f64]) {
        for pair in grad.chunks_exact_mut(2) {
            pair.copy_from_slice(&[0.0, self.mass * self.gravity]);
        }
    }
}

/// `V = m g Σ y_i` is linear: its Hessian has no entries.
impl SparsePotentialHessian for PendulumChain {
    fn hessian_pattern(&self) -> &[(usize, usize)] {
        &[]
    }
    fn potential_hessian(&self, _q: &[f64], _hess: &mut [f64]) {}
}

impl SparseHolonomic for PendulumChain {
    fn constraint_count(&self) -> usize {
        self.links()
    }
    fn jacobian_pattern(&self) -> &[(usize, usize)] {
        &self.pattern
    }
    fn constraints_and_jacobian(&self, q: &[f64], _t: f64, g: &mut [f64], jac: &mut [f64]) {
        let mut entry = 0;
        for (i, g) in g.iter_mut().enumerate() {
            let (dx, dy) = Self::link(q, i);
            *g = dx * dx + dy * dy - self.length * self.length;
            if i > 0 {
                jac[entry] = -2.0 * dx;
                jac[entry + 1] = -2.0 * dy;
                entry += 2;
            }
            jac[entry] = 2.0 * dx;
            jac[entry + 1] = 2.0 * dy;
            entry += 2;
        }
    }
}

/// Scleronomic rows: `g_t = 0`, and `vᵀ Hess gᵢ v = 2 |ḋᵢ|²`.
impl SparseHolonomicKinematics for PendulumChain {
    fn constraint_time_derivative(&self, _q: &[f64], _t: f64, out: &mut [f64]) {
        out.fill(0.0);
    }
    fn constraint_acceleration_bias(&self, _q: &[f64], v: &[f64], _t: f64, out: &mut [f64]) {
        for (i, out) in out.iter_mut().enumerate() {
            let (dx, dy) = Self::link(v, i);
            *out = 2.0 * (dx * dx + dy * dy);
        }
    }
}

/// No nonholonomic rows.
impl SparseNonholonomic for PendulumChain {}

impl PendulumChain {
    /// Returns the offset of link `i`'s entries in the Hessian pattern: its diagonal block
    /// (3 values) and, for `i > 0`, its coupling block (4 values) right after.
    fn hessian_offset(i: usize) -> usize {
        if i == 0 {
            0
        } else {
            7 * i - 4
        }
    }

    /// Adds the symmetric 2×2 block `[[b00, b01], [b01, b11]]` of link `i`, which acts on
    /// `d_i = p_i − p_{i−1}`, to the Hessian values: `+B` on bobs `i` and `i − 1`, `−B` between.
    fn add_link_block(hess: &mut [f64], i: usize, b00: f64, b01: f64, b11: f64) {
        let at = Self::hessian_offset(i);
        for (value, b) in hess[at..at + 3].iter_mut().zip([b00, b01, b11]) {
            *value += b;
        }
        if i > 0 {
            let before = Self::hessian_offset(i - 1);
            for (value, b) in hess[before..before + 3].iter_mut().zip([b00, b01, b11]) {
                *value += b;
            }
            for (value, b) in hess[at + 3..at + 7].iter_mut().zip([b00, b01, b01, b11]) {
                *value -= b;
            }
        }
    }

    /// Adds the vector `w` of link `i` (a derivative with respect to `d_i`) to `out`: `+w` at
    /// bob `i`, `−w` at bob `i − 1`.
    fn add_link_vector(out: &mut [f64], i: usize, w: (f64, f64)) {
        out[2 * i] += w.0;
        out[2 * i + 1] += w.1;
        if i > 0 {
            out[2 * i - 2] -= w.0;
            out[2 * i - 1] -= w.1;
        }
    }

    /// Returns `c_i = |d_i|² − l²` and `d_i` of link `i`.
    fn stretch(&self, q: &[f64], i: usize) -> (f64, (f64, f64)) {
        let (dx, dy) = Self::link(q, i);
        (dx * dx + dy * dy - self.length * self.length, (dx, dy))
    }
}

/// `Σ_i λ_i Hess g_i`, with `Hess_d g_i = 2 I₂` on `d_i` (`shared/EXPERIMENTS-M2.md` §C.2
/// assembly), on the block-tridiagonal pattern.
impl SparseHolonomicHessians for PendulumChain {
    fn constraint_hessian_pattern(&self) -> &[(usize, usize)] {
        &self.hessian_pattern
    }
    fn weighted_constraint_hessian(&self, _q: &[f64], _t: f64, weights: &[f64], hess: &mut [f64]) {
        hess.fill(0.0);
        for (i, lambda) in weights.iter().enumerate() {
            Self::add_link_block(hess, i, 2.0 * lambda, 0.0, 2.0 * lambda);
        }
    }
}

/// `W = m g Σ y_i + ½ ω² Σ_i c_i²`, `c_i = |d_i|² − l²` (Tao–Owhadi eq. 7), with the per-link
/// closed forms of `shared/EXPERIMENTS-M2.md` §C.2: `∇_d φ_i = 2ω² c_i d_i`.
impl SparsePenalizedPotential for PendulumChain {
    fn penalized_potential(&self, omega: f64, q: &[f64]) -> f64 {
        let penalty: f64 = (0..self.links())
            .map(|i| self.stretch(q, i).0.powi(2))
            .sum();
        self.potential(q) + 0.5 * omega * omega * penalty
    }
    fn penalized_potential_gradient(&self, omega: f64, q: &[f64], grad: &mut [f64]) {
        self.potential_gradient(q, grad);
        let w2 = omega * omega;
        for i in 0..self.links() {
            let (c, (dx, dy)) = self.stretch(q, i);
            Self::add_link_vector(grad, i, (2.0 * w2 * c * dx, 2.0 * w2 * c * dy));
        }
    }
}

/// `Hess W = Σ_i ∇²φ_i`, `∇²_d φ_i = 2ω² (c_i I + 2 d_i d_iᵀ)` (gravity is linear).
impl SparsePenalizedHessian for PendulumChain {
    fn penalized_hessian_pattern(&self) -> &[(usize, usize)] {
        &self.hessian_pattern
    }
    fn penalized_potential_hessian(&self, omega: f64, q: &[f64], hess: &mut [f64]) {
        hess.fill(0.0);
        let w2 = 2.0 * omega * omega;
        for i in 0..self.links() {
            let (c, (dx, dy)) = self.stretch(q, i);
            Self::add_link_block(
                hess,
                i,
                w2 * (c + 2.0 * dx * dx),
                w2 * 2.0 * dx * dy,
                w2 * (c + 2.0 * dy * dy),
            );
        }
    }
}

/// `a·W‴·a = Σ_i b·∇³φ_i·b`, `b·∇³_d φ_i·b = 4ω² (|b|² d_i + 2 (d_i·b) b)`,
/// `b = a_i − a_{i−1}`.
impl SparsePenalizedThirdDerivative for PendulumChain {
    fn penalized_potential_third_contraction(
        &self,
        omega: f64,
        q: &[f64],
        a: &[f64],
        out: &mut [f64],
    ) {
        out.fill(0.0);
        let w4 = 4.0 * omega * omega;
        for i in 0..self.links() {
            let (dx, dy) = Self::link(q, i);
            let (bx, by) = Self::link(a, i);
            let (bb, db) = (bx * bx + by * by, dx * bx + dy * by);
            let w = (
                w4 * (bb * dx + 2.0 * db * bx),
                w4 * (bb * dy + 2.0 * db * by),
            );
            Self::add_link_vector(out, i, w);
        }
    }
}

/// The potential is linear, so the penalty's Hessian is `Hess W`.
impl SparsePenaltyHessian for PendulumChain {
    fn penalty_hessian_pattern(&self) -> &[(usize, usize)] {
        &self.hessian_pattern
    }
    fn penalty_hessian(&self, omega: f64, q: &[f64], hess: &mut [f64]) {
        self.penalized_potential_hessian(omega, q, hess);
    }
}

/// No non-potential forces.
impl SparseAppliedForces for PendulumChain {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::sparse_derivatives::check_sparse_derivatives;

    #[test]
    fn derivatives_match_finite_differences() {
        let chain = PendulumChain::new(4, 1.3, 1.1, 0.7);
        // Off the constraints, with stretched and compressed rods (c of both signs).
        let q = [0.9, -0.4, 1.6, -1.5, 2.9, -1.2, 3.1, -2.6];
        check_sparse_derivatives(&chain, 3.0, &q);
    }
}
