//! The planar double pendulum in Cartesian coordinates of Tao–Owhadi (2014) §4.1.
//!
//! Coordinates `q = (x1, y1, x2, y2)`, gravity `g` along `−y`, and two rods:
//!
//! ```text
//! M    = diag(m1, m1, m2, m2)
//! V    = m1 g y1 + m2 g y2
//! rod1 = x1² + y1² − l1²
//! rod2 = (x2 − x1)² + (y2 − y1)² − l2²
//! ```
//!
//! With the paper's values `m1 = m2 = g = l1 = 1`, `l2 = √2` and the initial state
//! `q0 = (0, −1, 1, −2)`, `v0 = 0` ([`initial_state`]). Tao–Owhadi write `V = −g y1 − g y2`;
//! here gravity points down, so the pendulum swings below its pivot.

use nalgebra::{SMatrix, SVector};

use crate::model::holonomic_penalty_hessian;
use crate::model::{
    AppliedForces, Configuration, ConstantMass, Holonomic, HolonomicHessians, HolonomicKinematics,
    Inertia, InertiaGradient, Nonholonomic, PenalizedHessian, PenalizedPotential,
    PenalizedThirdDerivative, PenaltyHessian, Potential, PotentialHessian,
    PotentialThirdDerivative,
};
use crate::state::State;

/// The initial configuration `(x1, y1, x2, y2)` of Tao–Owhadi §4.1.
pub const INITIAL_POSITION: [f64; 4] = [0.0, -1.0, 1.0, -2.0];

/// Returns the initial state of Tao–Owhadi §4.1: `t = 0`, `q = (0, −1, 1, −2)`, `v = 0`.
pub fn initial_state() -> State<4> {
    State::new(0.0, INITIAL_POSITION, [0.0; 4])
}

/// A planar double pendulum with point masses on massless rods, in Cartesian coordinates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DoublePendulum {
    /// Mass of the first bob.
    pub m1: f64,
    /// Mass of the second bob.
    pub m2: f64,
    /// Length of the rod from the pivot to the first bob.
    pub l1: f64,
    /// Length of the rod between the bobs.
    pub l2: f64,
    /// Gravitational acceleration, along `−y`.
    pub g: f64,
}

impl Default for DoublePendulum {
    /// Returns Tao–Owhadi's dimensionless values `m1 = m2 = g = l1 = 1`, `l2 = √2`.
    fn default() -> Self {
        DoublePendulum {
            m1: 1.0,
            m2: 1.0,
            l1: 1.0,
            l2: std::f64::consts::SQRT_2,
            g: 1.0,
        }
    }
}

impl DoublePendulum {
    /// Returns the constraint gradients `∇rod1`, `∇rod2` (the rows of `G`) at `q`.
    fn rod_gradients(&self, q: &SVector<f64, 4>) -> [SVector<f64, 4>; 2] {
        let (x1, y1, x2, y2) = (q[0], q[1], q[2], q[3]);
        let (dx, dy) = (x2 - x1, y2 - y1);
        [
            SVector::<f64, 4>::new(2.0 * x1, 2.0 * y1, 0.0, 0.0),
            SVector::<f64, 4>::new(-2.0 * dx, -2.0 * dy, 2.0 * dx, 2.0 * dy),
        ]
    }

    /// Returns the constant Hessians `Hess rod1`, `Hess rod2`.
    fn rod_hessians() -> [SMatrix<f64, 4, 4>; 2] {
        #[rustfmt::skip]
        let hess1 = SMatrix::<f64, 4, 4>::new(
            2.0, 0.0, 0.0, 0.0,
            0.0, 2.0, 0.0, 0.0,
            0.0, 0.0, 0.0, 0.0,
            0.0, 0.0, 0.0, 0.0,
        );
        #[rustfmt::skip]
        let hess2 = SMatrix::<f64, 4, 4>::new(
             2.0,  0.0, -2.0,  0.0,
             0.0,  2.0,  0.0, -2.0,
            -2.0,  0.0,  2.0,  0.0,
             0.0, -2.0,  0.0,  2.0,
        );
        [hess1, hess2]
    }

