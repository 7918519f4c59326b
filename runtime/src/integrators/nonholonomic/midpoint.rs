//! The discrete Lagrange–d'Alembert integrator with the midpoint discrete Lagrangian and the
//! constraint at the midpoint (McLachlan–Perlmutter), for configuration-dependent mass matrices.

use nalgebra::{SMatrix, SVector};

use super::{
    constraint_drive, constraint_matrix, max_abs, project_velocity, NonholonomicDerivative,
};
use crate::error::StepError;
use crate::integrators::checks::{check_finite, check_state, check_step_size};
use crate::integrators::mass_factor::MassFactor;
use crate::integrators::newton::{newton_builders, Newton};
use crate::integrators::{Integrator, StepReport};
use crate::linalg::{BorderedLu, Lu};
use crate::model::{InertiaGradient, PotentialHessian};
use crate::state::State;

/// The default relative Newton tolerance of [`MidpointLagrangeDAlembert`].
const DEFAULT_TOLERANCE: f64 = 1e-12;

/// The default cap on Newton iterations per step.
const DEFAULT_MAX_ITERATIONS: usize = 50;

/// The default Newton settings.
const DEFAULT_NEWTON: Newton = Newton::preset(DEFAULT_TOLERANCE, DEFAULT_MAX_ITERATIONS);

/// The name of the Newton matrix's position block, for errors.
const POSITION_BLOCK: &str = "Newton block ∂(D₁L_d)/∂q_{k+1}";

/// The name of the Newton matrix's Schur complement, for errors.
const SCHUR_BLOCK: &str = "Newton Schur complement (½ ∂(Au)/∂q + A/h) J⁻¹ A(q_k)ᵀ";

/// The discrete Lagrange–d'Alembert integrator on the midpoint discrete Lagrangian with the
/// discrete constraint at the midpoint (R. McLachlan and M. Perlmutter, *Integrators for
/// nonholonomic mechanical systems*, J. Nonlinear Sci. 16, 2006, §2–3; J. Cortés and
/// S. Martínez, Nonlinearity 14, 2001), for `L = ½ vᵀ M(q) v − V(q)` with a
/// configuration-dependent `M(q)` and Pfaffian constraints `A(q) v = w(t)`.
///
/// With `q̄ = (q_k + q_{k+1})/2`, `u = (q_{k+1} − q_k)/h` and
/// `L_d(q_k, q_{k+1}) = h L(q̄, u)`:
///
/// ```text
/// D₁L_d = (h/2) (∂T/∂q − ∇V)(q̄, u) − M(q̄) u,     D₂L_d = (h/2) (∂T/∂q − ∇V)(q̄, u) + M(q̄) u
/// ```
///
/// One step from `(t_k, q_k, v_k)`, `p_k = M(q_k) v_k`, solves for `(q_{k+1}, μ)`
///
/// ```text
/// p_k + A(q_k)ᵀ μ + D₁L_d(q_k, q_{k+1}) = 0          (DLA, variations in D(q_k) = ker A(q_k))
/// A(q̄) (q_{k+1} − q_k)/h = w(t_k + h/2)               (discrete constraint at the midpoint)
/// ```
///
/// by Newton's method with the exact Jacobian (`∂²T/∂q²`, `∂²T/∂q∂v`, `Hess V`,
/// `∂(A v)/∂q`), eliminating `Δq` with an `N×N` LU and solving a `K×K` Schur complement. Then
/// `p_{k+1}⁺ = D₂L_d(q_k, q_{k+1})` is the discrete Legendre transform, and the returned
/// velocity is `v_{k+1} = M(q_{k+1})⁻¹ (p_{k+1}⁺ + A(q_{k+1})ᵀ ν)` with `ν` chosen so that
/// `A(q_{k+1}) v_{k+1} = w(t_{k+1})`. The DLA equation of the next step involves `p_k` only
/// through `p_k + A(q_k)ᵀ μ` with a free `μ`, so this projection changes no position: the
/// sequence `q_k` is that of the two-step DLA recursion
/// `D₂L_d(q_{k−1}, q_k) + D₁L_d(q_k, q_{k+1}) + A(q_k)ᵀ μ_k = 0`; it only makes the state's
/// velocity satisfy the constraint at its own configuration to round-off.
///
/// Properties:
/// - Symmetric (the reaction at the node, the constraint at the midpoint): second order.
/// - A constraint row that is the exact differential of a quadratic function, `a(q)·v =
///   ∇f(q)·v` with `f` quadratic (e.g. `q·q̇ = 0` of a unit quaternion, or a height
///   `ȧ₃ + α d/dt R₃₃(q) = 0`), holds at the midpoint exactly as `f(q_{k+1}) = f(q_k)`: the
///   midpoint rule is exact for the gradient of a quadratic. So a unit quaternion keeps
///   `|q| = 1` to the Newton tolerance, with no projection, and a holonomic relation hidden in
///   the rows is kept at position level.
/// - The Newton iteration stops when `max|r_F| ≤ τ (1 + max|M(q̄) u|)` and
///   `max|r_G| ≤ τ (1 + max_i Σ_j |A_ij u_j|)` (`τ` = [`tolerance`](Self::tolerance)); after
///   [`max_iterations`](Self::max_iterations) iterations or on a non-finite residual the step
///   fails with [`StepError::NewtonDiverged`] and the state is unchanged.
///
/// It needs no constant mass matrix (unlike [`DiscreteLagrangeDAlembert`](super::DiscreteLagrangeDAlembert)
/// and [`CortesMartinez`](super::CortesMartinez)), but `M(q)` must be invertible on the
/// trajectory: a unit quaternion needs the completion `½ c (q·q̇)²` of its kinetic energy
/// (`mechanism::models::RollingSphere`). It treats no holonomic constraints and no applied
/// forces. Start from a consistent velocity, `A(q_0) v_0 = w(t_0)`.
///
/// Its step is differentiated exactly in the state
/// ([`DifferentiableStep`](crate::DifferentiableStep)): both equations above at the converged
/// `(q_{k+1}, μ)` and the velocity's projection, by the implicit function theorem, with
/// Newton's and the projection's own matrices.
#[derive(Clone, Copy, Debug)]
pub struct MidpointLagrangeDAlembert<const N: usize, const K: usize> {
    h: f64,
    newton: Newton,
    mass: MassFactor<N>,
    /// `μ` of the last step.
    multipliers: SVector<f64, K>,
    /// `ν` of the last step's velocity projection.
    projection: SVector<f64, K>,
}

