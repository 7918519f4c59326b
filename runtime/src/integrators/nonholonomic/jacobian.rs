//! The exact Jacobians of a step of the two discrete Lagrange–d'Alembert integrators with a
//! constant mass matrix, [`DiscreteLagrangeDAlembert`] (Cuell 2005, eq. 31–32, 53–58) and
//! [`CortesMartinez`] (Lacoursière 2007, eq. 24 as `γ → 0`), in the state and in the model's
//! parameters.
//!
//! Both steps solve, with `F(x, v, t) = −∇V(x) + f_a(x, v, t)` and the reaction at the point
//! `x` where the force is evaluated,
//!
//! ```text
//! M v' = M v + h F(x, v, t_F) + A(x)ᵀ μ
//! A(q') v' = w(t_{k+1})
//! ```
//!
//! Cuell's with `x = q' = q + h v` (explicit, `t_F = t_{k+1}`), Cortés–Martínez's with `x = q`
//! and `q' = q + h v'` (`t_F = t_k`). By the implicit function theorem on these equations
//! (Cortés–Martínez's Newton iteration converged), in a direction `(δq, δv, δp)`, with
//! `E(μ) = ∂(Aᵀμ)/∂q` at `x`, `D(v') = ∂(A v')/∂q` at `q'`, `A_j = ∂A/∂p_j` and so on,
//!
//! ```text
//! M δv' = M δv + (h F_x + E(μ)) δx + h F_v δv + A(x)ᵀ δμ
//!         + Σ_j δp_j (M_j (v − v') + h ∂_j F + A_j(x)ᵀ μ)
//! A(q') δv' + D(v') δq' = Σ_j δp_j (∂_j w − A_j(q') v')
//! ```
//!
//! with `δx = δq' = δq + h δv` (Cuell) or `δx = δq`, `δq' = δq + h δv'` (Cortés–Martínez).
//! Writing `δv' = X + Y δμ`, `Y = M⁻¹ A(x)ᵀ`, with `X` the solution without `δμ`, leaves
//! `S δμ = r` for `S = (A(q') + θ h D(v')) Y` (`θ = 1` for Cortés–Martínez, whose `S` is its
//! converged Newton matrix; `θ = 0` for Cuell, whose `S` is its Schur complement
//! `A M⁻¹ Aᵀ`), one `K × K` LU factorization for all `2N + P` directions besides `M`'s
//! (cached across steps).

use nalgebra::{SMatrix, SVector};

use super::{constraint_matrix, CortesMartinez, DiscreteLagrangeDAlembert};
use crate::error::StepError;
use crate::integrators::checks::check_finite;
use crate::integrators::jacobian::step_and_differentiate;
use crate::integrators::mass_factor::MassFactor;
use crate::integrators::{
    DifferentiableInParameters, DifferentiableStep, Integrator, ParameterJacobian, StepJacobian,
    StepReport,
};
use crate::linalg::{Cholesky, Lu};
use crate::model::{
    AppliedForces, ConstantMass, NonholonomicDerivative, ParameterDerivatives, PotentialHessian,
};
use crate::state::State;

/// The name of the matrix `S` above, for errors.
const MULTIPLIER_MATRIX: &str = "(A(q') + θ h ∂(A v')/∂q) M⁻¹ A(x)ᵀ (discrete Lagrange–d'Alembert)";

/// What a discrete Lagrange–d'Alembert step exposes to its Jacobian.
trait LagrangeDAlembertStep<const N: usize, const K: usize>: Clone {
    /// Whether `q' = q + h v'` (Cortés–Martínez) rather than `q' = q + h v` (Cuell).
    const IMPLICIT_POSITION: bool;

    /// The step size, the mass factor cache and the multipliers of the last step.
    fn parts(&mut self) -> (f64, &mut MassFactor<N>, SVector<f64, K>);
}

impl<const N: usize, const K: usize> LagrangeDAlembertStep<N, K>
    for DiscreteLagrangeDAlembert<N, K>
{
    const IMPLICIT_POSITION: bool = false;

    fn parts(&mut self) -> (f64, &mut MassFactor<N>, SVector<f64, K>) {
        let (h, multipliers) = (self.step_size(), *self.multipliers());
        (h, self.mass_factor(), multipliers)
    }
}

impl<const N: usize, const K: usize> LagrangeDAlembertStep<N, K> for CortesMartinez<N, K> {
    const IMPLICIT_POSITION: bool = true;

    fn parts(&mut self) -> (f64, &mut MassFactor<N>, SVector<f64, K>) {
        let (h, multipliers) = (self.step_size(), *self.multipliers());
        (h, self.mass_factor(), multipliers)
    }
}

/// The step linearized at its solution: what every direction's solve needs.
struct Linearization<const N: usize, const K: usize> {
    h: f64,
    implicit_position: bool,
    mass: SMatrix<f64, N, N>,
    mass_factor: Cholesky<N>,
    /// `h F_x + E(μ)` at `x`.
    position_force: SMatrix<f64, N, N>,
    /// `h F_v` at `x`.
    velocity_force: SMatrix<f64, N, N>,
    /// `Y = M⁻¹ A(x)ᵀ`.
    reaction: SMatrix<f64, N, K>,
    /// `A(q')`.
    rows: SMatrix<f64, K, N>,
    /// `D(v') = ∂(A v')/∂q` at `q'`.
    rows_derivative: SMatrix<f64, K, N>,
    /// `S`, factored.
    multiplier_factor: Lu<K>,
}

