//! Newmark (γ = ½), push-forward Newmark, one-iteration Newmark and Z&Ss for stiff systems
//! (Tao–Owhadi 2014, Integrators 2, 3 and 5) on the penalized double pendulum and on harmonic
//! oscillators.
//!
//! One module per claim: [`convergence`] (order two), [`large_steps`] (Tao–Owhadi §4.1 at
//! `h = 0.1`), [`equivalences`] between the schemes, linear [`stability`], and [`newton`]'s
//! failures, parameters and reports; the penalized pendulum, its RK4 reference and the split
//! oscillator they share are here.

use crate::support::steps_to;
use mechanism_runtime::model::SplitPotential;
use mechanism_runtime::reference::double_pendulum::{initial_state, DoublePendulum};
use mechanism_runtime::{ConstantMass, Inertia, Penalized, Potential, SMatrix, SVector};

mod convergence;
mod equivalences;
mod large_steps;
mod newton;
mod stability;

/// The penalty frequency ω of Tao–Owhadi §4.1.
const OMEGA: f64 = 20.0;

/// The penalized motion `M q̈ = −∇W(q)` from the §4.1 initial state at `t_end`, by classical
/// RK4 at step `h` with the force written out independently of the model
/// ([`DoublePendulum::penalized_reference`]).
fn rk4_reference(t_end: f64, h: f64) -> SVector<f64, 4> {
    DoublePendulum::default()
        .penalized_reference(OMEGA, &initial_state(), t_end, steps_to(t_end, h))
        .q
}

fn pendulum() -> Penalized<DoublePendulum> {
    Penalized::new(DoublePendulum::default(), OMEGA)
}

/// A unit mass with `V = ½ k0 q² + ½ k1 q²`, split into soft `k0` and stiff `k1`.
#[derive(Clone, Copy, Debug)]
struct SplitOscillator {
    soft: f64,
    stiff: f64,
}

impl ConstantMass<1> for SplitOscillator {}

impl Inertia<1> for SplitOscillator {
    const CONSTANT_MASS: bool = true;

    fn mass_matrix(&self, _q: &SVector<f64, 1>, m: &mut SMatrix<f64, 1, 1>) {
        m[0] = 1.0;
    }
}

impl Potential<1> for SplitOscillator {
    fn potential(&self, q: &SVector<f64, 1>) -> f64 {
        0.5 * (self.soft + self.stiff) * q[0] * q[0]
    }

    fn potential_gradient(&self, q: &SVector<f64, 1>, grad: &mut SVector<f64, 1>) {
        grad[0] = (self.soft + self.stiff) * q[0];
    }
}

impl SplitPotential<1> for SplitOscillator {
    fn stiff_hessian(&self, _q: &SVector<f64, 1>, hess: &mut SMatrix<f64, 1, 1>) {
        hess[0] = self.stiff;
    }
}
