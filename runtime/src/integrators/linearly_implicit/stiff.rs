//! Z&Ss for stiff systems (Tao and Owhadi 2014, Integrator 5), and the split of the potential
//! into a soft and a stiff part that it needs.
//!
//! # Design of the split
//!
//! The scheme needs the total gradient `∇V` and the Hessian of the stiff part only. That is
//! [`SplitPotential`]. Its main client is a penalized model, where the stiff part is the penalty
//! `ε⁻¹ V1 = ½ ω² |g|²` ([`Penalized`]): [`Penalized<Model>`] implements [`SplitPotential`]
//! for every `Model` that implements [`PenalizedHessian`] (the total `∇W` and `Hess W`) and
//! [`PenaltyHessian`] (`Hess ½ ω² |g|²`). `PenaltyHessian` has no constraint-count parameter,
//! so the blanket impl needs no `M`; a model with constraints computes it from
//! [`HolonomicHessians`] with [`holonomic_penalty_hessian`], which is what
//! [`DoublePendulum`](crate::reference::DoublePendulum) does and what `mechanism!` can generate
//! for a penalized model (`impl PenaltyHessian<N> for Model` calling
//! `holonomic_penalty_hessian::<N, M, _>`, or a symbolic Hessian of `½ ω² |g|²` with `ω` as an
//! input, as for `PenalizedPotential`).

use nalgebra::{SMatrix, SVector};

use super::carried::{
    CarriedScheme, DenseSystem, ImplicitAcceleration, SparseSystem, StiffHessian,
};
use crate::model::{GeneratedSolve, HolonomicHessians, Penalized, PenalizedHessian, Potential};
use crate::reference::DoublePendulum;

/// A potential `V = V0 + ε⁻¹ V1` split into a soft part `V0` and a stiff part `ε⁻¹ V1`.
///
/// [`Potential`] is the total `V`; this adds the Hessian of the stiff part alone, for
/// [`ZhangSkeelStiff`].
///
/// Its main client is a penalized model, where the stiff part is the penalty
/// `ε⁻¹ V1 = ½ ω² |g|²`: [`Penalized<Model>`] implements `SplitPotential` for every `Model`
/// that implements [`PenalizedHessian`] (the total `∇W` and `Hess W`) and [`PenaltyHessian`]
/// (`Hess ½ ω² |g|²`). `PenaltyHessian` has no constraint-count parameter, so the blanket impl
/// needs no `M`; a model with constraints computes it from [`HolonomicHessians`] with
/// [`holonomic_penalty_hessian`], which is what
/// [`DoublePendulum`](crate::reference::DoublePendulum) does and what `mechanism!` can
/// generate for a penalized model (an `impl PenaltyHessian<N>` calling
/// `holonomic_penalty_hessian::<N, M, _>`, or a symbolic Hessian of `½ ω² |g|²` with `ω` as an
/// input, as for [`PenalizedPotential`](crate::model::PenalizedPotential)).
pub trait SplitPotential<const N: usize>: Potential<N> {
    /// Writes the symmetric `ε⁻¹ Hess V1(q)` into `hess`.
    fn stiff_hessian(&self, q: &SVector<f64, N>, hess: &mut SMatrix<f64, N, N>);

    /// Writes `∇V(q)` (total) and `ε⁻¹ Hess V1(q)` together; override to share work.
    fn potential_gradient_stiff_hessian(
        &self,
        q: &SVector<f64, N>,
        grad: &mut SVector<f64, N>,
        hess: &mut SMatrix<f64, N, N>,
    ) {
        self.potential_gradient(q, grad);
        self.stiff_hessian(q, hess);
    }

    /// Writes `a = −(M(q) + c ε⁻¹ Hess V1(q))⁻¹ ∇V(q)` with code specialized to the model, as
    /// [`PotentialHessian::implicit_acceleration`](crate::model::PotentialHessian::implicit_acceleration);
    /// the default has none.
    #[inline]
    fn stiff_implicit_acceleration(
        &self,
        q: &SVector<f64, N>,
        c: f64,
        a: &mut SVector<f64, N>,
    ) -> GeneratedSolve {
        let _ = (q, c, a);
        GeneratedSolve::NotGenerated
    }
}

