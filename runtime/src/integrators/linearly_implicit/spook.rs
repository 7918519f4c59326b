//! SPOOK: the regularized and stabilized linearly implicit stepper of Lacoursière (2007).

use nalgebra::{SMatrix, SVector};

use super::{check_finite, check_state, check_step_size, MassFactor};
use crate::error::StepError;
use crate::integrators::{DivergenceGuard, Integrator, StepReport};
use crate::linalg::Cholesky;
use crate::model::{
    AppliedForces, Holonomic, Inertia, Nonholonomic, Potential, Regularization, Relaxation,
};
use crate::state::State;

/// SPOOK for `M` holonomic and `K` nonholonomic constraints on `N` coordinates: one linear
/// solve per step.
///
/// From C. Lacoursière, *Regularized, Stabilized, Variational Methods for Multibodies* (SIMS
/// 2007), §3–4. Each holonomic row `i` has a compliance `εᵢ ≥ 0` and a relaxation time
/// `τᵢ ≥ 0`, each nonholonomic row `j` a compliance `γⱼ ≥ 0` (eq. 27):
///
/// ```text
/// Γ = (1/h) diag(γⱼ),    Σ = (4/h²) diag(εᵢ / (1 + 4τᵢ/h)),    Υ = diag(1 / (1 + 4τᵢ/h))
/// ```
///
/// Linearizing the holonomic constraints (eq. 28), the step from `(q_k, v_k)` solves (eq. 29)
///
/// ```text
/// [ M   −Aᵀ  −Gᵀ ] [ v_{k+1} ]   [ r ]      r = M v_k − h ∇V(q_k) + h f(q_k, v_k, t_k)
/// [ A    Γ    0  ] [    α    ] = [ s ],     s = w(t_k)
/// [ G    0    Σ  ] [    λ    ]   [ t ]      t = −(4/h) Υ g(q_k) + Υ G v_k
/// ```
///
/// with `M`, `A`, `G` evaluated at `q_k`, followed by `q_{k+1} = q_k + h v_{k+1}` (the
/// discretization of eq. 12). Here `A(q) v = w(t)` are the nonholonomic rows
/// ([`Nonholonomic`]; `Γα + A v_{k+1} = w` is eq. 24 with its driving term, relaxed by `γ` as
/// the Rayleigh function of eq. 18–19 prescribes) and `f` is the model's non-potential force
/// ([`AppliedForces`]: dissipation `−∂R/∂v` plus the `forces` section), taken explicitly at the
/// start of the step as eq. 29's `h f⁽⁺⁾(k−1, k)`. A model without nonholonomic rows has
/// `K = 0`, the default, and one without forces the zero `AppliedForces`; `mechanism!` emits
/// both, so a model's rows and forces are never dropped silently.
///
/// The system is solved through the Schur complement of eq. 30, block by block:
///
/// ```text
/// S_GG = G M⁻¹ Gᵀ + Σ,   S_AA = A M⁻¹ Aᵀ + Γ,   S_AG = A M⁻¹ Gᵀ
/// (S_AA − S_AG S_GG⁻¹ S_AGᵀ) α = (s − A M⁻¹ r) − S_AG S_GG⁻¹ (t − G M⁻¹ r)
/// λ = S_GG⁻¹ (t − G M⁻¹ r − S_AGᵀ α),    v_{k+1} = M⁻¹ (r + Aᵀ α + Gᵀ λ)
/// ```
///
/// Both factored matrices are symmetric positive definite as soon as `Σ > 0` and `Γ > 0`, even
/// when `G` or `A` is rank deficient (redundant constraints; the scheme is then still linearly
/// stable, Theorem 5.1). With `ε = 0` or `γ = 0` (ideal rows) the rows must be independent, or
/// the step fails with [`StepError::Singular`].
///
/// # Parameters
///
/// Theorem 5.1 proves linear stability for `ε > 0` and `τ > 0`. Eq. 34 also covers the edges:
/// with `ε = 0` and `τ > 0` the eigenvalues of the violation recurrence are inside the unit
/// circle (`τ = 2h`: a double eigenvalue `1/3`), so an ideal row with relaxation is stable;
/// with `τ = 0` they lie on the unit circle (violations are not damped), and with `ε = τ = 0`
/// they are a double `−1`, so violations grow linearly from round-off. That last combination is
/// therefore refused with [`StepError::BadParameter`] (by [`Spook::with_regularization`], and
/// at the step for a model's default): it is not "the ideal constraint" of SHAKE/RATTLE, whose
/// position row is `g_{k+1} = 0`.
///
/// A step whose holonomic residual explodes (e.g. `h` far beyond the time scale of the motion)
/// fails with [`StepError::Diverged`] rather than return `Ok`; see [`DivergenceGuard`] and
/// [`Spook::with_divergence_guard`].
///
/// The defaults are each row's [`Holonomic::regularization`] (Lacoursière's `ε = 1e-8`,
/// `τ = 2h`) and [`Nonholonomic::nonholonomic_compliance`] (`γ = 1e-8`), overridable per row.
/// The mass matrix must be constant (`Inertia::CONSTANT_MASS`; a configuration-dependent `M`
/// is left to future work in §4 of the paper, and the step has no velocity terms
/// `∂T/∂q − Ṁv`), else the step fails with [`StepError::Unsupported`]. Its factor is reused
/// while `M` is unchanged; a singular `M` (massless coordinates) is handled by eliminating the
/// multipliers instead, which needs `Σ > 0` and `Γ > 0`. Holonomic constraints are evaluated at `t_k`; an explicit time
/// dependence of `g` (a `g_t` term) is not part of eq. 29 and is ignored, which is why
/// `mechanism!` refuses SPOOK for time-dependent holonomic constraints.
///
/// # Example
///
/// A unit mass in the plane whose velocity along `x` is driven, `ẋ = cos t` (a nonholonomic
/// row with `A = (1, 0)` and `w(t) = cos t`), so that `x(t) = sin t`:
///
/// ```
/// use mechanism_runtime::{
///     AppliedForces, Holonomic, Inertia, Integrator, Nonholonomic, Potential, SMatrix,
///     SVector, Spook, State,
/// };
/// struct Driven;
/// impl Inertia<2> for Driven {
///     const CONSTANT_MASS: bool = true;
///     fn mass_matrix(&self, _q: &SVector<f64, 2>, m: &mut SMatrix<f64, 2, 2>) {
///         *m = SMatrix::identity();
///     }
/// }
/// impl Potential<2> for Driven {
///     fn potential(&self, _q: &SVector<f64, 2>) -> f64 { 0.0 }
///     fn potential_gradient(&self, _q: &SVector<f64, 2>, g: &mut SVector<f64, 2>) {
///         g.fill(0.0);
///     }
/// }
/// impl Holonomic<2, 0> for Driven {
///     const CONSTRAINTS: [&'static str; 0] = [];
///     fn constraints(&self, _: &SVector<f64, 2>, _: f64, _: &mut SVector<f64, 0>) {}
///     fn constraint_jacobian(&self, _: &SVector<f64, 2>, _: f64, _: &mut SMatrix<f64, 0, 2>) {}
/// }
/// impl Nonholonomic<2, 1> for Driven {
///     const NONHOLONOMIC: [&'static str; 1] = ["drive"];
///     fn nonholonomic_matrix(&self, _q: &SVector<f64, 2>, a: &mut SMatrix<f64, 1, 2>) {
///         *a = SMatrix::<f64, 1, 2>::new(1.0, 0.0);
///     }
///     fn nonholonomic_drive(&self, t: f64, w: &mut SVector<f64, 1>) {
///         w[0] = t.cos();
///     }
/// }
/// impl AppliedForces<2> for Driven {}
///
/// let mut spook = Spook::<2, 0, 1>::new(1e-3)?;
/// let mut state = State::new(0.0, [0.0, 0.0], [1.0, 0.0]);
/// for _ in 0..1000 {
///     spook.step(&Driven, &mut state)?;
/// }
/// assert!((state.q[0] - 1f64.sin()).abs() < 1e-3);
/// # Ok::<(), mechanism_runtime::StepError>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Spook<const N: usize, const M: usize, const K: usize = 0> {
    h: f64,
    overrides: [Option<Regularization>; M],
    compliance_overrides: [Option<f64>; K],
    multipliers: SVector<f64, M>,
    nonholonomic_multipliers: SVector<f64, K>,
    mass: MassFactor<N>,
    guard: DivergenceGuard,
}

