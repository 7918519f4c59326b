//! The ladder of rigid rods of Lacoursière (2007) §6, as a hand-written model of the sparse
//! tier.
//!
//! Each rod is a body with four coordinates, its centre of mass `x ∈ ℝ²` and a unit direction
//! `u ∈ ℝ²`, at `q[4r..4r+4] = (x, y, ux, uy)`; its ends are `tail = x − (l/2) u` and
//! `head = x + (l/2) u`. For a uniform rod, `T = ½ m |ẋ|² + ½ J |u̇|²` with `J = m l²/12`
//! (the paper prints `l²/12`, a dropped factor `m`: `shared/EXPERIMENTS-M2.md` §A.1), and
//! `V = Σ m g y_r` with gravity along `−y`.
//!
//! A ladder of `L` links has `R = 4 + 3(L − 1) = 3L + 1` rods (§6, in the paper's 1-based
//! numbering): rods 1 and 2 have their tails at the origin; rod `j ≥ 3` hangs by its tail from
//! the head of rod `j − 3` if `j mod 3 = 2`, else of rod `j − 2`; rods `3k` and `3k + 1` are joined
//! head to head for `k = 1 … L`. That is `4L + 1` pin joints (two scalar rows each) and `L`
//! closed loops, plus one unit row `½(uᵀu − 1)` per rod, `m = 11L + 3` rows in all on
//! `n = 12L + 4` coordinates. The resolved geometry (`EXPERIMENTS-M2.md` §A.2) is a ladder of `L`
//! square cells: rod `3k + 1` is rung `k` from `A_k` to `B_k`, rods `3k − 1` and `3k` are the
//! rail segments `A_{k−1} → A_k` and `B_{k−1} → B_k`. Every joint row is linear in `q` with
//! constant Jacobian entries `±1`, `±l/2`; only the unit rows are nonlinear.
//!
//! The paper gives no initial state; [`SpookLadder::horizontal_state`] is the choice of
//! `EXPERIMENTS-M2.md` §A.4: lying horizontally at rest, `A_k = (k l, 0)`, `B_k = (k l, l)`,
//! pinned at `A_0`, so that it falls and swings about the pin.

use crate::model::{
    SparseAppliedForces, SparseConstantMass, SparseHolonomic, SparseHolonomicHessians,
    SparseHolonomicKinematics, SparseInertia, SparseNonholonomic, SparsePenalizedHessian,
    SparsePenalizedPotential, SparsePenalizedThirdDerivative, SparsePenaltyHessian,
    SparsePotential, SparsePotentialHessian,
};
use crate::state::DynState;

/// A point of a rod, `x_rod + offset · u_rod`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct RodPoint {
    rod: usize,
    offset: f64,
}

/// A pin joint `a − b = 0` between two rod points, or a rod point and the origin.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Joint {
    a: RodPoint,
    b: Option<RodPoint>,
}

/// The SPOOK ladder of `L` links; see the module docs.
#[derive(Clone, Debug, PartialEq)]
pub struct SpookLadder {
    /// Mass `m` of every rod.
    pub mass: f64,
    /// Length `l` of every rod.
    pub length: f64,
    /// Rotational inertia `J` of every rod (the coefficient of `½|u̇|²`).
    pub inertia: f64,
    /// Gravitational acceleration `g`, along `−y`.
    pub gravity: f64,
    links: usize,
    joints: Vec<Joint>,
    body_sizes: Vec<usize>,
    pattern: Vec<(usize, usize)>,
    /// Where each row's entries start in `pattern` (rows are listed in order), and the end.
    row_starts: Vec<usize>,
    /// The pattern of `Hess(½ω²|g|²)`: every pair of coordinates that share a row, once.
    hessian_pattern: Vec<(usize, usize)>,
    /// For each row, for each pair `(a, b ≥ a)` of its entries, the pair's slot in
    /// `hessian_pattern`, row by row.
    pair_slots: Vec<usize>,
    /// The pattern of `Σ λ_k Hess g_k`: the diagonal of each rod's `u` (unit rows only).
    constraint_hessian_pattern: Vec<(usize, usize)>,
}

impl SpookLadder {
    /// Creates the ladder of `links` links of the paper: `m = 10`, `l = 1`, `J = m l²/12`,
    /// `g = 9.81`.
    pub fn new(links: usize) -> Self {
        SpookLadder::with_parameters(links, 10.0, 1.0, 10.0 / 12.0, 9.81)
    }

