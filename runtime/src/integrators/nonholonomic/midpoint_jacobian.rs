//! The exact state Jacobian of a step of [`MidpointLagrangeDAlembert`] (McLachlan–Perlmutter
//! 2006), for a configuration-dependent `M(q)`.
//!
//! The step solves for `(q₁, μ)` and then projects the velocity (the type's docs), with
//! `q̄ = (q₀ + q₁)/2`, `u = (q₁ − q₀)/h`, `c = ∂T/∂q − ∇V` at `(q̄, u)`:
//!
//! ```text
//! F = M(q₀) v₀ + A(q₀)ᵀ μ + (h/2) c − M(q̄) u = 0
//! G = A(q̄) u − w(t₀ + h/2)                  = 0
//! p⁺ = (h/2) c + M(q̄) u
//! M(q₁) v₁ = p⁺ + A(q₁)ᵀ ν,   A(q₁) v₁ = w(t₁)
//! ```
//!
//! By the implicit function theorem on these equations at the converged `(q₁, μ)` (not through
//! Newton's iterates), with `Q = ∂²T/∂q∂v`, `K_c = (h/4)(∂²T/∂q² − ∇²V)` at `(q̄, u)`,
//! `E(μ) = ∂(Aᵀμ)/∂q`, `D(u) = ∂(A u)/∂q`:
//!
//! ```text
//! J₁ δq₁ + A(q₀)ᵀ δμ = −(Q(q₀, v₀)ᵀ + E(μ)(q₀) + J₀) δq₀ − M(q₀) δv₀
//! g₁ δq₁             = −g₀ δq₀
//! J₁ = K_c + ½(Q − Qᵀ) − M(q̄)/h,    J₀ = K_c − ½(Q + Qᵀ) + M(q̄)/h
//! g₁ = ½ D(u)(q̄) + A(q̄)/h,          g₀ = ½ D(u)(q̄) − A(q̄)/h
//! δp⁺ = (K_c + ½(Q + Qᵀ) + M(q̄)/h) δq₁ + (K_c − ½(Q − Qᵀ) − M(q̄)/h) δq₀
//! M(q₁) δv₁ + Q(q₁, v₁)ᵀ δq₁ = δp⁺ + E(ν)(q₁) δq₁ + A(q₁)ᵀ δν,    A(q₁) δv₁ + D(v₁)(q₁) δq₁ = 0
//! ```
//!
//! The first block is Newton's own matrix (`J₁` by LU, then its `K × K` Schur complement
//! `g₁ J₁⁻¹ A(q₀)ᵀ`), the last the projection's (`M(q₁)` by Cholesky, then `A M⁻¹ Aᵀ`): four
//! factorizations for all `2N` directions.
//!
//! **In the parameters** (with `·_j = ∂(·)/∂p_j`) the same two systems take the right-hand sides
//!
//! ```text
//! r_F = −(M_j(q₀) v₀ + A_j(q₀)ᵀ μ + (h/2) c_j − M_j(q̄) u),   c_j = (∂T/∂q)_j − ∇V_j at (q̄, u)
//! r_G = −(A_j(q̄) u − w_j(t₀ + h/2))
//! δp⁺ = (K_c + ½(Q + Qᵀ) + M(q̄)/h) δq₁ + (h/2) c_j + M_j(q̄) u
//! M(q₁) δv₁ + Q(q₁, v₁)ᵀ δq₁ + M_j(q₁) v₁ = δp⁺ + E(ν)(q₁) δq₁ + A_j(q₁)ᵀ ν + A(q₁)ᵀ δν
//! A(q₁) δv₁ + D(v₁)(q₁) δq₁ + A_j(q₁) v₁ = w_j(t₁)
//! ```
//!
//! with `(∂T/∂q)_j` generated for `derivatives: [step_jacobians]`
//! ([`ParameterDerivatives::kinetic_gradient_parameter_jacobian`]).

use nalgebra::{SMatrix, SVector};

