//! The index-1 formulation (Ascher et al. 1995, eq. 1.5) with Baumgarte's term (eq. 2.1).

use nalgebra::{SMatrix, SVector};

use super::{check_finite, check_state, MassFactor};
use crate::error::StepError;
use crate::linalg::{factored, solve_vector, Cholesky};
use crate::model::{AppliedForces, HolonomicKinematics, InertiaGradient, Potential};
use crate::state::State;

/// The name of the Schur complement, for errors.
const SCHUR: &str = "G M⁻¹ Gᵀ (index-1 system)";

/// Baumgarte's stabilization parameters `(α1, α0)` of Ascher et al. (1995) eq. 2.1.
///
/// The acceleration-level constraint `g̈ = 0` of the index-1 system is replaced by
///
/// ```text
/// g̈ + α1 ġ + α0 g = 0,    ġ = G v + g_t,    g̈ = G v̇ + (G v)_q v + 2 G_t v + g_tt
/// ```
///
/// so that `φ = −(G v)_q v − 2 G_t v − g_tt − α1 ġ − α0 g` in eq. 1.5 (eq. 2.1 with the
/// explicit time dependence of a rheonomic `g(q, t)` written out). The roots of
/// `σ(τ) = τ² + α1 τ + α0` must have negative real parts for the constraint manifold to
/// attract; `σ(τ) = (τ + γ)²` is `α1 = 2γ`, `α0 = γ²` (eq. 2.2–2.3).
///
/// The argument order follows the paper's tables: `Baum(12, 70)` of Tables 6.1–6.4 is
/// `Baumgarte::new(12.0, 70.0)`, i.e. `α1 = 12`, `α0 = 70`; `Baum(0, 0)` is
/// [`Baumgarte::NONE`], plain index reduction.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Baumgarte {
    alpha1: f64,
    alpha0: f64,
}

impl Baumgarte {
    /// No stabilization term: `g̈ = 0`, the paper's `Baum(0, 0)`.
    pub const NONE: Baumgarte = Baumgarte {
        alpha1: 0.0,
        alpha0: 0.0,
    };

    /// Creates `Baum(α1, α0)`; fails with `BadParameter` unless both are finite and
    /// non-negative (negative values make the constraint manifold repel).
    pub fn new(alpha1: f64, alpha0: f64) -> Result<Self, StepError> {
        for (name, value) in [("alpha1", alpha1), ("alpha0", alpha0)] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(StepError::BadParameter {
                    name,
                    value,
                    requirement: "must be finite and non-negative",
                });
            }
        }
        Ok(Baumgarte { alpha1, alpha0 })
    }

    /// Creates the critically damped choice `σ(τ) = (τ + γ)²` of eq. 2.2: `α1 = 2γ`,
    /// `α0 = γ²`; fails with `BadParameter` unless `γ` is finite and non-negative.
    pub fn critically_damped(gamma: f64) -> Result<Self, StepError> {
        if !(gamma.is_finite() && gamma >= 0.0) {
            return Err(StepError::BadParameter {
                name: "gamma",
                value: gamma,
                requirement: "must be finite and non-negative",
            });
        }
        Baumgarte::new(2.0 * gamma, gamma * gamma)
    }

    /// Returns `α1`, the coefficient of `ġ`.
    pub fn alpha1(&self) -> f64 {
        self.alpha1
    }

    /// Returns `α0`, the coefficient of `g`.
    pub fn alpha0(&self) -> f64 {
        self.alpha0
    }

    /// Returns whether both parameters vanish (plain index reduction).
    pub fn is_none(&self) -> bool {
        self.alpha1 == 0.0 && self.alpha0 == 0.0
    }
}

/// The accelerations and multipliers of the index-1 system at one state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConstrainedAcceleration<const N: usize, const M: usize> {
    /// The accelerations `v̇ = q̈`.
    pub acceleration: SVector<f64, N>,
    /// The multipliers `λ`, with the sign of eq. 1.1: the constraint force is `−Gᵀ λ`.
    pub multipliers: SVector<f64, M>,
}

/// Solves the index-1 system of Ascher et al. (1995) eq. 1.5 at `state`, with Baumgarte's term
/// (eq. 2.1; pass [`Baumgarte::NONE`] for plain index reduction).
///
/// ```text
/// [ M   Gᵀ ] [ v̇ ]   [ f ]        f = −∇V + ∂T/∂q − Ṁ v + f_a(q, v, t)
/// [ G   0  ] [ λ  ] = [ φ ],      φ = −(G v)_q v − 2 G_t v − g_tt − α1 (G v + g_t) − α0 g
/// ```
///
/// with `M = M(q)`, `G = G(q, t)`. The force `f` of eq. 1.1 is the Euler–Lagrange force of
/// `T = ½ vᵀ M(q) v`: `Ṁ v = Qᵀ v` with `Q = ∂²T/∂q∂v`
/// ([`InertiaGradient::kinetic_hessians`]); both velocity terms are skipped when
/// `Inertia::CONSTANT_MASS` holds. `f_a` is [`AppliedForces::applied_force`]. The system is
/// solved through the Schur complement (both factors root-free Cholesky, no heap):
///
/// ```text
/// (G M⁻¹ Gᵀ) λ = G M⁻¹ f − φ,    v̇ = M⁻¹ (f − Gᵀ λ)
/// ```
///
/// A mass matrix or Schur complement that is not positive definite (rank-deficient `G`) is
/// [`StepError::Singular`]; a non-finite model output is [`StepError::NonFinite`].
pub fn constrained_acceleration<Model, const N: usize, const M: usize>(
    model: &Model,
    state: &State<N>,
    baumgarte: Baumgarte,
) -> Result<ConstrainedAcceleration<N, M>, StepError>
where
    Model: InertiaGradient<N> + Potential<N> + HolonomicKinematics<N, M> + AppliedForces<N>,
{
    check_state(state)?;
    let mut evaluator = IndexOne::new(baumgarte);
    evaluator.evaluate(model, &state.q, &state.v, state.t, state.t)
}