impl<const N: usize, const K: usize> MidpointLagrangeDAlembert<N, K> {
    /// Creates the integrator with step size `h`, relative tolerance `1e-12` and at most 50
    /// Newton iterations per step; fails unless `h` is positive and finite.
    pub fn new(h: f64) -> Result<Self, StepError> {
        Ok(MidpointLagrangeDAlembert {
            h: check_step_size(h)?,
            newton: DEFAULT_NEWTON,
            mass: MassFactor::default(),
            multipliers: SVector::zeros(),
            projection: SVector::zeros(),
        })
    }

    /// Returns the step size `h`.
    pub fn step_size(&self) -> f64 {
        self.h
    }

    /// Returns the multipliers `μ` of the last successful step: the reaction impulse
    /// `A(q_k)ᵀ μ` of its DLA equation (zero before the first step).
    pub fn multipliers(&self) -> &SVector<f64, K> {
        &self.multipliers
    }

    /// Returns `ν` of the last step's velocity projection, `M(q_{k+1}) v_{k+1} = p⁺ +
    /// A(q_{k+1})ᵀ ν`, for the step's Jacobian.
    pub(super) fn projection_multipliers(&self) -> &SVector<f64, K> {
        &self.projection
    }
}

/// `(h/2)(∂T/∂q − ∇V)(q̄, u)`, `M(q̄) u` and `M(q̄)`.
type Halves<const N: usize> = (SVector<f64, N>, SVector<f64, N>, SMatrix<f64, N, N>);

/// `(h/2)(∂T/∂q − ∇V)(q̄, u)` and `M(q̄) u`: the two halves of `D₁L_d` and `D₂L_d`, and `M(q̄)`.
fn halves<Model, const N: usize>(
    model: &Model,
    mid: &SVector<f64, N>,
    u: &SVector<f64, N>,
    h: f64,
    t: f64,
) -> Result<Halves<N>, StepError>
where
    Model: InertiaGradient<N> + PotentialHessian<N>,
{
    let mut kinetic = SVector::<f64, N>::zeros();
    model.kinetic_gradient(mid, u, &mut kinetic);
    let mut gradient = SVector::<f64, N>::zeros();
    model.potential_gradient(mid, &mut gradient);
    let mut mass = SMatrix::<f64, N, N>::zeros();
    model.mass_matrix(mid, &mut mass);
    let force = (kinetic - gradient) * (0.5 * h);
    check_finite(&force, "∂L/∂q", t)?;
    check_finite(&mass, "mass matrix", t)?;
    Ok((force, mass * u, mass))
}

