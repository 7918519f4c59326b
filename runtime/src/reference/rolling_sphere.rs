//! Routh's sphere and the uniform rolling ball (Cuell 2005 §7.1, eqs. 61–64), written by hand
//! in the variables `(a, q, Ω)` of EXPERIMENTS-M2 §G.1 — the centre of mass, a unit quaternion
//! (world from body) and the body angular velocity — as an ODE for a tight
//! [`dopri5`](super::ode::dopri5) reference. It shares no code with `mechanism!` or the
//! integrators it checks.
//!
//! The sphere has unit radius, its centre of mass at `α e₃` below the geometric centre (body
//! frame), inertia `I = diag(I₁, I₁, I₃)` about the centre of mass, and rolls on `z = 0`. With
//! `Γ = Rᵀ e₃` the body contact point relative to the centre of mass is `s = −Γ + α e₃`, and
//! rolling, `b = Rᵀ ȧ = s × Ω` (eq. 63), eliminates the contact force `λ` of eqs. 61–62:
//!
//! ```text
//! ȧ = R (s × Ω),   q̇ = ½ q ⊗ (0, Ω),   ṡ = Ω × Γ
//! (I − m ŝ²) Ω̇ = IΩ × Ω + m s × (ṡ × Ω) − m (Ω·s)(s × Ω) + m g s × Γ
//! ```
//!
//! derived from `m ḃ = m b × Ω − m g Γ + λ`, `I Ω̇ = IΩ × Ω + s × λ` and `ḃ = ṡ × Ω + s × Ω̇`.
//! (Eq. 64 as printed has `+ m (s·ω) ω` where this derivation gives `− m (Ω·s)(s × Ω)`; the
//! energy `½ ΩᵀIΩ + ½ m |s × Ω|² + m g a₃`, conserved along the derivation's equations, is the
//! test.)

use nalgebra::{Matrix3, SVector, Vector3};

/// The state `(a₁, a₂, a₃, q₀, q₁, q₂, q₃, Ω₁, Ω₂, Ω₃)`.
pub type RollingState = SVector<f64, 10>;

/// Routh's sphere: mass, gravity, inertia `diag(i1, i1, i3)` and the offset `alpha`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RollingSphere {
    /// Mass `m`.
    pub m: f64,
    /// Gravity `g`.
    pub g: f64,
    /// `I₁ = I₂`.
    pub i1: f64,
    /// `I₃`.
    pub i3: f64,
    /// Offset `α` of the centre of mass from the geometric centre.
    pub alpha: f64,
}

/// Returns the rotation (world from body) of the quaternion `(q₀, q₁, q₂, q₃)`, normalized.
pub fn rotation(q: &[f64]) -> Matrix3<f64> {
    let n = q.iter().map(|x| x * x).sum::<f64>();
    let (w, x, y, z) = (q[0], q[1], q[2], q[3]);
    Matrix3::new(
        w * w + x * x - y * y - z * z,
        2.0 * (x * y - w * z),
        2.0 * (x * z + w * y),
        2.0 * (x * y + w * z),
        w * w - x * x + y * y - z * z,
        2.0 * (y * z - w * x),
        2.0 * (x * z - w * y),
        2.0 * (y * z + w * x),
        w * w - x * x - y * y + z * z,
    ) / n
}

impl RollingSphere {
    /// Cuell case 1: `m = g = 1`, `I = 1`, `α = 0`.
    pub fn uniform_ball() -> Self {
        RollingSphere {
            m: 1.0,
            g: 1.0,
            i1: 1.0,
            i3: 1.0,
            alpha: 0.0,
        }
    }

    /// Cuell case 2: `m = g = 1`, `I₁ = 1`, `I₃ = 0.8`, `α = 0.2`.
    pub fn routh() -> Self {
        RollingSphere {
            i3: 0.8,
            alpha: 0.2,
            ..RollingSphere::uniform_ball()
        }
    }

    fn inertia(&self) -> Vector3<f64> {
        Vector3::new(self.i1, self.i1, self.i3)
    }

    /// Returns the body contact point `s = −Rᵀe₃ + α e₃` and `Γ = Rᵀ e₃` of the state.
    pub fn contact_arm(&self, y: &RollingState) -> (Vector3<f64>, Vector3<f64>) {
        let r = rotation(&y.as_slice()[3..7]);
        let gamma = r.transpose() * Vector3::z();
        (-gamma + Vector3::z() * self.alpha, gamma)
    }

