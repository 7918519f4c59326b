//! Products with the exact Jacobian of a velocity Verlet step on the sparse tier
//! ([`SparseDifferentiableStep`] for [`SparseVerlet`](super::SparseVerlet)).
//!
//! The step and its tangent are the fixed-size tier's (`explicit/jacobian.rs`): with
//! `a(q) = −M⁻¹ ∇V(q)`, `A u = −M⁻¹ ∇²V u` and `A_p δp = −M⁻¹ Σⱼ δpⱼ (∂ⱼ∇V + Mⱼ a)`,
//!
//! ```text
//! δa  = A δq + A_p δp,                      δq' = δq + h δv + ½h² δa
//! δa' = A' δq' + A'_p δp,                   δv' = δv + ½h (δa + δa')
//! ```
//!
//! (primes at `q_{k+1}`). The adjoint runs it backwards: for `(w_q, w_v)`, the weight on `δa'`
//! is `ω' = ½h w_v`, so `w̄ = w_q + A'ᵀ ω'` is the weight on `δq'`, the weight on `δa` is
//! `ω = ½h² w̄ + ½h w_v`, and
//!
//! ```text
//! a_q = w̄ + Aᵀ ω,    a_v = h w̄ + w_v,    ∂L/∂p += A_pᵀ ω + A'_pᵀ ω'
//! ```
//!
//! with `Aᵀ ω = −∇²V M⁻¹ ω` (`M`, `∇²V` symmetric) and `(A_pᵀ ω)ⱼ = −(M⁻¹ω)·(∂ⱼ∇V + Mⱼ a)`.
//! A product costs two solves with `M`'s block factor and two passes over `∇²V`'s pattern
//! (evaluated at both ends once per step) and the parameter entries.

use crate::error::StepError;
use crate::integrators::checks::{check_finite_slice, check_sparse_parameters};
use crate::integrators::jacobian::{check_product_lengths, Product};
use crate::integrators::{SparseDifferentiableStep, SparseIntegrator, StepReport};
use crate::linalg::products::add_symmetric_pattern_times;
use crate::model::{SparseConstantMass, SparseParameterDerivatives, SparsePotentialHessian};
use crate::state::DynState;

use super::SparseVerlet;

/// What a linearized Verlet step keeps for its products: the configurations at both ends,
/// the accelerations there, `∇²V` at both ends, and the buffers of a product. Sized at the
/// first linearized step.
#[derive(Clone, Debug, Default)]
pub(crate) struct Linearization {
    valid: bool,
    t: f64,
    q: Vec<f64>,
    q_next: Vec<f64>,
    a: Vec<f64>,
    a_next: Vec<f64>,
    hessian: Vec<f64>,
    hessian_next: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
}

impl Linearization {
    /// Forgets the last step's linearization.
    pub(crate) fn invalidate(&mut self) {
        self.valid = false;
    }
}

