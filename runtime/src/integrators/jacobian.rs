//! Exact Jacobians of one step with respect to the state it starts from ([`StepJacobian`],
//! [`DifferentiableStep`]) and to the model's parameters ([`ParameterJacobian`],
//! [`DifferentiableInParameters`]).

use nalgebra::{SMatrix, SVector};

use super::checks::check_finite;
use super::{Integrator, SparseIntegrator, StepReport};
use crate::error::StepError;
use crate::state::{DynState, State};

/// The Jacobian of one step `(q_k, v_k) → (q_{k+1}, v_{k+1})` in four `N × N` blocks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepJacobian<const N: usize> {
    /// `∂q_{k+1}/∂q_k`.
    pub q_q: SMatrix<f64, N, N>,
    /// `∂q_{k+1}/∂v_k`.
    pub q_v: SMatrix<f64, N, N>,
    /// `∂v_{k+1}/∂q_k`.
    pub v_q: SMatrix<f64, N, N>,
    /// `∂v_{k+1}/∂v_k`.
    pub v_v: SMatrix<f64, N, N>,
}

impl<const N: usize> Default for StepJacobian<N> {
    /// Returns the zero Jacobian.
    fn default() -> Self {
        StepJacobian {
            q_q: SMatrix::zeros(),
            q_v: SMatrix::zeros(),
            v_q: SMatrix::zeros(),
            v_v: SMatrix::zeros(),
        }
    }
}

impl<const N: usize> StepJacobian<N> {
    /// Returns `NonFinite` naming the first block (`∂q'/∂q`, `∂q'/∂v`, `∂v'/∂q`, `∂v'/∂v`)
    /// with a non-finite entry: the one check of a Jacobian before it is written out.
    pub(crate) fn check_finite(&self, t: f64) -> Result<(), StepError> {
        check_finite(&self.q_q, "step Jacobian ∂q'/∂q", t)?;
        check_finite(&self.q_v, "step Jacobian ∂q'/∂v", t)?;
        check_finite(&self.v_q, "step Jacobian ∂v'/∂q", t)?;
        check_finite(&self.v_v, "step Jacobian ∂v'/∂v", t)
    }

    /// Returns `J·(dq, dv)`: the first-order change of `(q_{k+1}, v_{k+1})` for a change
    /// `(dq, dv)` of `(q_k, v_k)`, a forward sensitivity pushed through the step.
    pub fn apply(
        &self,
        dq: &SVector<f64, N>,
        dv: &SVector<f64, N>,
    ) -> (SVector<f64, N>, SVector<f64, N>) {
        (self.q_q * dq + self.q_v * dv, self.v_q * dq + self.v_v * dv)
    }

    /// Returns `Jᵀ·(wq, wv)`: the gradient with respect to `(q_k, v_k)` of a function whose
    /// gradient with respect to `(q_{k+1}, v_{k+1})` is `(wq, wv)`, an adjoint pulled back
    /// through the step.
    pub fn apply_transpose(
        &self,
        wq: &SVector<f64, N>,
        wv: &SVector<f64, N>,
    ) -> (SVector<f64, N>, SVector<f64, N>) {
        (
            self.q_q.tr_mul(wq) + self.v_q.tr_mul(wv),
            self.q_v.tr_mul(wq) + self.v_v.tr_mul(wv),
        )
    }
}

