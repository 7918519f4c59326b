//! SPOOK: the regularized and stabilized linearly implicit stepper of Lacoursière (2007).

use nalgebra::{SMatrix, SVector};

use super::{check_finite, check_state, check_step_size, MassFactor};
use crate::error::StepError;
use crate::integrators::{Integrator, StepReport};
use crate::linalg::Cholesky;
use crate::model::{Holonomic, Inertia, Potential, Regularization, Relaxation};
use crate::state::State;

/// SPOOK for `M` holonomic constraints on `N` coordinates: one linear solve per step.
///
/// From C. Lacoursière, *Regularized, Stabilized, Variational Methods for Multibodies* (SIMS
/// 2007), §4, without nonholonomic rows and extra forces. Each constraint row `i` has a compliance
/// `εᵢ > 0` and a relaxation time `τᵢ > 0` (eq. 27):
///
/// ```text
/// Σ = (4/h²) diag(εᵢ / (1 + 4τᵢ/h)),    Υ = diag(1 / (1 + 4τᵢ/h))
/// ```
///
/// Linearizing the constraints (eq. 28), the step from `(q_k, v_k)` solves (eq. 29)
///
/// ```text
/// [ M   −Gᵀ ] [ v_{k+1} ]   [ r ]      r = M v_k − h ∇V(q_k)
/// [ G    Σ  ] [    λ    ] = [ s ],     s = −(4/h) Υ g(q_k) + Υ G v_k
/// ```
///
/// (the paper's right-hand side `t`, renamed here to keep `t` for time), with `M`, `G` evaluated
/// at `q_k`, followed by `q_{k+1} = q_k + h v_{k+1}` (the discretization
/// of eq. 12). The system is solved through the Schur complement, which is symmetric positive
/// definite as soon as `Σ > 0`, even when `G` is rank deficient (redundant constraints; the
/// scheme is then still linearly stable, Theorem 5.1):
///
/// ```text
/// S = G M⁻¹ Gᵀ + Σ,    λ = S⁻¹ (s − G M⁻¹ r),    v_{k+1} = M⁻¹ (r + Gᵀ λ)
/// ```
///
/// The defaults are each row's [`Holonomic::regularization`] (Lacoursière's `ε = 1e-8`,
/// `τ = 2h`), overridable per row. When `Inertia::CONSTANT_MASS` holds, the factor of `M` is
/// reused while `M` is unchanged. Constraints are evaluated at `t_k`; an explicit time
/// dependence of `g` (a `g_t` term) is not part of eq. 29 and is ignored.
#[derive(Clone, Copy, Debug)]
pub struct Spook<const N: usize, const M: usize> {
    h: f64,
    overrides: [Option<Regularization>; M],
    multipliers: SVector<f64, M>,
    mass: MassFactor<N>,
}

impl<const N: usize, const M: usize> Spook<N, M> {
    /// Creates a SPOOK stepper with step size `h` and the model's regularization on every row.
    pub fn new(h: f64) -> Result<Self, StepError> {
        Ok(Spook {
            h: check_step_size(h)?,
            overrides: [None; M],
            multipliers: SVector::zeros(),
            mass: MassFactor::default(),
        })
    }

    /// Overrides the regularization of constraint row `row`.
    ///
    /// Fails with `BadParameter` if `row ≥ M`, or if `ε` or `τ` is negative or not finite.
    pub fn with_regularization(
        mut self,
        row: usize,
        regularization: Regularization,
    ) -> Result<Self, StepError> {
        if row >= M {
            return Err(StepError::BadParameter {
                name: "row",
                value: row as f64,
                requirement: "must be less than the number of constraint rows",
            });
        }
        check_regularization(&regularization)?;
        self.overrides[row] = Some(regularization);
        Ok(self)
    }

    /// Overrides the regularization of every constraint row.
    pub fn with_regularizations(
        mut self,
        regularizations: [Regularization; M],
    ) -> Result<Self, StepError> {
        for (row, regularization) in regularizations.into_iter().enumerate() {
            self = self.with_regularization(row, regularization)?;
        }
        Ok(self)
    }

    /// Returns the step size `h`.
    pub fn step_size(&self) -> f64 {
        self.h
    }

    /// Returns the multipliers `λ` of the last successful step, as in eq. 29.
    ///
    /// `λ` absorbs one factor of `h` (§5): `Gᵀλ` is the constraint impulse over the step, so
    /// the constraint force is `Gᵀλ / h`, with the sign of `M q̈ = −∇V + Gᵀ λ/h`.
    pub fn multipliers(&self) -> &SVector<f64, M> {
        &self.multipliers
    }