impl<Model> SparseDifferentiableStep<Model> for SparseVerlet
where
    Model: SparseConstantMass + SparsePotentialHessian + SparseParameterDerivatives + ?Sized,
{
    fn step_linearized(
        &mut self,
        model: &Model,
        state: &mut DynState,
    ) -> Result<StepReport, StepError> {
        let n = model.coordinate_count();
        let entries = model.hessian_pattern().len();
        let t = state.t;
        {
            let lin = self.system.linearization_mut();
            for buffer in [
                &mut lin.q,
                &mut lin.q_next,
                &mut lin.a,
                &mut lin.a_next,
                &mut lin.b,
                &mut lin.c,
            ] {
                buffer.resize(n, 0.0);
            }
            lin.hessian.resize(entries, 0.0);
            lin.hessian_next.resize(entries, 0.0);
            if state.q.len() == n {
                lin.q.copy_from_slice(&state.q);
            }
            lin.t = t;
        }
        // The plain step checks the state and the model, and forgets any linearization.
        let report = SparseIntegrator::step(self, model, state)?;
        let system = &mut self.system;
        let mut lin = std::mem::take(system.linearization_mut());
        lin.q_next.copy_from_slice(&state.q);
        let result = (|| {
            for (q, a, hessian) in [
                (&lin.q, &mut lin.a, &mut lin.hessian),
                (&lin.q_next, &mut lin.a_next, &mut lin.hessian_next),
            ] {
                model.potential_gradient(q, a);
                system.mass_solve(a, t)?;
                a.iter_mut().for_each(|a| *a = -*a);
                check_finite_slice(a, "acceleration", t)?;
                model.potential_hessian(q, hessian);
                check_finite_slice(hessian, "potential hessian", t)?;
            }
            Ok(())
        })();
        lin.valid = result.is_ok();
        *system.linearization_mut() = lin;
        result.map(|()| report)
    }

    fn tangent(
        &mut self,
        model: &Model,
        (dq, dv, dp): (&[f64], &[f64], &[f64]),
        (out_q, out_v): (&mut [f64], &mut [f64]),
    ) -> Result<(), StepError> {
        let h = self.h;
        let system = &mut self.system;
        let mut lin = std::mem::take(system.linearization_mut());
        let result = (|| {
            check_linearized(&lin, model)?;
            check_product_lengths(
                Product::Tangent,
                (lin.q.len(), model.parameter_count()),
                [dq.len(), dv.len(), out_q.len(), out_v.len()],
                dp.len(),
            )?;
            let t = lin.t;
            let pattern = model.hessian_pattern();
            // δa = −M⁻¹ (∇²V δq + Σ δp (∂∇V + Mⱼ a)), in b.
            lin.b.fill(0.0);
            add_symmetric_pattern_times(pattern, &lin.hessian, 1.0, dq, &mut lin.b);
            parameter_force(model, &lin.q, &lin.a, dp, &mut lin.b);
            system.mass_solve(&mut lin.b, t)?;
            for ((out, (dq, dv)), da) in out_q.iter_mut().zip(dq.iter().zip(dv)).zip(&lin.b) {
                *out = dq + h * dv - 0.5 * h * h * da;
            }
            // δa' = −M⁻¹ (∇²V' δq' + Σ δp (∂∇V' + Mⱼ a')), in c.
            lin.c.fill(0.0);
            add_symmetric_pattern_times(pattern, &lin.hessian_next, 1.0, out_q, &mut lin.c);
            parameter_force(model, &lin.q_next, &lin.a_next, dp, &mut lin.c);
            system.mass_solve(&mut lin.c, t)?;
            for ((out, dv), (da, da_next)) in out_v.iter_mut().zip(dv).zip(lin.b.iter().zip(&lin.c))
            {
                *out = dv - 0.5 * h * (da + da_next);
            }
            check_finite_slice(out_q, "tangent q", t)?;
            check_finite_slice(out_v, "tangent v", t)
        })();
        *system.linearization_mut() = lin;
        result
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
        let mut lin = std::mem::take(system.linearization_mut());
        let result = (|| {
            check_linearized(&lin, model)?;
            let n = lin.q.len();
            check_product_lengths(
                Product::Adjoint,
                (n, model.parameter_count()),
                [w_q.len(), w_v.len(), out_q.len(), out_v.len()],
                gradient.len(),
            )?;
            let t = lin.t;
            let pattern = model.hessian_pattern();
            // M⁻¹ω' with ω' = ½h w_v (in c); w̄ = w_q − ∇²V' M⁻¹ω' (in out_q).
            for (c, w) in lin.c.iter_mut().zip(w_v) {
                *c = 0.5 * h * w;
            }
            system.mass_solve(&mut lin.c, t)?;
            out_q.copy_from_slice(w_q);
            add_symmetric_pattern_times(pattern, &lin.hessian_next, -1.0, &lin.c, out_q);
            parameter_gradient(model, &lin.q_next, &lin.a_next, &lin.c, gradient);
            // M⁻¹ω with ω = ½h² w̄ + ½h w_v (in b); a_q = w̄ − ∇²V M⁻¹ω, a_v = h w̄ + w_v.
            for ((b, w_bar), w_v) in lin.b.iter_mut().zip(out_q.iter()).zip(w_v) {
                *b = 0.5 * h * h * w_bar + 0.5 * h * w_v;
            }
            system.mass_solve(&mut lin.b, t)?;
            for ((out_v, w_bar), w_v) in out_v.iter_mut().zip(out_q.iter()).zip(w_v) {
                *out_v = h * w_bar + w_v;
            }
            add_symmetric_pattern_times(pattern, &lin.hessian, -1.0, &lin.b, out_q);
            parameter_gradient(model, &lin.q, &lin.a, &lin.b, gradient);
            if !gradient.is_empty() {
                check_finite_slice(gradient, "adjoint parameters", t)?;
            }
            check_finite_slice(out_q, "adjoint q", t)?;
            check_finite_slice(out_v, "adjoint v", t)
        })();
        *system.linearization_mut() = lin;
        result
    }
}

/// Adds `Σⱼ δpⱼ (∂ⱼ∇V(q) + Mⱼ a)` to `out` (nothing for an empty `dp`).
fn parameter_force<Model>(model: &Model, q: &[f64], a: &[f64], dp: &[f64], out: &mut [f64])
where
    Model: SparseParameterDerivatives + ?Sized,
{
    if dp.is_empty() {
        return;
    }
    model.potential_gradient_parameter_entries(q, &mut |i, j, value| out[i] += dp[j] * value);
    model.mass_parameter_entries(q, &mut |i, k, j, value| out[i] += dp[j] * value * a[k]);
}

/// Adds `−y · (∂ⱼ∇V(q) + Mⱼ a)` to `gradient[j]` for `y = M⁻¹ω` (nothing for an empty
/// `gradient`).
fn parameter_gradient<Model>(model: &Model, q: &[f64], a: &[f64], y: &[f64], gradient: &mut [f64])
where
    Model: SparseParameterDerivatives + ?Sized,
{
    if gradient.is_empty() {
        return;
    }
    model.potential_gradient_parameter_entries(q, &mut |i, j, value| gradient[j] -= y[i] * value);
    model.mass_parameter_entries(q, &mut |i, k, j, value| gradient[j] -= y[i] * value * a[k]);
}

/// Returns `InvalidModel` unless the last step was linearized, for `model`, then the step's
/// parameter check (`check_sparse_parameters`: a non-finite family member by its index, an
/// invalid parameter).
fn check_linearized<Model>(lin: &Linearization, model: &Model) -> Result<(), StepError>
where
    Model: SparseConstantMass + ?Sized,
{
    if !lin.valid || lin.q.len() != model.coordinate_count() {
        return Err(StepError::InvalidModel {
            what: "step Jacobian product",
            index: 0,
            reason: "needs a step taken with `step_linearized` since the last plain step, for this model",
        });
    }
    check_sparse_parameters(model)
}
