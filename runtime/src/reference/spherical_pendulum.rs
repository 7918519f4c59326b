//! The nonlinear spring pendulum in spherical coordinates of Kinon–Betsch–Livens §6.2, the
//! example with a configuration-dependent (and singular at `θ = kπ`) mass matrix.
//!
//! Coordinates `q = (r, θ, φ)`: the distance of the mass from the pivot and two angles.
//!
//! ```text
//! M(q) = m diag(1, r², r² sin²θ)                         (eq. 45)
//! T    = ½ m (ṙ² + r² θ̇² + r² sin²θ φ̇²)
//! V    = ½ EA ε(r)² + m g z,   ε(r) = (r² − l0²) / (2 l0²)   (eq. 43–44)
//! z    = −r cos θ
//! ```
//!
//! The paper's potential (eq. 43) is the elastic term alone: its pendulum has no gravity, so the
//! default `gravity` is `0`. A non-zero `gravity` adds `m g z` with the height `z = −r cos θ`
//! (the paper does not fix an orientation; with this one `θ = 0` hangs straight down), which
//! makes `V` depend on `θ` — what tests of angular derivatives need.
//!
//! Neither `T` nor `V` depends on `φ`: it is cyclic and its momentum `p_φ = m r² sin²θ φ̇`, the
//! angular momentum about the vertical, is conserved. The model says so through
//! [`Inertia::MASS_DEPENDS_ON`] and [`Potential::POTENTIAL_DEPENDS_ON`], which makes the
//! Livens/Gonzalez scheme conserve `p_φ` exactly (see [`crate::discrete_gradient`], "Masks").
//!
//! Parameters and initial state are the paper's (Table 2, eq. 46): `m = 1`, `EA = 300`,
//! `l0 = 1`, `q0 = (1.05, π/2, 0)`, `v0 = (0, 1, 1)` ([`initial_state`]).

use nalgebra::{SMatrix, SVector};

use crate::model::{
    AppliedForces, Configuration, Holonomic, HolonomicHessians, Inertia, InertiaGradient,
    Potential, PotentialHessian,
};
use crate::state::State;

/// The initial configuration `(r, θ, φ) = (1.05, π/2, 0)` of Kinon–Betsch–Livens eq. 46.
pub const INITIAL_POSITION: [f64; 3] = [1.05, std::f64::consts::FRAC_PI_2, 0.0];

/// The initial velocity `(ṙ, θ̇, φ̇) = (0, 1, 1)` of Kinon–Betsch–Livens eq. 46.
pub const INITIAL_VELOCITY: [f64; 3] = [0.0, 1.0, 1.0];

/// Returns the initial state of Kinon–Betsch–Livens eq. 46 at `t = 0`: a 5 % stretched spring
/// with a tangential velocity.
pub fn initial_state() -> State<3> {
    State::new(0.0, INITIAL_POSITION, INITIAL_VELOCITY)
}

/// A point mass on a nonlinear (Green–Lagrange strain) spring, in spherical coordinates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SphericalSpringPendulum {
    /// The mass `m`.
    pub mass: f64,
    /// The axial stiffness `EA` of the spring.
    pub stiffness: f64,
    /// The spring's resting length `l0`.
    pub rest_length: f64,
    /// Gravitational acceleration `g` along `−z`; `0` in the paper.
    pub gravity: f64,
}

impl Default for SphericalSpringPendulum {
    /// Returns the paper's values (Table 2): `m = 1`, `EA = 300`, `l0 = 1`, no gravity.
    fn default() -> Self {
        SphericalSpringPendulum {
            mass: 1.0,
            stiffness: 300.0,
            rest_length: 1.0,
            gravity: 0.0,
        }
    }
}

impl SphericalSpringPendulum {
    /// Returns the strain `ε(r) = (r² − l0²)/(2 l0²)` of eq. 44.
    pub fn strain(&self, r: f64) -> f64 {
        let l0_sq = self.rest_length * self.rest_length;
        (r * r - l0_sq) / (2.0 * l0_sq)
    }
}