impl<const N: usize, const M: usize, const K: usize> Spook<N, M, K> {
    /// Creates a SPOOK stepper with step size `h` and the model's regularization on every row.
    pub fn new(h: f64) -> Result<Self, StepError> {
        Ok(Spook {
            h: check_step_size(h)?,
            overrides: [None; M],
            compliance_overrides: [None; K],
            multipliers: SVector::zeros(),
            nonholonomic_multipliers: SVector::zeros(),
            mass: MassFactor::default(),
            guard: DivergenceGuard::default(),
        })
    }

    /// Replaces the divergence guard (default: [`DivergenceGuard::default`]), which rejects a
    /// step whose constraint residual exploded with [`StepError::Diverged`].
    pub fn with_divergence_guard(mut self, guard: DivergenceGuard) -> Self {
        self.guard = guard;
        self
    }

    /// Overrides the regularization of holonomic row `row`.
    ///
    /// Fails with `BadParameter` if `row ≥ M`, if `ε` or `τ` is negative or not finite, or if
    /// both are zero (see "Parameters" on [`Spook`]).
    pub fn with_regularization(
        mut self,
        row: usize,
        regularization: Regularization,
    ) -> Result<Self, StepError> {
        if row >= M {
            return Err(StepError::BadParameter {
                name: "row",
                value: row as f64,
                requirement: "must be less than the number of holonomic constraint rows",
            });
        }
        check_regularization(&regularization)?;
        self.overrides[row] = Some(regularization);
        Ok(self)
    }