    /// Returns `y'`.
    pub fn rhs(&self, y: &RollingState) -> RollingState {
        let q = &y.as_slice()[3..7];
        let omega = Vector3::new(y[7], y[8], y[9]);
        let r = rotation(q);
        let (s, gamma) = self.contact_arm(y);
        let a_dot = r * s.cross(&omega);
        let q_dot = [
            0.5 * (-q[1] * omega.x - q[2] * omega.y - q[3] * omega.z),
            0.5 * (q[0] * omega.x + q[2] * omega.z - q[3] * omega.y),
            0.5 * (q[0] * omega.y + q[3] * omega.x - q[1] * omega.z),
            0.5 * (q[0] * omega.z + q[1] * omega.y - q[2] * omega.x),
        ];
        let s_dot = omega.cross(&gamma);
        let i = self.inertia();
        let i_omega = i.component_mul(&omega);
        let m = self.m;
        let rhs = i_omega.cross(&omega) + s.cross(&s_dot.cross(&omega)) * m
            - s.cross(&omega) * (m * omega.dot(&s))
            + s.cross(&gamma) * (m * self.g);
        let s_hat = crate::model::hat(&s);
        let matrix = Matrix3::from_diagonal(&i) - s_hat * s_hat * m;
        let omega_dot = matrix
            .cholesky()
            .map_or(Vector3::repeat(f64::NAN), |c| c.solve(&rhs));
        let mut out = RollingState::zeros();
        out.fixed_rows_mut::<3>(0).copy_from(&a_dot);
        for (k, v) in q_dot.iter().enumerate() {
            out[3 + k] = *v;
        }
        out.fixed_rows_mut::<3>(7).copy_from(&omega_dot);
        out
    }

    /// Returns the energy `½ ΩᵀIΩ + ½ m |ȧ|² + m g a₃` (with `ȧ` from rolling).
    pub fn energy(&self, y: &RollingState) -> f64 {
        let omega = Vector3::new(y[7], y[8], y[9]);
        let (s, _) = self.contact_arm(y);
        0.5 * omega.dot(&self.inertia().component_mul(&omega))
            + 0.5 * self.m * s.cross(&omega).norm_squared()
            + self.m * self.g * y[2]
    }

    /// Returns the velocity of the material point at the contact, `ȧ + ω × (R s)` with the
    /// spatial angular velocity `ω = R Ω`: zero when the sphere rolls.
    pub fn contact_velocity(
        &self,
        a_dot: &Vector3<f64>,
        q: &[f64],
        omega_body: &Vector3<f64>,
    ) -> Vector3<f64> {
        let r = rotation(q);
        let gamma = r.transpose() * Vector3::z();
        let s = -gamma + Vector3::z() * self.alpha;
        a_dot + (r * omega_body).cross(&(r * s))
    }

    /// Returns the height of the geometric centre above the plane minus 1,
    /// `a₃ + α R₃₃ − 1`: zero when the sphere touches the plane.
    pub fn height_residual(&self, a3: f64, q: &[f64]) -> f64 {
        a3 + self.alpha * rotation(q)[(2, 2)] - 1.0
    }

    /// Integrates from `y0` at `t = 0` with [`dopri5`](super::ode::dopri5) at
    /// `rtol = atol = tolerance` and returns the states at `times`.
    pub fn solve(
        &self,
        y0: RollingState,
        times: &[f64],
        tolerance: f64,
    ) -> Result<Vec<RollingState>, String> {
        super::ode::dopri5(|y| self.rhs(y), y0, 0.0, times, tolerance, tolerance)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The uniform ball rolling along `e₁` at `Ω = (0, 1, 0)` is an exact solution:
    /// `a = (t, 0, 1)`, `q = (cos t/2, 0, sin t/2, 0)`.
    #[test]
    fn the_uniform_ball_rolls_straight() {
        let ball = RollingSphere::uniform_ball();
        let y0 = RollingState::from_column_slice(&[0., 0., 1., 1., 0., 0., 0., 0., 1., 0.]);
        let ys = ball.solve(y0, &[1.0, 5.0], 1e-12).unwrap();
        for (t, y) in [1.0f64, 5.0].iter().zip(&ys) {
            let exact = [
                t,
                &0.0,
                &1.0,
                &(t / 2.0).cos(),
                &0.0,
                &(t / 2.0).sin(),
                &0.0,
                &0.0,
                &1.0,
                &0.0,
            ];
            for (x, e) in y.iter().zip(exact) {
                assert!((x - e).abs() < 1e-10, "{y} at {t}");
            }
        }
    }

    /// Routh's sphere released tilted: energy conserved, rolling and touching to 1e-10.
    #[test]
    fn routh_conserves_energy_and_rolls() {
        let sphere = RollingSphere::routh();
        let theta = (0.199f64 / 0.2).asin();
        let (s, c) = (0.5 * theta).sin_cos();
        let y0 = RollingState::from_column_slice(&[
            -0.199,
            0.0,
            1.0 - 0.2 * theta.cos(),
            c,
            0.0,
            s,
            0.0,
            0.3,
            0.2,
            0.5,
        ]);
        let times: Vec<f64> = (1..=20).map(|k| k as f64).collect();
        let ys = sphere.solve(y0, &times, 1e-12).unwrap();
        let e0 = sphere.energy(&y0);
        for y in &ys {
            assert!(
                (sphere.energy(y) - e0).abs() < 1e-10,
                "{}",
                sphere.energy(y) - e0
            );
            assert!(sphere.height_residual(y[2], &y.as_slice()[3..7]).abs() < 1e-10);
            let f = sphere.rhs(y);
            let a_dot = Vector3::new(f[0], f[1], f[2]);
            let omega = Vector3::new(y[7], y[8], y[9]);
            assert!(
                sphere
                    .contact_velocity(&a_dot, &y.as_slice()[3..7], &omega)
                    .norm()
                    < 1e-12
            );
        }
    }
}
