//! The one-dimensional harmonic oscillator `V = ½ k q²` with mass `m`: a closed-form solution
//! for convergence tests and the test equation of linear stability.

use nalgebra::{SMatrix, SVector};

use crate::model::{
    AppliedForces, Configuration, ConstantMass, Inertia, Potential, PotentialHessian,
    PotentialThirdDerivative,
};
use crate::state::State;

/// A mass `m` on a linear spring of stiffness `k`: `m q̈ = −k q`, frequency `ω = √(k/m)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HarmonicOscillator {
    /// The mass `m`.
    pub mass: f64,
    /// The spring stiffness `k`.
    pub stiffness: f64,
}

impl Default for HarmonicOscillator {
    /// Returns the unit oscillator `m = k = 1`.
    fn default() -> Self {
        HarmonicOscillator {
            mass: 1.0,
            stiffness: 1.0,
        }
    }
}

impl HarmonicOscillator {
    /// Returns the angular frequency `ω = √(k/m)`.
    pub fn omega(&self) -> f64 {
        (self.stiffness / self.mass).sqrt()
    }

    /// Returns the exact state at time `t` of the solution through `initial`.
    pub fn exact(&self, initial: &State<1>, t: f64) -> State<1> {
        let omega = self.omega();
        let (q0, v0) = (initial.q[0], initial.v[0]);
        let (sin, cos) = (omega * (t - initial.t)).sin_cos();
        State::new(
            t,
            [q0 * cos + v0 / omega * sin],
            [-q0 * omega * sin + v0 * cos],
        )
    }
}

impl Configuration<1> for HarmonicOscillator {
    const COORDINATES: [&'static str; 1] = ["q"];
}

/// No dissipation or external forces.
impl AppliedForces<1> for HarmonicOscillator {}

/// Constant `M`; `do_not_recommend` keeps the library's models out of the list of
/// implementers in the error for a model without the marker.
#[diagnostic::do_not_recommend]
impl ConstantMass<1> for HarmonicOscillator {}

impl Inertia<1> for HarmonicOscillator {
    const CONSTANT_MASS: bool = true;

    fn mass_matrix(&self, _q: &SVector<f64, 1>, m: &mut SMatrix<f64, 1, 1>) {
        m[0] = self.mass;
    }
}

impl Potential<1> for HarmonicOscillator {
    fn potential(&self, q: &SVector<f64, 1>) -> f64 {
        0.5 * self.stiffness * q[0] * q[0]
    }

    fn potential_gradient(&self, q: &SVector<f64, 1>, grad: &mut SVector<f64, 1>) {
        grad[0] = self.stiffness * q[0];
    }
}

impl PotentialHessian<1> for HarmonicOscillator {
    fn potential_hessian(&self, _q: &SVector<f64, 1>, hess: &mut SMatrix<f64, 1, 1>) {
        hess[0] = self.stiffness;
    }
}

impl PotentialThirdDerivative<1> for HarmonicOscillator {
    fn potential_third_contraction(
        &self,
        _q: &SVector<f64, 1>,
        _a: &SVector<f64, 1>,
        out: &mut SVector<f64, 1>,
    ) {
        out[0] = 0.0;
    }
}

/// A hand-written model's identity: a constant that names its equations, and its parameters.
impl crate::checkpoint::ModelIdentity for HarmonicOscillator {
    const STRUCTURE: u64 = crate::checkpoint::fnv1a(b"HarmonicOscillator: m q'' = -k q", 0);

    fn parameters(&self) -> Vec<(String, Vec<f64>)> {
        vec![
            ("mass".to_string(), vec![self.mass]),
            ("stiffness".to_string(), vec![self.stiffness]),
        ]
    }
}
