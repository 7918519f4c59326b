//! A chain of pendula with a mass and a rod length per link, written with families and
//! parameter families: any number of bobs at run time, each link's mass and length changed in
//! place, and the Hessians the linearization about an equilibrium needs.

use crate::mechanism;
use crate::runtime::model::SparseInertia;

mechanism! {
    /// A chain of `N` planar pendula with a mass and a rod length per link (parameter
    /// families): bob `i` of mass `m[i]` at `(x[i], y[i])` hangs from bob `i − 1` (bob 0 from
    /// the origin) on a massless rod of length `l[i]`; gravity along `−y`. With its defaults
    /// it is Tao–Owhadi's chain (2014, §4.2; [`PendulumChain`](super::PendulumChain)).
    ///
    /// `derivatives: [hessians]` gives it the potential's and the rods' Hessians
    /// (`SparsePotentialHessian`, `SparseHolonomicHessians`) for the linearization about an
    /// equilibrium, besides what its integrators need.
    pub struct VariedPendulumChain {
        sizes: { N = 10 },
        coordinates: [x[N], y[N]],
        parameters: {
            /// Mass of bob `i`.
            m[N] = 1.0,
            /// Length of rod `i`, from bob `i − 1` (the origin for `i = 0`) to bob `i`.
            l[N] = 2.23606797749979,
            /// Gravitational acceleration.
            g = 1.0,
        },
        kinetic: sum(0..N, |i| 0.5 * m[i] * (dot(x[i]).powi(2) + dot(y[i]).powi(2))),
        potential: sum(0..N, |i| m[i] * g * y[i]),
        holonomic: {
            /// The first rod, from the origin.
            anchor: x[0].powi(2) + y[0].powi(2) - l[0].powi(2),
            /// Rod `i`, from bob `i - 1` to bob `i`.
            rod[i in 1..N]: (x[i] - x[i - 1]).powi(2) + (y[i] - y[i - 1]).powi(2) - l[i].powi(2),
        },
        integrators: [spook, rattle, zs],
        derivatives: [hessians],
    }
}

impl VariedPendulumChain {
    /// Returns the number of bobs `N`.
    pub fn links(&self) -> usize {
        self.coordinate_count() / 2
    }
}
