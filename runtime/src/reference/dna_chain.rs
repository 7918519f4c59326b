//! The DNA Morse chain of Tao–Owhadi (2014, §4.4, eq. 31), in closed form: the site
//! potential's derivatives, the equations of motion, and the paper's seeded initial state.
//!
//! `N` base pairs with opening angles `θ_k`, unit masses, neighbours coupled by linear springs
//! and each pair held by a Morse potential (`shared/EXPERIMENTS-M2.md` §E.1, periodic ends by
//! ambiguity E1, indices mod `N`):
//!
//! ```text
//! H    = Σ_k [ ½ θ̇_k² + ½ (θ_{k+1} − θ_k)² + ε U(θ_k) ]
//! θ̈_k  = θ_{k+1} − 2 θ_k + θ_{k−1} − ε U′(θ_k)
//! U    = (E − 1)²,                          E = exp(−a (1 − cos θ − x0)),  s = sin θ, c = cos θ
//! U′   = −2a s (E² − E)
//! U″   = −2a c (E² − E) + 2a² s² (2E² − E)
//! U‴   =  2a s (E² − E) + 6a² s c (2E² − E) − 2a³ s³ (4E² − E)
//! ```
//!
//! so `Hess V = K + ε diag(U″(θ_k))` with `K` the cyclic graph Laplacian and
//! `(a·V‴·a)_k = ε U‴(θ_k) a_k²`. For `N = 2` both springs join the same two angles, so the
//! Laplacian's off-diagonal entries are `−2` (the formula above with indices mod 2); for
//! `N = 1` the spring is `θ_0 − θ_0 = 0`.

use chacha20::rand_core::SeedableRng;
use chacha20::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

use crate::state::DynState;

/// The Morse site potential `U(θ) = (exp(−a(1 − cos θ − x0)) − 1)²` of one base pair.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Morse {
    /// The stiffness `a` of the Morse well.
    pub a: f64,
    /// The offset `x0`: the minima lie where `1 − cos θ = x0`.
    pub x0: f64,
}

impl Morse {
    /// The paper's site potential, `a = 7`, `x0 = 0.3`.
    pub const TAO_OWHADI: Morse = Morse { a: 7.0, x0: 0.3 };

    /// Returns `[U, U′, U″, U‴]` at `θ`.
    pub fn derivatives(&self, theta: f64) -> [f64; 4] {
        let a = self.a;
        let (s, c) = theta.sin_cos();
        let e = (-a * (1.0 - c - self.x0)).exp();
        let (e1, e2, e3) = (e * e - e, 2.0 * e * e - e, 4.0 * e * e - e);
        [
            (e - 1.0).powi(2),
            -2.0 * a * s * e1,
            -2.0 * a * c * e1 + 2.0 * a * a * s * s * e2,
            2.0 * a * s * e1 + 6.0 * a * a * s * c * e2 - 2.0 * a.powi(3) * s.powi(3) * e3,
        ]
    }

    /// Returns the closed metastable angle `θ* = arccos(1 − x0)` (0.795399 for the paper's
    /// `x0`); the open one is `2π − θ*`.
    pub fn closed_angle(&self) -> f64 {
        (1.0 - self.x0).acos()
    }
}

/// Writes `θ̈ = K θ − ε U′(θ)` (eq. 31, periodic) for the angles `theta` into `out`.
pub fn acceleration(theta: &[f64], morse: &Morse, eps: f64, out: &mut [f64]) {
    let n = theta.len();
    for (k, out) in out.iter_mut().enumerate() {
        let (next, previous) = (theta[(k + 1) % n], theta[(k + n - 1) % n]);
        *out = next - 2.0 * theta[k] + previous - eps * morse.derivatives(theta[k])[1];
    }
}

