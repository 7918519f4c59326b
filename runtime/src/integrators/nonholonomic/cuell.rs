//! Cuell's discrete Lagrange–d'Alembert integrator built on symplectic Euler.

use nalgebra::SVector;

use super::{constraint_drive, constraint_matrix, project_velocity};
use crate::error::StepError;
use crate::integrators::checks::{check_finite, check_state, check_step_size};
use crate::integrators::mass_factor::MassFactor;
use crate::integrators::{Integrator, StepReport};
use crate::model::{AppliedForces, ConstantMass, Nonholonomic, Potential};
use crate::state::State;

/// The discrete Lagrange–d'Alembert integrator of Cuell (2005) §5–6 on the symplectic-Euler
/// discrete Lagrangian, for `M q̈ = −∇V(q) + f_a(q, v, t) + A(q)ᵀλ`, `A(q) v = w(t)`.
///
/// From C. Cuell, *Discrete constrained Lagrangian mechanics* (2005). The curves are those of
/// explicit Euler, `ψ_h(t, (q, q̇)) = q + t q̇` with `α⁻ = 0`, `α⁺ = h` (§6), and the discrete
/// Lagrangian is the left-endpoint rule `L_d(q, q̇) = L(q, q̇)` (§4, "Example: Symplectic
/// Euler"), i.e. `L_d(q_0, q_1) = (1/2h)(q_1 − q_0)ᵀ M (q_1 − q_0) − h V(q_0)` in positions.
/// The state's `v_k` is the velocity of the curve that leaves `q_k`, `v_k = (q_{k+1} − q_k)/h`.
/// One step from `(t_k, q_k, v_k)` is
///
/// ```text
/// q_{k+1} = q_k + h v_k                                                        (eq. 32, 53)
/// M v_{k+1} = M v_k − h ∇V(q_{k+1}) + h f_a(q_{k+1}, v_k, t_{k+1}) + A(q_{k+1})ᵀ μ     (eq. 31, 55)
/// A(q_{k+1}) v_{k+1} = w(t_{k+1})                                              (eq. 57–58)
/// ```
///
/// - The momentum equation is the discrete Euler–Lagrange equation (52) with the variations
///   restricted by eq. 55–56, `A(q_{k+1}) δq_{k+1} = 0`: the reaction `A(q_{k+1})ᵀ μ` (an
///   impulse, `μ = h λ`) acts at the node `q_{k+1}`. Without constraints (`K = 0`) the step is
///   Cuell's symplectic Euler, eq. 31–32, "drift, then kick" (the adjoint of
///   [`SymplecticEuler`](crate::SymplecticEuler)).
/// - The constraint is eq. 57–58: the next segment `q_{k+1} → q_{k+1} + h v_{k+1}` must be
///   joined by a curve `φ_h` whose velocity lies in the distribution `D = ker A`. Cuell builds
///   `φ_h` by hand for each example (rotations for the circle, exponential maps for Routh's
///   sphere); for a general `A(q)` this integrator takes the first-order curve
///   `φ_h(t, (q̄, q̄̇)) = q̄ + t q̄̇` with `q̄̇ ∈ D(q̄)`, which meets §5's condition (3) at
///   `t = α⁻ = 0`, so eq. 57–58 become `A(q_{k+1}) v_{k+1} = w(t_{k+1})`. In positions this is
///   `A(q_k)(q_{k+1} − q_k)/h = w(t_k)`: the constraint at the left endpoint, like `L_d`.
/// - Applied forces (Rayleigh dissipation, the `forces` section) enter through the discrete
///   Lagrange–d'Alembert principle with `f⁺ = 0`, `f⁻ = h f_a(q_1, (q_1 − q_0)/h)`, the
///   choice of Lacoursière (2007) eq. 12.
///
/// Because `q_{k+1}` is explicit, the step is linear in `(v_{k+1}, μ)`: one gradient, one
/// `A(q)`, one `K×K` Cholesky factorization of the Schur complement `A M⁻¹ Aᵀ` and `K + 1`
/// solves with the Cholesky factor of `M` (reused while `M` is unchanged if
/// `Inertia::CONSTANT_MASS`). No derivative of `A` and no Newton iteration are needed.
///
/// The returned state satisfies `A(q) v = w(t)` to round-off. The first step moves `q_0` with
/// the `v_0` it is given, so start from a consistent velocity. The method is first order. It is
/// not energy conserving for nonholonomic constraints (with `V = 0`, `w = 0`, no forces and a
/// constant `M` the step is an `M`-orthogonal projection and the kinetic energy never
/// increases), and for an
/// integrable constraint written as a velocity constraint (`x ẋ + y ẏ = 0`) the position-level
/// invariant drifts: `|q|²` grows by `h²|v_k|²` per step. Dependent constraint rows are
/// [`StepError::Singular`]; use SPOOK for degenerate constraints.
///
/// Its step is differentiated exactly ([`DifferentiableStep`](crate::DifferentiableStep),
/// [`DifferentiableInParameters`](crate::DifferentiableInParameters)): the momentum equation
/// and `A(q_{k+1}) v_{k+1} = w(t_{k+1})` by the implicit function theorem, `μ` eliminated
/// through the same Schur complement `A M⁻¹ Aᵀ`.
#[derive(Clone, Copy, Debug)]
pub struct DiscreteLagrangeDAlembert<const N: usize, const K: usize> {
    h: f64,
    mass: MassFactor<N>,
    multipliers: SVector<f64, K>,
}