use super::{constraint_matrix, MidpointLagrangeDAlembert};
use crate::error::StepError;
use crate::integrators::checks::check_finite;
use crate::integrators::jacobian::step_and_differentiate;
use crate::integrators::{
    DifferentiableInParameters, DifferentiableStep, Integrator, ParameterJacobian, StepJacobian,
    StepReport,
};
use crate::linalg::{BorderedLu, Cholesky, Lu};
use crate::model::{
    InertiaGradient, NonholonomicDerivative, ParameterDerivatives, PotentialHessian,
};
use crate::state::State;

impl<Model, const N: usize, const K: usize> DifferentiableStep<Model, N>
    for MidpointLagrangeDAlembert<N, K>
where
    Model: InertiaGradient<N> + PotentialHessian<N> + NonholonomicDerivative<N, K>,
    MidpointLagrangeDAlembert<N, K>: Integrator<Model, N>,
{
    fn step_with_jacobian(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        jacobian: &mut StepJacobian<N>,
    ) -> Result<StepReport, StepError> {
        step_and_differentiate(self, model, state, |method, before, after| {
            let (mu, nu) = (*method.multipliers(), *method.projection_multipliers());
            let linearization =
                Linearization::at(model, method.step_size(), (before, after), (&mu, &nu))?;
            *jacobian = linearization.state_jacobian()?;
            Ok(())
        })
    }
}

impl<Model, const N: usize, const K: usize, const P: usize> DifferentiableInParameters<Model, N, P>
    for MidpointLagrangeDAlembert<N, K>
where
    Model: InertiaGradient<N>
        + PotentialHessian<N>
        + NonholonomicDerivative<N, K>
        + ParameterDerivatives<N, 0, K, P>,
    MidpointLagrangeDAlembert<N, K>: Integrator<Model, N>,
{
    fn step_with_jacobians(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        jacobian: &mut StepJacobian<N>,
        parameters: &mut ParameterJacobian<N, P>,
    ) -> Result<StepReport, StepError> {
        step_and_differentiate(self, model, state, |method, before, after| {
            let (mu, nu) = (*method.multipliers(), *method.projection_multipliers());
            let linearization =
                Linearization::at(model, method.step_size(), (before, after), (&mu, &nu))?;
            let state_part = linearization.state_jacobian()?;
            let parameter_part =
                linearization.parameter_jacobian(model, (before, after), (&mu, &nu))?;
            (*jacobian, *parameters) = (state_part, parameter_part);
            Ok(())
        })
    }
}

/// A converged step's two linear systems, factored (the module docs): Newton's block
/// `[J₁ A(q₀)ᵀ; g₁ 0]` and the projection's `[M(q₁) A(q₁)ᵀ; A(q₁) 0]`, with the matrices
/// their right-hand sides are built from.
struct Linearization<const N: usize, const K: usize> {
    h: f64,
    t: f64,
    /// `u = (q₁ − q₀)/h`.
    u: SVector<f64, N>,
    /// `K_c`, `½(Q + Qᵀ)`, `½(Q − Qᵀ)` and `M(q̄)/h` at `(q̄, u)`.
    curvature: SMatrix<f64, N, N>,
    half_sum: SMatrix<f64, N, N>,
    half_difference: SMatrix<f64, N, N>,
    inertia: SMatrix<f64, N, N>,
    /// `½ D(u)(q̄) − A(q̄)/h`, the row's `δq₀` coefficient.
    g0: SMatrix<f64, K, N>,
    /// `Q(q₀, v₀)ᵀ + E(μ)(q₀)` and `M(q₀)`.
    start: SMatrix<f64, N, N>,
    mass_start: SMatrix<f64, N, N>,
    /// `[J₁ A(q₀)ᵀ; g₁ 0]`, factored by the Schur complement `g₁ J₁⁻¹ A(q₀)ᵀ`.
    block: BorderedLu<N, K>,
    /// At `q₁`: `E(ν) − Q(q₁, v₁)ᵀ`, `D(v₁)`, `A`, `M`'s factor, `M⁻¹ Aᵀ`, `A M⁻¹ Aᵀ`'s factor.
    end: SMatrix<f64, N, N>,
    velocity_rows: SMatrix<f64, K, N>,
    rows_end: SMatrix<f64, K, N>,
    mass_end: Cholesky<N>,
    reaction: SMatrix<f64, N, K>,
    projection: Lu<K>,
}

