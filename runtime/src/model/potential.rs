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
    note = "add the integrator to `integrators: [..]` in the `mechanism!` of the model (the names and the runtime types they cover: `mechanism::runtime::capabilities::Family`)"
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