    /// Creates a ladder of `links` links with the given rod mass, length, inertia and gravity.
    /// The joints' offsets `±l/2` are fixed here; change `length` through this constructor.
    pub fn with_parameters(
        links: usize,
        mass: f64,
        length: f64,
        inertia: f64,
        gravity: f64,
    ) -> Self {
        let rods = 3 * links + 1;
        let (tail, head) = (-0.5 * length, 0.5 * length);
        let point = |rod, offset| RodPoint { rod, offset };
        let mut joints = Vec::with_capacity(4 * links + 1);
        for rod in 0..rods.min(2) {
            joints.push(Joint {
                a: point(rod, tail),
                b: None,
            });
        }
        for rod in 2..rods {
            // The paper's rod j = rod + 1 hangs from rod j − 3 if j mod 3 = 2, else j − 2.
            let parent = if (rod + 1) % 3 == 2 { rod - 3 } else { rod - 2 };
            joints.push(Joint {
                a: point(rod, tail),
                b: Some(point(parent, head)),
            });
        }
        for k in 1..=links {
            // Rods 3k and 3k + 1 of the paper, 0-based 3k − 1 and 3k.
            joints.push(Joint {
                a: point(3 * k - 1, head),
                b: Some(point(3 * k, head)),
            });
        }
        let mut pattern = Vec::new();
        let mut row_starts = Vec::with_capacity(rods + 2 * joints.len() + 1);
        for rod in 0..rods {
            row_starts.push(pattern.len());
            pattern.extend([(rod, 4 * rod + 2), (rod, 4 * rod + 3)]);
        }
        for (j, joint) in joints.iter().enumerate() {
            for axis in 0..2 {
                let row = rods + 2 * j + axis;
                row_starts.push(pattern.len());
                for p in std::iter::once(joint.a).chain(joint.b) {
                    pattern.extend([(row, 4 * p.rod + axis), (row, 4 * p.rod + 2 + axis)]);
                }
            }
        }
        row_starts.push(pattern.len());
        let mut slot_of = std::collections::BTreeMap::new();
        let (mut hessian_pattern, mut pair_slots) = (Vec::new(), Vec::new());
        for window in row_starts.windows(2) {
            let columns = &pattern[window[0]..window[1]];
            for (a, &(_, i)) in columns.iter().enumerate() {
                for &(_, j) in &columns[a..] {
                    let pair = (i.min(j), i.max(j));
                    let slot = *slot_of.entry(pair).or_insert_with(|| {
                        hessian_pattern.push(pair);
                        hessian_pattern.len() - 1
                    });
                    pair_slots.push(slot);
                }
            }
        }
        let constraint_hessian_pattern = (0..rods)
            .flat_map(|rod| [(4 * rod + 2, 4 * rod + 2), (4 * rod + 3, 4 * rod + 3)])
            .collect();
        SpookLadder {
            mass,
            length,
            inertia,
            gravity,
            links,
            joints,
            body_sizes: vec![4; rods],
            pattern,
            row_starts,
            hessian_pattern,
            pair_slots,
            constraint_hessian_pattern,
        }
    }

    /// Returns the number of links `L`.
    pub fn links(&self) -> usize {
        self.links
    }

    /// Returns the number of rods `R = 3L + 1`.
    pub fn rods(&self) -> usize {
        self.body_sizes.len()
    }

    /// Returns the number of pin joints, `4L + 1`.
    pub fn joints(&self) -> usize {
        self.joints.len()
    }

    /// Returns the ladder lying horizontally at rest, pinned at the origin: rung `k` from
    /// `(k l, 0)` to `(k l, l)`, rail segments along `+x` (on every constraint exactly).
    pub fn horizontal_state(&self) -> DynState {
        horizontal_state(self.rods(), self.length)
    }

    /// Returns the total energy `T + V`.
    pub fn energy(&self, q: &[f64], v: &[f64]) -> f64 {
        self.kinetic_energy(q, v) + self.potential(q)
    }

    /// Returns the largest speed of a rod end, `max |ẋ ± (l/2) u̇|` (the whiplash).
    pub fn largest_end_speed(&self, v: &[f64]) -> f64 {
        largest_end_speed(v, self.length)
    }
}

