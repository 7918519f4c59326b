//! The magnetized rigid body of Tao–Owhadi 2014 §4.5: identity inertia in a constant magnetic
//! field, with the potential as printed, `V(R) = Bμ e₃ᵀ R⁻¹ e₃` (`= Bμ R₃₃` on `SO(3)`).
//!
//! With `Bμ > 0`, `R = I` is the maximum of `V` (the physical dipole energy is `−μ·B`; the paper
//! prints `+`, consistently in its eqs. 35 and 37, and we keep it: `shared/EXPERIMENTS-M2.md`
//! §F.1), so the body released at `R(0) = I` with `Ω(0) = (1, 0.2, 0.1)` tumbles. Off `SO(3)`
//! the potential is extended as `Bμ R₃₃` (`e₃ᵀ R e₃`), as the paper does for its penalized
//! scheme; its gradient is the constant `Bμ e₃ e₃ᵀ` and its higher derivatives vanish, and the
//! torque is `τ = Bμ (Γ × e₃)` with `Γ = Rᵀ e₃` (eq. 35).

use nalgebra::{Matrix3, Vector3};

use crate::model::{RigidBody, RigidBodyHessians};

/// The magnetized body: inertia `J = j I`, potential `V(R) = Bμ R₃₃`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MagnetizedBody {
    /// The product `Bμ` of the field strength and the dipole moment (the paper gives neither;
    /// `1` by default, `shared/EXPERIMENTS-M2.md` §F.7).
    pub b_mu: f64,
    /// The principal moment `j` of the isotropic inertia `J = j I` (the paper: `1`).
    pub inertia: f64,
}

impl Default for MagnetizedBody {
    /// Returns the paper's body: `J = I`, `Bμ = 1`.
    fn default() -> Self {
        MagnetizedBody {
            b_mu: 1.0,
            inertia: 1.0,
        }
    }
}

impl MagnetizedBody {
    /// Returns the paper's initial body angular velocity `Ω(0) = (1, 0.2, 0.1)` (with `R(0) = I`).
    pub fn initial_body_rate() -> Vector3<f64> {
        Vector3::new(1.0, 0.2, 0.1)
    }
}

impl RigidBody for MagnetizedBody {
    fn inertia(&self) -> Matrix3<f64> {
        Matrix3::from_diagonal_element(self.inertia)
    }

    fn potential(&self, r: &Matrix3<f64>) -> f64 {
        self.b_mu * r[(2, 2)]
    }

    fn potential_gradient(&self, _r: &Matrix3<f64>) -> Matrix3<f64> {
        let mut g = Matrix3::zeros();
        g[(2, 2)] = self.b_mu;
        g
    }

    fn non_finite_parameter(&self) -> Option<(&'static str, f64)> {
        if !self.b_mu.is_finite() {
            Some(("Bμ", self.b_mu))
        } else if !(self.inertia.is_finite() && self.inertia > 0.0) {
            Some(("inertia j", self.inertia))
        } else {
            None
        }
    }
}

impl RigidBodyHessians for MagnetizedBody {
    fn potential_hessian_product(&self, _r: &Matrix3<f64>, _a: &Matrix3<f64>) -> Matrix3<f64> {
        Matrix3::zeros()
    }

    fn potential_third_derivative(&self, _r: &Matrix3<f64>, _a: &Matrix3<f64>) -> Matrix3<f64> {
        Matrix3::zeros()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::hat;

    /// Returns `exp(ŵ)` by Rodrigues' formula.
    fn rotation(w: &Vector3<f64>) -> Matrix3<f64> {
        let angle = w.norm();
        let k = hat(&(w / angle));
        Matrix3::identity() + angle.sin() * k + (1.0 - angle.cos()) * k * k
    }

    #[test]
    fn gradient_and_torque_match_finite_differences() {
        let body = MagnetizedBody {
            b_mu: 1.7,
            inertia: 1.0,
        };
        let r = rotation(&Vector3::new(0.4, -1.1, 0.7));
        let eps = 1e-6;
        // Central differences of V along each entry are exact for a linear V up to round-off.
        let g = body.potential_gradient(&r);
        for i in 0..3 {
            for j in 0..3 {
                let mut e = Matrix3::zeros();
                e[(i, j)] = eps;
                let fd = (body.potential(&(r + e)) - body.potential(&(r - e))) / (2.0 * eps);
                assert!(
                    (fd - g[(i, j)]).abs() < 1e-9,
                    "G[{i}{j}]: {fd} vs {}",
                    g[(i, j)]
                );
            }
        }
        // −d/dε V(R exp(ε η̂)) = τ·η, with an error O(ε²) ≈ 1e-12 of central differences.
        let tau = body.torque(&r);
        for k in 0..3 {
            let eta = Vector3::ith(k, eps);
            let fd = -(body.potential(&(r * rotation(&eta)))
                - body.potential(&(r * rotation(&-eta))))
                / (2.0 * eps);
            assert!((fd - tau[k]).abs() < 1e-8, "τ[{k}]: {fd} vs {}", tau[k]);
        }
        // The paper's torque (eq. 35): Bμ (Γ × e₃), Γ = Rᵀ e₃.
        let gamma = r.transpose() * Vector3::z();
        assert!((tau - body.b_mu * gamma.cross(&Vector3::z())).norm() < 1e-15);
    }

    #[test]
    fn the_printed_potential_is_r33_on_so3() {
        let body = MagnetizedBody::default();
        let r = rotation(&Vector3::new(-0.3, 2.0, 0.9));
        let inverse = r.try_inverse().unwrap_or_else(Matrix3::zeros);
        let e3 = Vector3::<f64>::z();
        let printed = body.b_mu * e3.dot(&(inverse * e3));
        assert!((printed - body.potential(&r)).abs() < 1e-15);
    }

    #[test]
    fn a_bad_parameter_is_named() {
        let body = MagnetizedBody {
            b_mu: f64::NAN,
            inertia: 1.0,
        };
        assert_eq!(
            body.non_finite_parameter().map(|(name, _)| name),
            Some("Bμ")
        );
        let body = MagnetizedBody {
            b_mu: 1.0,
            inertia: -1.0,
        };
        assert_eq!(body.non_finite_parameter(), Some(("inertia j", -1.0)));
    }
}