    /// Overrides the regularization of every holonomic row.
    pub fn with_regularizations(
        mut self,
        regularizations: [Regularization; M],
    ) -> Result<Self, StepError> {
        for (row, regularization) in regularizations.into_iter().enumerate() {
            self = self.with_regularization(row, regularization)?;
        }
        Ok(self)
    }

    /// Overrides the compliance `γ` of nonholonomic row `row`.
    ///
    /// Fails with `BadParameter` if `row ≥ K`, or if `γ` is negative or not finite.
    pub fn with_nonholonomic_compliance(
        mut self,
        row: usize,
        gamma: f64,
    ) -> Result<Self, StepError> {
        if row >= K {
            return Err(StepError::BadParameter {
                name: "row",
                value: row as f64,
                requirement: "must be less than the number of nonholonomic rows",
            });
        }
        check_gamma(gamma)?;
        self.compliance_overrides[row] = Some(gamma);
        Ok(self)
    }

    /// Returns the step size `h`.
    pub fn step_size(&self) -> f64 {
        self.h
    }

    /// Returns the holonomic multipliers `λ` of the last successful step, as in eq. 29.
    ///
    /// `λ` absorbs one factor of `h` (§5): `Gᵀλ` is the constraint impulse over the step, so
    /// the constraint force is `Gᵀλ / h`, with the sign of `M q̈ = −∇V + f + Gᵀλ/h + Aᵀα/h`.
    ///
    /// **Accuracy.** `λ/h` is a **first-order** approximation of the exact multiplier over the
    /// step `[t_k, t_{k+1}]`: its error is `O(h)` (measured against the pendulum's rod tension
    /// at `t_{k+1}` in `tests/multipliers.rs`), on top of the model change the regularization
    /// makes (`ε`, `τ`). At coarse steps the stabilization's transient (`τ = 2h`) still shows.
    pub fn multipliers(&self) -> &SVector<f64, M> {
        &self.multipliers
    }

    /// Returns the nonholonomic multipliers `α` of the last successful step (eq. 24, 29): `Aᵀα`
    /// is the impulse of the nonholonomic rows over the step.
    pub fn nonholonomic_multipliers(&self) -> &SVector<f64, K> {
        &self.nonholonomic_multipliers
    }

    /// Returns the regularization used for `row`: the override, or else the model's default.
    fn regularization<Model: Holonomic<N, M>>(&self, model: &Model, row: usize) -> Regularization {
        self.overrides[row].unwrap_or_else(|| model.regularization(row))
    }