/// The index-1 right-hand side with its mass-factor cache and a factorization counter.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IndexOne<const N: usize> {
    pub(crate) baumgarte: Baumgarte,
    pub(crate) mass: MassFactor<N>,
    /// Factorizations since the counter was last taken.
    pub(crate) factorizations: u32,
    /// Evaluations since the counter was last taken.
    pub(crate) evaluations: u32,
}

impl<const N: usize> IndexOne<N> {
    pub(crate) fn new(baumgarte: Baumgarte) -> Self {
        IndexOne {
            baumgarte,
            mass: MassFactor::default(),
            factorizations: 0,
            evaluations: 0,
        }
    }

    /// Returns and resets the factorization counter.
    pub(crate) fn take_factorizations(&mut self) -> u32 {
        std::mem::take(&mut self.factorizations)
    }

    /// Returns and resets the evaluation counter.
    pub(crate) fn take_evaluations(&mut self) -> u32 {
        std::mem::take(&mut self.evaluations)
    }

    /// Solves eq. 1.5 (+ eq. 2.1) at `(q, v, t)`; `t_err` is the time reported in errors.
    pub(crate) fn evaluate<Model, const M: usize>(
        &mut self,
        model: &Model,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        t: f64,
        t_err: f64,
    ) -> Result<ConstrainedAcceleration<N, M>, StepError>
    where
        Model: InertiaGradient<N> + Potential<N> + HolonomicKinematics<N, M> + AppliedForces<N>,
    {
        self.evaluations += 1;
        // f = −∇V + f_a (+ ∂T/∂q − Qᵀ v).
        let mut grad = SVector::<f64, N>::zeros();
        model.potential_gradient(q, &mut grad);
        let mut force = SVector::<f64, N>::zeros();
        model.applied_force(q, v, t, &mut force);
        force -= grad;
        if !Model::CONSTANT_MASS {
            let mut dt_dq = SVector::<f64, N>::zeros();
            model.kinetic_gradient(q, v, &mut dt_dq);
            let mut qq = SMatrix::<f64, N, N>::zeros();
            let mut qv = SMatrix::<f64, N, N>::zeros();
            model.kinetic_hessians(q, v, &mut qq, &mut qv);
            force += dt_dq - qv.tr_mul(v);
        }
        check_finite(&force, "force", t_err)?;

        // φ = −bias − α1 (G v + g_t) − α0 g.
        let mut jac = SMatrix::<f64, M, N>::zeros();
        let mut phi = SVector::<f64, M>::zeros();
        model.constraint_acceleration_bias(q, v, t, &mut phi);
        phi = -phi;
        if self.baumgarte.is_none() {
            model.constraint_jacobian(q, t, &mut jac);
        } else {
            let mut g = SVector::<f64, M>::zeros();
            let mut g_t = SVector::<f64, M>::zeros();
            model.constraints_and_jacobian(q, t, &mut g, &mut jac);
            model.constraint_time_derivative(q, t, &mut g_t);
            let g_dot = jac * v + g_t;
            phi -= g_dot * self.baumgarte.alpha1 + g * self.baumgarte.alpha0;
        }
        check_finite(&phi, "constraint acceleration bias", t_err)?;
        check_finite(&jac, "constraint jacobian", t_err)?;

        let mut m = SMatrix::<f64, N, N>::zeros();
        model.mass_matrix(q, &mut m);
        let (mass, count) = self.mass.factor(&m, Model::CONSTANT_MASS, t_err)?;
        self.factorizations += count;
        let mut minv_jac_t = jac.transpose();
        mass.solve_in_place(&mut minv_jac_t);
        let free = mass.solve(&force);
        let wrap = StepError::linear_algebra(SCHUR, t_err);
        let mut schur = factored::<Option<Cholesky<M>>>(&(jac * minv_jac_t)).map_err(&wrap)?;
        self.factorizations += 1;
        let multipliers = solve_vector(&mut schur, &(jac * free - phi)).map_err(&wrap)?;
        let acceleration = free - minv_jac_t * multipliers;
        check_finite(&multipliers, "multipliers", t_err)?;
        check_finite(&acceleration, "acceleration", t_err)?;
        Ok(ConstrainedAcceleration {
            acceleration,
            multipliers,
        })
    }
}
