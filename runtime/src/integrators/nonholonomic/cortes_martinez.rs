//! The nonholonomic variational integrator of Cortés and Martínez, the `γ → 0` limit of SPOOK's
//! nonholonomic rows.

use nalgebra::{SMatrix, SVector};

use super::{
    constraint_drive, constraint_matrix, constraint_scale, max_abs, newton_correction,
    NonholonomicDerivative,
};
use crate::error::StepError;
use crate::integrators::checks::{check_finite, check_state, check_step_size};
use crate::integrators::mass_factor::MassFactor;
use crate::integrators::newton::{newton_builders, Newton};
use crate::integrators::{Integrator, StepReport};
use crate::model::{AppliedForces, ConstantMass, Potential};
use crate::state::State;

/// The default relative Newton tolerance of [`CortesMartinez`] (see its type docs).
const DEFAULT_TOLERANCE: f64 = 1e-13;

/// The default cap on Newton iterations per step.
const DEFAULT_MAX_ITERATIONS: usize = 50;

/// The default Newton settings.
const DEFAULT_NEWTON: Newton = Newton::preset(DEFAULT_TOLERANCE, DEFAULT_MAX_ITERATIONS);

/// The nonholonomic variational integrator of Lacoursière (2007) eq. 24 in the limit `γ → 0`
/// (J. Cortés and S. Martínez, *Non-holonomic integrators*, Nonlinearity 14, 2001), for
/// `M q̈ = −∇V(q) + f_a(q, v, t) + A(q)ᵀλ`, `A(q) v = w(t)`.
///
/// With the discrete Lagrangian of Lacoursière eq. 12,
/// `L_d(q_0, q_1) = (1/2h)(q_1 − q_0)ᵀ M (q_1 − q_0) − h V(q_0)`, and the state's velocity the
/// backward difference `v_k = (q_k − q_{k−1})/h`, eq. 24 with `γ = 0` reads
///
/// ```text
/// D₁L_d(q_k, q_{k+1}) + D₂L_d(q_{k−1}, q_k) + A(q_k)ᵀ α = 0
/// A(q_{k+1})(q_{k+1} − q_k) = h w(t_{k+1})
/// ```
///
/// that is, one step from `(t_k, q_k, v_k)` is
///
/// ```text
/// M v_{k+1} = M v_k − h ∇V(q_k) + h f_a(q_k, v_k, t_k) + A(q_k)ᵀ α
/// q_{k+1}   = q_k + h v_{k+1}
/// A(q_{k+1}) v_{k+1} = w(t_{k+1})
/// ```
///
/// (the forces with `f⁺ = 0`, `f⁻ = h f_a(q_1, (q_1 − q_0)/h)` of eq. 12, the driving term `w`
/// as in eq. 29). The reaction acts at `q_k` and the constraint holds at `q_{k+1}`, so the step
/// is nonlinear in `v_{k+1}`. With `v_{k+1}(α) = v* + M⁻¹A(q_k)ᵀ α` it is solved for the `K`
/// multipliers by Newton's method from `α = 0`:
///
/// ```text
/// r(α) = A(q_{k+1}) v_{k+1} − w(t_{k+1})
/// [A(q_{k+1}) + h ∂(A v_{k+1})/∂q (q_{k+1})] M⁻¹A(q_k)ᵀ Δα = −r
/// ```
///
/// The bracket is the exact derivative of `r`, which needs [`NonholonomicDerivative`]; the
/// iteration converges quadratically. It stops when `max_i |r_i| ≤ τ (1 + s)`,
/// `s = max_i Σ_j |A_ij v_j|` (the size of the terms of `A v`, which sets its rounding error),
/// `τ` = [`tolerance`](Self::tolerance); after [`max_iterations`](Self::max_iterations)
/// iterations or on a non-finite residual the step fails with [`StepError::NewtonDiverged`].
/// Per step: one gradient, one factorization of `M` (reused while `M` is unchanged if
/// `Inertia::CONSTANT_MASS`), and per Newton iteration one `A`, one `∂(Av)/∂q` and one `K×K`
/// LU factorization.
///
/// Without constraints (`K = 0`) this is [`SymplecticEuler`](crate::SymplecticEuler), "kick,
/// then drift". The returned state satisfies `A(q) v = w(t)` to the Newton tolerance; the
/// method is first order. Compared with [`DiscreteLagrangeDAlembert`](super::DiscreteLagrangeDAlembert)
/// the reaction and the constraint sit at opposite ends of the step: for `x ẋ + y ẏ = 0`
/// written as a velocity constraint `|q|²` shrinks by `h²|v_{k+1}|²` per step instead of growing.
///
/// Its step is differentiated exactly ([`DifferentiableStep`](crate::DifferentiableStep),
/// [`DifferentiableInParameters`](crate::DifferentiableInParameters)): the three equations
/// above by the implicit function theorem at the converged `α` (not through Newton's
/// iterates), `α` eliminated through the converged Newton matrix.
#[derive(Clone, Copy, Debug)]
pub struct CortesMartinez<const N: usize, const K: usize> {
    h: f64,
    newton: Newton,
    mass: MassFactor<N>,
    multipliers: SVector<f64, K>,
}