    /// Returns the compliance `γ` used for nonholonomic `row`.
    fn compliance<Model: Nonholonomic<N, K>>(&self, model: &Model, row: usize) -> f64 {
        self.compliance_overrides[row].unwrap_or_else(|| model.nonholonomic_compliance(row))
    }
}

/// Returns `BadParameter` unless `γ` is finite and non-negative.
fn check_gamma(gamma: f64) -> Result<(), StepError> {
    if gamma.is_finite() && gamma >= 0.0 {
        Ok(())
    } else {
        Err(StepError::BadParameter {
            name: "gamma",
            value: gamma,
            requirement: "must be finite and non-negative",
        })
    }
}

/// Why SPOOK refuses `ε = 0` together with `τ = 0` (see [`Spook`], "Parameters").
const IDEAL_ROW: &str = "must be positive when epsilon = 0: with ε = τ = 0 the constraint \
    row of eq. 29 is ¼(g_{k+1} + 2g_k + g_{k−1}) = 0, whose violations have the double \
    eigenvalue −1 (eq. 34 with θ = 0, ψ = 1) and grow without bound; use τ > 0 (the default \
    is 2h) or ε > 0, or SHAKE/RATTLE for a constraint held exactly";

/// Returns `BadParameter` unless `ε` and `τ` are finite and non-negative and not both zero.
fn check_regularization(regularization: &Regularization) -> Result<(), StepError> {
    let epsilon = regularization.epsilon;
    if !(epsilon.is_finite() && epsilon >= 0.0) {
        return Err(StepError::BadParameter {
            name: "epsilon",
            value: epsilon,
            requirement: "must be finite and non-negative",
        });
    }
    let (name, tau) = match regularization.tau {
        Relaxation::Seconds(tau) => ("tau", tau),
        Relaxation::Steps(k) => ("tau / h", k),
    };
    if !(tau.is_finite() && tau >= 0.0) {
        return Err(StepError::BadParameter {
            name,
            value: tau,
            requirement: "must be finite and non-negative",
        });
    }
    if epsilon == 0.0 && tau == 0.0 {
        return Err(StepError::BadParameter {
            name,
            value: tau,
            requirement: IDEAL_ROW,
        });
    }
    Ok(())
}

/// The unknowns of eq. 29.
struct Solution<const N: usize, const M: usize, const K: usize> {
    /// `v_{k+1}`.
    v: SVector<f64, N>,
    /// The nonholonomic multipliers `α`.
    alpha: SVector<f64, K>,
    /// The holonomic multipliers `λ`.
    lambda: SVector<f64, M>,
}

/// The linear system of eq. 29 at one step, assembled but not yet solved.
struct StepSystem<const N: usize, const M: usize, const K: usize> {
    /// `M(q_k)`.
    mass: SMatrix<f64, N, N>,
    /// `G(q_k)`.
    jac: SMatrix<f64, M, N>,
    /// `A(q_k)`.
    nonholonomic: SMatrix<f64, K, N>,
    /// The diagonal of `Σ`.
    sigma: SVector<f64, M>,
    /// The diagonal of `Γ`.
    gamma: SVector<f64, K>,
    /// `r = M v_k − h ∇V + h f`.
    r: SVector<f64, N>,
    /// `s = w(t_k)`.
    s: SVector<f64, K>,
    /// `t = −(4/h) Υ g + Υ G v_k`.
    t: SVector<f64, M>,
}

