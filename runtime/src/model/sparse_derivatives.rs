//! What the sparse tier's step Jacobians ask of a model beyond its step: the rows' second
//! derivatives, the applied force's Jacobians, the run-time parameters as one flat vector and
//! every function's derivatives with respect to them — the sparse twins of
//! [`HolonomicHessians`](super::HolonomicHessians), [`Parameters`](super::Parameters) and
//! [`ParameterDerivatives`](super::ParameterDerivatives).
//!
//! A model of this tier never hands over a dense matrix, and a third-order tensor such as
//! `∂²g_c/∂q_a∂q_b` over all rows is not one matrix either. So these traits hand over *entries*:
//! each method calls a visitor once per structural nonzero, with its global indices and value,
//! in an order of the model's choosing. An entry may be visited more than once (two slots of a
//! generated kernel naming the same coordinate, or two terms touching one pair): the values of
//! repeated entries add up, which is what every contraction of them needs. The integrators
//! contract the entries with the vectors of a Jacobian product as they come
//! ([`SparseDifferentiableStep`](crate::SparseDifferentiableStep)), so nothing of size
//! `n × n` or `n × P` is ever stored. `mechanism!` implements them for a model with families and
//! `derivatives: [step_jacobians]`, each a loop over the kernels' instances around the
//! kernel's straight-line derivatives.

use super::{SparseAppliedForces, SparseHolonomic};
use crate::error::StepError;

/// The run-time parameters of a sparse-tier model as one flat vector `p` of length `P`: the
/// scalar parameters in declaration order, then each parameter family's members in order
/// (`m[0], …, m[N−1]` of `parameters: { m[N] = 1.0 }`), for sensitivities and gradients that
/// address parameters by index. The sparse twin of [`Parameters`](super::Parameters).
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not list its parameters as a flat vector",
    label = "the model lacks `SparseParameters`",
    note = "add `derivatives: [step_jacobians]` to the `mechanism!` of the model (a model with families)"
)]
pub trait SparseParameters {
    /// Returns `P`, the number of parameters (scalars and every family member), with each
    /// family at its current length.
    fn parameter_count(&self) -> usize;

    /// Returns the name of parameter `j` and, for a family member, its index in the family
    /// (`("m", Some(3))` for `m[3]`); `None` for `j ≥ P`.
    fn parameter_name(&self, j: usize) -> Option<(&'static str, Option<usize>)>;

    /// Returns the parameters' values, `P` of them.
    fn parameter_values(&self) -> Vec<f64>;

    /// Sets the parameters from `values`; fails with `InvalidModel` unless it has `P` values
    /// (then nothing is set). A value that is not finite is accepted here and reported by the
    /// next step, as for a field set directly.
    fn set_parameter_values(&mut self, values: &[f64]) -> Result<(), StepError>;
}

/// The second derivatives of a sparse-tier model's rows and the Jacobians of its applied force,
/// as visited entries (see the module docs): what the exact Jacobian of a step needs beyond
/// `Hess V` ([`SparsePotentialHessian`](super::SparsePotentialHessian)).
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no `SparseStepDerivatives`",
    label = "the model lacks the second derivatives a step's Jacobian needs",
    note = "add `derivatives: [step_jacobians]` to the `mechanism!` of the model (a model with families)"
)]
pub trait SparseStepDerivatives: SparseHolonomic + SparseAppliedForces {
    /// Calls `visit(c, a, b, value)` with `value = ∂²g_c/∂q_a∂q_b (q, t)` for every structural
    /// nonzero, each ordered pair `(a, b)` on its own (both `(a, b)` and `(b, a)` are visited).
    fn constraint_hessian_entries(
        &self,
        q: &[f64],
        t: f64,
        visit: &mut impl FnMut(usize, usize, usize, f64),
    );

    /// Calls `visit(a, b, ∂f_a/∂q_b, ∂f_a/∂v_b)` for every structural nonzero of the applied
    /// force's Jacobians ([`SparseAppliedForces`]). A model without applied forces visits
    /// nothing; a model with forces must visit them, or its step Jacobian misses them.
    fn applied_force_jacobian_entries(
        &self,
        q: &[f64],
        v: &[f64],
        t: f64,
        visit: &mut impl FnMut(usize, usize, f64, f64),
    );
}

/// The derivatives with respect to the flat parameter vector `p` ([`SparseParameters`]) of
/// every function of a sparse-tier model that a step's equations contain, as visited entries
/// (see the module docs): the sparse twin of [`ParameterDerivatives`](super::ParameterDerivatives)
/// for models with holonomic rows (the tier's family models have no nonholonomic rows).
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no derivatives with respect to its parameters",
    label = "the model lacks `SparseParameterDerivatives`",
    note = "add `derivatives: [step_jacobians]` to the `mechanism!` of the model (a model with families)"
)]
pub trait SparseParameterDerivatives: SparseParameters {
    /// Calls `visit(a, b, j, ∂M_ab/∂p_j)` (coordinates `a`, `b` of one body).
    fn mass_parameter_entries(&self, q: &[f64], visit: &mut impl FnMut(usize, usize, usize, f64));

    /// Calls `visit(a, j, ∂²V/∂q_a∂p_j)`.
    fn potential_gradient_parameter_entries(
        &self,
        q: &[f64],
        visit: &mut impl FnMut(usize, usize, f64),
    );

    /// Calls `visit(a, j, ∂f_a/∂p_j)` of the applied force ([`SparseAppliedForces`]); a model
    /// without applied forces visits nothing.
    fn applied_force_parameter_entries(
        &self,
        q: &[f64],
        v: &[f64],
        t: f64,
        visit: &mut impl FnMut(usize, usize, f64),
    );

    /// Calls `visit(c, j, ∂g_c/∂p_j)`.
    fn constraint_parameter_entries(
        &self,
        q: &[f64],
        t: f64,
        visit: &mut impl FnMut(usize, usize, f64),
    );

    /// Calls `visit(c, a, j, ∂²g_c/∂q_a∂p_j)`: the derivative of `G`'s entry `(c, a)`.
    fn constraint_jacobian_parameter_entries(
        &self,
        q: &[f64],
        t: f64,
        visit: &mut impl FnMut(usize, usize, usize, f64),
    );
}

/// The potential's Hessian differentiated in the parameters, `∂³V/∂q_a∂q_b∂p_j`, as visited
/// entries: what Z&Ss's parameter Jacobian on the sparse tier needs besides
/// [`SparseParameterDerivatives`] (it differentiates `(M + βh² Hess V) a = −∇V` in `p`, with
/// `a` held), the sparse twin of
/// [`PotentialHessianParameterDerivative`](super::PotentialHessianParameterDerivative).
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no derivative of its potential's Hessian in its parameters",
    label = "the model lacks `SparsePotentialHessianParameterDerivative`",
    note = "a `mechanism!` model with families has it with `derivatives: [step_jacobians]` when compiled for `zs`, `zss` or `zss_stiff`"
)]
pub trait SparsePotentialHessianParameterDerivative: SparseParameterDerivatives {
    /// Calls `visit(a, b, j, ∂³V/∂q_a∂q_b∂p_j)` for every ordered pair `(a, b)` of
    /// coordinates that share a term (both `(a, b)` and `(b, a)`, so that a contraction with a
    /// vector `x` is `Σ_b visit(a, b, j, ·) x_b` without symmetrizing).
    fn potential_hessian_parameter_entries(
        &self,
        q: &[f64],
        visit: &mut impl FnMut(usize, usize, usize, f64),
    );
}