    /// Returns the regularization used for `row`: the override, or else the model's default.
    fn regularization<Model: Holonomic<N, M>>(&self, model: &Model, row: usize) -> Regularization {
        self.overrides[row].unwrap_or_else(|| model.regularization(row))
    }
}

/// Returns `BadParameter` unless `ε` and `τ` are finite and non-negative.
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
    Ok(())
}

impl<Model, const N: usize, const M: usize> Integrator<Model, N> for Spook<N, M>
where
    Model: Inertia<N> + Potential<N> + Holonomic<N, M>,
{
    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError> {
        check_state(state)?;
        let (h, t, q, v) = (self.h, state.t, &state.q, &state.v);

        let mut mass = SMatrix::<f64, N, N>::zeros();
        model.mass_matrix(q, &mut mass);
        let mut grad = SVector::<f64, N>::zeros();
        model.potential_gradient(q, &mut grad);
        check_finite(&grad, "gradient", t)?;
        let mut g = SVector::<f64, M>::zeros();
        let mut jac = SMatrix::<f64, M, N>::zeros();
        model.constraints_and_jacobian(q, t, &mut g, &mut jac);
        check_finite(&g, "constraints", t)?;
        check_finite(&jac, "constraint jacobian", t)?;

        // Σ and Υ of eq. 27, and the right-hand side s of eq. 29.
        let jac_v = jac * v;
        let mut sigma = SVector::<f64, M>::zeros();
        let mut s = SVector::<f64, M>::zeros();
        for row in 0..M {
            let regularization = self.regularization(model, row);
            check_regularization(&regularization)?;
            let upsilon = 1.0 / (1.0 + 4.0 * regularization.tau.at_step(h) / h);
            sigma[row] = 4.0 / (h * h) * regularization.epsilon * upsilon;
            s[row] = upsilon * (jac_v[row] - 4.0 / h * g[row]);
        }

        let r = mass * v - grad * h;
        let (v_next, lambda, factorizations) =
            match self.mass.factor(&mass, Model::CONSTANT_MASS, t) {
                Ok((mass_factor, mass_factorizations)) => {
                    // Schur complement S = G M⁻¹ Gᵀ + Σ, SPD for any G once Σ > 0.
                    let mut minv_jac_t = jac.transpose();
                    mass_factor.solve_in_place(&mut minv_jac_t);
                    let mut schur = jac * minv_jac_t;
                    for row in 0..M {
                        schur[(row, row)] += sigma[row];
                    }
                    let schur_factor =
                        Cholesky::try_new(&schur, "Schur complement G M⁻¹ Gᵀ + Σ", t)?;
                    let minv_r = mass_factor.solve(&r);
                    let lambda = schur_factor.solve(&(s - jac * minv_r));
                    (
                        minv_r + minv_jac_t * lambda,
                        lambda,
                        mass_factorizations + 1,
                    )
                }
                Err(StepError::Singular { .. }) => {
                    // A singular M (massless coordinates, Kinon–Betsch §6.1) has no M⁻¹: eliminate
                    // λ = Σ⁻¹ (s − G v) instead, which leaves (M + Gᵀ Σ⁻¹ G) v = r + Gᵀ Σ⁻¹ s,
                    // positive definite when the constraints fix every massless direction.
                    let mut sigma_inv_jac = jac;
                    let mut sigma_inv_s = s;
                    for row in 0..M {
                        if sigma[row] <= 0.0 || sigma[row].is_nan() {
                            return Err(StepError::Singular {
                                matrix: "mass matrix (and ε = 0, so no regularized form exists)",
                                t,
                            });
                        }
                        sigma_inv_jac.row_mut(row).scale_mut(1.0 / sigma[row]);
                        sigma_inv_s[row] /= sigma[row];
                    }
                    let primal = mass + jac.transpose() * sigma_inv_jac;
                    let factor =
                        Cholesky::try_new(&primal, "M + Gᵀ Σ⁻¹ G (singular mass matrix)", t)?;
                    let v_next = factor.solve(&(r + jac.transpose() * sigma_inv_s));
                    let lambda = sigma_inv_s - sigma_inv_jac * v_next;
                    (v_next, lambda, 1)
                }
                Err(other) => return Err(other),
            };
        let q_next = q + v_next * h;
        check_finite(&lambda, "multipliers", t)?;
        check_finite(&v_next, "v", t)?;
        check_finite(&q_next, "q", t)?;

        self.multipliers = lambda;
        state.q = q_next;
        state.v = v_next;
        state.t = t + h;
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