impl<const N: usize, const M: usize, const K: usize> StepSystem<N, M, K> {
    /// Solves through the Schur complements (`M` invertible): returns `(v_{k+1}, α, λ)` and the
    /// number of factorizations.
    fn solve_schur(
        &self,
        mass_factor: &Cholesky<N>,
        time: f64,
    ) -> Result<(Solution<N, M, K>, u32), StepError> {
        let (jac, a) = (&self.jac, &self.nonholonomic);
        let mut minv_jac_t = jac.transpose();
        mass_factor.solve_in_place(&mut minv_jac_t);
        let mut minv_a_t = a.transpose();
        mass_factor.solve_in_place(&mut minv_a_t);
        let minv_r = mass_factor.solve(&self.r);

        let mut s_gg = jac * minv_jac_t;
        for row in 0..M {
            s_gg[(row, row)] += self.sigma[row];
        }
        let s_gg = Cholesky::try_new(&s_gg, "Schur complement G M⁻¹ Gᵀ + Σ", time)?;
        let b_g = self.t - jac * minv_r;
        let b_a = self.s - a * minv_r;
        if K == 0 {
            let lambda = s_gg.solve(&b_g);
            let v = minv_r + minv_jac_t * lambda;
            let alpha = SVector::zeros();
            return Ok((Solution { v, alpha, lambda }, 1));
        }
        // Eliminate λ, then solve the reduced system for α.
        let s_ag = a * minv_jac_t;
        let mut s_gg_inv_s_ga = s_ag.transpose();
        s_gg.solve_in_place(&mut s_gg_inv_s_ga);
        let mut reduced = a * minv_a_t - s_ag * s_gg_inv_s_ga;
        for row in 0..K {
            reduced[(row, row)] += self.gamma[row];
        }
        let reduced = Cholesky::try_new(
            &reduced,
            "Schur complement A M⁻¹ Aᵀ + Γ − S_AG S_GG⁻¹ S_GA",
            time,
        )?;
        let alpha = reduced.solve(&(b_a - s_ag * s_gg.solve(&b_g)));
        let lambda = s_gg.solve(&(b_g - s_ag.transpose() * alpha));
        let v = minv_r + minv_a_t * alpha + minv_jac_t * lambda;
        Ok((Solution { v, alpha, lambda }, if M == 0 { 1 } else { 2 }))
    }

    /// Solves with a singular `M` (massless coordinates, Kinon–Betsch §6.1) by eliminating the
    /// multipliers, `λ = Σ⁻¹ (t − G v)` and `α = Γ⁻¹ (s − A v)`, which leaves
    /// `(M + Gᵀ Σ⁻¹ G + Aᵀ Γ⁻¹ A) v = r + Gᵀ Σ⁻¹ t + Aᵀ Γ⁻¹ s`: positive definite when the
    /// constraints fix every massless direction, and only defined for `Σ > 0`, `Γ > 0`.
    fn solve_primal(&self, time: f64) -> Result<Solution<N, M, K>, StepError> {
        let ideal = StepError::Singular {
            matrix: "mass matrix (and an ideal row, ε = 0 or γ = 0, so no regularized form \
                     exists)",
            t: time,
        };
        let mut sigma_inv_jac = self.jac;
        let mut sigma_inv_t = self.t;
        for row in 0..M {
            let sigma = self.sigma[row];
            if sigma <= 0.0 {
                return Err(ideal);
            }
            sigma_inv_jac.row_mut(row).scale_mut(1.0 / sigma);
            sigma_inv_t[row] /= sigma;
        }
        let mut gamma_inv_a = self.nonholonomic;
        let mut gamma_inv_s = self.s;
        for row in 0..K {
            let gamma = self.gamma[row];
            if gamma <= 0.0 {
                return Err(ideal);
            }
            gamma_inv_a.row_mut(row).scale_mut(1.0 / gamma);
            gamma_inv_s[row] /= gamma;
        }
        let primal = self.mass
            + self.jac.transpose() * sigma_inv_jac
            + self.nonholonomic.transpose() * gamma_inv_a;
        let factor = Cholesky::try_new(
            &primal,
            "M + Gᵀ Σ⁻¹ G + Aᵀ Γ⁻¹ A (singular mass matrix)",
            time,
        )?;
        let rhs = self.r
            + self.jac.transpose() * sigma_inv_t
            + self.nonholonomic.transpose() * gamma_inv_s;
        let v = factor.solve(&rhs);
        let lambda = sigma_inv_t - sigma_inv_jac * v;
        let alpha = gamma_inv_s - gamma_inv_a * v;
        Ok(Solution { v, alpha, lambda })
    }
}