    /// Returns the constraint values `(rod1, rod2)` at `q`.
    fn rods(&self, q: &SVector<f64, 4>) -> [f64; 2] {
        let (x1, y1, x2, y2) = (q[0], q[1], q[2], q[3]);
        let (dx, dy) = (x2 - x1, y2 - y1);
        [
            x1 * x1 + y1 * y1 - self.l1 * self.l1,
            dx * dx + dy * dy - self.l2 * self.l2,
        ]
    }
}

/// Reference solutions of the double pendulum computed independently of the Cartesian model:
/// the constrained motion in angle coordinates, where no constraint exists, and the penalized
/// ODE with the force written out by hand. Both use [`rk4`](super::ode::rk4).
impl DoublePendulum {
    /// Returns `(θ̇, θ̈)` for the angle state `y = (θ1, θ2, θ̇1, θ̇2)` (angles from the downward
    /// vertical), from `A(θ) θ̈ = f(θ, θ̇)` with `c = cos(θ1 − θ2)`, `s = sin(θ1 − θ2)`:
    ///
    /// ```text
    /// A  = [[(m1 + m2) l1², m2 l1 l2 c], [m2 l1 l2 c, m2 l2²]]
    /// f1 = −m2 l1 l2 s θ̇2² − (m1 + m2) g l1 sin θ1
    /// f2 =  m2 l1 l2 s θ̇1² − m2 g l2 sin θ2
    /// ```
    pub fn angle_dynamics(&self, y: &SVector<f64, 4>) -> SVector<f64, 4> {
        let (m1, m2, l1, l2, g) = (self.m1, self.m2, self.l1, self.l2, self.g);
        let (t1, t2, w1, w2) = (y[0], y[1], y[2], y[3]);
        let (s, c) = (t1 - t2).sin_cos();
        let a11 = (m1 + m2) * l1 * l1;
        let a12 = m2 * l1 * l2 * c;
        let a22 = m2 * l2 * l2;
        let f1 = -m2 * l1 * l2 * s * w2 * w2 - (m1 + m2) * g * l1 * t1.sin();
        let f2 = m2 * l1 * l2 * s * w1 * w1 - m2 * g * l2 * t2.sin();
        let det = a11 * a22 - a12 * a12;
        SVector::<f64, 4>::new(
            w1,
            w2,
            (a22 * f1 - a12 * f2) / det,
            (a11 * f2 - a12 * f1) / det,
        )
    }

    /// Returns the angle state `(θ1, θ2, θ̇1, θ̇2)` of a Cartesian state on the constraints.
    pub fn to_angles(&self, state: &State<4>) -> SVector<f64, 4> {
        let (q, v) = (&state.q, &state.v);
        let (dx, dy) = (q[2] - q[0], q[3] - q[1]);
        let (dvx, dvy) = (v[2] - v[0], v[3] - v[1]);
        // θ from the downward vertical: x = l sin θ, y = −l cos θ.
        let t1 = q[0].atan2(-q[1]);
        let t2 = dx.atan2(-dy);
        // θ̇ = (x ẏ − y ẋ)/l² for x = l sin θ, y = −l cos θ.
        let w1 = (q[0] * v[1] - q[1] * v[0]) / (q[0] * q[0] + q[1] * q[1]);
        let w2 = (dx * dvy - dy * dvx) / (dx * dx + dy * dy);
        SVector::<f64, 4>::new(t1, t2, w1, w2)
    }

    /// Returns the Cartesian state at time `t` of the angle state `y`.
    pub fn from_angles(&self, t: f64, y: &SVector<f64, 4>) -> State<4> {
        let (l1, l2) = (self.l1, self.l2);
        let (t1, t2, w1, w2) = (y[0], y[1], y[2], y[3]);
        let (x1, y1) = (l1 * t1.sin(), -l1 * t1.cos());
        let (vx1, vy1) = (l1 * t1.cos() * w1, l1 * t1.sin() * w1);
        State {
            t,
            q: SVector::<f64, 4>::new(x1, y1, x1 + l2 * t2.sin(), y1 - l2 * t2.cos()),
            v: SVector::<f64, 4>::new(vx1, vy1, vx1 + l2 * t2.cos() * w2, vy1 + l2 * t2.sin() * w2),
        }
    }