#[diagnostic::do_not_recommend]
impl<Model, const N: usize, const K: usize> Integrator<Model, N> for MidpointLagrangeDAlembert<N, K>
where
    Model: InertiaGradient<N> + PotentialHessian<N> + NonholonomicDerivative<N, K>,
{
    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError> {
        crate::integrators::checks::check_parameters(model)?;
        check_state(state)?;
        let (h, t) = (self.h, state.t);
        let (q0, v0) = (state.q, state.v);
        let mut m0 = SMatrix::<f64, N, N>::zeros();
        model.mass_matrix(&q0, &mut m0);
        check_finite(&m0, "mass matrix", t)?;
        let p0 = m0 * v0;
        let a0t = constraint_matrix(model, &q0, t)?.transpose();
        let w_mid = constraint_drive(model, t + 0.5 * h, t)?;

        let mut q1 = q0 + v0 * h;
        let mut mu = SVector::<f64, K>::zeros();
        let mut iterations = 0u32;
        let mut derivative = SMatrix::<f64, K, N>::zeros();
        let mut kinetic_qq = SMatrix::<f64, N, N>::zeros();
        let mut kinetic_qv = SMatrix::<f64, N, N>::zeros();
        let mut hessian = SMatrix::<f64, N, N>::zeros();
        let diverged = |iterations: u32, residual: f64| StepError::NewtonDiverged {
            iterations: iterations as usize,
            residual,
            t,
        };
        let p1 = loop {
            if !q1.iter().chain(mu.iter()).all(|x| x.is_finite()) {
                return Err(diverged(iterations, f64::INFINITY));
            }
            let mid = (q0 + q1) * 0.5;
            let u = (q1 - q0) / h;
            let (force, momentum, mass) = halves(model, &mid, &u, h, t)?;
            let a = constraint_matrix(model, &mid, t)?;
            let r_f = p0 + a0t * mu + force - momentum;
            let r_g = a * u - w_mid;
            let (size_f, size_g) = (max_abs(&r_f), max_abs(&r_g));
            if size_f <= self.newton.tolerance() * (1.0 + max_abs(&momentum))
                && size_g <= self.newton.tolerance() * (1.0 + super::constraint_scale(&a, &u))
            {
                break force + momentum;
            }
            let size = size_f.max(size_g);
            if !size.is_finite() || iterations as usize >= self.newton.max_iterations() {
                return Err(diverged(iterations, size));
            }
            model.kinetic_hessians(&mid, &u, &mut kinetic_qq, &mut kinetic_qv);
            model.potential_hessian(&mid, &mut hessian);
            model.nonholonomic_velocity_jacobian(&mid, &u, &mut derivative);
            check_finite(&kinetic_qq, "∂²T/∂q²", t)?;
            check_finite(&kinetic_qv, "∂²T/∂q∂v", t)?;
            check_finite(&hessian, "Hess V", t)?;
            check_finite(&derivative, "nonholonomic velocity jacobian", t)?;
            // ∂r_F/∂q₁ and ∂r_G/∂q₁; ∂r_F/∂μ = A(q_k)ᵀ, ∂r_G/∂μ = 0.
            let j = (kinetic_qq - hessian) * (0.25 * h)
                + (kinetic_qv - kinetic_qv.transpose()) * 0.5
                - mass / h;
            let g = derivative * 0.5 + a / h;
            let lu = Lu::try_new(&j).map_err(StepError::linear_algebra(POSITION_BLOCK, t))?;
            let block =
                BorderedLu::new(lu, &a0t, g).map_err(StepError::linear_algebra(SCHUR_BLOCK, t))?;
            let (delta_q, delta_mu) = block.solve(&r_f, &r_g);
            q1 -= delta_q;
            mu -= delta_mu;
            iterations += 1;
        };
        check_finite(&p1, "p", t)?;

        let t_next = t + h;
        let (mass, mass_factorizations) = self.mass.factor_at(model, &q1, t)?;
        let v_star = mass.solve(&p1);
        let a1 = constraint_matrix(model, &q1, t)?;
        let w1 = constraint_drive(model, t_next, t)?;
        let (v1, nu, schur_factorizations) = project_velocity(&mass, &a1, &w1, &v_star, t)?;
        check_finite(&q1, "q", t)?;
        check_finite(&v1, "v", t)?;

        self.multipliers = mu;
        self.projection = nu;
        state.q = q1;
        state.v = v1;
        state.t = t_next;
        Ok(StepReport {
            factorizations: mass_factorizations + schur_factorizations + 2 * iterations,
            newton_iterations: iterations,
        })
    }
}

newton_builders!(
    [const N: usize, const K: usize] MidpointLagrangeDAlembert<N, K>,
    newton,
    "The tolerance is the relative `τ` of the stopping rule in the type docs of [`MidpointLagrangeDAlembert`].",
    "1e-12",
    "50"
);
