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
    SparseAppliedForces, SparseHolonomic, SparseHolonomicKinematics, SparseInertia,
    SparseNonholonomic, SparsePotential,
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
        PendulumChain {
            mass,
            length,
            gravity,
            body_sizes: vec![2; links],
            pattern,
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
        let q = (0..self.links())
            .flat_map(|i| [(i + 1) as f64, -2.0 * (i + 1) as f64])
            .collect();
        DynState::new(0.0, q, vec![0.0; 2 * self.links()])
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

/// No non-potential forces.
impl SparseAppliedForces for PendulumChain {}