    /// Returns the constrained motion at `t_end` from the consistent state `start`, integrated
    /// in angle coordinates by RK4 with `steps` steps.
    pub fn constrained_reference(&self, start: &State<4>, t_end: f64, steps: usize) -> State<4> {
        let h = (t_end - start.t) / steps as f64;
        let y = super::ode::rk4(|y| self.angle_dynamics(y), self.to_angles(start), h, steps);
        self.from_angles(t_end, &y)
    }

    /// Returns the motion of the penalized model `M q̈ = −∇V − ω² Σᵢ gᵢ ∇gᵢ` (Tao–Owhadi eq. 7)
    /// at `t_end` from `start`, integrated by RK4 with `steps` steps, with the force written
    /// out here rather than taken from the [`PenalizedPotential`] impl.
    pub fn penalized_reference(
        &self,
        omega: f64,
        start: &State<4>,
        t_end: f64,
        steps: usize,
    ) -> State<4> {
        let h = (t_end - start.t) / steps as f64;
        let w2 = omega * omega;
        let (l1_sq, l2_sq) = (self.l1 * self.l1, self.l2 * self.l2);
        let (m1, m2, g) = (self.m1, self.m2, self.g);
        let f = |y: &SVector<f64, 8>| {
            let (x1, y1, x2, y2) = (y[0], y[1], y[2], y[3]);
            let (dx, dy) = (x2 - x1, y2 - y1);
            let rod1 = x1 * x1 + y1 * y1 - l1_sq;
            let rod2 = dx * dx + dy * dy - l2_sq;
            SVector::<f64, 8>::from([
                y[4],
                y[5],
                y[6],
                y[7],
                -w2 * (rod1 * 2.0 * x1 - rod2 * 2.0 * dx) / m1,
                (-m1 * g - w2 * (rod1 * 2.0 * y1 - rod2 * 2.0 * dy)) / m1,
                -w2 * rod2 * 2.0 * dx / m2,
                (-m2 * g - w2 * rod2 * 2.0 * dy) / m2,
            ])
        };
        let mut y0 = SVector::<f64, 8>::zeros();
        y0.fixed_rows_mut::<4>(0).copy_from(&start.q);
        y0.fixed_rows_mut::<4>(4).copy_from(&start.v);
        let y = super::ode::rk4(f, y0, h, steps);
        State {
            t: t_end,
            q: y.fixed_rows::<4>(0).into_owned(),
            v: y.fixed_rows::<4>(4).into_owned(),
        }
    }
}

impl Configuration<4> for DoublePendulum {
    const COORDINATES: [&'static str; 4] = ["x1", "y1", "x2", "y2"];
}

/// No dissipation or external forces.
impl AppliedForces<4> for DoublePendulum {}

/// No nonholonomic rows.
impl Nonholonomic<4, 0> for DoublePendulum {
    const NONHOLONOMIC: [&'static str; 0] = [];
    fn nonholonomic_matrix(&self, _q: &SVector<f64, 4>, _a: &mut SMatrix<f64, 0, 4>) {}
    fn nonholonomic_drive(&self, _t: f64, _w: &mut SVector<f64, 0>) {}
}

/// Constant `M`; `do_not_recommend` keeps the library's models out of the list of
/// implementers in the error for a model without the marker.
#[diagnostic::do_not_recommend]
impl ConstantMass<4> for DoublePendulum {}

impl Inertia<4> for DoublePendulum {
    const CONSTANT_MASS: bool = true;

    fn mass_matrix(&self, _q: &SVector<f64, 4>, m: &mut SMatrix<f64, 4, 4>) {
        *m = SMatrix::<f64, 4, 4>::from_diagonal(&SVector::<f64, 4>::new(
            self.m1, self.m1, self.m2, self.m2,
        ));
    }

    fn kinetic_energy(&self, _q: &SVector<f64, 4>, v: &SVector<f64, 4>) -> f64 {
        0.5 * self.m1 * (v[0] * v[0] + v[1] * v[1]) + 0.5 * self.m2 * (v[2] * v[2] + v[3] * v[3])
    }
}

impl Potential<4> for DoublePendulum {
    fn potential(&self, q: &SVector<f64, 4>) -> f64 {
        self.m1 * self.g * q[1] + self.m2 * self.g * q[3]
    }