/// Returns the ladder of `rods` rods of length `length` lying horizontally at rest, as the
/// paper releases it: rung `k` (rod `3k`) upright at `x = k l`, the two rails' segments (rods
/// `3k + 1`, `3k + 2`) along `x` at heights `0` and `l`; on the constraints exactly.
pub fn horizontal_state(rods: usize, length: f64) -> DynState {
    let l = length;
    let mut q = vec![0.0; 4 * rods];
    for (rod, q) in q.chunks_exact_mut(4).enumerate() {
        let k = (rod / 3) as f64;
        let rod_state = match rod % 3 {
            // Rung k: centre (k l, l/2), u = (0, 1).
            0 => [k * l, 0.5 * l, 0.0, 1.0],
            // Rail A segment k + 1: centre ((k + ½) l, 0), u = (1, 0).
            1 => [(k + 0.5) * l, 0.0, 1.0, 0.0],
            // Rail B segment k + 1: centre ((k + ½) l, l), u = (1, 0).
            _ => [(k + 0.5) * l, l, 1.0, 0.0],
        };
        q.copy_from_slice(&rod_state);
    }
    DynState::new(0.0, q, vec![0.0; 4 * rods])
}

/// Returns the largest speed of a rod end, `max |ẋ ± (l/2) u̇|` over the rods (the whiplash),
/// from the velocities `v` (four per rod: `ẋ, ẏ, u̇x, u̇y`) and the rods' length.
pub fn largest_end_speed(v: &[f64], length: f64) -> f64 {
    v.chunks_exact(4)
        .flat_map(|v| {
            [-0.5, 0.5].map(|s| (v[0] + s * length * v[2]).hypot(v[1] + s * length * v[3]))
        })
        .fold(0.0, f64::max)
}

/// Constant `M`; `do_not_recommend` keeps the library's models out of the list of
/// implementers in the error for a model without the marker.
#[diagnostic::do_not_recommend]
impl SparseConstantMass for SpookLadder {}

impl SparseInertia for SpookLadder {
    fn coordinate_count(&self) -> usize {
        4 * self.rods()
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
            ("inertia", self.inertia),
            ("gravity", self.gravity),
        ]
        .into_iter()
        .find(|(_, value)| !value.is_finite())
    }
    fn mass_blocks(&self, _q: &[f64], blocks: &mut [f64]) {
        let (m, j) = (self.mass, self.inertia);
        for block in blocks.chunks_exact_mut(16) {
            block.fill(0.0);
            for (k, value) in [m, m, j, j].into_iter().enumerate() {
                block[5 * k] = value;
            }
        }
    }
    fn kinetic_energy(&self, _q: &[f64], v: &[f64]) -> f64 {
        v.chunks_exact(4)
            .map(|v| {
                0.5 * self.mass * (v[0] * v[0] + v[1] * v[1])
                    + 0.5 * self.inertia * (v[2] * v[2] + v[3] * v[3])
            })
            .sum()
    }
}

impl SparsePotential for SpookLadder {
    fn potential(&self, q: &[f64]) -> f64 {
        self.mass * self.gravity * q.chunks_exact(4).map(|q| q[1]).sum::<f64>()
    }
    fn potential_gradient(&self, _q: &[f64], grad: &mut [f64]) {
        for g in grad.chunks_exact_mut(4) {
            g.copy_from_slice(&[0.0, self.mass * self.gravity, 0.0, 0.0]);
        }
    }
}

/// `V = m g Σ y_r` is linear: its Hessian has no entries.
impl SparsePotentialHessian for SpookLadder {
    fn hessian_pattern(&self) -> &[(usize, usize)] {
        &[]
    }
    fn potential_hessian(&self, _q: &[f64], _hess: &mut [f64]) {}
}

impl SparseHolonomic for SpookLadder {
    fn constraint_count(&self) -> usize {
        self.rods() + 2 * self.joints.len()
    }
    fn jacobian_pattern(&self) -> &[(usize, usize)] {
        &self.pattern
    }
    fn constraints_and_jacobian(&self, q: &[f64], _t: f64, g: &mut [f64], jac: &mut [f64]) {
        let rods = self.rods();
        let mut entry = 0;
        for rod in 0..rods {
            let (ux, uy) = (q[4 * rod + 2], q[4 * rod + 3]);
            g[rod] = 0.5 * (ux * ux + uy * uy - 1.0);
            jac[entry] = ux;
            jac[entry + 1] = uy;
            entry += 2;
        }
        for (j, joint) in self.joints.iter().enumerate() {
            for axis in 0..2 {
                let at = |p: RodPoint| q[4 * p.rod + axis] + p.offset * q[4 * p.rod + 2 + axis];
                g[rods + 2 * j + axis] = at(joint.a) - joint.b.map_or(0.0, at);
                jac[entry] = 1.0;
                jac[entry + 1] = joint.a.offset;
                entry += 2;
                if let Some(b) = joint.b {
                    jac[entry] = -1.0;
                    jac[entry + 1] = -b.offset;
                    entry += 2;
                }
            }
        }
    }
}

