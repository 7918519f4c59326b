//! Products with the exact Jacobian of a RATTLE or a SHAKE step on the sparse tier
//! ([`SparseDifferentiableStep`] for [`SparseRattle`](super::SparseRattle) and
//! [`SparseShake`](super::SparseShake)).
//!
//! The equations are the fixed-size tier's (`projection/jacobian.rs`, which derives them from
//! the converged position step and the velocity projection): with `H_k(y) = ∇²V(q_k) +
//! Σ_c y_c ∇²g_c(q_k)`, `G = G(q_k)`, `G' = G(q_{k+1})`, `C'(w) = ∂(G w)/∂q` at `q_{k+1}`,
//! `S₁ = G' M⁻¹ Gᵀ` (the Newton matrix at the converged point) and `S₂ = G' M⁻¹ G'ᵀ`, a
//! direction `(δq, δv, δp)` gives
//!
//! ```text
//! X   = M⁻¹ (M δq + h M δv − ½h² H_k(λ) δq + Σⱼ δpⱼ (−Mⱼ (q' − q − h v) − ½h² (∂ⱼ∇V(q) + Gⱼᵀ λ)))
//! S₁ δλ̃ = G' X + Σⱼ δpⱼ ∂ⱼg(q'),                 δq' = X − M⁻¹ Gᵀ δλ̃
//! R   = M (δq' − δq)/h − ½h H_{k+1}(μ) δq' + Σⱼ δpⱼ (−Mⱼ (v' − v_{k+½}) − ½h (∂ⱼ∇V(q') + G'ⱼᵀ μ))
//! s   = −C'(v') δq' − Σⱼ δpⱼ G'ⱼ v'
//! S₂ δν = G' M⁻¹ R − s,                           δv' = M⁻¹ R − M⁻¹ G'ᵀ δν
//! ```
//!
//! The adjoint runs the same maps backwards: for `(w_q, w_v)`, `u₂ = S₂⁻¹ G' M⁻¹ w_v`,
//! `ρ_R = M⁻¹ w_v − M⁻¹ G'ᵀ u₂`, then `w̄ = w_q + M ρ_R/h − ½h H_{k+1}(μ) ρ_R − C'(v')ᵀ u₂`,
//! `u₁ = S₁⁻ᵀ G M⁻¹ w̄` (a solve with the transposed `LU`), `ρ₁ = M⁻¹ w̄ − M⁻¹ G'ᵀ u₁`, and
//!
//! ```text
//! a_q = −M ρ_R/h + M ρ₁ − ½h² H_k(λ) ρ₁,     a_v = h M ρ₁
//! ∂L/∂pⱼ += ρ₁ · (−Mⱼ (q' − q − h v) − ½h² (∂ⱼ∇V(q) + Gⱼᵀ λ)) − u₁ · ∂ⱼg(q')
//!         + ρ_R · (−Mⱼ (v' − v_{k+½}) − ½h (∂ⱼ∇V(q') + G'ⱼᵀ μ)) − u₂ · G'ⱼ v'
//! ```
//!
//! with `C'(w)ᵀ z = Σ_c z_c ∇²g_c(q') w`.
//!
//! SHAKE takes the same position step with `h²` in place of `½h²` (its `λ` of
//! `q' = q + h v − h² M⁻¹ (∇V + Gᵀ λ)`) and the velocity `v' = (q' − q)/h` instead of the
//! projection: its tangent is `X`, `δq'` as above and `δv' = (δq' − δq)/h`, its adjoint the
//! position part above from `w̄ = w_q + w_v/h` with `a_q = −w_v/h` so far. The step leaves `G`, `M⁻¹Gᵀ` at both ends in the
//! system (the start point is the carried `q_{k+1}`, the end point `q_k`, after the step's
//! swap); a product refactors `S₁` and `S₂` from them, evaluates `∇²V` at both ends once per
//! step, and visits the rows' Hessian entries at both ends and the parameter entries.

