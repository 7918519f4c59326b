//! Products with the exact Jacobian of a SPOOK step on the sparse tier
//! ([`SparseDifferentiableStep`] for [`SparseSpook`](super::SparseSpook)).
//!
//! In the symmetric form the sparse tier factors (`μ = −λ`, holonomic rows only), the step
//! solves, with `M` constant and `G`, `∇V`, `f` at `(q_k, v_k, t_k)`,
//!
//! ```text
//! F₁ = M v' + Gᵀ μ − r = 0,    r = M v − h ∇V(q) + h f(q, v, t)
//! F₂ = G v' − Σ μ − t = 0,     t = Υ (G v − (4/h) g(q))
//! ```
//!
//! and `q' = q + h v'`. The implicit function theorem gives `K (δv', δμ) = (ρ₁, ρ₂)` with the
//! step's own matrix `K = [[M, Gᵀ], [G, −Σ]]` (the factor the step leaves behind) and
//!
//! ```text
//! ρ₁ = M δv + h f_v δv + (H_g(λ) − h ∇²V + h f_q) δq + Σⱼ δpⱼ (Mⱼ (v − v') − h ∂ⱼ∇V + h ∂ⱼf + Gⱼᵀ λ)
//! ρ₂ = Υ G δv + (Υ C(v) − (4/h) Υ G − C(v')) δq     + Σⱼ δpⱼ (Υ (Gⱼ v − (4/h) ∂ⱼg) − Gⱼ v')
//! ```
//!
//! where `H_g(λ) = Σ_c λ_c ∇²g_c`, `C(w) = ∂(G w)/∂q` (row `c` is `(∇²g_c w)ᵀ`) and `Mⱼ = ∂M/∂pⱼ`
//! and so on; `Σ`, `Υ` depend on the rows' regularization and `h` only. The tangent is then
//! `δq' = δq + h δv'`: one solve. The same derivation as the fixed-size tier's (its module
//! docs), which it checks.
//!
//! The adjoint transposes it. With `ŵ = w_v + h w_q` and `K (y₁, y₂) = (ŵ, 0)` (`K` is
//! symmetric: the same factor, one solve),
//!
//! ```text
//! a_q = w_q + (H_g(λ) − h ∇²V + h f_q)ᵀ y₁ + (C(v)ᵀ Υ − (4/h) Gᵀ Υ − C(v')ᵀ) y₂
//! a_v = M y₁ + h f_vᵀ y₁ + Gᵀ Υ y₂
//! ∂L/∂pⱼ += y₁ · (Mⱼ (v − v') − h ∂ⱼ∇V + h ∂ⱼf + Gⱼᵀ λ) + y₂ · (Υ (Gⱼ v − (4/h) ∂ⱼg) − Gⱼ v')
//! ```
//!
//! with `C(w)ᵀ z = H_g(z) w`. Every second derivative arrives as visited entries
//! ([`SparseStepDerivatives`], [`SparseParameterDerivatives`]) and `∇²V` on its pattern, each
//! contracted on the fly: the constraint Hessian entry `(c, a, b)` serves `H_g(λ)`, `C(v)` and
//! `C(v')` in one pass, so a product costs one solve and one pass over the entries.

use super::sparse::{SpookSparse, SPOOK_MATRIX};
use super::{holonomic_coefficients, SpookScheme};
use crate::error::StepError;
use crate::integrators::checks::{check_finite_slice, check_sparse_parameters};
use crate::integrators::jacobian::{check_product_lengths, Product};
use crate::integrators::{SparseDifferentiableStep, SparseIntegrator, StepReport};
use crate::linalg::products::{
    add_pattern_times, add_pattern_transpose_times, add_symmetric_pattern_times,
    block_diagonal_times,
};
use crate::model::{
    SparseConstantMass, SparseHolonomic, SparseInertia, SparseNonholonomic,
    SparseParameterDerivatives, SparsePotentialHessian, SparseStepDerivatives,
};
use crate::state::DynState;

/// The requirement behind [`StepError::Unsupported`] for nonholonomic rows.
const HOLONOMIC_ONLY: &str = "holonomic rows only for its sparse step Jacobian (the tier's \
    nonholonomic rows have no second derivatives yet); differentiate the model on the \
    fixed-size tier (`Spook` with `DifferentiableStep`)";

