//! Z&Ss for stiff systems (Tao and Owhadi 2014, Integrator 5) on both tiers.
//! The split itself is [`SplitPotential`](crate::model::SplitPotential), a model trait.

use super::carried::{
    CarriedDense, CarriedScheme, CarriedSparse, ImplicitAcceleration, StiffHessian,
};

/// Simplified Z&Ss for stiff systems (Tao–Owhadi 2014, Integrator 5, eq. 19).
///
/// From M. Tao and H. Owhadi, *Variational and linearly-implicit integrators, with applications*
/// (2014). For `M ẍ = −∇V(x)` with `V = V0 + ε⁻¹ V1`, `ε⁻¹ ≫ 1` ([`SplitPotential`](crate::model::SplitPotential)), Z&Ss
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
    CarriedScheme<CarriedDense<N>, ImplicitAcceleration<StiffHessian>>;

/// Stiff Z&Ss on the sparse tier: the scheme of [`ZhangSkeelStiff`] for a
/// [`SparseSplitPotential`](crate::model::SparseSplitPotential) (e.g. a
/// [`Penalized`](crate::model::Penalized) sparse model, whose stiff Hessian is `Hess(½ ω² |g|²)`), with
/// `M + βh² ε⁻¹ Hess V1` factored by a sparse `LDLᵀ` analysed in
/// [`SparseZhangSkeelStiff::new`](CarriedScheme::new)`(&model, h)` (positive definite
/// required, see [`CarriedSparse`]); no allocation per step.
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
pub type SparseZhangSkeelStiff = CarriedScheme<CarriedSparse, ImplicitAcceleration<StiffHessian>>;
