//! The DNA Morse chain of Tao–Owhadi (2014, §4.4, eq. 31) written with families: `N` base
//! pairs, any `N` at run time.

use crate::mechanism;
use crate::runtime::reference::dna_chain;
use crate::runtime::DynState;

mechanism! {
    /// Tao–Owhadi's DNA chain (2014, §4.4, eq. 31; model of Mezić 2006): the opening angles
    /// `θ_k` of `N` base pairs with unit inertia, neighbours joined by linear springs with
    /// periodic ends (`shared/EXPERIMENTS-M2.md` §E, ambiguity E1), each pair held by the Morse
    /// potential `U(θ) = (exp(−a(1 − cos θ − x0)) − 1)²` scaled by `ε`:
    /// `H = Σ_k [½ θ̇_k² + ½ (θ_{k+1} − θ_k)² + ε U(θ_k)]`. Metastable states at
    /// `θ_k = arccos(1 − x0) ≈ 0.795` (closed) and `2π − arccos(1 − x0) ≈ 5.49` (open).
    /// With `derivatives: [step_jacobians]`, for `SparseVerlet`'s and
    /// `SparseZhangSkeelSimplified`'s step Jacobian products in the state and in `a`, `x0`,
    /// `ε`.
    pub struct DnaChain {
        sizes: { N = 200 },
        coordinates: [theta[N]],
        parameters: {
            /// Stiffness of the Morse well.
            a = 7.0,
            /// Offset of the Morse well: its minima lie where `1 − cos θ = x0`.
            x0 = 0.3,
            /// Weight `ε` of the Morse potential against the springs (the paper's `1/1400`).
            eps = 0.0007142857142857143,
        },
        kinetic: sum(0..N, |k| 0.5 * dot(theta[k]).powi(2)),
        potential: sum(0..N, |k| 0.5 * (theta[(k + 1) % N] - theta[k]).powi(2)
            + eps * ((-a * (1.0 - theta[k].cos() - x0)).exp() - 1.0).powi(2)),
        integrators: [zs, zss, verlet],
        derivatives: [step_jacobians],
    }
}

impl DnaChain {
    /// Returns the number of base pairs `N`.
    pub fn base_pairs(&self) -> usize {
        crate::runtime::model::SparseInertia::coordinate_count(self)
    }

    /// Returns the site potential `U` with this model's `a` and `x0` in closed form.
    pub fn morse(&self) -> dna_chain::Morse {
        dna_chain::Morse {
            a: self.a,
            x0: self.x0,
        }
    }

    /// Returns the paper's initial state: `θ_k(0) = 0.8 + 0.1 ξ_k` with `ξ_k` i.i.d. standard
    /// normal drawn from the ChaCha8 stream seeded with `seed`, and
    /// `θ̇_k(0) = cos(4πk/N)/√N`, `k = 1, …, N` ([`dna_chain::tao_owhadi_state`]).
    pub fn initial_state(&self, seed: u64) -> DynState {
        dna_chain::tao_owhadi_state(self.base_pairs(), seed)
    }

    /// Returns the total energy `H = T + V`.
    pub fn energy(&self, q: &[f64], v: &[f64]) -> f64 {
        crate::runtime::model::SparseInertia::kinetic_energy(self, q, v)
            + crate::runtime::model::SparsePotential::potential(self, q)
    }

    /// Returns the slow variable `θ̄ = Σ_k θ_k / N` of Fig. 8.
    pub fn mean_angle(theta: &[f64]) -> f64 {
        dna_chain::mean(theta)
    }
}