impl<const N: usize, const K: usize> Linearization<N, K> {
    /// Linearizes the step `before → after` with multipliers `mu` and projection multipliers
    /// `nu`, as the module docs derive it.
    fn at<Model>(
        model: &Model,
        h: f64,
        (before, after): (&State<N>, &State<N>),
        (mu, nu): (&SVector<f64, K>, &SVector<f64, K>),
    ) -> Result<Self, StepError>
    where
        Model: InertiaGradient<N> + PotentialHessian<N> + NonholonomicDerivative<N, K>,
    {
        let t = before.t;
        let (q0, v0, q1, v1) = (before.q, before.v, after.q, after.v);
        let mid = (q0 + q1) * 0.5;
        let u = (q1 - q0) / h;

        // The DLA equation's derivatives at (q̄, u).
        let (mut qq, mut qv) = (SMatrix::<f64, N, N>::zeros(), SMatrix::<f64, N, N>::zeros());
        model.kinetic_hessians(&mid, &u, &mut qq, &mut qv);
        let mut hessian = SMatrix::<f64, N, N>::zeros();
        model.potential_hessian(&mid, &mut hessian);
        let mut mass_mid = SMatrix::<f64, N, N>::zeros();
        model.mass_matrix(&mid, &mut mass_mid);
        let mut rows_derivative = SMatrix::<f64, K, N>::zeros();
        model.nonholonomic_velocity_jacobian(&mid, &u, &mut rows_derivative);
        check_finite(&qq, "∂²T/∂q²", t)?;
        check_finite(&qv, "∂²T/∂q∂v", t)?;
        check_finite(&hessian, "Hess V", t)?;
        check_finite(&mass_mid, "mass matrix", t)?;
        check_finite(&rows_derivative, "nonholonomic velocity jacobian", t)?;
        let rows_mid = constraint_matrix(model, &mid, t)?;
        let curvature = (qq - hessian) * (0.25 * h);
        let (half_sum, half_difference) =
            ((qv + qv.transpose()) * 0.5, (qv - qv.transpose()) * 0.5);
        let inertia = mass_mid / h;
        let j1 = curvature + half_difference - inertia;
        let g1 = rows_derivative * 0.5 + rows_mid / h;
        let g0 = rows_derivative * 0.5 - rows_mid / h;

        // The start's terms: p₀ = M(q₀) v₀ and the reaction A(q₀)ᵀ μ.
        let (mut start_qq, mut start_qv) = (SMatrix::<f64, N, N>::zeros(), SMatrix::zeros());
        model.kinetic_hessians(&q0, &v0, &mut start_qq, &mut start_qv);
        let mut mass_start = SMatrix::<f64, N, N>::zeros();
        model.mass_matrix(&q0, &mut mass_start);
        let mut reaction_start = SMatrix::<f64, N, N>::zeros();
        model.nonholonomic_reaction_jacobian(&q0, mu, &mut reaction_start);
        check_finite(&start_qv, "∂²T/∂q∂v", t)?;
        check_finite(&mass_start, "mass matrix", t)?;
        check_finite(
            &reaction_start,
            "nonholonomic reaction derivative ∂(Aᵀμ)/∂q",
            t,
        )?;
        let rows_start = constraint_matrix(model, &q0, t)?;

        let wrap = StepError::linear_algebra("Newton block ∂(D₁L_d)/∂q_{k+1}", t);
        let j1 = Lu::try_new(&j1).map_err(wrap)?;
        let block = BorderedLu::new(j1, &rows_start.transpose(), g1).map_err(
            StepError::linear_algebra("Newton Schur complement (½ ∂(Au)/∂q + A/h) J⁻¹ A(q_k)ᵀ", t),
        )?;

        // The projection at q₁.
        let (mut end_qq, mut end_qv) = (SMatrix::<f64, N, N>::zeros(), SMatrix::zeros());
        model.kinetic_hessians(&q1, &v1, &mut end_qq, &mut end_qv);
        let mut mass_end = SMatrix::<f64, N, N>::zeros();
        model.mass_matrix(&q1, &mut mass_end);
        let mut reaction_end = SMatrix::<f64, N, N>::zeros();
        model.nonholonomic_reaction_jacobian(&q1, nu, &mut reaction_end);
        let mut velocity_rows = SMatrix::<f64, K, N>::zeros();
        model.nonholonomic_velocity_jacobian(&q1, &v1, &mut velocity_rows);
        check_finite(&end_qv, "∂²T/∂q∂v", t)?;
        check_finite(
            &reaction_end,
            "nonholonomic reaction derivative ∂(Aᵀν)/∂q",
            t,
        )?;
        check_finite(&velocity_rows, "nonholonomic velocity jacobian", t)?;
        let rows_end = constraint_matrix(model, &q1, t)?;
        let mass_end = Cholesky::try_new(&mass_end)
            .map_err(StepError::linear_algebra("mass matrix M(q_{k+1})", t))?;
        let mut reaction = rows_end.transpose();
        mass_end.solve_in_place(&mut reaction);
        let projection = Lu::try_new(&(rows_end * reaction))
            .map_err(StepError::linear_algebra("A M⁻¹ Aᵀ at q_{k+1}", t))?;
        Ok(Linearization {
            h,
            t,
            u,
            curvature,
            half_sum,
            half_difference,
            inertia,
            g0,
            start: start_qv.transpose() + reaction_start,
            mass_start,
            block,
            end: reaction_end - end_qv.transpose(),
            velocity_rows,
            rows_end,
            mass_end,
            reaction,
            projection,
        })
    }

