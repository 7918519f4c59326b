//! The simple pendulum released from rest, in closed form: its motion and the derivatives of
//! its bob's position with respect to gravity, the rod's length and the release angle, the
//! reference of the forward sensitivities (`examples/sensitivity.rs`).

use super::elliptic::{complete_first_kind, jacobi};

/// A bob on a massless rod of length `l` from a pivot at the origin, under gravity `g` along
/// `−y`, released from rest at the angle `θ₀` from `−y` (`0 < |θ₀| < π`), so that it starts at
/// `(l sin θ₀, −l cos θ₀)`.
///
/// With `ω = √(g/l)`, `k = sin(θ₀/2)` and `m = k²`, the angle is (Lawden, *Elliptic Functions
/// and Applications*, §5.2)
///
/// ```text
/// sin(θ(t)/2) = k sn(K(m) − ω t | m),      θ̇(t) = −2 k ω cn(K(m) − ω t | m)
/// ```
///
/// evaluated by the arithmetic–geometric mean ([`jacobi`], [`complete_first_kind`]). Since `θ`
/// depends on `g` and `l` only through `ω t`, `∂θ/∂g = θ̇ t / (2g)` and `∂θ/∂l = −θ̇ t / (2l)`
/// (at fixed `θ₀`) are exact; `∂θ/∂θ₀` is the Richardson extrapolation of central differences
/// of the closed form in `θ₀` (steps `δ` and `δ/2`, `δ = 10⁻³`: truncation `O(δ⁴) ≈ 10⁻¹²`,
/// rounding `≈ 10⁻¹²`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReleasedPendulum {
    /// The gravitational acceleration.
    pub g: f64,
    /// The rod's length.
    pub l: f64,
    /// The release angle from `−y`, rad.
    pub theta0: f64,
}

/// The bob's position at a time and its derivatives with respect to the pendulum's data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BobSensitivity {
    /// The position `(x, y)`.
    pub position: [f64; 2],
    /// `∂(x, y)/∂g`.
    pub d_dg: [f64; 2],
    /// `∂(x, y)/∂l` at fixed `θ₀`.
    pub d_dl: [f64; 2],
    /// `∂(x, y)/∂θ₀`.
    pub d_dtheta0: [f64; 2],
}

impl ReleasedPendulum {
    /// Returns `(θ(t), θ̇(t))`.
    pub fn angle(&self, t: f64) -> (f64, f64) {
        let omega = (self.g / self.l).sqrt();
        let k = (0.5 * self.theta0).sin();
        let m = k * k;
        let (sn, cn, _) = jacobi(complete_first_kind(m) - omega * t, m);
        (2.0 * (k * sn).asin(), -2.0 * k * omega * cn)
    }

    /// Returns the bob's position `(l sin θ, −l cos θ)` at `t`.
    pub fn position(&self, t: f64) -> [f64; 2] {
        let (theta, _) = self.angle(t);
        [self.l * theta.sin(), -self.l * theta.cos()]
    }

    /// Returns the bob's position at `t` and its derivatives with respect to `g`, `l` (at
    /// fixed `θ₀`) and `θ₀`.
    pub fn sensitivity(&self, t: f64) -> BobSensitivity {
        let (theta, rate) = self.angle(t);
        let (sin, cos) = theta.sin_cos();
        let along = |d_theta: f64| [self.l * cos * d_theta, self.l * sin * d_theta];
        let d_theta_dl = -rate * t / (2.0 * self.l);
        let angle_at = |theta0: f64| ReleasedPendulum { theta0, ..*self }.angle(t).0;
        let central = |d: f64| (angle_at(self.theta0 + d) - angle_at(self.theta0 - d)) / (2.0 * d);
        let d = 1e-3;
        let d_theta_dtheta0 = (4.0 * central(0.5 * d) - central(d)) / 3.0;
        BobSensitivity {
            position: [self.l * sin, -self.l * cos],
            d_dg: along(rate * t / (2.0 * self.g)),
            d_dl: [
                sin + self.l * cos * d_theta_dl,
                -cos + self.l * sin * d_theta_dl,
            ],
            d_dtheta0: along(d_theta_dtheta0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The closed form starts at rest at `θ₀` and solves `θ̈ = −(g/l) sin θ` (central
    /// differences of `θ̇`), and conserves `½ θ̇² − ω² cos θ`.
    #[test]
    fn the_closed_form_solves_the_pendulum_equation() {
        let pendulum = ReleasedPendulum {
            g: 2.0,
            l: 0.7,
            theta0: 2.5,
        };
        let (theta, rate) = pendulum.angle(0.0);
        assert!((theta - 2.5).abs() < 1e-14 && rate.abs() < 1e-7);
        let omega2 = 2.0 / 0.7;
        let energy = |t: f64| {
            let (theta, rate) = pendulum.angle(t);
            0.5 * rate * rate - omega2 * theta.cos()
        };
        for t in [0.3, 1.7, 4.2, 9.9] {
            let d = 1e-4;
            let accel = (pendulum.angle(t + d).1 - pendulum.angle(t - d).1) / (2.0 * d);
            let (theta, _) = pendulum.angle(t);
            assert!((accel + omega2 * theta.sin()).abs() < 1e-6, "t = {t}");
            assert!((energy(t) - energy(0.0)).abs() < 1e-12, "t = {t}");
        }
    }

    /// The derivatives against central differences of the position in `g`, `l` and `θ₀`.
    #[test]
    fn the_derivatives_match_differences_of_the_position() {
        let base = ReleasedPendulum {
            g: 1.0,
            l: 1.0,
            theta0: 1.0,
        };
        let t = 10.0;
        let exact = base.sensitivity(t);
        let d = 1e-6;
        let moved = |change: &dyn Fn(&mut ReleasedPendulum, f64)| -> [f64; 2] {
            let (mut up, mut down) = (base, base);
            change(&mut up, d);
            change(&mut down, -d);
            let (a, b) = (up.position(t), down.position(t));
            [(a[0] - b[0]) / (2.0 * d), (a[1] - b[1]) / (2.0 * d)]
        };
        let differences = [
            moved(&|p, d| p.g += d),
            moved(&|p, d| p.l += d),
            moved(&|p, d| p.theta0 += d),
        ];
        for (exact, difference) in [exact.d_dg, exact.d_dl, exact.d_dtheta0]
            .iter()
            .zip(differences)
        {
            for i in 0..2 {
                assert!(
                    (exact[i] - difference[i]).abs() < 1e-7,
                    "{exact:?} {difference:?}"
                );
            }
        }
    }
}