impl<const N: usize, const K: usize> Linearization<N, K> {
    /// Linearizes the step `method` took from `before` to `after`, at the multipliers it kept.
    fn new<Model, S>(
        method: &mut S,
        model: &Model,
        before: &State<N>,
        after: &State<N>,
    ) -> Result<Self, StepError>
    where
        Model:
            ConstantMass<N> + PotentialHessian<N> + NonholonomicDerivative<N, K> + AppliedForces<N>,
        S: LagrangeDAlembertStep<N, K>,
    {
        let t = before.t;
        let (h, cache, mu) = method.parts();
        let (x, t_force) = force_point::<N, K, S>(before, after);
        let (mass_factor, _) = cache.factor_at(model, &x, t)?;
        let mut mass = SMatrix::<f64, N, N>::zeros();
        model.mass_matrix(&x, &mut mass);
        let mut hessian = SMatrix::<f64, N, N>::zeros();
        model.potential_hessian(&x, &mut hessian);
        check_finite(&hessian, "potential Hessian", t)?;
        let (mut f_x, mut f_v) = (SMatrix::zeros(), SMatrix::zeros());
        model.applied_force_jacobians(&x, &before.v, t_force, &mut f_x, &mut f_v);
        check_finite(&f_x, "applied force Jacobian ∂f/∂q", t)?;
        check_finite(&f_v, "applied force Jacobian ∂f/∂v", t)?;
        let mut reaction_derivative = SMatrix::<f64, N, N>::zeros();
        model.nonholonomic_reaction_jacobian(&x, &mu, &mut reaction_derivative);
        check_finite(
            &reaction_derivative,
            "nonholonomic reaction derivative ∂(Aᵀμ)/∂q",
            t,
        )?;
        let mut reaction = constraint_matrix(model, &x, t)?.transpose();
        mass_factor.solve_in_place(&mut reaction);
        let rows = constraint_matrix(model, &after.q, t)?;
        let mut rows_derivative = SMatrix::<f64, K, N>::zeros();
        model.nonholonomic_velocity_jacobian(&after.q, &after.v, &mut rows_derivative);
        check_finite(&rows_derivative, "nonholonomic derivative ∂(A v)/∂q", t)?;
        let theta = if S::IMPLICIT_POSITION { h } else { 0.0 };
        let multiplier_matrix = (rows + rows_derivative * theta) * reaction;
        let multiplier_factor = Lu::try_new(&multiplier_matrix)
            .map_err(StepError::linear_algebra(MULTIPLIER_MATRIX, t))?;
        Ok(Linearization {
            h,
            implicit_position: S::IMPLICIT_POSITION,
            mass,
            mass_factor,
            position_force: (f_x - hessian) * h + reaction_derivative,
            velocity_force: f_v * h,
            reaction,
            rows,
            rows_derivative,
            multiplier_factor,
        })
    }

    /// Returns `(δq', δv')` for the `C` directions `(δq, δv)` with the parameter terms
    /// `momentum` (of the first equation) and `constraint` (of the second), as the module docs
    /// derive them.
    fn directions<const C: usize>(
        &self,
        dq: &SMatrix<f64, N, C>,
        dv: &SMatrix<f64, N, C>,
        momentum: &SMatrix<f64, N, C>,
        constraint: &SMatrix<f64, K, C>,
    ) -> (SMatrix<f64, N, C>, SMatrix<f64, N, C>) {
        let h = self.h;
        let dx = if self.implicit_position {
            *dq
        } else {
            dq + dv * h
        };
        let mut x = self.mass * dv + self.position_force * dx + self.velocity_force * dv + momentum;
        self.mass_factor.solve_in_place(&mut x);
        let known_position = if self.implicit_position {
            dq + x * h
        } else {
            dx
        };
        let dmu = self
            .multiplier_factor
            .solve_columns(&(constraint - self.rows_derivative * known_position - self.rows * x));
        let correction = self.reaction * dmu;
        let dv_next = x + correction;
        let dq_next = if self.implicit_position {
            known_position + correction * h
        } else {
            known_position
        };
        (dq_next, dv_next)
    }

    /// Returns the state Jacobian.
    fn state_jacobian(&self, t: f64) -> Result<StepJacobian<N>, StepError> {
        let (identity, zero) = (SMatrix::<f64, N, N>::identity(), SMatrix::zeros());
        let no_rows = SMatrix::<f64, K, N>::zeros();
        let (q_q, v_q) = self.directions(&identity, &zero, &zero, &no_rows);
        let (q_v, v_v) = self.directions(&zero, &identity, &zero, &no_rows);
        let jacobian = StepJacobian { q_q, q_v, v_q, v_v };
        jacobian.check_finite(t)?;
        Ok(jacobian)
    }
}

