//! Cuell's two-dimensional harmonic oscillator (Cuell 2005 §4.1), free and with the velocity
//! constraint `x ẋ + y ẏ = 0` (§3.1, §5.1).

use nalgebra::{SMatrix, SVector};

use crate::model::NonholonomicDerivative;
use crate::model::{
    AppliedForces, Configuration, ConstantMass, Inertia, Nonholonomic, Potential, PotentialHessian,
};
use crate::state::State;

/// A mass `m` on an isotropic planar spring of stiffness `k`: `L = ½ m (ẋ² + ẏ²) − ½ k (x² + y²)`
/// (Cuell 2005 §4.1), with no constraint rows (`Nonholonomic<2, 0>`).
///
/// Energy `E = ½ m |v|² + ½ k |q|²` and angular momentum `m (x ẏ − y ẋ)` are conserved; from
/// [`initial_state`](Self::initial_state) the orbit is the unit circle
/// `(x, y) = (cos ωt, sin ωt)` when `k = m`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlanarOscillator {
    /// The mass `m`.
    pub mass: f64,
    /// The spring stiffness `k`.
    pub stiffness: f64,
}

impl Default for PlanarOscillator {
    /// Returns Cuell's oscillator, `m = k = 1`.
    fn default() -> Self {
        PlanarOscillator {
            mass: 1.0,
            stiffness: 1.0,
        }
    }
}

impl PlanarOscillator {
    /// Returns Cuell's initial state `(x, y, ẋ, ẏ) = (1, 0, 0, 1)` at `t = 0`.
    pub fn initial_state() -> State<2> {
        State::new(0.0, [1.0, 0.0], [0.0, 1.0])
    }

    /// Returns the angular frequency `ω = √(k/m)`.
    pub fn omega(&self) -> f64 {
        (self.stiffness / self.mass).sqrt()
    }

    /// Returns the energy `½ m |v|² + ½ k |q|²`.
    pub fn energy(&self, state: &State<2>) -> f64 {
        0.5 * self.mass * state.v.norm_squared() + 0.5 * self.stiffness * state.q.norm_squared()
    }

    /// Returns the angular momentum `m (x ẏ − y ẋ)` (Cuell's `p = ẏx − ẋy` for `m = 1`).
    pub fn angular_momentum(&self, state: &State<2>) -> f64 {
        self.mass * (state.q[0] * state.v[1] - state.q[1] * state.v[0])
    }

    /// Returns the exact state at time `t` of the solution through `initial`.
    pub fn exact(&self, initial: &State<2>, t: f64) -> State<2> {
        let omega = self.omega();
        let (sin, cos) = (omega * (t - initial.t)).sin_cos();
        State {
            t,
            q: initial.q * cos + initial.v * (sin / omega),
            v: initial.v * cos - initial.q * (omega * sin),
        }
    }
}

impl Configuration<2> for PlanarOscillator {
    const COORDINATES: [&'static str; 2] = ["x", "y"];
}

/// No dissipation or external forces.
impl AppliedForces<2> for PlanarOscillator {}

/// Constant `M`; `do_not_recommend` keeps the library's models out of the list of
/// implementers in the error for a model without the marker.
#[diagnostic::do_not_recommend]
impl ConstantMass<2> for PlanarOscillator {}

impl Inertia<2> for PlanarOscillator {
    const CONSTANT_MASS: bool = true;

    fn mass_matrix(&self, _q: &SVector<f64, 2>, m: &mut SMatrix<f64, 2, 2>) {
        *m = SMatrix::<f64, 2, 2>::identity() * self.mass;
    }
}

impl Potential<2> for PlanarOscillator {
    fn potential(&self, q: &SVector<f64, 2>) -> f64 {
        0.5 * self.stiffness * q.norm_squared()
    }

    fn potential_gradient(&self, q: &SVector<f64, 2>, grad: &mut SVector<f64, 2>) {
        *grad = q * self.stiffness;
    }
}

impl PotentialHessian<2> for PlanarOscillator {
    fn potential_hessian(&self, _q: &SVector<f64, 2>, hess: &mut SMatrix<f64, 2, 2>) {
        *hess = SMatrix::<f64, 2, 2>::identity() * self.stiffness;
    }
}

/// No constraint rows.
impl Nonholonomic<2, 0> for PlanarOscillator {
    const NONHOLONOMIC: [&'static str; 0] = [];

    fn nonholonomic_matrix(&self, _q: &SVector<f64, 2>, _a: &mut SMatrix<f64, 0, 2>) {}

    fn nonholonomic_drive(&self, _t: f64, _w: &mut SVector<f64, 0>) {}
}

/// No constraint rows.
impl NonholonomicDerivative<2, 0> for PlanarOscillator {
    fn nonholonomic_velocity_jacobian(
        &self,
        _q: &SVector<f64, 2>,
        _v: &SVector<f64, 2>,
        _out: &mut SMatrix<f64, 0, 2>,
    ) {
    }
}

/// [`PlanarOscillator`] with the constraint `x ẋ + y ẏ = 0` written as a velocity constraint,
/// `A(q) = (x, y)`, `w = 0` (Cuell 2005 §3.1 and the example of §5.1).
///
/// The constraint is integrable (`|q|` is constant along exact solutions), which makes the
/// position-level drift of a velocity-level discretization visible. On the exact solution the
/// speed and `|q|` are constant and `E`, the angular momentum and `|q|` are conserved.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OscillatorOnCircle {
    /// The unconstrained oscillator.
    pub oscillator: PlanarOscillator,
}

impl Configuration<2> for OscillatorOnCircle {
    const COORDINATES: [&'static str; 2] = ["x", "y"];
}

/// No dissipation or external forces.
impl AppliedForces<2> for OscillatorOnCircle {}

/// Constant `M`; `do_not_recommend` keeps the library's models out of the list of
/// implementers in the error for a model without the marker.
#[diagnostic::do_not_recommend]
impl ConstantMass<2> for OscillatorOnCircle {}

impl Inertia<2> for OscillatorOnCircle {
    const CONSTANT_MASS: bool = true;

    fn mass_matrix(&self, q: &SVector<f64, 2>, m: &mut SMatrix<f64, 2, 2>) {
        self.oscillator.mass_matrix(q, m);
    }
}

impl Potential<2> for OscillatorOnCircle {
    fn potential(&self, q: &SVector<f64, 2>) -> f64 {
        self.oscillator.potential(q)
    }

    fn potential_gradient(&self, q: &SVector<f64, 2>, grad: &mut SVector<f64, 2>) {
        self.oscillator.potential_gradient(q, grad);
    }
}

impl Nonholonomic<2, 1> for OscillatorOnCircle {
    const NONHOLONOMIC: [&'static str; 1] = ["radial"];

    fn nonholonomic_matrix(&self, q: &SVector<f64, 2>, a: &mut SMatrix<f64, 1, 2>) {
        *a = q.transpose();
    }

    fn nonholonomic_drive(&self, _t: f64, w: &mut SVector<f64, 1>) {
        w.fill(0.0);
    }
}

impl NonholonomicDerivative<2, 1> for OscillatorOnCircle {
    fn nonholonomic_velocity_jacobian(
        &self,
        _q: &SVector<f64, 2>,
        v: &SVector<f64, 2>,
        out: &mut SMatrix<f64, 1, 2>,
    ) {
        // ∂(x ẋ + y ẏ)/∂(x, y) = (ẋ, ẏ)
        *out = v.transpose();
    }
}