impl Configuration<3> for SphericalSpringPendulum {
    const COORDINATES: [&'static str; 3] = ["r", "theta", "phi"];
}

/// No dissipation or external forces.
impl AppliedForces<3> for SphericalSpringPendulum {}

/// No constraint rows: what integrators of constrained systems (`Livens<3, 0>`) need of an
/// unconstrained model.
impl Holonomic<3, 0> for SphericalSpringPendulum {
    const CONSTRAINTS: [&'static str; 0] = [];

    fn constraints(&self, _q: &SVector<f64, 3>, _t: f64, _g: &mut SVector<f64, 0>) {}

    fn constraint_jacobian(&self, _q: &SVector<f64, 3>, _t: f64, _jac: &mut SMatrix<f64, 0, 3>) {}
}

/// No constraint rows, so no Hessians.
impl HolonomicHessians<3, 0> for SphericalSpringPendulum {
    fn constraint_hessians(
        &self,
        _q: &SVector<f64, 3>,
        _t: f64,
        _out: &mut [SMatrix<f64, 3, 3>; 0],
    ) {
    }
}

impl Inertia<3> for SphericalSpringPendulum {
    const CONSTANT_MASS: bool = false;
    /// `M` depends on `r` and `θ`, not on the cyclic azimuth `φ`.
    const MASS_DEPENDS_ON: [bool; 3] = [true, true, false];

    /// Writes `M = m diag(1, r², r² sin²θ)` (eq. 45).
    fn mass_matrix(&self, q: &SVector<f64, 3>, m: &mut SMatrix<f64, 3, 3>) {
        let (r, sin) = (q[0], q[1].sin());
        let r_sq = r * r;
        *m = SMatrix::<f64, 3, 3>::from_diagonal(&SVector::<f64, 3>::new(
            self.mass,
            self.mass * r_sq,
            self.mass * r_sq * sin * sin,
        ));
    }

    fn kinetic_energy(&self, q: &SVector<f64, 3>, v: &SVector<f64, 3>) -> f64 {
        let (r, sin) = (q[0], q[1].sin());
        let r_sq = r * r;
        0.5 * self.mass * (v[0] * v[0] + r_sq * (v[1] * v[1] + sin * sin * v[2] * v[2]))
    }
}

/// The `q`-derivatives of `T = ½ m (ṙ² + r² θ̇² + r² sin²θ φ̇²)`, by hand (`s = sin θ`,
/// `c = cos θ`; `T` does not depend on `φ`, so its row and column vanish):
///
/// ```text
/// ∂T/∂r = m r (θ̇² + s² φ̇²)      ∂T/∂θ = m r² s c φ̇²
/// ∂²T/∂r² = m (θ̇² + s² φ̇²)   ∂²T/∂r∂θ = 2 m r s c φ̇²   ∂²T/∂θ² = m r² (c² − s²) φ̇²
/// ∂²T/∂r∂v = (0, 2 m r θ̇, 2 m r s² φ̇)   ∂²T/∂θ∂v = (0, 0, 2 m r² s c φ̇)
/// ```
impl InertiaGradient<3> for SphericalSpringPendulum {
    fn kinetic_gradient(
        &self,
        q: &SVector<f64, 3>,
        v: &SVector<f64, 3>,
        out: &mut SVector<f64, 3>,
    ) {
        let (r, (s, c)) = (q[0], q[1].sin_cos());
        let (vt, vp) = (v[1], v[2]);
        let m = self.mass;
        *out = SVector::<f64, 3>::new(
            m * r * (vt * vt + s * s * vp * vp),
            m * r * r * s * c * vp * vp,
            0.0,
        );
    }