/// Returns the point `x` where the force and the reaction act and the force's time: `(q', t_{k+1})`
/// for Cuell, `(q, t_k)` for Cortés–Martínez.
fn force_point<const N: usize, const K: usize, S: LagrangeDAlembertStep<N, K>>(
    before: &State<N>,
    after: &State<N>,
) -> (SVector<f64, N>, f64) {
    if S::IMPLICIT_POSITION {
        (before.q, before.t)
    } else {
        (after.q, after.t)
    }
}

/// Returns the parameter Jacobian: the directions with `δq = δv = 0` and the parameter terms of
/// the module docs.
fn parameter_jacobian<Model, S, const N: usize, const K: usize, const P: usize>(
    linearization: &Linearization<N, K>,
    model: &Model,
    (before, after): (&State<N>, &State<N>),
    mu: &SVector<f64, K>,
) -> Result<ParameterJacobian<N, P>, StepError>
where
    Model: ParameterDerivatives<N, 0, K, P>,
    S: LagrangeDAlembertStep<N, K>,
{
    let (t, h) = (before.t, linearization.h);
    let (x, t_force) = force_point::<N, K, S>(before, after);
    let mut gradient = SMatrix::<f64, N, P>::zeros();
    model.potential_gradient_parameter_jacobian(&x, &mut gradient);
    let mut force = SMatrix::<f64, N, P>::zeros();
    model.applied_force_parameter_jacobian(&x, &before.v, t_force, &mut force);
    let mut masses = [SMatrix::<f64, N, N>::zeros(); P];
    model.mass_parameter_derivatives(&x, &mut masses);
    let mut rows_at_x = [SMatrix::<f64, K, N>::zeros(); P];
    model.nonholonomic_matrix_parameter_derivatives(&x, &mut rows_at_x);
    let mut rows_at_next = [SMatrix::<f64, K, N>::zeros(); P];
    model.nonholonomic_matrix_parameter_derivatives(&after.q, &mut rows_at_next);
    let mut constraint = SMatrix::<f64, K, P>::zeros();
    model.nonholonomic_drive_parameter_jacobian(after.t, &mut constraint);
    let mut momentum = (force - gradient) * h;
    for j in 0..P {
        let column =
            momentum.column(j) + masses[j] * (before.v - after.v) + rows_at_x[j].tr_mul(mu);
        momentum.set_column(j, &column);
        let column = constraint.column(j) - rows_at_next[j] * after.v;
        constraint.set_column(j, &column);
    }
    check_finite(&momentum, "parameter derivatives", t)?;
    check_finite(&constraint, "parameter derivatives", t)?;
    let zero = SMatrix::<f64, N, P>::zeros();
    let (q_p, v_p) = linearization.directions(&zero, &zero, &momentum, &constraint);
    let jacobian = ParameterJacobian { q_p, v_p };
    jacobian.check_finite(t)?;
    Ok(jacobian)
}

/// Implements both Jacobians for one of the two schemes.
macro_rules! lagrange_d_alembert_jacobians {
    ($scheme:ident) => {
        impl<Model, const N: usize, const K: usize> DifferentiableStep<Model, N> for $scheme<N, K>
        where
            Model: ConstantMass<N>
                + PotentialHessian<N>
                + NonholonomicDerivative<N, K>
                + AppliedForces<N>,
            $scheme<N, K>: Integrator<Model, N>,
        {
            fn step_with_jacobian(
                &mut self,
                model: &Model,
                state: &mut State<N>,
                jacobian: &mut StepJacobian<N>,
            ) -> Result<StepReport, StepError> {
                step_and_differentiate(self, model, state, |method, before, after| {
                    let linearization = Linearization::new(method, model, before, after)?;
                    *jacobian = linearization.state_jacobian(before.t)?;
                    Ok(())
                })
            }
        }

        impl<Model, const N: usize, const K: usize, const P: usize>
            DifferentiableInParameters<Model, N, P> for $scheme<N, K>
        where
            Model: ConstantMass<N>
                + PotentialHessian<N>
                + NonholonomicDerivative<N, K>
                + AppliedForces<N>
                + ParameterDerivatives<N, 0, K, P>,
            $scheme<N, K>: Integrator<Model, N>,
        {
            fn step_with_jacobians(
                &mut self,
                model: &Model,
                state: &mut State<N>,
                jacobian: &mut StepJacobian<N>,
                parameters: &mut ParameterJacobian<N, P>,
            ) -> Result<StepReport, StepError> {
                step_and_differentiate(self, model, state, |method, before, after| {
                    let mu = *method.multipliers();
                    let linearization = Linearization::new(method, model, before, after)?;
                    let state_jacobian = linearization.state_jacobian(before.t)?;
                    let parameter_jacobian = parameter_jacobian::<_, $scheme<N, K>, N, K, P>(
                        &linearization,
                        model,
                        (before, after),
                        &mu,
                    )?;
                    *jacobian = state_jacobian;
                    *parameters = parameter_jacobian;
                    Ok(())
                })
            }
        }
    };
}

lagrange_d_alembert_jacobians!(DiscreteLagrangeDAlembert);
lagrange_d_alembert_jacobians!(CortesMartinez);
