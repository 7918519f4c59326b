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

use crate::model::{
    AppliedForces, Configuration, Holonomic, HolonomicHessians, HolonomicKinematics, Inertia,
    InertiaGradient, Nonholonomic, PenalizedHessian, PenalizedPotential, PenalizedThirdDerivative,
    Potential, PotentialHessian, PotentialThirdDerivative,
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