use super::sparse::ProjectionSparse;
use super::sparse_linearization::Linearization;
use super::{
    Point, Projection, ProjectionSystem, RattleScheme, ShakeScheme, NEWTON_MATRIX,
    PROJECTION_MATRIX,
};
use crate::error::StepError;
use crate::integrators::checks::{check_finite_slice, check_sparse_parameters};
use crate::integrators::jacobian::{check_product_lengths, Product};
use crate::integrators::{SparseDifferentiableStep, SparseIntegrator, StepReport};
use crate::linalg::products::{add_symmetric_pattern_times, block_diagonal_times};
use crate::model::{
    SparseConstantMass, SparseHolonomic, SparseInertia, SparseParameterDerivatives,
    SparsePotentialHessian, SparseStepDerivatives,
};
use crate::state::DynState;

impl<Model> SparseDifferentiableStep<Model> for RattleScheme<ProjectionSparse>
where
    Model: SparseConstantMass
        + SparsePotentialHessian
        + SparseStepDerivatives
        + SparseParameterDerivatives
        + ?Sized,
{
    fn step_linearized(
        &mut self,
        model: &Model,
        state: &mut DynState,
    ) -> Result<StepReport, StepError> {
        begin(&mut self.core.system, model, state);
        // The plain step checks the state and the model, and forgets any linearization.
        let report = SparseIntegrator::step(self, model, state)?;
        let multipliers = (&self.multipliers[..], Some(&self.velocity_multipliers[..]));
        finish(&mut self.core.system, model, state, multipliers)?;
        Ok(report)
    }

    fn tangent(
        &mut self,
        model: &Model,
        directions: (&[f64], &[f64], &[f64]),
        out: (&mut [f64], &mut [f64]),
    ) -> Result<(), StepError> {
        product_tangent(&mut self.core, Scheme::Rattle, model, directions, out)
    }

    fn adjoint(
        &mut self,
        model: &Model,
        weights: (&[f64], &[f64]),
        out: (&mut [f64], &mut [f64]),
        gradient: &mut [f64],
    ) -> Result<(), StepError> {
        product_adjoint(
            &mut self.core,
            Scheme::Rattle,
            model,
            weights,
            out,
            gradient,
        )
    }
}

impl<Model> SparseDifferentiableStep<Model> for ShakeScheme<ProjectionSparse>
where
    Model: SparseConstantMass
        + SparsePotentialHessian
        + SparseStepDerivatives
        + SparseParameterDerivatives
        + ?Sized,
{
    fn step_linearized(
        &mut self,
        model: &Model,
        state: &mut DynState,
    ) -> Result<StepReport, StepError> {
        begin(&mut self.core.system, model, state);
        // The plain step checks the state and the model, and forgets any linearization.
        let report = SparseIntegrator::step(self, model, state)?;
        let multipliers = (&self.multipliers[..], None);
        finish(&mut self.core.system, model, state, multipliers)?;
        Ok(report)
    }

    fn tangent(
        &mut self,
        model: &Model,
        directions: (&[f64], &[f64], &[f64]),
        out: (&mut [f64], &mut [f64]),
    ) -> Result<(), StepError> {
        product_tangent(&mut self.core, Scheme::Shake, model, directions, out)
    }

    fn adjoint(
        &mut self,
        model: &Model,
        weights: (&[f64], &[f64]),
        out: (&mut [f64], &mut [f64]),
        gradient: &mut [f64],
    ) -> Result<(), StepError> {
        product_adjoint(&mut self.core, Scheme::Shake, model, weights, out, gradient)
    }
}

/// What a product needs from the model: `M`'s blocks, `∇²V` on its pattern, the rows'
/// Hessian entries and the parameter entries.
trait ProductModel:
    SparseInertia + SparsePotentialHessian + SparseStepDerivatives + SparseParameterDerivatives
{
}

impl<Model> ProductModel for Model where
    Model: SparseInertia
        + SparsePotentialHessian
        + SparseStepDerivatives
        + SparseParameterDerivatives
        + ?Sized
{
}

/// Which of the two schemes a product differentiates: their position steps differ in the
/// weight `c` of `c (∇V + Gᵀ λ)`, their velocities in RATTLE's projection against SHAKE's
/// difference quotient `v' = (q' − q)/h`.
#[derive(Clone, Copy, PartialEq)]
enum Scheme {
    Rattle,
    Shake,
}

impl Scheme {
    /// `c`: `½h²` for RATTLE, `h²` for SHAKE.
    fn weight(self, h: f64) -> f64 {
        match self {
            Scheme::Rattle => 0.5 * h * h,
            Scheme::Shake => h * h,
        }
    }
}

