//! The large mechanisms of Tao–Owhadi §4.2 and Lacoursière §6 written with families
//! ([`mechanism!`](macro@crate::mechanism)'s `sizes`, `x[N]`, `sum` and row families): any
//! number of bobs or links at run time, the sparse tier's traits generated once.

use crate::mechanism;
use crate::runtime::model::SparseInertia;
use crate::runtime::reference::{pendulum_chain, spook_ladder};
use crate::runtime::DynState;

mechanism! {
    /// Tao–Owhadi's chain of `N` planar pendula (2014, §4.2): bob `i` at `(x[i], y[i])` hangs
    /// from bob `i − 1` (bob 0 from the origin) on a massless rod of length `l`; gravity along
    /// `−y` (the sign resolved in `shared/EXPERIMENTS-M2.md` §C). The paper's `m = g = 1`,
    /// `l = √5`.
    pub struct PendulumChain {
        sizes: { N = 10 },
        coordinates: [x[N], y[N]],
        parameters: {
            /// Mass of every bob.
            m = 1.0,
            /// Length of every rod.
            l = 2.23606797749979,
            /// Gravitational acceleration.
            g = 1.0,
        },
        kinetic: sum(0..N, |i| 0.5 * m * (dot(x[i]).powi(2) + dot(y[i]).powi(2))),
        potential: sum(0..N, |i| m * g * y[i]),
        holonomic: {
            /// The first rod, from the origin.
            anchor: x[0].powi(2) + y[0].powi(2) - l.powi(2),
            /// Rod `i`, from bob `i - 1` to bob `i`.
            rod[i in 1..N]: (x[i] - x[i - 1]).powi(2) + (y[i] - y[i - 1]).powi(2) - l.powi(2),
        },
        integrators: [spook, rattle, shake, zs, zss, zss_stiff, verlet, rk],
    }
}

impl PendulumChain {
    /// Returns the number of bobs `N`.
    pub fn links(&self) -> usize {
        self.coordinate_count() / 2
    }

    /// Returns Tao–Owhadi's initial state: at rest, bob `i` at `(i + 1, −2(i + 1))`, on the
    /// constraints exactly for `l = √5`.
    pub fn tao_owhadi_state(&self) -> DynState {
        pendulum_chain::tao_owhadi_state(self.links())
    }
}

mechanism! {
    /// Lacoursière's ladder of `L` square cells (2007, §6): `R = 3L + 1` rods, each a centre
    /// `(x, y)` and a unit direction `(ux, uy)`, with mass `m`, length `l` and moment of
    /// inertia `j` about the centre (`T = ½ m |ẋ|² + ½ j |u̇|²`), pinned at the origin
    /// by the tails of rods 0 and 1; rod `r`'s tail hangs from the head of rod `r − 3` or
    /// `r − 2`, and the rails' segments `3k − 1`, `3k` are joined head to head. The paper's
    /// `m = 10`, `l = 1`, `g = 9.81`. With `derivatives: [step_jacobians]`, for the sparse
    /// step Jacobians in its state and its four parameters.
    pub struct Ladder {
        sizes: { L = 20, R = 3 * L + 1 },
        coordinates: [x[R], y[R], ux[R], uy[R]],
        parameters: {
            /// Mass of every rod.
            m = 10.0,
            /// Length of every rod.
            l = 1.0,
            /// Moment of inertia of every rod about its centre, `m l²/12`.
            j = 0.8333333333333334,
            /// Gravitational acceleration.
            g = 9.81,
        },
        kinetic: sum(0..R, |r| 0.5 * m * (dot(x[r]).powi(2) + dot(y[r]).powi(2))
            + 0.5 * j * (dot(ux[r]).powi(2) + dot(uy[r]).powi(2))),
        potential: sum(0..R, |r| m * g * y[r]),
        holonomic: {
            /// Each direction has unit length.
            unit[r in 0..R]: 0.5 * (ux[r].powi(2) + uy[r].powi(2) - 1.0),
            /// Rods 0 and 1 hang by their tails from the origin.
            anchor[r in 0..2]: [x[r] - 0.5 * l * ux[r], y[r] - 0.5 * l * uy[r]],
            /// Rod `r`'s tail hangs from the head of rod `p`.
            tail[r in 2..R, p = if (r + 1) % 3 == 2 { r - 3 } else { r - 2 }]: [
                x[r] - 0.5 * l * ux[r] - x[p] - 0.5 * l * ux[p],
                y[r] - 0.5 * l * uy[r] - y[p] - 0.5 * l * uy[p],
            ],
            /// Rods `3k − 1` and `3k` are joined head to head.
            heads[r in 2..R - 1 if (r + 1) % 3 == 0]: [
                x[r] + 0.5 * l * ux[r] - x[r + 1] - 0.5 * l * ux[r + 1],
                y[r] + 0.5 * l * uy[r] - y[r + 1] - 0.5 * l * uy[r + 1],
            ],
        },
        integrators: [spook, rattle, rk],
        derivatives: [step_jacobians],
    }
}

impl Ladder {
    /// Returns the number of rods `R = 3L + 1`.
    pub fn rods(&self) -> usize {
        self.coordinate_count() / 4
    }

    /// Returns the number of links `L`.
    pub fn links(&self) -> usize {
        (self.rods() - 1) / 3
    }

    /// Returns the ladder lying horizontally at rest, pinned at the origin (on every
    /// constraint exactly), as the paper releases it.
    pub fn horizontal_state(&self) -> DynState {
        spook_ladder::horizontal_state(self.rods(), self.l)
    }

    /// Returns the total energy `T + V`.
    pub fn energy(&self, q: &[f64], v: &[f64]) -> f64 {
        self.kinetic_energy(q, v) + crate::runtime::model::SparsePotential::potential(self, q)
    }

    /// Returns the largest speed of a rod end, `max |ẋ ± (l/2) u̇|` (the whiplash).
    pub fn largest_end_speed(&self, v: &[f64]) -> f64 {
        spook_ladder::largest_end_speed(v, self.l)
    }
}