    fn kinetic_hessians(
        &self,
        q: &SVector<f64, 3>,
        v: &SVector<f64, 3>,
        qq: &mut SMatrix<f64, 3, 3>,
        qv: &mut SMatrix<f64, 3, 3>,
    ) {
        let (r, (s, c)) = (q[0], q[1].sin_cos());
        let (vt, vp) = (v[1], v[2]);
        let m = self.mass;
        let r_theta = 2.0 * m * r * s * c * vp * vp;
        #[rustfmt::skip]
        let hess_qq = SMatrix::<f64, 3, 3>::new(
            m * (vt * vt + s * s * vp * vp), r_theta,                           0.0,
            r_theta,                         m * r * r * (c * c - s * s) * vp * vp, 0.0,
            0.0,                             0.0,                               0.0,
        );
        #[rustfmt::skip]
        let hess_qv = SMatrix::<f64, 3, 3>::new(
            0.0, 2.0 * m * r * vt, 2.0 * m * r * s * s * vp,
            0.0, 0.0,              2.0 * m * r * r * s * c * vp,
            0.0, 0.0,              0.0,
        );
        *qq = hess_qq;
        *qv = hess_qv;
    }
}

/// `V = ½ EA ε² − m g r cos θ` (eq. 43–44 plus optional gravity), with `ε' = r/l0²`,
/// `ε'' = 1/l0²`:
///
/// ```text
/// ∂V/∂r = EA ε r / l0² − m g c      ∂V/∂θ = m g r s
/// ∂²V/∂r² = EA (r²/l0⁴ + ε/l0²)     ∂²V/∂r∂θ = m g s      ∂²V/∂θ² = m g r c
/// ```
impl Potential<3> for SphericalSpringPendulum {
    /// `V` depends on `r` and, through the optional gravity term, on `θ`; never on `φ`.
    const POTENTIAL_DEPENDS_ON: [bool; 3] = [true, true, false];

    fn potential(&self, q: &SVector<f64, 3>) -> f64 {
        let (r, theta) = (q[0], q[1]);
        let strain = self.strain(r);
        0.5 * self.stiffness * strain * strain - self.mass * self.gravity * r * theta.cos()
    }

    fn potential_gradient(&self, q: &SVector<f64, 3>, grad: &mut SVector<f64, 3>) {
        let (r, (s, c)) = (q[0], q[1].sin_cos());
        let l0_sq = self.rest_length * self.rest_length;
        let mg = self.mass * self.gravity;
        *grad = SVector::<f64, 3>::new(
            self.stiffness * self.strain(r) * r / l0_sq - mg * c,
            mg * r * s,
            0.0,
        );
    }
}

impl PotentialHessian<3> for SphericalSpringPendulum {
    fn potential_hessian(&self, q: &SVector<f64, 3>, hess: &mut SMatrix<f64, 3, 3>) {
        let (r, (s, c)) = (q[0], q[1].sin_cos());
        let l0_sq = self.rest_length * self.rest_length;
        let mg = self.mass * self.gravity;
        let rr = self.stiffness * (r * r / (l0_sq * l0_sq) + self.strain(r) / l0_sq);
        #[rustfmt::skip]
        let h = SMatrix::<f64, 3, 3>::new(
            rr,     mg * s,     0.0,
            mg * s, mg * r * c, 0.0,
            0.0,    0.0,        0.0,
        );
        *hess = h;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn potential_derivatives_match_finite_differences() {
        let model = SphericalSpringPendulum {
            gravity: 9.81,
            ..SphericalSpringPendulum::default()
        };
        let q = SVector::<f64, 3>::new(1.1, 0.7, 0.3);
        let step = 1e-5;
        let mut grad = SVector::zeros();
        let mut hess = SMatrix::zeros();
        model.potential_gradient_hessian(&q, &mut grad, &mut hess);
        for j in 0..3 {
            let mut e = SVector::<f64, 3>::zeros();
            e[j] = step;
            let dv = (model.potential(&(q + e)) - model.potential(&(q - e))) / (2.0 * step);
            assert!(
                (dv - grad[j]).abs() < 1e-7 * (1.0 + grad.amax()),
                "∂V/∂q{j}"
            );
            let mut gp = SVector::zeros();
            let mut gm = SVector::zeros();
            model.potential_gradient(&(q + e), &mut gp);
            model.potential_gradient(&(q - e), &mut gm);
            let column = (gp - gm) / (2.0 * step);
            assert!(
                (column - hess.column(j)).amax() < 1e-7 * (1.0 + hess.amax()),
                "Hess V col {j}"
            );
        }
    }

    #[test]
    fn initial_state_is_the_papers() {
        let model = SphericalSpringPendulum::default();
        let state = initial_state();
        // ε = (1.05² − 1)/2 = 0.05125, V = 150 ε²; T = ½ (r² θ̇² + r² φ̇²) at θ = π/2.
        let strain: f64 = 0.05125;
        assert!((model.potential(&state.q) - 150.0 * strain * strain).abs() < 1e-13);
        assert!((model.kinetic_energy(&state.q, &state.v) - 1.05 * 1.05).abs() < 1e-13);
    }
}