impl<Model> SparseDifferentiableStep<Model> for SpookScheme<SpookSparse>
where
    Model: SparseConstantMass
        + SparsePotentialHessian
        + SparseNonholonomic
        + SparseStepDerivatives
        + SparseParameterDerivatives
        + ?Sized,
{
    fn step_linearized(
        &mut self,
        model: &Model,
        state: &mut DynState,
    ) -> Result<StepReport, StepError> {
        if model.nonholonomic_count() > 0 {
            return Err(StepError::Unsupported {
                integrator: "SPOOK",
                requirement: HOLONOMIC_ONLY,
            });
        }
        let (n, m) = (model.coordinate_count(), model.constraint_count());
        let lin = &mut self.system.linearization;
        lin.resize(n, m, model.hessian_pattern().len());
        if state.q.len() == n && state.v.len() == n {
            lin.q.copy_from_slice(&state.q);
            lin.v.copy_from_slice(&state.v);
        }
        lin.t = state.t;
        // The plain step checks the state and the model, and forgets any linearization.
        let report = SparseIntegrator::step(self, model, state)?;
        let h = self.h;
        let system = &mut self.system;
        let lin = &mut system.linearization;
        lin.v_next.copy_from_slice(&state.v);
        lin.lambda.copy_from_slice(&system.multipliers);
        for (row, upsilon) in lin.upsilon.iter_mut().enumerate() {
            let regularization = system.overrides[row].unwrap_or_else(|| model.regularization(row));
            *upsilon = holonomic_coefficients(&regularization, h)?.1;
        }
        model.potential_hessian(&lin.q, &mut lin.hessian);
        check_finite_slice(&lin.hessian, "potential hessian", lin.t)?;
        lin.valid = true;
        Ok(report)
    }

    fn tangent(
        &mut self,
        model: &Model,
        (dq, dv, dp): (&[f64], &[f64], &[f64]),
        (out_q, out_v): (&mut [f64], &mut [f64]),
    ) -> Result<(), StepError> {
        let h = self.h;
        let system = &mut self.system;
        system.check_linearized(model)?;
        check_product_lengths(
            Product::Tangent,
            (system.linearization.q.len(), model.parameter_count()),
            [dq.len(), dv.len(), out_q.len(), out_v.len()],
            dp.len(),
        )?;
        let lin = &mut system.linearization;
        let (q, v, t) = (&lin.q[..], &lin.v[..], lin.t);
        let (v_next, lambda, upsilon) = (&lin.v_next[..], &lin.lambda[..], &lin.upsilon[..]);
        // ρ₁ = M δv + (−h ∇²V) δq, ρ₂ = Υ G δv − (4/h) Υ G δq.
        block_diagonal_times(
            system.saddle_point.body_sizes(),
            &system.mass_blocks,
            dv,
            &mut lin.rho_q,
        );
        add_symmetric_pattern_times(
            model.hessian_pattern(),
            &lin.hessian,
            -h,
            dq,
            &mut lin.rho_q,
        );
        lin.rho_rows.fill(0.0);
        add_pattern_times(
            &system.jacobian_pattern,
            &system.jacobian,
            dv,
            &mut lin.rho_rows,
        );
        for (row, upsilon) in lin.rho_rows.iter_mut().zip(upsilon) {
            *row *= upsilon;
        }
        let mut g_dq = std::mem::take(&mut lin.y);
        g_dq.fill(0.0);
        add_pattern_times(&system.jacobian_pattern, &system.jacobian, dq, &mut g_dq);
        for ((row, upsilon), g_dq) in lin.rho_rows.iter_mut().zip(upsilon).zip(&g_dq) {
            *row -= 4.0 / h * upsilon * g_dq;
        }
        lin.y = g_dq;
        // The rows' second derivatives: H_g(λ) δq into ρ₁, (Υ C(v) − C(v')) δq into ρ₂.
        let (rho_q, rho_rows) = (&mut lin.rho_q, &mut lin.rho_rows);
        model.constraint_hessian_entries(q, t, &mut |c, a, b, value| {
            rho_q[a] += lambda[c] * value * dq[b];
            rho_rows[c] += value * (upsilon[c] * v[a] - v_next[a]) * dq[b];
        });
        model.applied_force_jacobian_entries(q, v, t, &mut |a, b, d_q, d_v| {
            rho_q[a] += h * (d_q * dq[b] + d_v * dv[b]);
        });
        if !dp.is_empty() {
            model.mass_parameter_entries(q, &mut |a, b, j, value| {
                rho_q[a] += dp[j] * value * (v[b] - v_next[b]);
            });
            model.potential_gradient_parameter_entries(q, &mut |a, j, value| {
                rho_q[a] -= h * dp[j] * value;
            });
            model.applied_force_parameter_entries(q, v, t, &mut |a, j, value| {
                rho_q[a] += h * dp[j] * value;
            });
            model.constraint_jacobian_parameter_entries(q, t, &mut |c, a, j, value| {
                rho_q[a] += dp[j] * value * lambda[c];
                rho_rows[c] += dp[j] * value * (upsilon[c] * v[a] - v_next[a]);
            });
            model.constraint_parameter_entries(q, t, &mut |c, j, value| {
                rho_rows[c] -= 4.0 / h * upsilon[c] * dp[j] * value;
            });
        }
        system
            .saddle_point
            .solve(
                (&lin.rho_q, &lin.rho_rows, &[]),
                (&mut lin.x, &mut lin.y, &mut []),
            )
            .map_err(StepError::linear_algebra(SPOOK_MATRIX, t))?;
        for ((out_q, out_v), (dq, x)) in out_q
            .iter_mut()
            .zip(out_v.iter_mut())
            .zip(dq.iter().zip(&lin.x))
        {
            *out_q = dq + h * x;
            *out_v = *x;
        }
        check_finite_slice(out_q, "tangent q", t)?;
        check_finite_slice(out_v, "tangent v", t)
    }

    fn adjoint(
        &mut self,
        model: &Model,
        (w_q, w_v): (&[f64], &[f64]),
        (out_q, out_v): (&mut [f64], &mut [f64]),
        gradient: &mut [f64],
    ) -> Result<(), StepError> {
        let h = self.h;
        let system = &mut self.system;
        system.check_linearized(model)?;
        check_product_lengths(
            Product::Adjoint,
            (system.linearization.q.len(), model.parameter_count()),
            [w_q.len(), w_v.len(), out_q.len(), out_v.len()],
            gradient.len(),
        )?;
        let lin = &mut system.linearization;
        let (q, v, t) = (&lin.q[..], &lin.v[..], lin.t);
        let (v_next, lambda, upsilon) = (&lin.v_next[..], &lin.lambda[..], &lin.upsilon[..]);
        // K (y₁, y₂) = (w_v + h w_q, 0).
        for ((rho, w_q), w_v) in lin.rho_q.iter_mut().zip(w_q).zip(w_v) {
            *rho = w_v + h * w_q;
        }
        lin.rho_rows.fill(0.0);
        system
            .saddle_point
            .solve(
                (&lin.rho_q, &lin.rho_rows, &[]),
                (&mut lin.x, &mut lin.y, &mut []),
            )
            .map_err(StepError::linear_algebra(SPOOK_MATRIX, t))?;
        let (y1, y2) = (&lin.x[..], &lin.y[..]);
        let weighted = &mut lin.weighted_rows;
        for ((weighted, y2), upsilon) in weighted.iter_mut().zip(y2).zip(upsilon) {
            *weighted = upsilon * y2;
        }
        // a_v = M y₁ + Gᵀ Υ y₂ (+ h f_vᵀ y₁); a_q = w_q − h ∇²V y₁ − (4/h) Gᵀ Υ y₂ + ….
        block_diagonal_times(
            system.saddle_point.body_sizes(),
            &system.mass_blocks,
            y1,
            out_v,
        );
        add_pattern_transpose_times(&system.jacobian_pattern, &system.jacobian, weighted, out_v);
        out_q.copy_from_slice(w_q);
        add_symmetric_pattern_times(model.hessian_pattern(), &lin.hessian, -h, y1, out_q);
        for weighted in weighted.iter_mut() {
            *weighted *= -4.0 / h;
        }
        add_pattern_transpose_times(&system.jacobian_pattern, &system.jacobian, weighted, out_q);
        model.constraint_hessian_entries(q, t, &mut |c, a, b, value| {
            out_q[b] += value * (lambda[c] * y1[a] + y2[c] * (upsilon[c] * v[a] - v_next[a]));
        });
        model.applied_force_jacobian_entries(q, v, t, &mut |a, b, d_q, d_v| {
            out_q[b] += h * d_q * y1[a];
            out_v[b] += h * d_v * y1[a];
        });
        if !gradient.is_empty() {
            model.mass_parameter_entries(q, &mut |a, b, j, value| {
                gradient[j] += y1[a] * value * (v[b] - v_next[b]);
            });
            model.potential_gradient_parameter_entries(q, &mut |a, j, value| {
                gradient[j] -= h * y1[a] * value;
            });
            model.applied_force_parameter_entries(q, v, t, &mut |a, j, value| {
                gradient[j] += h * y1[a] * value;
            });
            model.constraint_jacobian_parameter_entries(q, t, &mut |c, a, j, value| {
                gradient[j] +=
                    value * (lambda[c] * y1[a] + y2[c] * (upsilon[c] * v[a] - v_next[a]));
            });
            model.constraint_parameter_entries(q, t, &mut |c, j, value| {
                gradient[j] -= 4.0 / h * upsilon[c] * y2[c] * value;
            });
            check_finite_slice(gradient, "adjoint parameters", t)?;
        }
        check_finite_slice(out_q, "adjoint q", t)?;
        check_finite_slice(out_v, "adjoint v", t)
    }
}

impl SpookSparse {
    /// Returns `InvalidModel` unless the last step was linearized, for `model`, then the step's
    /// parameter check (`check_sparse_parameters`: a non-finite family member by its index, an
    /// invalid parameter).
    fn check_linearized<Model>(&self, model: &Model) -> Result<(), StepError>
    where
        Model: SparseInertia + SparseHolonomic + SparseNonholonomic + ?Sized,
    {
        if !self.linearization.valid {
            return Err(StepError::InvalidModel {
                what: "step Jacobian product",
                index: 0,
                reason: "needs a step taken with `step_linearized` since the last plain step",
            });
        }
        self.check_model(model)?;
        check_sparse_parameters(model)
    }
}