impl<Model, const N: usize, const M: usize, const K: usize> Integrator<Model, N> for Spook<N, M, K>
where
    Model: Inertia<N> + Potential<N> + Holonomic<N, M> + Nonholonomic<N, K> + AppliedForces<N>,
{
    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError> {
        crate::integrators::checks::check_constant_mass::<Model, N>("SPOOK")?;
        crate::integrators::checks::check_parameters(model)?;
        check_state(state)?;
        let (h, time, q, v) = (self.h, state.t, &state.q, &state.v);

        let mut mass = SMatrix::<f64, N, N>::zeros();
        model.mass_matrix(q, &mut mass);
        let mut grad = SVector::<f64, N>::zeros();
        model.potential_gradient(q, &mut grad);
        check_finite(&grad, "gradient", time)?;
        let mut force = SVector::<f64, N>::zeros();
        model.applied_force(q, v, time, &mut force);
        check_finite(&force, "applied force", time)?;
        let mut g = SVector::<f64, M>::zeros();
        let mut jac = SMatrix::<f64, M, N>::zeros();
        model.constraints_and_jacobian(q, time, &mut g, &mut jac);
        check_finite(&g, "constraints", time)?;
        check_finite(&jac, "constraint jacobian", time)?;
        let mut nonholonomic = SMatrix::<f64, K, N>::zeros();
        model.nonholonomic_matrix(q, &mut nonholonomic);
        check_finite(&nonholonomic, "nonholonomic matrix A", time)?;
        let mut s = SVector::<f64, K>::zeros();
        model.nonholonomic_drive(time, &mut s);
        check_finite(&s, "nonholonomic drive w", time)?;

        // Σ, Υ and Γ of eq. 27, and the right-hand side t of eq. 29.
        let jac_v = jac * v;
        let mut sigma = SVector::<f64, M>::zeros();
        let mut t = SVector::<f64, M>::zeros();
        for row in 0..M {
            let regularization = self.regularization(model, row);
            check_regularization(&regularization)?;
            let upsilon = 1.0 / (1.0 + 4.0 * regularization.tau.at_step(h) / h);
            sigma[row] = 4.0 / (h * h) * regularization.epsilon * upsilon;
            t[row] = upsilon * (jac_v[row] - 4.0 / h * g[row]);
        }
        let mut gamma = SVector::<f64, K>::zeros();
        for row in 0..K {
            let compliance = self.compliance(model, row);
            check_gamma(compliance)?;
            gamma[row] = compliance / h;
        }

        let system = StepSystem {
            mass,
            jac,
            nonholonomic,
            sigma,
            gamma,
            r: mass * v - grad * h + force * h,
            s,
            t,
        };
        let (solution, factorizations) = match self.mass.factor(&mass, Model::CONSTANT_MASS, time) {
            Ok((mass_factor, mass_factorizations)) => {
                let (solution, count) = system.solve_schur(&mass_factor, time)?;
                (solution, mass_factorizations + count)
            }
            Err(StepError::Singular { .. }) => (system.solve_primal(time)?, 1),
            Err(other) => return Err(other),
        };
        let Solution {
            v: v_next,
            alpha,
            lambda,
        } = solution;
        let q_next = q + v_next * h;
        check_finite(&lambda, "multipliers", time)?;
        check_finite(&alpha, "nonholonomic multipliers", time)?;
        check_finite(&v_next, "v", time)?;
        check_finite(&q_next, "q", time)?;
        let mut g_next = SVector::<f64, M>::zeros();
        model.constraints(&q_next, time + h, &mut g_next);
        self.guard.check(&g, &jac, &g_next, q, &q_next, time)?;

        self.multipliers = lambda;
        self.nonholonomic_multipliers = alpha;
        state.q = q_next;
        state.v = v_next;
        state.t = time + h;
        Ok(StepReport {
            factorizations,
            newton_iterations: 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_step_sizes_and_regularizations() {
        for h in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let err = Spook::<4, 2>::new(h).unwrap_err();
            assert!(matches!(err, StepError::BadStepSize { h: x } if x.to_bits() == h.to_bits()));
        }
        let spook = Spook::<4, 2>::new(0.01).unwrap();
        let err = spook
            .with_regularization(2, Regularization::default())
            .unwrap_err();
        assert!(matches!(err, StepError::BadParameter { name: "row", .. }));
        let negative = Regularization {
            epsilon: -1.0,
            tau: Relaxation::Steps(2.0),
        };
        let err = spook.with_regularization(0, negative).unwrap_err();
        assert!(matches!(
            err,
            StepError::BadParameter {
                name: "epsilon",
                ..
            }
        ));
    }
}