/// The Hessian of the penalty `½ ω² |g(q)|²` of a model with holonomic constraints `g`.
///
/// ```text
/// Hess(½ ω² |g|²) = ω² (Gᵀ G + Σ_k g_k Hess g_k),    G = ∂g/∂q
/// ```
///
/// Together with [`PenalizedHessian`] it makes [`Penalized<Model>`] a [`SplitPotential`]
/// with `ε⁻¹ = ω²` and `V1 = ½ |g|²`. Scleronomic constraints only, like the penalty itself.
pub trait PenaltyHessian<const N: usize> {
    /// Writes `Hess(½ ω² |g(q)|²)` into `hess`.
    fn penalty_hessian(&self, omega: f64, q: &SVector<f64, N>, hess: &mut SMatrix<f64, N, N>);

    /// Writes `a = −(M(q) + c Hess(½ ω² |g|²))⁻¹ ∇W(q)` (`W = V + ½ ω² |g|²`) with the code
    /// `mechanism!` specializes to the model, as
    /// [`PotentialHessian::implicit_acceleration`](crate::model::PotentialHessian::implicit_acceleration);
    /// the default has none.
    #[inline]
    fn penalty_implicit_acceleration(
        &self,
        omega: f64,
        q: &SVector<f64, N>,
        c: f64,
        a: &mut SVector<f64, N>,
    ) -> GeneratedSolve {
        let _ = (omega, q, c, a);
        GeneratedSolve::NotGenerated
    }
}

/// Writes `ω² (Gᵀ G + Σ_k g_k Hess g_k)`, the Hessian of `½ ω² |g(q)|²`, from the constraints
/// of `model` at `t = 0` (the penalty of scleronomic constraints); the body of a
/// [`PenaltyHessian`] impl for a model with [`HolonomicHessians`].
pub fn holonomic_penalty_hessian<const N: usize, const M: usize, Model>(
    model: &Model,
    omega: f64,
    q: &SVector<f64, N>,
    hess: &mut SMatrix<f64, N, N>,
) where
    Model: HolonomicHessians<N, M>,
{
    let mut g = SVector::<f64, M>::zeros();
    let mut jac = SMatrix::<f64, M, N>::zeros();
    let mut hessians = [SMatrix::<f64, N, N>::zeros(); M];
    model.constraints_and_jacobian(q, 0.0, &mut g, &mut jac);
    model.constraint_hessians(q, 0.0, &mut hessians);
    *hess = jac.transpose() * jac;
    for (g_k, hess_k) in g.iter().zip(hessians.iter()) {
        *hess += hess_k * *g_k;
    }
    *hess *= omega * omega;
}

impl PenaltyHessian<4> for DoublePendulum {
    fn penalty_hessian(&self, omega: f64, q: &SVector<f64, 4>, hess: &mut SMatrix<f64, 4, 4>) {
        holonomic_penalty_hessian::<4, 2, _>(self, omega, q, hess);
    }
}

/// `W = V + ½ ω² |g|²` with `V0 = V` soft and `ε⁻¹ V1 = ½ ω² |g|²` stiff.
impl<const N: usize, Model> SplitPotential<N> for Penalized<Model>
where
    Model: PenalizedHessian<N> + PenaltyHessian<N>,
{
    fn stiff_hessian(&self, q: &SVector<f64, N>, hess: &mut SMatrix<f64, N, N>) {
        self.model.penalty_hessian(self.omega, q, hess);
    }

    #[inline(always)]
    fn stiff_implicit_acceleration(
        &self,
        q: &SVector<f64, N>,
        c: f64,
        a: &mut SVector<f64, N>,
    ) -> GeneratedSolve {
        self.model
            .penalty_implicit_acceleration(self.omega, q, c, a)
    }
}