/// An integrator whose step can be differentiated exactly with respect to the state it starts
/// from.
///
/// A step maps `(q_k, v_k)` to `(q_{k+1}, v_{k+1})` by solving its own equations
/// `F(q_k, v_k; q_{k+1}, v_{k+1}, λ, …) = 0` (linear ones for SPOOK, the converged Newton
/// equations for an implicit method). By the implicit function theorem its Jacobian is
///
/// ```text
/// ∂(q_{k+1}, v_{k+1}, λ, …)/∂(q_k, v_k) = −(∂F/∂(q_{k+1}, v_{k+1}, λ, …))⁻¹ ∂F/∂(q_k, v_k)
/// ```
///
/// the derivative of the step's equations, not of the iteration that solved them: it holds to
/// the accuracy the step was solved to, and the matrix to invert is the step's own (or its
/// converged Newton matrix), factored once for all `2N` directions and solved for each. The
/// second derivatives of the model it needs (`∇²V`,
/// every row's `∇²g`, `∂(A v)/∂q`, the forces' Jacobians) are what `mechanism!` generates for
/// `derivatives: [step_jacobians]`.
///
/// These are exact derivatives of the *discrete* map, which is what an optimizer, a fit or an
/// adjoint of a simulated trajectory needs (the trajectory is the discrete map iterated); they
/// converge to the derivatives of the exact flow at the method's order.
///
/// Implemented by [`Spook`](crate::Spook) (fixed-size tier, any number of holonomic and
/// nonholonomic rows, a regular or singular constant `M`), [`Rattle`](crate::Rattle)
/// (fixed-size tier: the converged position step's and the velocity projection's equations) and
/// [`Shake`](crate::Shake) (its position step, the velocity its difference quotient),
/// by the stabilized Runge–Kutta methods [`StabilizedRk`](crate::StabilizedRk) and
/// [`AdaptiveRk`](crate::AdaptiveRk) (DOPRI5; fixed-size tier, a constant or a
/// configuration-dependent `M`: the variational equations integrated with the step's own
/// stages, then the post-stabilization's derivative, an adaptive step's size held fixed), and by the explicit methods
/// [`SymplecticEuler`](crate::SymplecticEuler), [`Verlet`](crate::Verlet) and
/// [`Rk4`](crate::Rk4) (constant `M`: the chain rule through their evaluations of
/// `a = −M⁻¹∇V`), the simplified Zhang–Skeel method
/// [`ZhangSkeelSimplified`](crate::ZhangSkeelSimplified) (constant `M`: the same chain rule
/// through `a = −(M + βh² ∇²V)⁻¹ ∇V`, on a plain or a [`Penalized`](crate::Penalized) model),
/// its stiff variant [`ZhangSkeelStiff`](crate::ZhangSkeelStiff) (constant `M`, a penalized
/// model, the state Jacobian only: `V1‴` along `a` as `W‴ − V‴`), [`PushForwardNewmark`](crate::PushForwardNewmark)
/// (constant `M`: through the `a` of its converged equation `M a + ∇V(x + βh² a) = 0`) and
/// [`Newmark`](crate::Newmark) (constant `M`: through its two accelerations, `a_k` at `q_k` and
/// the converged `a_{k+1}`; not [`NewmarkOneIteration`](crate::NewmarkOneIteration), whose
/// carried acceleration is a state of its own), and the discrete Lagrange–d'Alembert
/// integrators [`DiscreteLagrangeDAlembert`](crate::DiscreteLagrangeDAlembert) and
/// [`CortesMartinez`](crate::CortesMartinez) (constant `M`: the momentum equation with its
/// reaction and the nonholonomic rows at the step's end, their multipliers eliminated by one
/// `K × K` factorization) and, for a configuration-dependent `M`,
/// [`MidpointLagrangeDAlembert`](crate::MidpointLagrangeDAlembert) (its converged Newton
/// equations on `(q_{k+1}, μ)` and its velocity projection), and, for a constant `M`, the
/// energy-momentum scheme [`Livens`](crate::Livens) (its converged equations in
/// `(q_{k+1}, λ)`, the discrete gradients differentiated in both points and in the
/// parameters), and the Langevin scheme [`Langevin`](crate::Langevin) around any of these
/// (constant `M`: along the step's draws, the inner Jacobian times the Ornstein–Uhlenbeck
/// flow's `e^{−γhM⁻¹}`; in the parameters only where they reach diagonal blocks of `M`), for
/// models with the derivatives the step's equations
/// need (`derivatives: [step_jacobians]`; for the stabilized Runge–Kutta methods with `rk`, for
/// Z&Ss with `zss` among the model's integrators). The sparse tier's twin is
/// [`SparseDifferentiableStep`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot differentiate its step for `{Model}`",
    label = "no step Jacobian for `{Model}`",
    note = "for a model written with `mechanism!`, add `derivatives: [step_jacobians]` to it; the integrators that differentiate their step are listed in the docs of `DifferentiableStep`"
)]
pub trait DifferentiableStep<Model, const N: usize>: Integrator<Model, N> {
    /// Advances `state` by one step, as [`Integrator::step`] does, and writes the step's
    /// Jacobian `∂(q_{k+1}, v_{k+1})/∂(q_k, v_k)` at the state it started from into `jacobian`.
    /// On error `state` and `jacobian` are left unchanged.
    fn step_with_jacobian(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        jacobian: &mut StepJacobian<N>,
    ) -> Result<StepReport, StepError>;
}