impl<const N: usize, const K: usize> DiscreteLagrangeDAlembert<N, K> {
    /// Creates the integrator with step size `h`; fails unless `h` is positive and finite.
    pub fn new(h: f64) -> Result<Self, StepError> {
        Ok(DiscreteLagrangeDAlembert {
            h: check_step_size(h)?,
            mass: MassFactor::default(),
            multipliers: SVector::zeros(),
        })
    }

    /// Returns the step size `h`.
    pub fn step_size(&self) -> f64 {
        self.h
    }

    /// Returns the multipliers `μ` of the last successful step: the reaction impulse
    /// `A(q_{k+1})ᵀ μ` it applied at `q_{k+1}` (zero before the first step).
    pub fn multipliers(&self) -> &SVector<f64, K> {
        &self.multipliers
    }

    /// Returns the cache of `M`'s factor, for the step's Jacobian.
    pub(super) fn mass_factor(&mut self) -> &mut MassFactor<N> {
        &mut self.mass
    }
}

impl<Model, const N: usize, const K: usize> Integrator<Model, N> for DiscreteLagrangeDAlembert<N, K>
where
    Model: ConstantMass<N> + Potential<N> + Nonholonomic<N, K> + AppliedForces<N>,
{
    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError> {
        crate::integrators::checks::check_constant_mass::<Model, N>(
            "discrete Lagrange–d'Alembert",
        )?;
        crate::integrators::checks::check_parameters(model)?;
        check_state(state)?;
        let (h, t) = (self.h, state.t);
        let t_next = t + h;
        let q_next = state.q + state.v * h;
        check_finite(&q_next, "q", t)?;

        let mut impulse = SVector::<f64, N>::zeros();
        model.potential_gradient(&q_next, &mut impulse);
        check_finite(&impulse, "gradient", t)?;
        let mut force = SVector::<f64, N>::zeros();
        model.applied_force(&q_next, &state.v, t_next, &mut force);
        check_finite(&force, "applied force", t)?;
        impulse = (force - impulse) * h;

        let (mass, mass_factorizations) = self.mass.factor_at(model, &q_next, t)?;
        let v_star = state.v + mass.solve(&impulse);
        let a = constraint_matrix(model, &q_next, t)?;
        let w = constraint_drive(model, t_next, t)?;
        let (v_next, mu, schur_factorizations) = project_velocity(&mass, &a, &w, &v_star, t)?;
        check_finite(&v_next, "v", t)?;

        self.multipliers = mu;
        state.q = q_next;
        state.v = v_next;
        state.t = t_next;
        Ok(StepReport {
            factorizations: mass_factorizations + schur_factorizations,
            newton_iterations: 0,
        })
    }
}