/// Scleronomic rows: `g_t = 0`; the unit-length rows `½(|u|² − 1)` have `vᵀ Hess g v = |u̇|²`,
/// the joint rows are linear.
impl SparseHolonomicKinematics for SpookLadder {
    fn constraint_time_derivative(&self, _q: &[f64], _t: f64, out: &mut [f64]) {
        out.fill(0.0);
    }
    fn constraint_acceleration_bias(&self, _q: &[f64], v: &[f64], _t: f64, out: &mut [f64]) {
        let rods = self.rods();
        for (rod, out) in out[..rods].iter_mut().enumerate() {
            let (dux, duy) = (v[4 * rod + 2], v[4 * rod + 3]);
            *out = dux * dux + duy * duy;
        }
        out[rods..].fill(0.0);
    }
}

/// No nonholonomic rows.
impl SparseNonholonomic for SpookLadder {}

impl SpookLadder {
    /// Returns `g_k(q)` and writes row `k`'s Jacobian values, in pattern order, into `values`
    /// (2 for a unit row, 2 or 4 for a joint row); returns the number written with `g_k`.
    fn row(&self, q: &[f64], k: usize, values: &mut [f64; 4]) -> (f64, usize) {
        let rods = self.rods();
        if k < rods {
            let (ux, uy) = (q[4 * k + 2], q[4 * k + 3]);
            values[..2].copy_from_slice(&[ux, uy]);
            return (0.5 * (ux * ux + uy * uy - 1.0), 2);
        }
        let (joint, axis) = ((k - rods) / 2, (k - rods) % 2);
        let joint = &self.joints[joint];
        let at = |p: RodPoint| q[4 * p.rod + axis] + p.offset * q[4 * p.rod + 2 + axis];
        values[..2].copy_from_slice(&[1.0, joint.a.offset]);
        match joint.b {
            Some(b) => {
                values[2..].copy_from_slice(&[-1.0, -b.offset]);
                (at(joint.a) - at(b), 4)
            }
            None => (at(joint.a), 2),
        }
    }

    /// Returns the number of constraint rows.
    fn rows(&self) -> usize {
        self.row_starts.len() - 1
    }
}

/// `Σ_k λ_k Hess g_k`: only the unit rows `½(uᵀu − 1)` are curved, with `Hess = I` on `u`;
/// the joint rows are linear in `q`.
impl SparseHolonomicHessians for SpookLadder {
    fn constraint_hessian_pattern(&self) -> &[(usize, usize)] {
        &self.constraint_hessian_pattern
    }
    fn weighted_constraint_hessian(&self, _q: &[f64], _t: f64, weights: &[f64], hess: &mut [f64]) {
        for (pair, lambda) in hess.chunks_exact_mut(2).zip(weights) {
            pair.fill(*lambda);
        }
    }
}

/// `W = m g Σ y_r + ½ ω² Σ_k g_k²`, `∇W = ∇V + ω² Σ_k g_k ∇g_k`.
impl SparsePenalizedPotential for SpookLadder {
    fn penalized_potential(&self, omega: f64, q: &[f64]) -> f64 {
        let mut values = [0.0; 4];
        let penalty: f64 = (0..self.rows())
            .map(|k| self.row(q, k, &mut values).0.powi(2))
            .sum();
        self.potential(q) + 0.5 * omega * omega * penalty
    }
    fn penalized_potential_gradient(&self, omega: f64, q: &[f64], grad: &mut [f64]) {
        self.potential_gradient(q, grad);
        let mut values = [0.0; 4];
        for k in 0..self.rows() {
            let (g, len) = self.row(q, k, &mut values);
            let start = self.row_starts[k];
            for (&(_, col), value) in self.pattern[start..start + len].iter().zip(&values) {
                grad[col] += omega * omega * g * value;
            }
        }
    }
}

/// `Hess W = ω² Σ_k (∇g_k ∇g_kᵀ + g_k Hess g_k)` (gravity is linear).
impl SparsePenalizedHessian for SpookLadder {
    fn penalized_hessian_pattern(&self) -> &[(usize, usize)] {
        &self.hessian_pattern
    }
    fn penalized_potential_hessian(&self, omega: f64, q: &[f64], hess: &mut [f64]) {
        hess.fill(0.0);
        let w2 = omega * omega;
        let mut values = [0.0; 4];
        let mut pair = 0;
        for k in 0..self.rows() {
            let (g, len) = self.row(q, k, &mut values);
            for a in 0..len {
                for b in a..len {
                    let curvature = if k < self.rods() && a == b { g } else { 0.0 };
                    hess[self.pair_slots[pair]] += w2 * (values[a] * values[b] + curvature);
                    pair += 1;
                }
            }
        }
    }
}