    /// `δq₁` of `J₁ δq₁ + A(q₀)ᵀ δμ = r_F`, `g₁ δq₁ = r_G`.
    fn position<const C: usize>(
        &self,
        r_f: &SMatrix<f64, N, C>,
        r_g: &SMatrix<f64, K, C>,
    ) -> SMatrix<f64, N, C> {
        self.block.solve_columns(r_f, r_g).0
    }

    /// `δv₁` of the projection for `δq₁ = dq1`, with `M(q₁) δv₁ − A(q₁)ᵀ δν = dp + (E(ν) −
    /// Qᵀ) δq₁` and `A(q₁) δv₁ = s − D(v₁) δq₁`.
    fn velocity<const C: usize>(
        &self,
        dq1: &SMatrix<f64, N, C>,
        dp: &SMatrix<f64, N, C>,
        s: &SMatrix<f64, K, C>,
    ) -> SMatrix<f64, N, C> {
        let mut z = dp + self.end * dq1;
        self.mass_end.solve_in_place(&mut z);
        z - self.reaction
            * self
                .projection
                .solve_columns(&(self.velocity_rows * dq1 + self.rows_end * z - s))
    }

    /// `∂p⁺/∂q₁`.
    fn momentum_by_end(&self) -> SMatrix<f64, N, N> {
        self.curvature + self.half_sum + self.inertia
    }