/// Sizes the linearization and keeps the state a linearized step starts from.
fn begin<Model>(system: &mut ProjectionSparse, model: &Model, state: &DynState)
where
    Model: SparseInertia + SparseHolonomic + SparsePotentialHessian + ?Sized,
{
    let (n, m) = (model.coordinate_count(), model.constraint_count());
    let masses: usize = model.body_sizes().iter().map(|s| s * s).sum();
    let entries = model.hessian_pattern().len();
    let lin = &mut system.linearization;
    lin.resize(n, m, masses, entries);
    if state.q.len() == n && state.v.len() == n {
        lin.q.copy_from_slice(&state.q);
        lin.v.copy_from_slice(&state.v);
    }
    lin.t = state.t;
}

/// Keeps what the products need after the plain step that ended at `state`: the end state,
/// the multipliers `λ` (and RATTLE's `μ`, zero for SHAKE), `M` and `∇²V` at both ends.
fn finish<Model>(
    system: &mut ProjectionSparse,
    model: &Model,
    state: &DynState,
    (lambda, mu): (&[f64], Option<&[f64]>),
) -> Result<(), StepError>
where
    Model: SparseInertia + SparsePotentialHessian + ?Sized,
{
    let lin = &mut system.linearization;
    lin.q_next.copy_from_slice(&state.q);
    lin.v_next.copy_from_slice(&state.v);
    lin.lambda.copy_from_slice(lambda);
    match mu {
        Some(mu) => lin.mu.copy_from_slice(mu),
        None => lin.mu.fill(0.0),
    }
    model.mass_blocks(&lin.q, &mut lin.mass);
    model.potential_hessian(&lin.q, &mut lin.hessian);
    model.potential_hessian(&lin.q_next, &mut lin.hessian_next);
    check_finite_slice(&lin.hessian, "potential hessian", lin.t)?;
    check_finite_slice(&lin.hessian_next, "potential hessian", lin.t)?;
    lin.valid = true;
    Ok(())
}

/// `J (δq, δv) + J_p δp` of the last linearized step, after the checks of every product.
fn product_tangent<Model>(
    core: &mut Projection<ProjectionSparse>,
    scheme: Scheme,
    model: &Model,
    (dq, dv, dp): (&[f64], &[f64], &[f64]),
    (out_q, out_v): (&mut [f64], &mut [f64]),
) -> Result<(), StepError>
where
    Model: ProductModel + ?Sized,
{
    let h = core.h;
    let system = &mut core.system;
    check_linearized(system, model)?;
    check_product_lengths(
        Product::Tangent,
        (system.linearization.q.len(), model.parameter_count()),
        [dq.len(), dv.len(), out_q.len(), out_v.len()],
        dp.len(),
    )?;
    let mut lin = std::mem::take(&mut system.linearization);
    let result = position_tangent(
        system,
        &mut lin,
        model,
        (h, scheme.weight(h)),
        (dq, dv, dp),
        out_q,
    )
    .and_then(|()| match scheme {
        Scheme::Rattle => velocity_tangent(system, &mut lin, model, h, (dq, dp), (out_q, out_v)),
        Scheme::Shake => {
            for ((out, next), dq) in out_v.iter_mut().zip(out_q.iter()).zip(dq) {
                *out = (next - dq) / h;
            }
            Ok(())
        }
    })
    .and_then(|()| {
        check_finite_slice(out_q, "tangent q", lin.t)?;
        check_finite_slice(out_v, "tangent v", lin.t)
    });
    system.linearization = lin;
    result
}

/// `Jᵀ (w_q, w_v)`, and `J_pᵀ (w_q, w_v)` added to `gradient`, of the last linearized step,
/// after the checks of every product.
fn product_adjoint<Model>(
    core: &mut Projection<ProjectionSparse>,
    scheme: Scheme,
    model: &Model,
    (w_q, w_v): (&[f64], &[f64]),
    (out_q, out_v): (&mut [f64], &mut [f64]),
    gradient: &mut [f64],
) -> Result<(), StepError>
where
    Model: ProductModel + ?Sized,
{
    let h = core.h;
    let system = &mut core.system;
    check_linearized(system, model)?;
    check_product_lengths(
        Product::Adjoint,
        (system.linearization.q.len(), model.parameter_count()),
        [w_q.len(), w_v.len(), out_q.len(), out_v.len()],
        gradient.len(),
    )?;
    let mut lin = std::mem::take(&mut system.linearization);
    let result = match scheme {
        Scheme::Rattle => velocity_adjoint(system, &mut lin, model, h, (w_q, w_v), out_q, gradient),
        Scheme::Shake => {
            // v' = (q' − q)/h: w̄ = w_q + w_v/h on q', −w_v/h on q.
            for (((a, out), w_q), w_v) in lin.a.iter_mut().zip(out_q.iter_mut()).zip(w_q).zip(w_v) {
                *a = w_q + w_v / h;
                *out = -w_v / h;
            }
            Ok(())
        }
    }
    .and_then(|()| {
        position_adjoint(
            system,
            &mut lin,
            model,
            (h, scheme.weight(h)),
            (out_q, out_v),
            gradient,
        )
    });
    system.linearization = lin;
    result
}

