//! A potential split into a soft and a stiff part, for Z&Ss for stiff systems
//! ([`ZhangSkeelStiff`](crate::ZhangSkeelStiff), Tao and Owhadi 2014, Integrator 5).
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

use super::{
    GeneratedSolve, HolonomicHessians, Penalized, PenalizedHessian, PenalizedThirdDerivative,
    Potential, PotentialHessian, PotentialThirdDerivative,
};

/// A potential `V = V0 + ε⁻¹ V1` split into a soft part `V0` and a stiff part `ε⁻¹ V1`.
///
/// [`Potential`] is the total `V`; this adds the Hessian of the stiff part alone, for
/// [`ZhangSkeelStiff`](crate::ZhangSkeelStiff).
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

/// The third derivative of the stiff part contracted twice with a vector,
/// `a·(ε⁻¹ V1)‴(q)·a = ∇_q (aᵀ ε⁻¹ Hess V1(q) a)` (`a` held), for the step Jacobian of
/// [`ZhangSkeelStiff`](crate::ZhangSkeelStiff), whose acceleration
/// `−(M + βh² ε⁻¹ Hess V1)⁻¹ ∇V` holds `V1‴` along `a`.
///
/// [`Penalized<Model>`] implements it as `a·W‴·a − a·V‴·a` (`W = V + ½ ω² |g|²`, so the
/// difference is the penalty's) for a model with both contractions, which `mechanism!`
/// generates for `zss_stiff` with `derivatives: [step_jacobians]`.
pub trait StiffThirdDerivative<const N: usize>: SplitPotential<N> + PotentialHessian<N> {
    /// Writes `a·(ε⁻¹ V1)‴(q)·a` into `out`.
    fn stiff_third_contraction(
        &self,
        q: &SVector<f64, N>,
        a: &SVector<f64, N>,
        out: &mut SVector<f64, N>,
    );
}

impl<const N: usize, Model> StiffThirdDerivative<N> for Penalized<Model>
where
    Model: PenalizedThirdDerivative<N> + PenaltyHessian<N> + PotentialThirdDerivative<N>,
{
    fn stiff_third_contraction(
        &self,
        q: &SVector<f64, N>,
        a: &SVector<f64, N>,
        out: &mut SVector<f64, N>,
    ) {
        let mut soft = SVector::<f64, N>::zeros();
        self.model
            .penalized_potential_third_contraction(self.omega, q, a, out);
        self.model.potential_third_contraction(q, a, &mut soft);
        *out -= soft;
    }
}