/// Simplified Z&Ss for stiff systems (Tao–Owhadi 2014, Integrator 5, eq. 19).
///
/// From M. Tao and H. Owhadi, *Variational and linearly-implicit integrators, with applications*
/// (2014). For `M ẍ = −∇V(x)` with `V = V0 + ε⁻¹ V1`, `ε⁻¹ ≫ 1` ([`SplitPotential`]), Z&Ss
/// with the Hessian of the stiff part only:
///
/// ```text
/// a_k     = −(M + βh² ε⁻¹ Hess V1(x_k))⁻¹ (∇V0(x_k) + ε⁻¹ ∇V1(x_k))
/// x_{k+1} = x_k + h v_k + ½ h² a_k
/// v_{k+1} = v_k + ½ h (a_k + a_{k+1})
/// ```
///
/// Second order and symmetric (Corollary 2.1, Theorem 2.4). It is unconditionally linearly
/// stable for `β > ¼ + O(ε)` when `∇V0` is Lipschitz and `V1` is quadratic and positive
/// definite: for `V0 = ½ k0 x²`, `V1 = ½ k1 x²` the scheme is stable iff
/// `k0 h² ≤ 4m + (4β − 1) h² ε⁻¹ k1`. It skips the Hessian of `V0`, which is cheaper for
/// high-dimensional systems with a simple stiff part (Tao–Owhadi §4.3). One LU or Cholesky
/// solve with `M + βh² ε⁻¹ Hess V1` per step and no solve with `M`.
///
/// `a_{k+1}` is carried to the next step exactly as in
/// [`ZhangSkeelSimplified`](crate::ZhangSkeelSimplified); call
/// [`reset`](CarriedScheme::reset) after changing the model between steps. It is the
/// [`CarriedScheme`] with the acceleration [`ImplicitAcceleration`]`<StiffHessian>`; its twin
/// on the sparse tier is [`SparseZhangSkeelStiff`].
pub type ZhangSkeelStiff<const N: usize> =
    CarriedScheme<DenseSystem<N>, ImplicitAcceleration<StiffHessian>>;

/// Stiff Z&Ss on the sparse tier: the scheme of [`ZhangSkeelStiff`] for a
/// [`SparseSplitPotential`](crate::model::SparseSplitPotential) (e.g. a
/// [`Penalized`] sparse model, whose stiff Hessian is `Hess(½ ω² |g|²)`), with
/// `M + βh² ε⁻¹ Hess V1` factored by a sparse `LDLᵀ` analysed in
/// [`SparseZhangSkeelStiff::new`](CarriedScheme::new)`(&model, h)` (positive definite
/// required, see [`SparseSystem`]); no allocation per step.
///
/// # Example
///
/// Tao–Owhadi's chain of pendula (§4.2) with 1000 links, its rods replaced by the penalty
/// `½ ω² |g|²`:
///
/// ```
/// use mechanism_runtime::reference::PendulumChain;
/// use mechanism_runtime::{Penalized, SparseIntegrator, SparseZhangSkeelStiff};
/// let chain = PendulumChain::tao_owhadi(1000);
/// let mut state = chain.tao_owhadi_state();
/// let model = Penalized::new(chain, 20.0);
/// let mut zss = SparseZhangSkeelStiff::new(&model, 0.05)?; // pattern and symbolic LDLᵀ
/// for _ in 0..20 {
///     zss.step(&model, &mut state)?; // one sparse LDLᵀ per step, no allocation
/// }
/// assert!((state.t - 1.0).abs() < 1e-12);
/// # Ok::<(), mechanism_runtime::StepError>(())
/// ```
pub type SparseZhangSkeelStiff = CarriedScheme<SparseSystem, ImplicitAcceleration<StiffHessian>>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::PotentialHessian;

    #[test]
    fn penalty_hessian_is_the_penalized_hessian_of_a_linear_potential() {
        // V is linear for the double pendulum, so Hess W = Hess(½ ω² |g|²).
        let model = Penalized::new(DoublePendulum::default(), 3.0);
        let q = SVector::<f64, 4>::new(0.3, -0.9, 1.2, -2.1);
        let (mut stiff, mut total) = (SMatrix::zeros(), SMatrix::zeros());
        model.stiff_hessian(&q, &mut stiff);
        model.potential_hessian(&q, &mut total);
        assert!(
            (stiff - total).amax() < 1e-12 * total.amax(),
            "{stiff} vs {total}"
        );
    }
}