/// The position step's tangent `δq'` of the module docs (with `c` for `½h²`), into `out_q`;
/// `lin` is taken out of `system` for the borrow.
fn position_tangent<Model>(
    system: &mut ProjectionSparse,
    lin: &mut Linearization,
    model: &Model,
    (h, weight): (f64, f64),
    (dq, dv, dp): (&[f64], &[f64], &[f64]),
    out_q: &mut [f64],
) -> Result<(), StepError>
where
    Model: ProductModel + ?Sized,
{
    let t = lin.t;
    let sizes = model.body_sizes();
    let Linearization {
        q,
        v,
        q_next,
        lambda,
        mass,
        hessian,
        a,
        b,
        c,
        rows,
        rows_b,
        ..
    } = lin;
    // a = M δq + h M δv − c H_k(λ) δq + parameters, then X = M⁻¹ a.
    for ((x, dq), dv) in c.iter_mut().zip(dq).zip(dv) {
        *x = dq + h * dv;
    }
    block_diagonal_times(sizes, mass, c, a);
    add_symmetric_pattern_times(model.hessian_pattern(), hessian, -weight, dq, a);
    model.constraint_hessian_entries(q, t, &mut |k, i, j, value| {
        a[i] -= weight * lambda[k] * value * dq[j];
    });
    rows.fill(0.0);
    if !dp.is_empty() {
        model.mass_parameter_entries(q, &mut |i, j, p, value| {
            a[i] -= dp[p] * value * (q_next[j] - q[j] - h * v[j]);
        });
        model.potential_gradient_parameter_entries(q, &mut |i, p, value| {
            a[i] -= weight * dp[p] * value;
        });
        model.constraint_jacobian_parameter_entries(q, t, &mut |k, i, p, value| {
            a[i] -= weight * dp[p] * value * lambda[k];
        });
        model.constraint_parameter_entries(q_next, t + h, &mut |k, p, value| {
            rows[k] += dp[p] * value;
        });
    }
    system.mass_solve(a, t)?;
    // S₁ δλ̃ = G' X + Σ δp ∂g(q'); δq' = X − M⁻¹ Gᵀ δλ̃.
    system.jacobian_times(Point::Start, a, rows_b);
    for (r, g) in rows.iter_mut().zip(rows_b.iter()) {
        *r += g;
    }
    system.solve(Point::Start, Point::End, rows, NEWTON_MATRIX, t, false)?;
    system.constraint_direction(Point::End, rows, b);
    for ((out, x), d) in out_q.iter_mut().zip(a.iter()).zip(b.iter()) {
        *out = x - d;
    }
    Ok(())
}