/// The Jacobian of one step `(q_k, v_k) → (q_{k+1}, v_{k+1})` with respect to the model's `P`
/// run-time parameters ([`Parameters`](crate::Parameters)), in two `N × P` blocks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParameterJacobian<const N: usize, const P: usize> {
    /// `∂q_{k+1}/∂p`.
    pub q_p: SMatrix<f64, N, P>,
    /// `∂v_{k+1}/∂p`.
    pub v_p: SMatrix<f64, N, P>,
}

impl<const N: usize, const P: usize> ParameterJacobian<N, P> {
    /// Returns `NonFinite` naming the first block (`∂q'/∂p`, `∂v'/∂p`) with a non-finite
    /// entry.
    pub(crate) fn check_finite(&self, t: f64) -> Result<(), StepError> {
        check_finite(&self.q_p, "parameter Jacobian ∂q'/∂p", t)?;
        check_finite(&self.v_p, "parameter Jacobian ∂v'/∂p", t)
    }
}

impl<const N: usize, const P: usize> Default for ParameterJacobian<N, P> {
    /// Returns the zero Jacobian.
    fn default() -> Self {
        ParameterJacobian {
            q_p: SMatrix::zeros(),
            v_p: SMatrix::zeros(),
        }
    }
}

/// An integrator whose step can be differentiated exactly with respect to the state it starts
/// from and to the model's run-time parameters `p`.
///
/// The same implicit function theorem as [`DifferentiableStep`]'s, with `∂F/∂p` as `P` more
/// right-hand sides of the same matrix: `∂(q_{k+1}, v_{k+1}, λ, …)/∂p = −(∂F/∂(q_{k+1},
/// v_{k+1}, λ, …))⁻¹ ∂F/∂p`, solved with the factor the state Jacobian already has. `∂F/∂p`
/// contains the derivatives of `M`, `∇V`, the applied force and the rows with respect to `p`,
/// which `mechanism!` generates for `derivatives: [step_jacobians]`
/// ([`ParameterDerivatives`](crate::ParameterDerivatives)).
///
/// Along a run, the sensitivity `S_k = ∂(q_k, v_k)/∂(q_0, v_0, p)` then obeys the chain rule
/// `S_{k+1} = J_k S_k + [0 | J_p,k]`, with `J_k` the state Jacobian and `J_p,k` the parameter
/// Jacobian of step `k`.
///
/// Implemented by every integrator that implements [`DifferentiableStep`], on the fixed-size
/// tier, except [`ZhangSkeelSimplified`](crate::ZhangSkeelSimplified) on a
/// [`Penalized`](crate::Penalized) model (the penalty's rows are not differentiated in the
/// parameters).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot differentiate its step for `{Model}` in its parameters",
    label = "no parameter Jacobian for `{Model}`",
    note = "for a model written with `mechanism!`, add `derivatives: [step_jacobians]` to it; the integrators that differentiate their step are listed in the docs of `DifferentiableInParameters`"
)]
pub trait DifferentiableInParameters<Model, const N: usize, const P: usize>:
    DifferentiableStep<Model, N>
{
    /// Advances `state` by one step, as [`Integrator::step`] does, and writes the step's
    /// Jacobians at the state it started from: `∂(q_{k+1}, v_{k+1})/∂(q_k, v_k)` into
    /// `jacobian` and `∂(q_{k+1}, v_{k+1})/∂p` into `parameters`. On error `state` and both
    /// Jacobians are left unchanged.
    fn step_with_jacobians(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        jacobian: &mut StepJacobian<N>,
        parameters: &mut ParameterJacobian<N, P>,
    ) -> Result<StepReport, StepError>;

    /// As [`step_with_jacobians`](Self::step_with_jacobians), for a driver that must not step
    /// past `t_stop` (an output time or the end of a run): an adaptive method shortens its
    /// step to land on it, a fixed-step method ignores it (the default).
    fn step_toward_with_jacobians(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        t_stop: f64,
        jacobian: &mut StepJacobian<N>,
        parameters: &mut ParameterJacobian<N, P>,
    ) -> Result<StepReport, StepError> {
        let _ = t_stop;
        self.step_with_jacobians(model, state, jacobian, parameters)
    }

    /// Advances `state` by one step toward `t_stop` (as
    /// [`step_toward_with_jacobians`](Self::step_toward_with_jacobians)) and maps `S` tangents
    /// through it: `(δq, δv) ← J (δq, δv) + J_p δp`, the forward sensitivities' update. The
    /// default takes both Jacobians and multiplies; a method that can carry the `S` directions
    /// through its step alone (the stabilized Runge–Kutta methods) does so, for a cost in `S`
    /// rather than in `2N + P`. On error `state` and the tangents are left unchanged.
    fn step_toward_with_tangents<const S: usize>(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        t_stop: f64,
        (dq, dv): (&mut SMatrix<f64, N, S>, &mut SMatrix<f64, N, S>),
        dp: &SMatrix<f64, P, S>,
    ) -> Result<StepReport, StepError> {
        let (mut j, mut jp) = (
            StepJacobian::<N>::default(),
            ParameterJacobian::<N, P>::default(),
        );
        let report = self.step_toward_with_jacobians(model, state, t_stop, &mut j, &mut jp)?;
        let q = j.q_q * *dq + j.q_v * *dv + jp.q_p * dp;
        let v = j.v_q * *dq + j.v_v * *dv + jp.v_p * dp;
        (*dq, *dv) = (q, v);
        Ok(report)
    }
}

