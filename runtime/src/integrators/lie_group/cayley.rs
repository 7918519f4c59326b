//! The Lie-group variational Euler with the Cayley map (Tao–Owhadi 2014, eqs. 34–35).

use nalgebra::{Matrix3, Vector3};

use super::{body_rate, orthogonality_residual, rotation, row_major};
use crate::error::StepError;
use crate::integrators::checks::{check_finite, check_parameter, check_state, check_step_size};
use crate::integrators::{Integrator, StepReport};
use crate::model::{hat, RigidBody};
use crate::state::State;

/// The name of the scheme in errors.
const NAME: &str = "Lie-group variational Euler (Cayley)";

/// The largest `‖RᵀR − I‖_F` and `‖RᵀṘ + ṘᵀR‖_F / (1 + ‖Ṙ‖_F)` of a state the scheme accepts:
/// far above the round-off the scheme itself leaves after millions of steps.
const MANIFOLD_TOLERANCE: f64 = 1e-9;

/// The Newton iterations allowed for the scalar cubic (it converges quadratically from an
/// upper bound, in a handful).
const MAX_ITERATIONS: usize = 60;

/// The Lie-group variational Euler with the Cayley map on `SO(3)`, Tao–Owhadi's benchmark for
/// the magnetized rigid body (2014, §4.5, eqs. 34–35, after Bou-Rabee and Marsden 2009):
///
/// ```text
/// R_{k+1} = R_k (I − h Ω̂_{k+1}/2)⁻¹ (I + h Ω̂_{k+1}/2)
/// Ω̂_{k+1} = Ω̂_k + (h²/4) (Ω̂_{k+1}ᵀ Ω̂_{k+1} Ω̂_{k+1}ᵀ − Ω̂_kᵀ Ω̂_k Ω̂_kᵀ) + (h/j) τ̂(R_k)
/// ```
///
/// for a body with isotropic inertia `J = j I` and the body torque
/// `τ = −vee(Rᵀ ∂V/∂R − (∂V/∂R)ᵀ R)` ([`RigidBody::torque`]; `Bμ (Γ × e₃)`, `Γ = Rᵀe₃`, for the
/// magnetized body, eq. 35). Since `Ω̂ᵀΩ̂Ω̂ᵀ = Ω̂³ = −|Ω|² Ω̂`, the implicit update is
///
/// ```text
/// Ω_{k+1} (1 + (h²/4)|Ω_{k+1}|²) = c_k := Ω_k (1 + (h²/4)|Ω_k|²) + (h/j) τ(R_k)
/// ```
///
/// so `Ω_{k+1} = c_k / (1 + (h²/4) r²)` with `r = |Ω_{k+1}|` the unique nonnegative root of the
/// monotone cubic `r + (h²/4) r³ = |c_k|` (`shared/EXPERIMENTS-M2.md` §F.2). Newton's method on
/// the convex cubic, started at the upper bound `min(|c_k|, (4|c_k|/h²)^⅓)`, decreases
/// monotonically to the root; the paper used `fsolve` instead. The Cayley map is evaluated in
/// closed form, `cay(ξ̂) = I + 4/(4 + |ξ|²) (ξ̂ + ξ̂²/2)`, which is orthogonal in exact
/// arithmetic, so `R` stays on `SO(3)` to round-off (no factorization is needed).
///
/// It is variational (symplectic, with bounded energy error), first order, and "intrinsically
/// nonlinearly implicit" (the paper); with a general inertia `J` the `Ω`-update is a 3-dimensional
/// nonlinear system, which this scheme refuses with [`StepError::Unsupported`].
///
/// It steps a [`State<9>`] with `q = R` and `v = Ṙ` row by row (see
/// [`rotation_state`](super::rotation_state)); `Ω_k = vee(R_kᵀṘ_k)` is read from the state and
/// `Ṙ_{k+1} = R_{k+1} Ω̂_{k+1}` written back. A state off `SO(3)` (or with `RᵀṘ` not skew) is
/// refused with [`StepError::OffManifold`] (row 0: orthogonality, row 1: tangency); a vanishing
/// or non-finite cubic is [`StepError::NonFinite`], a Newton iteration that does not settle
/// [`StepError::NewtonDiverged`]; the state is unchanged after an error.
///
/// # Example
///
/// ```
/// use mechanism_runtime::integrators::lie_group::{orthogonality_residual, rotation, rotation_state, LieGroupEuler};
/// use mechanism_runtime::reference::MagnetizedBody;
/// use mechanism_runtime::Integrator;
/// use nalgebra::Matrix3;
/// let body = MagnetizedBody::default();
/// let mut euler = LieGroupEuler::new(0.1)?;
/// let mut state = rotation_state(0.0, &Matrix3::identity(), &MagnetizedBody::initial_body_rate());
/// for _ in 0..100 {
///     euler.step(&body, &mut state)?;
/// }
/// assert!(orthogonality_residual(&rotation(&state.q)) < 1e-13);
/// # Ok::<(), mechanism_runtime::StepError>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct LieGroupEuler {
    h: f64,
}

impl LieGroupEuler {
    /// Creates the stepper with step size `h`; fails unless `h` is positive and finite.
    pub fn new(h: f64) -> Result<Self, StepError> {
        Ok(LieGroupEuler {
            h: check_step_size(h)?,
        })
    }

    /// Returns the step size `h`.
    pub fn step_size(&self) -> f64 {
        self.h
    }
}