impl<const N: usize, const K: usize> CortesMartinez<N, K> {
    /// Creates the integrator with step size `h`, relative tolerance `1e-13` and at most 50
    /// Newton iterations per step; fails unless `h` is positive and finite.
    pub fn new(h: f64) -> Result<Self, StepError> {
        Ok(CortesMartinez {
            h: check_step_size(h)?,
            newton: DEFAULT_NEWTON,
            mass: MassFactor::default(),
            multipliers: SVector::zeros(),
        })
    }

    /// Returns the step size `h`.
    pub fn step_size(&self) -> f64 {
        self.h
    }

    /// Returns the multipliers `α` of the last successful step: the reaction impulse
    /// `A(q_k)ᵀ α` it applied at `q_k` (zero before the first step).
    pub fn multipliers(&self) -> &SVector<f64, K> {
        &self.multipliers
    }

    /// Returns the cache of `M`'s factor, for the step's Jacobian.
    pub(super) fn mass_factor(&mut self) -> &mut MassFactor<N> {
        &mut self.mass
    }
}

impl<Model, const N: usize, const K: usize> Integrator<Model, N> for CortesMartinez<N, K>
where
    Model: ConstantMass<N> + Potential<N> + NonholonomicDerivative<N, K> + AppliedForces<N>,
{
    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError> {
        crate::integrators::checks::check_constant_mass::<Model, N>("Cortés–Martínez")?;
        crate::integrators::checks::check_parameters(model)?;
        check_state(state)?;
        let (h, t) = (self.h, state.t);
        let t_next = t + h;

        let mut impulse = SVector::<f64, N>::zeros();
        model.potential_gradient(&state.q, &mut impulse);
        check_finite(&impulse, "gradient", t)?;
        let mut force = SVector::<f64, N>::zeros();
        model.applied_force(&state.q, &state.v, t, &mut force);
        check_finite(&force, "applied force", t)?;
        impulse = (force - impulse) * h;

        let (mass, mass_factorizations) = self.mass.factor_at(model, &state.q, t)?;
        let v_star = state.v + mass.solve(&impulse);
        check_finite(&v_star, "v", t)?;
        let mut minv_at = constraint_matrix(model, &state.q, t)?.transpose();
        mass.solve_in_place(&mut minv_at);
        let w = constraint_drive(model, t_next, t)?;

        let mut alpha = SVector::<f64, K>::zeros();
        let mut derivative = SMatrix::<f64, K, N>::zeros();
        let mut iterations = 0u32;
        let (q_next, v_next) = loop {
            let v = v_star + minv_at * alpha;
            let q = state.q + v * h;
            if !(q.iter().chain(v.iter()).all(|x| x.is_finite())) {
                return Err(StepError::NewtonDiverged {
                    iterations: iterations as usize,
                    residual: f64::INFINITY,
                    t,
                });
            }
            let a = constraint_matrix(model, &q, t)?;
            let residual = a * v - w;
            let size = max_abs(&residual);
            if size <= self.newton.tolerance() * (1.0 + constraint_scale(&a, &v)) {
                break (q, v);
            }
            if !size.is_finite() || iterations as usize >= self.newton.max_iterations() {
                return Err(StepError::NewtonDiverged {
                    iterations: iterations as usize,
                    residual: size,
                    t,
                });
            }
            model.nonholonomic_velocity_jacobian(&q, &v, &mut derivative);
            check_finite(&derivative, "nonholonomic velocity jacobian", t)?;
            alpha -= newton_correction(&((a + derivative * h) * minv_at), &residual, t)?;
            iterations += 1;
        };
        self.multipliers = alpha;
        state.q = q_next;
        state.v = v_next;
        state.t = t_next;
        Ok(StepReport {
            factorizations: mass_factorizations + iterations,
            newton_iterations: iterations,
        })
    }
}

newton_builders!(
    [const N: usize, const K: usize] CortesMartinez<N, K>,
    newton,
    "The tolerance is the relative `τ` of the stopping rule in the type docs of [`CortesMartinez`].",
    "1e-13",
    "50"
);