/// Takes `integrator`'s step from `state` on a copy, then runs `differentiate(integrator,
/// before, after)`; writes the new state only when both succeed, and otherwise puts the
/// integrator back as it was before the step (its multipliers, carried points), so that a
/// failed differentiation leaves everything unchanged. The one rollback of every
/// [`DifferentiableStep`] implementation.
pub(crate) fn step_and_differentiate<I, Model, const N: usize>(
    integrator: &mut I,
    model: &Model,
    state: &mut State<N>,
    differentiate: impl FnOnce(&mut I, &State<N>, &State<N>) -> Result<(), StepError>,
) -> Result<StepReport, StepError>
where
    I: Integrator<Model, N> + Clone,
{
    let kept = integrator.clone();
    let mut next = *state;
    let report = integrator.step(model, &mut next)?;
    match differentiate(integrator, state, &next) {
        Ok(()) => {
            *state = next;
            Ok(report)
        }
        Err(error) => {
            *integrator = kept;
            Err(error)
        }
    }
}

/// A sparse-tier integrator whose step can be differentiated exactly, as products with the
/// step's Jacobian rather than as matrices: the sparse twin of [`DifferentiableStep`] and
/// [`DifferentiableInParameters`] together.
///
/// The same implicit function theorem on the step's own equations, with `p` the model's flat
/// parameter vector ([`SparseParameters`](crate::model::SparseParameters)): after
/// [`step_linearized`](Self::step_linearized), whose factorization is kept,
///
/// - [`tangent`](Self::tangent) returns `J (δq, δv) + J_p δp`, one solve with that factor: a
///   forward sensitivity's update, for any number of seeds one at a time;
/// - [`adjoint`](Self::adjoint) returns `Jᵀ (w_q, w_v)` and adds `J_pᵀ (w_q, w_v)` to a
///   gradient, one solve with the same (symmetric) factor: a backward pass's step, for the
///   gradient in every parameter at once ([`sparse_adjoint_gradient`](crate::simulation::sparse_adjoint_gradient)).
///
/// The model's second derivatives enter as visited entries
/// ([`SparseStepDerivatives`](crate::model::SparseStepDerivatives),
/// [`SparseParameterDerivatives`](crate::model::SparseParameterDerivatives), with `Hess V` on
/// its pattern), so no `n × n` or `n × P` matrix is formed: a product costs about one solve
/// with the step's factor and one pass over those entries.
///
/// Implemented by [`SparseSpook`](crate::SparseSpook) (eq. 29 differentiated; holonomic rows
/// only), [`SparseRattle`](crate::SparseRattle) (the converged position step and the
/// velocity projection; the adjoint solves with the transposed Newton matrix),
/// [`SparseShake`](crate::SparseShake) (the same position step, the velocity its difference
/// quotient), [`SparseVerlet`](crate::SparseVerlet) (the chain rule through its two
/// accelerations), [`SparseZhangSkeelSimplified`](crate::SparseZhangSkeelSimplified) (the
/// same through its linearly implicit accelerations, with the factors of `M + βh² Hess V` at
/// both ends and `V‴` along the acceleration), [`SparseZhangSkeelStiff`](crate::SparseZhangSkeelStiff)
/// (the same with the stiff part's Hessian and third derivative, on a
/// [`Penalized`](crate::Penalized) model, in the state only) and
/// [`SparseLangevin`](crate::SparseLangevin) around any of them (along the step's draws), for
/// models with a constant mass matrix and the derivatives `mechanism!` generates for a model
/// with families and `derivatives: [step_jacobians]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot differentiate its step for `{Model}`",
    label = "no sparse step Jacobian for `{Model}`",
    note = "for a `mechanism!` model with families, add `derivatives: [step_jacobians]` to it; the integrators that differentiate their step on the sparse tier are listed in the docs of `SparseDifferentiableStep`"
)]
pub trait SparseDifferentiableStep<Model: ?Sized>: SparseIntegrator<Model> {
    /// Advances `state` by one step, as [`SparseIntegrator::step`] does, and keeps what the
    /// step's Jacobian products need (its factorization, the state it started from, its
    /// multipliers) until the next step. On error `state` is unchanged and no products are
    /// available.
    fn step_linearized(
        &mut self,
        model: &Model,
        state: &mut DynState,
    ) -> Result<StepReport, StepError>;

