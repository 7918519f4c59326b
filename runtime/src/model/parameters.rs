//! A model's run-time parameters by index, and the derivatives of its functions with respect to
//! them: what a step's parameter Jacobian
//! ([`DifferentiableInParameters`](crate::DifferentiableInParameters)) differentiates.

use nalgebra::{SMatrix, SVector};

/// The `P` run-time parameters of a model (the fields `mechanism!` generates from its
/// `parameters` section), read and written as one vector, for fits, sweeps and sensitivities
/// that address parameters by index.
///
/// `mechanism!` implements it for a model with `derivatives: [step_jacobians]`. (The
/// checkpoint's record of the parameters by name, families included, is
/// [`ModelIdentity::parameters`](crate::checkpoint::ModelIdentity::parameters).)
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not list its parameters by index",
    label = "the model lacks `Parameters`",
    note = "add `derivatives: [step_jacobians]` to the `mechanism!` of the model"
)]
pub trait Parameters<const P: usize> {
    /// The parameter names, in the order of the vector.
    const PARAMETERS: [&'static str; P];

    /// Returns the parameters' values.
    fn parameter_values(&self) -> SVector<f64, P>;

    /// Sets the parameters' values. A value that is not finite is accepted here and reported by
    /// the next step ([`StepError::BadParameter`](crate::StepError::BadParameter)), as for a
    /// field set directly.
    fn set_parameter_values(&mut self, values: &SVector<f64, P>);
}

/// The mass matrix's derivatives in the run-time parameters, `∂M(q)/∂p_j`: the part of
/// [`ParameterDerivatives`] that does not depend on the model's rows, for a wrapper that knows
/// `N` and `P` but not the row counts (the Langevin scheme's parameter Jacobian).
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no derivatives with respect to its parameters",
    label = "the model lacks `MassParameterDerivatives`",
    note = "add `derivatives: [step_jacobians]` to the `mechanism!` of the model"
)]
pub trait MassParameterDerivatives<const N: usize, const P: usize>: Parameters<P> {
    /// Writes `∂M(q)/∂p_j` into `out[j]`.
    fn mass_parameter_derivatives(&self, q: &SVector<f64, N>, out: &mut [SMatrix<f64, N, N>; P]);
}

/// The derivatives with respect to the `P` run-time parameters of every function of a model
/// with `N` coordinates, `M` holonomic and `K` nonholonomic rows that a step's equations
/// contain: `M(q)` ([`MassParameterDerivatives`]) and `∂T/∂q`, `V(q)` and `∇V(q)`, the applied force
/// `f_a(q, v, t) = −∂R/∂v + f`, the rows `g(q, t)` with their Jacobian `G`, and the
/// nonholonomic `A(q)`, `w(t)`.
///
/// A matrix-valued function gets one matrix per parameter (`out[j] = ∂(·)/∂p_j`), a
/// vector-valued one an `·×P` Jacobian (column `j` is `∂(·)/∂p_j`). `mechanism!` generates
/// them for `derivatives: [step_jacobians]`, by differentiating the model's expressions in the
/// parameter symbols (a parameter that a function does not contain gives exact zeros).
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no derivatives with respect to its parameters",
    label = "the model lacks `ParameterDerivatives`",
    note = "add `derivatives: [step_jacobians]` to the `mechanism!` of the model"
)]
pub trait ParameterDerivatives<const N: usize, const M: usize, const K: usize, const P: usize>:
    MassParameterDerivatives<N, P>
{
    /// Writes `∂(∂T/∂q)(q, v)/∂p` into `out` (zero for a constant `M`): the force of a
    /// configuration-dependent mass matrix in a discrete Lagrangian, in the parameters.
    fn kinetic_gradient_parameter_jacobian(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        out: &mut SMatrix<f64, N, P>,
    );

    /// Writes `∂V(q)/∂p` into `out`: the potential's own parameter derivatives, which a
    /// discrete gradient `D̄V` holds in its difference quotient.
    fn potential_parameter_gradient(&self, q: &SVector<f64, N>, out: &mut SVector<f64, P>);

    /// Writes `∂∇V(q)/∂p` (`N×P`) into `out`.
    fn potential_gradient_parameter_jacobian(
        &self,
        q: &SVector<f64, N>,
        out: &mut SMatrix<f64, N, P>,
    );

    /// Writes `∂f_a(q, v, t)/∂p` (`N×P`) into `out`, `f_a = −∂R/∂v + f` as in
    /// [`AppliedForces`](crate::AppliedForces).
    fn applied_force_parameter_jacobian(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        t: f64,
        out: &mut SMatrix<f64, N, P>,
    );

    /// Writes `∂g(q, t)/∂p` (`M×P`) into `out`.
    fn constraint_parameter_jacobian(
        &self,
        q: &SVector<f64, N>,
        t: f64,
        out: &mut SMatrix<f64, M, P>,
    );

    /// Writes `∂G(q, t)/∂p_j` into `out[j]`.
    fn constraint_jacobian_parameter_derivatives(
        &self,
        q: &SVector<f64, N>,
        t: f64,
        out: &mut [SMatrix<f64, M, N>; P],
    );

    /// Writes `∂A(q)/∂p_j` into `out[j]`.
    fn nonholonomic_matrix_parameter_derivatives(
        &self,
        q: &SVector<f64, N>,
        out: &mut [SMatrix<f64, K, N>; P],
    );

    /// Writes `∂w(t)/∂p` (`K×P`) into `out`.
    fn nonholonomic_drive_parameter_jacobian(&self, t: f64, out: &mut SMatrix<f64, K, P>);
}