/// `a·W‴·a = ω² Σ_k (2 (∇g_k·a) Hess g_k a + (a·Hess g_k·a) ∇g_k)` for rows with a constant
/// `Hess g_k`: only the unit rows contribute, `ω² (2 (u·b) b + |b|² u)` with `b = a_u`.
impl SparsePenalizedThirdDerivative for SpookLadder {
    fn penalized_potential_third_contraction(
        &self,
        omega: f64,
        q: &[f64],
        a: &[f64],
        out: &mut [f64],
    ) {
        out.fill(0.0);
        let w2 = omega * omega;
        for ((q, a), out) in q
            .chunks_exact(4)
            .zip(a.chunks_exact(4))
            .zip(out.chunks_exact_mut(4))
        {
            let (ux, uy, bx, by) = (q[2], q[3], a[2], a[3]);
            let (ub, bb) = (ux * bx + uy * by, bx * bx + by * by);
            out[2] = w2 * (2.0 * ub * bx + bb * ux);
            out[3] = w2 * (2.0 * ub * by + bb * uy);
        }
    }
}

/// The potential is linear, so the penalty's Hessian is `Hess W`.
impl SparsePenaltyHessian for SpookLadder {
    fn penalty_hessian_pattern(&self) -> &[(usize, usize)] {
        &self.hessian_pattern
    }
    fn penalty_hessian(&self, omega: f64, q: &[f64], hess: &mut [f64]) {
        self.penalized_potential_hessian(omega, q, hess);
    }
}

/// No non-potential forces.
impl SparseAppliedForces for SpookLadder {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn has_the_papers_counts_and_starts_on_the_constraints() {
        for links in [1, 2, 10, 20, 100] {
            let ladder = SpookLadder::new(links);
            assert_eq!(ladder.rods(), 4 + 3 * (links - 1));
            assert_eq!(ladder.joints(), 4 * links + 1);
            assert_eq!(ladder.coordinate_count(), 12 * links + 4);
            assert_eq!(ladder.constraint_count(), 11 * links + 3);
            let state = ladder.horizontal_state();
            let mut g = vec![0.0; ladder.constraint_count()];
            let mut jac = vec![0.0; ladder.jacobian_pattern().len()];
            ladder.constraints_and_jacobian(&state.q, 0.0, &mut g, &mut jac);
            assert!(g.iter().all(|g| g.abs() < 1e-15), "L = {links}: {g:?}");
        }
    }

    #[test]
    fn penalized_derivatives_match_finite_differences() {
        let ladder = SpookLadder::with_parameters(2, 1.5, 0.8, 0.3, 2.0);
        let n = ladder.coordinate_count();
        let q: Vec<f64> = (0..n).map(|i| ((i * 37) % 11) as f64 * 0.1 - 0.4).collect();
        crate::reference::sparse_derivatives::check_sparse_derivatives(&ladder, 2.5, &q);
    }

    #[test]
    fn jacobian_matches_central_differences() {
        let ladder = SpookLadder::new(3);
        let n = ladder.coordinate_count();
        let m = ladder.constraint_count();
        let q: Vec<f64> = (0..n).map(|i| ((i * 37) % 11) as f64 * 0.1 - 0.4).collect();
        let mut g = vec![0.0; m];
        let mut jac = vec![0.0; ladder.jacobian_pattern().len()];
        ladder.constraints_and_jacobian(&q, 0.0, &mut g, &mut jac);
        let mut dense = vec![vec![0.0; n]; m];
        for (&(row, col), value) in ladder.jacobian_pattern().iter().zip(&jac) {
            dense[row][col] += value;
        }
        // g is quadratic in q, so central differences are exact up to round-off.
        let step = 1e-3;
        let (mut plus, mut minus) = (vec![0.0; m], vec![0.0; m]);
        let mut scratch = jac.clone();
        for col in 0..n {
            let mut shifted = q.clone();
            shifted[col] += step;
            ladder.constraints_and_jacobian(&shifted, 0.0, &mut plus, &mut scratch);
            shifted[col] -= 2.0 * step;
            ladder.constraints_and_jacobian(&shifted, 0.0, &mut minus, &mut scratch);
            for row in 0..m {
                let fd = (plus[row] - minus[row]) / (2.0 * step);
                assert!((fd - dense[row][col]).abs() < 1e-12, "G[{row}][{col}]");
            }
        }
    }
}