    fn potential_gradient(&self, _q: &SVector<f64, 4>, grad: &mut SVector<f64, 4>) {
        *grad = SVector::<f64, 4>::new(0.0, self.m1 * self.g, 0.0, self.m2 * self.g);
    }
}

impl PotentialHessian<4> for DoublePendulum {
    fn potential_hessian(&self, _q: &SVector<f64, 4>, hess: &mut SMatrix<f64, 4, 4>) {
        *hess = SMatrix::<f64, 4, 4>::zeros();
    }
}

impl PotentialThirdDerivative<4> for DoublePendulum {
    fn potential_third_contraction(
        &self,
        _q: &SVector<f64, 4>,
        _a: &SVector<f64, 4>,
        out: &mut SVector<f64, 4>,
    ) {
        *out = SVector::<f64, 4>::zeros();
    }
}

impl Holonomic<4, 2> for DoublePendulum {
    const CONSTRAINTS: [&'static str; 2] = ["rod1", "rod2"];

    fn constraints(&self, q: &SVector<f64, 4>, _t: f64, g: &mut SVector<f64, 2>) {
        let [rod1, rod2] = self.rods(q);
        *g = SVector::<f64, 2>::new(rod1, rod2);
    }

    fn constraint_jacobian(&self, q: &SVector<f64, 4>, _t: f64, jac: &mut SMatrix<f64, 2, 4>) {
        let [grad1, grad2] = self.rod_gradients(q);
        jac.set_row(0, &grad1.transpose());
        jac.set_row(1, &grad2.transpose());
    }
}

/// The mass matrix is constant, so `∂T/∂q` and both kinetic Hessians vanish.
impl InertiaGradient<4> for DoublePendulum {
    fn kinetic_gradient(
        &self,
        _q: &SVector<f64, 4>,
        _v: &SVector<f64, 4>,
        out: &mut SVector<f64, 4>,
    ) {
        *out = SVector::<f64, 4>::zeros();
    }

    fn kinetic_hessians(
        &self,
        _q: &SVector<f64, 4>,
        _v: &SVector<f64, 4>,
        qq: &mut SMatrix<f64, 4, 4>,
        qv: &mut SMatrix<f64, 4, 4>,
    ) {
        *qq = SMatrix::<f64, 4, 4>::zeros();
        *qv = SMatrix::<f64, 4, 4>::zeros();
    }
}

/// The rods are quadratic, so their Hessians are the constant matrices of `rod_hessians`.
impl HolonomicHessians<4, 2> for DoublePendulum {
    fn constraint_hessians(
        &self,
        _q: &SVector<f64, 4>,
        _t: f64,
        out: &mut [SMatrix<f64, 4, 4>; 2],
    ) {
        *out = Self::rod_hessians();
    }
}

/// The rods are scleronomic: `g_t = 0`, and `g̈ = G q̈ + vᵀ (Hess g_k) v` row by row.
impl HolonomicKinematics<4, 2> for DoublePendulum {
    fn constraint_time_derivative(&self, _q: &SVector<f64, 4>, _t: f64, out: &mut SVector<f64, 2>) {
        *out = SVector::<f64, 2>::zeros();
    }

    fn constraint_acceleration_bias(
        &self,
        _q: &SVector<f64, 4>,
        v: &SVector<f64, 4>,
        _t: f64,
        out: &mut SVector<f64, 2>,
    ) {
        let [hess1, hess2] = Self::rod_hessians();
        *out = SVector::<f64, 2>::new(v.dot(&(hess1 * v)), v.dot(&(hess2 * v)));
    }
}

/// The penalized potential `W = V + ½ω²(rod1² + rod2²)` (Tao–Owhadi eq. 7), by hand.
///
/// With `∇g_i` the constraint gradients and `H_i = Hess g_i` (constant: the rods are quadratic):
///
/// ```text
/// ∇W       = ∇V + ω² Σ_i g_i ∇g_i
/// Hess W   = ω² Σ_i (∇g_i ∇g_iᵀ + g_i H_i)            (Hess V = 0)
/// a·W'''·a = ω² Σ_i (2 (a·∇g_i) H_i a + (aᵀ H_i a) ∇g_i)  (V''' = 0, H_i constant)
/// ```
impl PenalizedPotential<4> for DoublePendulum {
    fn penalized_potential(&self, omega: f64, q: &SVector<f64, 4>) -> f64 {
        let [rod1, rod2] = self.rods(q);
        self.potential(q) + 0.5 * omega * omega * (rod1 * rod1 + rod2 * rod2)
    }