/// RATTLE's velocity projection's tangent `δv'` of the module docs, from `δq'` in `out_q`;
/// `lin` is taken out of `system` for the borrow.
fn velocity_tangent<Model>(
    system: &mut ProjectionSparse,
    lin: &mut Linearization,
    model: &Model,
    h: f64,
    (dq, dp): (&[f64], &[f64]),
    (out_q, out_v): (&[f64], &mut [f64]),
) -> Result<(), StepError>
where
    Model: ProductModel + ?Sized,
{
    let t = lin.t;
    let sizes = model.body_sizes();
    let Linearization {
        q,
        q_next,
        v_next,
        mu,
        mass,
        hessian_next,
        b,
        c,
        d,
        rows,
        rows_b,
        ..
    } = lin;
    // R = M (δq' − δq)/h − ½h H_{k+1}(μ) δq' + parameters; s = −C'(v') δq' − Σ δp G'ⱼ v'.
    let dq_next = out_q;
    for ((x, next), dq) in c.iter_mut().zip(dq_next).zip(dq) {
        *x = (next - dq) / h;
    }
    block_diagonal_times(sizes, mass, c, d);
    add_symmetric_pattern_times(model.hessian_pattern(), hessian_next, -0.5 * h, dq_next, d);
    rows.fill(0.0);
    model.constraint_hessian_entries(q_next, t + h, &mut |k, i, j, value| {
        d[i] -= 0.5 * h * mu[k] * value * dq_next[j];
        rows[k] -= value * v_next[i] * dq_next[j];
    });
    if !dp.is_empty() {
        model.mass_parameter_entries(q_next, &mut |i, j, p, value| {
            d[i] -= dp[p] * value * (v_next[j] - (q_next[j] - q[j]) / h);
        });
        model.potential_gradient_parameter_entries(q_next, &mut |i, p, value| {
            d[i] -= 0.5 * h * dp[p] * value;
        });
        model.constraint_jacobian_parameter_entries(q_next, t + h, &mut |k, i, p, value| {
            d[i] -= 0.5 * h * dp[p] * value * mu[k];
            rows[k] -= dp[p] * value * v_next[i];
        });
    }
    // S₂ δν = G' M⁻¹ R − s; δv' = M⁻¹ R − M⁻¹ G'ᵀ δν.
    system.mass_solve(d, t)?;
    system.jacobian_times(Point::Start, d, rows_b);
    for (s, g) in rows.iter_mut().zip(rows_b.iter()) {
        *s = g - *s;
    }
    system.solve(
        Point::Start,
        Point::Start,
        rows,
        PROJECTION_MATRIX,
        t,
        false,
    )?;
    system.constraint_direction(Point::Start, rows, b);
    for ((out, x), d) in out_v.iter_mut().zip(d.iter()).zip(b.iter()) {
        *out = x - d;
    }
    Ok(())
}

/// RATTLE's velocity projection's adjoint of the module docs: `w̄` into `lin.a`, `a_q = −M ρ_R/h`
/// into `out_q`, its parameter terms added to `gradient`; `lin` is taken out of `system` for
/// the borrow.
fn velocity_adjoint<Model>(
    system: &mut ProjectionSparse,
    lin: &mut Linearization,
    model: &Model,
    h: f64,
    (w_q, w_v): (&[f64], &[f64]),
    out_q: &mut [f64],
    gradient: &mut [f64],
) -> Result<(), StepError>
where
    Model: ProductModel + ?Sized,
{
    let t = lin.t;
    let sizes = model.body_sizes();
    let Linearization {
        q,
        q_next,
        v_next,
        mu,
        mass,
        hessian_next,
        a,
        b,
        c,
        d,
        rows_b,
        ..
    } = lin;
    // u₂ = S₂⁻¹ G' M⁻¹ w_v, ρ_R = M⁻¹ w_v − M⁻¹ G'ᵀ u₂ (in c; u₂ in rows_b).
    c.copy_from_slice(w_v);
    system.mass_solve(c, t)?;
    system.jacobian_times(Point::Start, c, rows_b);
    system.solve(
        Point::Start,
        Point::Start,
        rows_b,
        PROJECTION_MATRIX,
        t,
        false,
    )?;
    system.constraint_direction(Point::Start, rows_b, b);
    for (c, b) in c.iter_mut().zip(b.iter()) {
        *c -= b;
    }
    let (rho_r, u2) = (&*c, &*rows_b);
    // w̄ = w_q + M ρ_R/h − ½h H_{k+1}(μ) ρ_R − C'(v')ᵀ u₂ (in a); a_q = −M ρ_R/h so far.
    block_diagonal_times(sizes, mass, rho_r, d);
    for ((a, w), m_rho) in a.iter_mut().zip(w_q).zip(d.iter()) {
        *a = w + m_rho / h;
    }
    for (out, m_rho) in out_q.iter_mut().zip(d.iter()) {
        *out = -m_rho / h;
    }
    add_symmetric_pattern_times(model.hessian_pattern(), hessian_next, -0.5 * h, rho_r, a);
    model.constraint_hessian_entries(q_next, t + h, &mut |k, i, j, value| {
        a[j] -= 0.5 * h * mu[k] * value * rho_r[i] + value * v_next[i] * u2[k];
    });
    if !gradient.is_empty() {
        model.mass_parameter_entries(q_next, &mut |i, j, p, value| {
            gradient[p] -= rho_r[i] * value * (v_next[j] - (q_next[j] - q[j]) / h);
        });
        model.potential_gradient_parameter_entries(q_next, &mut |i, p, value| {
            gradient[p] -= 0.5 * h * rho_r[i] * value;
        });
        model.constraint_jacobian_parameter_entries(q_next, t + h, &mut |k, i, p, value| {
            gradient[p] -= value * (0.5 * h * rho_r[i] * mu[k] + u2[k] * v_next[i]);
        });
    }
    Ok(())
}