    /// The state Jacobian.
    fn state_jacobian(&self) -> Result<StepJacobian<N>, StepError> {
        let j0 = self.curvature - self.half_sum + self.inertia;
        let q_q = self.position(&(-(self.start + j0)), &(-self.g0));
        let q_v = self.position(&(-self.mass_start), &SMatrix::zeros());
        let p_q1 = self.momentum_by_end();
        let p_q0 = self.curvature - self.half_difference - self.inertia;
        let zero = SMatrix::<f64, K, N>::zeros();
        let v_q = self.velocity(&q_q, &(p_q1 * q_q + p_q0), &zero);
        let v_v = self.velocity(&q_v, &(p_q1 * q_v), &zero);
        let jacobian = StepJacobian { q_q, q_v, v_q, v_v };
        jacobian.check_finite(self.t)?;
        Ok(jacobian)
    }

    /// The parameter Jacobian (the module docs' right-hand sides).
    fn parameter_jacobian<Model, const P: usize>(
        &self,
        model: &Model,
        (before, after): (&State<N>, &State<N>),
        (mu, nu): (&SVector<f64, K>, &SVector<f64, K>),
    ) -> Result<ParameterJacobian<N, P>, StepError>
    where
        Model: ParameterDerivatives<N, 0, K, P>,
    {
        let (h, t) = (self.h, self.t);
        let (q0, v0, q1, v1) = (before.q, before.v, after.q, after.v);
        let mid = (q0 + q1) * 0.5;
        let u = self.u;
        // c_j at (q̄, u), the midpoint's M_j u and A_j u, w_j at both times.
        let (mut kinetic, mut gradient) = (SMatrix::<f64, N, P>::zeros(), SMatrix::zeros());
        model.kinetic_gradient_parameter_jacobian(&mid, &u, &mut kinetic);
        model.potential_gradient_parameter_jacobian(&mid, &mut gradient);
        let force = (kinetic - gradient) * (0.5 * h);
        let mass = |q: &SVector<f64, N>| {
            let mut out = [SMatrix::<f64, N, N>::zeros(); P];
            model.mass_parameter_derivatives(q, &mut out);
            out
        };
        let rows = |q: &SVector<f64, N>| {
            let mut out = [SMatrix::<f64, K, N>::zeros(); P];
            model.nonholonomic_matrix_parameter_derivatives(q, &mut out);
            out
        };
        let drive = |t: f64| {
            let mut out = SMatrix::<f64, K, P>::zeros();
            model.nonholonomic_drive_parameter_jacobian(t, &mut out);
            out
        };
        let (mass_start, mass_mid, mass_end) = (mass(&q0), mass(&mid), mass(&q1));
        let (rows_start, rows_mid, rows_end) = (rows(&q0), rows(&mid), rows(&q1));
        let (drive_mid, drive_end) = (drive(t + 0.5 * h), drive(after.t));
        let (mut r_f, mut r_g) = (-force, drive_mid);
        let mut momentum = force;
        let (mut dp_end, mut s) = (SMatrix::<f64, N, P>::zeros(), drive_end);
        for j in 0..P {
            let mut column = r_f.column_mut(j);
            column -= mass_start[j] * v0 + rows_start[j].tr_mul(mu) - mass_mid[j] * u;
            let mut column = r_g.column_mut(j);
            column -= rows_mid[j] * u;
            let mut column = momentum.column_mut(j);
            column += mass_mid[j] * u;
            let mut column = dp_end.column_mut(j);
            column += rows_end[j].tr_mul(nu) - mass_end[j] * v1;
            let mut column = s.column_mut(j);
            column -= rows_end[j] * v1;
        }
        check_finite(&r_f, "parameter derivatives of the DLA equation", t)?;
        check_finite(&r_g, "parameter derivatives of the midpoint row", t)?;
        check_finite(&dp_end, "parameter derivatives of the projection", t)?;
        check_finite(&s, "parameter derivatives of the row at q_{k+1}", t)?;
        let q_p = self.position(&r_f, &r_g);
        let v_p = self.velocity(
            &q_p,
            &(self.momentum_by_end() * q_p + momentum + dp_end),
            &s,
        );
        let jacobian = ParameterJacobian { q_p, v_p };
        jacobian.check_finite(t)?;
        Ok(jacobian)
    }
}