    fn penalized_potential_gradient(
        &self,
        omega: f64,
        q: &SVector<f64, 4>,
        grad: &mut SVector<f64, 4>,
    ) {
        let rods = self.rods(q);
        let grads = self.rod_gradients(q);
        self.potential_gradient(q, grad);
        let w2 = omega * omega;
        for (g_i, grad_i) in rods.iter().zip(grads.iter()) {
            *grad += grad_i * (w2 * g_i);
        }
    }
}

impl PenalizedHessian<4> for DoublePendulum {
    fn penalized_potential_hessian(
        &self,
        omega: f64,
        q: &SVector<f64, 4>,
        hess: &mut SMatrix<f64, 4, 4>,
    ) {
        let rods = self.rods(q);
        let grads = self.rod_gradients(q);
        let hessians = Self::rod_hessians();
        let w2 = omega * omega;
        *hess = SMatrix::<f64, 4, 4>::zeros();
        for i in 0..2 {
            *hess += (grads[i] * grads[i].transpose() + hessians[i] * rods[i]) * w2;
        }
    }

    fn penalized_potential_gradient_hessian(
        &self,
        omega: f64,
        q: &SVector<f64, 4>,
        grad: &mut SVector<f64, 4>,
        hess: &mut SMatrix<f64, 4, 4>,
    ) {
        let rods = self.rods(q);
        let grads = self.rod_gradients(q);
        let hessians = Self::rod_hessians();
        let w2 = omega * omega;
        self.potential_gradient(q, grad);
        *hess = SMatrix::<f64, 4, 4>::zeros();
        for i in 0..2 {
            *grad += grads[i] * (w2 * rods[i]);
            *hess += (grads[i] * grads[i].transpose() + hessians[i] * rods[i]) * w2;
        }
    }
}

impl PenalizedThirdDerivative<4> for DoublePendulum {
    fn penalized_potential_third_contraction(
        &self,
        omega: f64,
        q: &SVector<f64, 4>,
        a: &SVector<f64, 4>,
        out: &mut SVector<f64, 4>,
    ) {
        let grads = self.rod_gradients(q);
        let hessians = Self::rod_hessians();
        let w2 = omega * omega;
        *out = SVector::<f64, 4>::zeros();
        for i in 0..2 {
            let h_a = hessians[i] * a;
            *out += (h_a * (2.0 * a.dot(&grads[i])) + grads[i] * a.dot(&h_a)) * w2;
        }
    }
}

impl PenaltyHessian<4> for DoublePendulum {
    fn penalty_hessian(&self, omega: f64, q: &SVector<f64, 4>, hess: &mut SMatrix<f64, 4, 4>) {
        holonomic_penalty_hessian::<4, 2, _>(self, omega, q, hess);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Penalized, SplitPotential};

    /// Central finite difference of `f` along coordinate `j`.
    fn central<F: Fn(&SVector<f64, 4>) -> T, T>(f: F, q: &SVector<f64, 4>, j: usize) -> (T, T) {
        let step = 1e-5;
        let mut plus = *q;
        let mut minus = *q;
        plus[j] += step;
        minus[j] -= step;
        (f(&plus), f(&minus))
    }