    /// Writes `(δq', δv') = J (δq, δv) + J_p δp` of the last
    /// [`step_linearized`](Self::step_linearized) step into `out`; an empty `dp` is the zero
    /// direction in the parameters.
    ///
    /// Fails with `InvalidModel` when no linearized step was taken since the last plain step,
    /// with a size mismatch, or when the model is not the one the step was taken with (its
    /// sizes); with `NonFinite` for a non-finite product.
    fn tangent(
        &mut self,
        model: &Model,
        direction: (&[f64], &[f64], &[f64]),
        out: (&mut [f64], &mut [f64]),
    ) -> Result<(), StepError>;

    /// Writes `(a_q, a_v) = Jᵀ (w_q, w_v)` of the last
    /// [`step_linearized`](Self::step_linearized) step into `out` and adds `J_pᵀ (w_q, w_v)` to
    /// `parameters` (length `P`, or empty to skip the parameters): with `(w_q, w_v)` the
    /// gradient of a function of `(q_{k+1}, v_{k+1})`, these are its gradients with respect to
    /// `(q_k, v_k)` and to `p` through this step. Fails as [`tangent`](Self::tangent).
    fn adjoint(
        &mut self,
        model: &Model,
        weights: (&[f64], &[f64]),
        out: (&mut [f64], &mut [f64]),
        parameters: &mut [f64],
    ) -> Result<(), StepError>;
}

/// Which of a [`SparseDifferentiableStep`]'s products a size check is for, naming its vectors
/// in errors.
#[derive(Clone, Copy)]
pub(crate) enum Product {
    /// [`SparseDifferentiableStep::tangent`]: `dq`, `dv`, the two outputs, `dp`.
    Tangent,
    /// [`SparseDifferentiableStep::adjoint`]: `w_q`, `w_v`, the two outputs, the gradient.
    Adjoint,
}

/// Returns `InvalidModel` unless the four state vectors of a sparse Jacobian product (inputs,
/// then outputs) have the model's `n` coordinates and its parameter vector, where not empty,
/// the model's `p` parameters: the one size check of every [`SparseDifferentiableStep`].
pub(crate) fn check_product_lengths(
    product: Product,
    (n, p): (usize, usize),
    vectors: [usize; 4],
    parameters: usize,
) -> Result<(), StepError> {
    let (names, parameter_name) = match product {
        Product::Tangent => (
            [
                "tangent dq",
                "tangent dv",
                "tangent output q",
                "tangent output v",
            ],
            "tangent dp",
        ),
        Product::Adjoint => (
            [
                "adjoint w_q",
                "adjoint w_v",
                "adjoint output q",
                "adjoint output v",
            ],
            "adjoint parameters",
        ),
    };
    for (length, what) in vectors.into_iter().zip(names) {
        check_length(length, n, what)?;
    }
    if parameters != 0 {
        check_length(parameters, p, parameter_name)?;
    }
    Ok(())
}

/// Returns `InvalidModel` unless a vector of a sparse Jacobian product has the length it must
/// have (the model's `n` coordinates, or its `P` parameters).
fn check_length(found: usize, expected: usize, what: &'static str) -> Result<(), StepError> {
    if found == expected {
        Ok(())
    } else {
        Err(StepError::InvalidModel {
            what,
            index: found,
            reason: "has the wrong length for the model (n coordinates, or P parameters)",
        })
    }
}