/// The position step's adjoint of the module docs (with `c` for `½h²`), from `w̄` in `lin.a`:
/// adds to `out_q`, writes `out_v`, adds the parameter terms to `gradient`; `lin` is taken
/// out of `system` for the borrow.
fn position_adjoint<Model>(
    system: &mut ProjectionSparse,
    lin: &mut Linearization,
    model: &Model,
    (h, weight): (f64, f64),
    (out_q, out_v): (&mut [f64], &mut [f64]),
    gradient: &mut [f64],
) -> Result<(), StepError>
where
    Model: ProductModel + ?Sized,
{
    let t = lin.t;
    let sizes = model.body_sizes();
    let Linearization {
        q,
        v,
        q_next,
        lambda,
        mass,
        hessian,
        a,
        b,
        d,
        rows,
        ..
    } = lin;
    // u₁ = S₁⁻ᵀ G M⁻¹ w̄, ρ₁ = M⁻¹ w̄ − M⁻¹ G'ᵀ u₁ (in a; u₁ in rows).
    system.mass_solve(a, t)?;
    system.jacobian_times(Point::End, a, rows);
    system.solve(Point::Start, Point::End, rows, NEWTON_MATRIX, t, true)?;
    system.constraint_direction(Point::Start, rows, b);
    for (a, b) in a.iter_mut().zip(b.iter()) {
        *a -= b;
    }
    let (rho1, u1) = (&*a, &*rows);
    // a_q += M ρ₁ − c H_k(λ) ρ₁, a_v = h M ρ₁.
    block_diagonal_times(sizes, mass, rho1, d);
    for ((out_q, out_v), m_rho) in out_q.iter_mut().zip(out_v.iter_mut()).zip(d.iter()) {
        *out_q += m_rho;
        *out_v = h * m_rho;
    }
    add_symmetric_pattern_times(model.hessian_pattern(), hessian, -weight, rho1, out_q);
    model.constraint_hessian_entries(q, t, &mut |k, i, j, value| {
        out_q[j] -= weight * lambda[k] * value * rho1[i];
    });
    if !gradient.is_empty() {
        model.mass_parameter_entries(q, &mut |i, j, p, value| {
            gradient[p] -= rho1[i] * value * (q_next[j] - q[j] - h * v[j]);
        });
        model.potential_gradient_parameter_entries(q, &mut |i, p, value| {
            gradient[p] -= weight * rho1[i] * value;
        });
        model.constraint_jacobian_parameter_entries(q, t, &mut |k, i, p, value| {
            gradient[p] -= weight * rho1[i] * value * lambda[k];
        });
        model.constraint_parameter_entries(q_next, t + h, &mut |k, p, value| {
            gradient[p] -= u1[k] * value;
        });
        check_finite_slice(gradient, "adjoint parameters", t)?;
    }
    check_finite_slice(out_q, "adjoint q", t)?;
    check_finite_slice(out_v, "adjoint v", t)
}

/// Returns `InvalidModel` unless the last step was linearized, for `model`, then the step's
/// parameter check (`check_sparse_parameters`: a non-finite family member by its index, an
/// invalid parameter).
fn check_linearized<Model>(system: &ProjectionSparse, model: &Model) -> Result<(), StepError>
where
    Model: SparseInertia + SparseHolonomic + ?Sized,
{
    if !system.linearization.valid {
        return Err(StepError::InvalidModel {
            what: "step Jacobian product",
            index: 0,
            reason: "needs a step taken with `step_linearized` since the last plain step",
        });
    }
    system.check_model(model)?;
    check_sparse_parameters(model)
}
