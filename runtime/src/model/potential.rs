use nalgebra::{SMatrix, SVector};

/// A potential energy `V(q)` and its gradient.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not compiled for an integrator that steps with `Potential`",
    label = "the model lacks `Potential`",
    note = "add the integrator to `integrators: [..]` in the `mechanism!` of the model (the names and the runtime types they cover: `mechanism::runtime::capabilities::Family`)"
)]
pub trait Potential<const N: usize> {
    /// Which coordinates the potential depends on: `false` at `i` promises that `V(q)` does not
    /// depend on `q_i`.
    ///
    /// Gonzalez's discrete gradient of `V` is then formed in the coordinates `V` depends on
    /// only, so its component along `q_i` is exactly zero (see
    /// [`discrete_gradient`](crate::discrete_gradient), "Masks"). All `true` by default, which
    /// is always correct; `mechanism!` emits the symbolic dependencies.
    const POTENTIAL_DEPENDS_ON: [bool; N] = [true; N];

    /// Returns `V(q)`.
    fn potential(&self, q: &SVector<f64, N>) -> f64;

    /// Writes `∇V(q)` into `grad`.
    fn potential_gradient(&self, q: &SVector<f64, N>, grad: &mut SVector<f64, N>);
}

/// The Hessian of the potential, for linearly implicit integrators (Zhang–Skeel, Newmark).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not compiled for an integrator that steps with `PotentialHessian`",
    label = "the model lacks `PotentialHessian`",
    note = "add the integrator to `integrators: [..]` in the `mechanism!` of the model (the names and the runtime types they cover: `mechanism::runtime::capabilities::Family`)",
    note = "for `mechanism::runtime::linearization` (equilibria and modes), add `derivatives: [hessians]` to the `mechanism!` of the model instead, or `derivatives: [step_jacobians]` for step Jacobians (`DifferentiableStep`)"
)]
pub trait PotentialHessian<const N: usize>: Potential<N> {
    /// Writes the symmetric `Hess V(q)` into `hess`.
    fn potential_hessian(&self, q: &SVector<f64, N>, hess: &mut SMatrix<f64, N, N>);

    /// Writes `∇V(q)` and `Hess V(q)` together; generated models override this to share work.
    fn potential_gradient_hessian(
        &self,
        q: &SVector<f64, N>,
        grad: &mut SVector<f64, N>,
        hess: &mut SMatrix<f64, N, N>,
    ) {
        self.potential_gradient(q, grad);
        self.potential_hessian(q, hess);
    }

    /// Writes the linearly implicit acceleration `a = −(M(q) + c Hess V(q))⁻¹ ∇V(q)` of the
    /// Zhang–Skeel family with the code `mechanism!` specializes to the model: `∇V`, `Hess V`
    /// and `M` together, and an `LDLᵀ` without pivoting unrolled over the structural nonzeros
    /// of `M + c Hess V` and their fill only; or says why it did not ([`GeneratedSolve`]).
    /// `a` is written only when the result is [`GeneratedSolve::Solved`]. The default has no
    /// such code and returns [`GeneratedSolve::NotGenerated`].
    #[inline]
    fn implicit_acceleration(
        &self,
        q: &SVector<f64, N>,
        c: f64,
        a: &mut SVector<f64, N>,
    ) -> GeneratedSolve {
        let _ = (q, c, a);
        GeneratedSolve::NotGenerated
    }
}

/// What a linear solve that `mechanism!` generated for a model did; on anything but
/// [`Solved`](GeneratedSolve::Solved) the integrator runs its generic kernels, which either
/// succeed where the specialized code cannot (an indefinite matrix, factored by pivoted LU) or
/// report the error with its culprit.
///
/// The generated `LDLᵀ` eliminates over the structural nonzeros only, in an order chosen for
/// a short chain of dependent operations, with `2 × 2` pivots along paths of the elimination
/// tree (one division for two unknowns). It is backward stable like the generic Cholesky, so
/// where it succeeds its result agrees with the generic one to the conditioning of the system,
/// not bit for bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GeneratedSolve {
    /// The solution was written.
    Solved,
    /// The model has no generated solve for this system (a hand-written model, or one compiled
    /// for other integrators).
    NotGenerated,
    /// A pivot was not clearly positive (`D_jj ≤ N·ε·|A_jj|`, the generic Cholesky's test), or
    /// a value was not finite.
    Declined,
}

/// The third derivative of the potential contracted twice with a vector, for full Z&S.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not compiled for an integrator that steps with `PotentialThirdDerivative`",
    label = "the model lacks `PotentialThirdDerivative`",
    note = "add the integrator to `integrators: [..]` in the `mechanism!` of the model (the names and the runtime types they cover: `mechanism::runtime::capabilities::Family`)"
)]
pub trait PotentialThirdDerivative<const N: usize>: PotentialHessian<N> {
    /// Writes `a·V'''(q)·a = ∇_q (aᵀ Hess V(q) a)` (with `a` held fixed) into `out`.
    fn potential_third_contraction(
        &self,
        q: &SVector<f64, N>,
        a: &SVector<f64, N>,
        out: &mut SVector<f64, N>,
    );
}

/// The derivative of the potential's Hessian along a vector in the model's `P` run-time
/// parameters, `∂(∇²V(q) a)/∂p` (`N × P`), for the parameter Jacobian of Z&Ss, whose
/// acceleration `a = −(M + βh² ∇²V)⁻¹ ∇V` holds `∇²V` along `a`.
///
/// `mechanism!` implements it for a model compiled for `zss` (or `zs`) with
/// `derivatives: [step_jacobians]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` lacks the parameter derivative of its potential's Hessian",
    label = "the model lacks `PotentialHessianParameterDerivative`",
    note = "for a model written with `mechanism!`, add `zss` to `integrators: [..]` and `derivatives: [step_jacobians]`"
)]
pub trait PotentialHessianParameterDerivative<const N: usize, const P: usize> {
    /// Writes `∂(∇²V(q) a)/∂p` into `out` (column `j` is `∂(∇²V a)/∂p_j`).
    fn potential_hessian_parameter_derivative(
        &self,
        q: &SVector<f64, N>,
        a: &SVector<f64, N>,
        out: &mut SMatrix<f64, N, P>,
    );
}