/// Returns the energy `H` of eq. 31 (periodic) at angles `theta` and rates `rates`.
pub fn energy(theta: &[f64], rates: &[f64], morse: &Morse, eps: f64) -> f64 {
    let n = theta.len();
    (0..n)
        .map(|k| {
            let stretch = theta[(k + 1) % n] - theta[k];
            0.5 * rates[k] * rates[k]
                + 0.5 * stretch * stretch
                + eps * morse.derivatives(theta[k])[0]
        })
        .sum()
}

/// Returns the paper's initial state of `n` base pairs: `θ_k(0) = 0.8 + 0.1 ξ_k` with `ξ_k`
/// i.i.d. standard normal and `θ̇_k(0) = cos(4πk/N)/√N` for `k = 1, …, N` (ambiguity E4)
/// in coordinates `0, …, N − 1`.
///
/// The draws are the Langevin thermostat's: a ChaCha8 stream seeded with `seed` (the same
/// words on every platform), turned into normals by `rand_distr`'s `StandardNormal`, one per
/// angle in order.
///
/// ```
/// use mechanism_runtime::reference::dna_chain::tao_owhadi_state;
/// let (a, b) = (tao_owhadi_state(200, 1), tao_owhadi_state(200, 1));
/// assert_eq!(a.q, b.q);
/// assert_ne!(a.q, tao_owhadi_state(200, 2).q);
/// assert!((a.v[199] - 1.0 / 200f64.sqrt()).abs() < 1e-15); // cos(4π) / √N
/// ```
pub fn tao_owhadi_state(n: usize, seed: u64) -> DynState {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let q = (0..n)
        .map(|_| {
            let xi: f64 = StandardNormal.sample(&mut rng);
            0.8 + 0.1 * xi
        })
        .collect();
    let scale = 1.0 / (n as f64).sqrt();
    let v = (1..=n)
        .map(|k| (4.0 * std::f64::consts::PI * k as f64 / n as f64).cos() * scale)
        .collect();
    DynState::new(0.0, q, v)
}

/// Returns the mean `θ̄ = Σ_k θ_k / N` of the angles, the slow variable of Fig. 8 (not
/// wrapped: a base pair may wind, ambiguity E6).
pub fn mean(theta: &[f64]) -> f64 {
    theta.iter().sum::<f64>() / theta.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The landmarks of EXPERIMENTS-M2 §E.1: the minima, the wall at `0`, the open plateau.
    #[test]
    fn the_morse_landmarks_are_the_papers() {
        let morse = Morse::TAO_OWHADI;
        let star = morse.closed_angle();
        assert!((star - 0.795399).abs() < 1e-6);
        for theta in [star, 2.0 * std::f64::consts::PI - star] {
            let [u, du, ..] = morse.derivatives(theta);
            assert!(
                u.abs() < 1e-28 && du.abs() < 1e-13,
                "θ = {theta}: {u}, {du}"
            );
        }
        assert!((morse.derivatives(0.0)[0] - 51.354).abs() < 1e-3);
        assert!((morse.derivatives(std::f64::consts::PI)[0] - 0.999986).abs() < 1e-6);
    }

    /// Each closed-form derivative against central differences of the one before it (step
    /// `1e-5`: truncation `~1e-10 |U⁽ᵏ⁺²⁾|` with `|U⁽ᵏ⁾| ≲ 10⁴` on the circle).
    #[test]
    fn the_morse_derivatives_match_central_differences() {
        let morse = Morse::TAO_OWHADI;
        let d = 1e-5;
        for i in 0..64 {
            let theta = -0.3 + 0.1 * f64::from(i);
            let (up, down) = (morse.derivatives(theta + d), morse.derivatives(theta - d));
            let exact = morse.derivatives(theta);
            for k in 1..4 {
                let fd = (up[k - 1] - down[k - 1]) / (2.0 * d);
                let scale = 1.0 + exact[k].abs();
                assert!((fd - exact[k]).abs() < 1e-5 * scale, "U^({k})({theta})");
            }
        }
    }
}