    #[test]
    fn penalized_derivatives_match_finite_differences() {
        let model = DoublePendulum::default();
        let omega = 3.0;
        let q = SVector::<f64, 4>::new(0.3, -0.9, 1.2, -2.1);
        let a = SVector::<f64, 4>::new(0.7, -0.2, 0.4, 1.1);
        let step = 1e-5;
        let mut grad = SVector::zeros();
        let mut hess = SMatrix::zeros();
        let mut third = SVector::zeros();
        model.penalized_potential_gradient_hessian(omega, &q, &mut grad, &mut hess);
        model.penalized_potential_third_contraction(omega, &q, &a, &mut third);
        for j in 0..4 {
            let (wp, wm) = central(|x| model.penalized_potential(omega, x), &q, j);
            assert!(((wp - wm) / (2.0 * step) - grad[j]).abs() < 1e-6 * (1.0 + grad[j].abs()));
            let (gp, gm) = central(
                |x| {
                    let mut g = SVector::zeros();
                    model.penalized_potential_gradient(omega, x, &mut g);
                    g
                },
                &q,
                j,
            );
            let column = (gp - gm) / (2.0 * step);
            assert!((column - hess.column(j)).amax() < 1e-6 * (1.0 + hess.amax()));
            let (hp, hm) = central(
                |x| {
                    let mut h = SMatrix::zeros();
                    model.penalized_potential_hessian(omega, x, &mut h);
                    a.dot(&(h * a))
                },
                &q,
                j,
            );
            assert!(((hp - hm) / (2.0 * step) - third[j]).abs() < 1e-6 * (1.0 + third.amax()));
        }
    }

    #[test]
    fn acceleration_bias_is_the_second_time_derivative_along_a_line() {
        // Along q(s) = q + s v (so q̈ = 0), g̈ = (Gv)_q v exactly: g_k is quadratic.
        let model = DoublePendulum::default();
        let q = SVector::<f64, 4>::new(0.3, -0.9, 1.2, -2.1);
        let v = SVector::<f64, 4>::new(0.7, -0.2, 0.4, 1.1);
        let mut bias = SVector::<f64, 2>::zeros();
        model.constraint_acceleration_bias(&q, &v, 0.0, &mut bias);
        let g_at = |s: f64| {
            let mut g = SVector::<f64, 2>::zeros();
            model.constraints(&(q + v * s), 0.0, &mut g);
            g
        };
        let second = (g_at(0.5) - g_at(0.0) * 2.0 + g_at(-0.5)) / 0.25;
        assert!((second - bias).amax() < 1e-12, "{second} vs {bias}");
        let mut hessians = [SMatrix::<f64, 4, 4>::zeros(); 2];
        model.constraint_hessians(&q, 0.0, &mut hessians);
        let jac = |x: &SVector<f64, 4>| {
            let mut j = SMatrix::<f64, 2, 4>::zeros();
            model.constraint_jacobian(x, 0.0, &mut j);
            j
        };
        for j in 0..4 {
            let mut e = SVector::<f64, 4>::zeros();
            e[j] = 0.5;
            let column = (jac(&(q + e)) - jac(&(q - e))).transpose();
            for (k, hess) in hessians.iter().enumerate() {
                assert!((column.column(k) - hess.column(j)).amax() < 1e-12);
            }
        }
    }

    #[test]
    fn jacobian_matches_finite_differences_and_initial_state_is_consistent() {
        let model = DoublePendulum::default();
        let q = SVector::<f64, 4>::new(0.3, -0.9, 1.2, -2.1);
        let mut jac = SMatrix::<f64, 2, 4>::zeros();
        model.constraint_jacobian(&q, 0.0, &mut jac);
        for j in 0..4 {
            let (gp, gm) = central(
                |x| {
                    let mut g = SVector::<f64, 2>::zeros();
                    model.constraints(x, 0.0, &mut g);
                    g
                },
                &q,
                j,
            );
            assert!(((gp - gm) / 2e-5 - jac.column(j)).amax() < 1e-8);
        }
        let mut g = SVector::<f64, 2>::zeros();
        model.constraints(&initial_state().q, 0.0, &mut g);
        assert!(g.amax() < 1e-15);
    }

    #[test]
    fn penalty_hessian_is_the_penalized_hessian_of_a_linear_potential() {
        // V is linear for the double pendulum, so Hess W = Hess(½ ω² |g|²).
        let model = Penalized::new(DoublePendulum::default(), 3.0);
        let q = SVector::<f64, 4>::new(0.3, -0.9, 1.2, -2.1);
        let (mut stiff, mut total) = (SMatrix::zeros(), SMatrix::zeros());
        model.stiff_hessian(&q, &mut stiff);
        model.potential_hessian(&q, &mut total);
        assert!(
            (stiff - total).amax() < 1e-12 * total.amax(),
            "{stiff} vs {total}"
        );
    }
}