/// Returns `j` if `inertia` is `j I` with `j > 0` (exactly: a generated isotropic body writes
/// the same number three times), else `Unsupported`.
fn isotropic(inertia: &Matrix3<f64>) -> Result<f64, StepError> {
    let j = inertia[(0, 0)];
    if j.is_finite() && j > 0.0 && *inertia == Matrix3::from_diagonal_element(j) {
        Ok(j)
    } else {
        Err(StepError::Unsupported {
            integrator: NAME,
            requirement:
                "an isotropic inertia J = j I with j > 0 (the Ω-update is then the scalar \
                          cubic of Tao–Owhadi eq. 35); for a general J step PenalizedRotation \
                          with ZhangSkeel::<9>",
        })
    }
}

/// Returns `OffManifold` unless `R` is orthogonal and `RᵀṘ` skew, to [`MANIFOLD_TOLERANCE`].
fn check_on_so3(r: &Matrix3<f64>, r_dot: &Matrix3<f64>, t: f64) -> Result<(), StepError> {
    let orthogonality = orthogonality_residual(r);
    let m = r.transpose() * r_dot;
    let tangency = (m + m.transpose()).norm() / (1.0 + r_dot.norm());
    for (row, residual) in [(0, orthogonality), (1, tangency)] {
        if residual > MANIFOLD_TOLERANCE {
            return Err(StepError::OffManifold {
                row,
                residual,
                limit: MANIFOLD_TOLERANCE,
                t,
            });
        }
    }
    Ok(())
}

/// Returns the nonnegative root `r` of `r + a r³ = m` (`a > 0`, `m ≥ 0` finite) and the
/// Newton iterations it took: Newton on the convex, increasing cubic from the upper bound
/// `min(m, (m/a)^⅓)` decreases monotonically to the root, and stops when it no longer
/// decreases (round-off).
fn cubic_root(a: f64, m: f64, t: f64) -> Result<(f64, u32), StepError> {
    let mut r = m.min((m / a).cbrt());
    for iteration in 1..=MAX_ITERATIONS {
        let g = r + a * r * r * r - m;
        let next = r - g / (1.0 + 3.0 * a * r * r);
        if next >= r || r - next <= 4.0 * f64::EPSILON * r {
            return Ok((next.clamp(0.0, r), iteration as u32));
        }
        r = next;
    }
    Err(StepError::NewtonDiverged {
        iterations: MAX_ITERATIONS,
        residual: (r + a * r * r * r - m).abs(),
        t,
    })
}

/// Returns the Cayley map `(I − ξ̂/2)⁻¹ (I + ξ̂/2) = I + 4/(4 + |ξ|²) (ξ̂ + ξ̂²/2)`.
fn cayley(xi: &Vector3<f64>) -> Matrix3<f64> {
    let x = hat(xi);
    Matrix3::identity() + (x + x * x * 0.5) * (4.0 / (4.0 + xi.norm_squared()))
}

#[diagnostic::do_not_recommend]
impl<Model: RigidBody> Integrator<Model, 9> for LieGroupEuler {
    fn step(&mut self, model: &Model, state: &mut State<9>) -> Result<StepReport, StepError> {
        check_parameter(model.non_finite_parameter())?;
        check_state(state)?;
        let t = state.t;
        let j = isotropic(&model.inertia())?;
        let (r, r_dot) = (rotation(&state.q), rotation(&state.v));
        check_on_so3(&r, &r_dot, t)?;
        let h = self.h;
        let a = 0.25 * h * h;
        let omega = body_rate(state);
        let torque = model.torque(&r);
        check_finite(&torque, "torque", t)?;
        let c = omega * (1.0 + a * omega.norm_squared()) + torque * (h / j);
        check_finite(&c, "Cayley momentum c_k", t)?;
        let (speed, iterations) = cubic_root(a, c.norm(), t)?;
        let omega_next = c / (1.0 + a * speed * speed);
        let r_next = r * cayley(&(omega_next * h));
        check_finite(&r_next, "R", t)?;
        state.q = row_major(&r_next);
        state.v = row_major(&(r_next * hat(&omega_next)));
        state.t += h;
        Ok(StepReport {
            factorizations: 0,
            newton_iterations: iterations,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cubic_root_solves_the_cubic() {
        for &(a, m) in &[
            (2.5e-3, 1.7),
            (0.25, 1e6),
            (1e-8, 3.0),
            (4.0, 1e-300),
            (0.3, 0.0),
        ] {
            let (r, iterations) = cubic_root(a, m, 0.0).unwrap_or((f64::NAN, 0));
            assert!(r >= 0.0 && iterations <= 60);
            // The residual is round-off of the terms' size.
            assert!(
                (r + a * r * r * r - m).abs() <= 8.0 * f64::EPSILON * m,
                "a = {a}, m = {m}"
            );
        }
    }

    #[test]
    fn the_cayley_map_is_orthogonal_and_matches_its_definition() {
        let xi = Vector3::new(0.3, -1.2, 2.0);
        let q = cayley(&xi);
        assert!(orthogonality_residual(&q) < 1e-15 * 8.0);
        let (minus, plus) = (
            Matrix3::identity() - hat(&xi) * 0.5,
            Matrix3::identity() + hat(&xi) * 0.5,
        );
        assert!((minus * q - plus).norm() < 1e-14);
    }
}
