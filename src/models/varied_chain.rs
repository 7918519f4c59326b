//! A chain of pendula with a mass and a rod length per link, written with families and
//! parameter families: any number of bobs at run time, each link's mass and length changed in
//! place, and the Hessians the linearization about an equilibrium needs.

use crate::mechanism;
use crate::runtime::model::SparseInertia;
use crate::runtime::DynState;

mechanism! {
    /// A chain of `N` planar pendula with a mass and a rod length per link (parameter
    /// families): bob `i` of mass `m[i]` at `(x[i], y[i])` hangs from bob `i − 1` (bob 0 from
    /// the origin) on a massless rod of length `l[i]`; gravity along `−y`. With its defaults
    /// it is Tao–Owhadi's chain (2014, §4.2; [`PendulumChain`](super::PendulumChain)).
    ///
    /// `derivatives: [hessians]` gives it the potential's and the rods' Hessians
    /// (`SparsePotentialHessian`, `SparseHolonomicHessians`) for the linearization about an
    /// equilibrium, besides what its integrators need; `step_jacobians` the flat parameter
    /// vector `(g, m[0..N], l[0..N])` (`SparseParameters`) and the derivatives SPOOK's sparse
    /// step Jacobian needs (`SparseStepDerivatives`, `SparseParameterDerivatives`), for
    /// sensitivities and adjoint gradients in every mass and length.
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
        integrators: [spook, rattle, shake, zs],
        derivatives: [hessians, step_jacobians],
    }
}

impl VariedPendulumChain {
    /// Returns the number of bobs `N`.
    pub fn links(&self) -> usize {
        self.coordinate_count() / 2
    }

    /// Returns the state at time 0 with rod `i` at angle `angles[i]` from `−y` turning at
    /// `rates[i]` (absolute angles; the rods' lengths are the model's `l`), on every
    /// constraint exactly: bob `i` at `Σ_{k ≤ i} l_k (sin θ_k, −cos θ_k)`. Missing angles or
    /// rates are 0.
    pub fn state(&self, angles: &[f64], rates: &[f64]) -> DynState {
        let links = self.links();
        let (mut q, mut v) = (Vec::with_capacity(2 * links), Vec::with_capacity(2 * links));
        let (mut x, mut y, mut vx, mut vy) = (0.0, 0.0, 0.0, 0.0);
        for (i, l) in self.l.iter().enumerate().take(links) {
            let angle = angles.get(i).copied().unwrap_or(0.0);
            let rate = rates.get(i).copied().unwrap_or(0.0);
            x += l * angle.sin();
            y -= l * angle.cos();
            vx += l * angle.cos() * rate;
            vy += l * angle.sin() * rate;
            q.extend([x, y]);
            v.extend([vx, vy]);
        }
        DynState::new(0.0, q, v)
    }
}
