//! The unit harmonic oscillator as a model for the index-1 Runge–Kutta methods (DOPRI5), with
//! its closed form: the test problem of the run driver's dense output and events.

use mechanism_runtime::reference::harmonic::HarmonicOscillator;
use mechanism_runtime::{
    AppliedForces, ConstantMass, Holonomic, HolonomicKinematics, Inertia, InertiaGradient,
    Potential, SMatrix, SVector, State,
};

/// The unit harmonic oscillator `q̈ = −q` with the capabilities the index-1 Runge–Kutta methods
/// need (no constraints), so that DOPRI5 runs on a problem with a closed form
/// ([`HarmonicOscillator::exact`]).
pub struct Spring(pub HarmonicOscillator);

impl ConstantMass<1> for Spring {}

impl Inertia<1> for Spring {
    const CONSTANT_MASS: bool = true;
    fn mass_matrix(&self, q: &SVector<f64, 1>, m: &mut SMatrix<f64, 1, 1>) {
        self.0.mass_matrix(q, m);
    }
}

impl InertiaGradient<1> for Spring {
    fn kinetic_gradient(
        &self,
        _q: &SVector<f64, 1>,
        _v: &SVector<f64, 1>,
        out: &mut SVector<f64, 1>,
    ) {
        out.fill(0.0);
    }
    fn kinetic_hessians(
        &self,
        _q: &SVector<f64, 1>,
        _v: &SVector<f64, 1>,
        qq: &mut SMatrix<f64, 1, 1>,
        qv: &mut SMatrix<f64, 1, 1>,
    ) {
        qq.fill(0.0);
        qv.fill(0.0);
    }
}

impl Potential<1> for Spring {
    fn potential(&self, q: &SVector<f64, 1>) -> f64 {
        self.0.potential(q)
    }
    fn potential_gradient(&self, q: &SVector<f64, 1>, grad: &mut SVector<f64, 1>) {
        self.0.potential_gradient(q, grad);
    }
}

impl Holonomic<1, 0> for Spring {
    const CONSTRAINTS: [&'static str; 0] = [];
    fn constraints(&self, _q: &SVector<f64, 1>, _t: f64, _g: &mut SVector<f64, 0>) {}
    fn constraint_jacobian(&self, _q: &SVector<f64, 1>, _t: f64, _jac: &mut SMatrix<f64, 0, 1>) {}
}

impl HolonomicKinematics<1, 0> for Spring {
    fn constraint_time_derivative(
        &self,
        _q: &SVector<f64, 1>,
        _t: f64,
        _out: &mut SVector<f64, 0>,
    ) {
    }
    fn constraint_acceleration_bias(
        &self,
        _q: &SVector<f64, 1>,
        _v: &SVector<f64, 1>,
        _t: f64,
        _out: &mut SVector<f64, 0>,
    ) {
    }
}

impl AppliedForces<1> for Spring {}

/// The unit oscillator started at `q = 0`, `v = 1`: `q(t) = sin t`.
pub fn sine_start() -> State<1> {
    State::new(0.0, [0.0], [1.0])
}
