//! Newmark with a single Newton iteration per step (Tao and Owhadi 2014, §4.1 and §4.3): the
//! [`NewmarkScheme`] with the corrector [`FirstIterate`], on both tiers.

use std::marker::PhantomData;

use super::carried::{
    CarriedDense, CarriedSparse, FullHessian, NewtonIterate, SparseHessian, StiffHessian,
};
use super::newmark::{NewmarkCheckpoint, NewmarkCorrector, NewmarkScheme};
use crate::checkpoint::short_type_name;
use crate::error::StepError;
use crate::integrators::checks::{check_finite_slice, check_step_size};
use crate::integrators::StepReport;
use crate::model::SparseInertia;

/// Newmark with only the first Newton iteration per step: the "linearly-implicit Newmark" of
/// Tao–Owhadi 2014, §4.1 (Fig. 1, row 5).
///
/// The scheme of [`Newmark`](super::Newmark) (eq. 12, `γ = ½`) in which `a_{k+1}` is the
/// first Newton iterate from `a_k`, accepted without a convergence test:
///
/// ```text
/// q̃       = q_k + h v_k + (½ − β) h² a_k
/// a_{k+1} = a_k − (M + βh² Hess V(q̃ + βh² a_k))⁻¹ (M a_k + ∇V(q̃ + βh² a_k))
/// q_{k+1} = q̃ + βh² a_{k+1}
/// v_{k+1} = v_k + ½ h (a_k + a_{k+1})
/// ```
///
/// One factorization per step and never a Newton failure, like Z&Ss; it is consistent and
/// coincides with [`Newmark`](super::Newmark) for a quadratic `V`, but for nonlinear stiff
/// problems its error at large steps is much larger than that of the converged scheme
/// (Tao–Owhadi Fig. 1, rows 4–5), which is why Z&S linearizes the *push-forward* scheme
/// instead ([`PushForwardNewmark`](super::PushForwardNewmark)).
/// [`StepReport::newton_iterations`] is 1.
///
/// A corrector of its own ([`FirstIterate`]) rather than a `max_iterations = 1` option of
/// [`Newmark`](super::Newmark), where running out of iterations is an error: here the
/// unconverged iterate *is* the method. The carried `a_{k+1}` is therefore part of the method's state (it is not
/// `−M⁻¹ ∇V(q_{k+1})`): it is reused while the incoming `q` matches bitwise, and otherwise (or
/// after [`reset`](NewmarkScheme::reset)) the step restarts from the consistent
/// `a_k = −M⁻¹ ∇V(q_k)`.
///
/// It is the [`NewmarkScheme`] with the corrector [`FirstIterate`] on the fixed-size tier;
/// [`SparseNewmarkOneIteration`] is the same scheme on the sparse tier.
pub type NewmarkOneIteration<const N: usize> =
    NewmarkScheme<CarriedDense<N>, FirstIterate<FullHessian>>;

/// [`NewmarkOneIteration`] on the sparse tier, with the Newton Jacobian built from the Hessian
/// that `Which` names: [`SparseNewmarkOneIteration`] (`Hess V`) or
/// [`SparseNewmarkOneIterationStiff`] (the stiff part's Hessian, as stiff Z&Ss).
///
/// From M. Tao and H. Owhadi, *Variational and linearly-implicit integrators, with applications*
/// (2014), §2.1 and §4.1 (Newmark, eq. 12, `γ = ½`, solved by a single Newton iteration), the
/// "partially solved Newmark" that they compare stiff Z&Ss with on the water cluster (§4.3,
/// Fig. 6):
///
/// ```text
/// q̃       = q_k + h v_k + (½ − β) h² a_k
/// y       = q̃ + βh² a_k
/// a_{k+1} = a_k − (M + βh² H(y))⁻¹ (M a_k + ∇V(y))
/// q_{k+1} = q̃ + βh² a_{k+1}
/// v_{k+1} = v_k + ½ h (a_k + a_{k+1})
/// ```
///
/// One sparse `LDLᵀ` of `M + βh² H` per step, on the pattern analysed by `new`, positive
/// definite required (see [`CarriedSparse`]); no allocation per step. With `H = Hess V` the
/// iterate is Newton's; with the stiff Hessian `ε⁻¹ Hess V1` of a split potential `V = V0 +
/// ε⁻¹ V1` (e.g. a [`Penalized`](crate::Penalized) model) it is one step of a Newton iteration
/// whose Jacobian drops `Hess V0`, the same approximation stiff Z&Ss makes (eq. 19), so that
/// the two cost one block-diagonal solve per step each and differ only in the scheme. Either
/// is consistent and second order for a smooth `V` (the first iterate from `a_k` is within
/// `O(h²)` of the converged `a_{k+1}`), but not variational and, unlike Z&S, not the
/// linearization of a symplectic scheme.
///
/// The carried `a_{k+1}` is part of the method's state, as in the fixed-size
/// [`NewmarkOneIteration`]: it is reused while the incoming `q` matches the last `q_{k+1}` bit
/// for bit (so a Langevin kick, which changes only `v`, keeps it), and otherwise, or after
/// [`reset`](NewmarkScheme::reset), the step restarts from `a_k = −M⁻¹ ∇V(q_k)`. The paper
/// assumes a constant `M`; a model whose mass depends on `q` is refused. The state is
/// unchanged on error.
///
/// # Example
///
/// A chain of 100 pendula with its rods as the penalty `½ ω² |g|²`:
///
/// ```
/// use mechanism_runtime::reference::PendulumChain;
/// use mechanism_runtime::{Penalized, SparseIntegrator, SparseNewmarkOneIterationStiff};
/// let chain = PendulumChain::tao_owhadi(100);
/// let mut state = chain.tao_owhadi_state();
/// let model = Penalized::new(chain, 20.0);
/// let mut newmark = SparseNewmarkOneIterationStiff::new(&model, 0.05)?;
/// for _ in 0..20 {
///     let report = newmark.step(&model, &mut state)?;
///     assert_eq!(report.newton_iterations, 1);
/// }
/// assert!((state.t - 1.0).abs() < 1e-12);
/// # Ok::<(), mechanism_runtime::StepError>(())
/// ```
pub type SparseNewmarkFirstIterate<Which> = NewmarkScheme<CarriedSparse, FirstIterate<Which>>;

/// One-iteration Newmark on the sparse tier with the Jacobian `M + βh² Hess V`.
pub type SparseNewmarkOneIteration = SparseNewmarkFirstIterate<FullHessian>;

/// One-iteration Newmark on the sparse tier with the Jacobian `M + βh² ε⁻¹ Hess V1` of a
/// split potential (the Hessian stiff Z&Ss factors).
pub type SparseNewmarkOneIterationStiff = SparseNewmarkFirstIterate<StiffHessian>;

/// The corrector of one-iteration Newmark: the first Newton iterate from `a_k`, with the
/// Jacobian `M + βh² H` and the Hessian `H` that `Which` names, accepted without a test.
#[derive(Clone, Copy, Debug, Default)]
pub struct FirstIterate<Which>(PhantomData<Which>);

impl<Model: ?Sized, S, Which> NewmarkCorrector<Model, S> for FirstIterate<Which>
where
    S: NewtonIterate<Model, Which>,
{
    const NAME: &'static str = "one-iteration Newmark";

    fn correct(
        &mut self,
        system: &mut S,
        model: &Model,
        predictor: &[f64],
        a_k: &[f64],
        beta_h2: f64,
        out: &mut [f64],
        scratch: &mut [f64],
        t: f64,
    ) -> Result<StepReport, StepError> {
        // y = q̃ + βh² a_k, where the iterate evaluates M, ∇V and H.
        for ((y, p), a) in scratch.iter_mut().zip(predictor).zip(a_k) {
            *y = p + beta_h2 * a;
        }
        check_finite_slice(scratch, "q", t)?;
        let factorizations = system.newton_iterate(model, scratch, a_k, beta_h2, out, t)?;
        check_finite_slice(out, "acceleration", t)?;
        Ok(StepReport {
            factorizations,
            newton_iterations: 1,
        })
    }
}

impl<const N: usize> NewmarkCheckpoint<CarriedDense<N>> for FirstIterate<FullHessian> {
    fn checkpoint_name(_n: usize) -> String {
        format!("NewmarkOneIteration<{N}>")
    }
}

impl<Which> NewmarkCheckpoint<CarriedSparse> for FirstIterate<Which> {
    fn checkpoint_name(_n: usize) -> String {
        format!("SparseNewmarkFirstIterate<{}>", short_type_name::<Which>())
    }
}

impl<Which> SparseNewmarkFirstIterate<Which> {
    /// Creates the stepper for `model` with step size `h` and `β = 0.4`: reads the pattern of
    /// the Hessian `Which` names, analyses the pattern of `M + βh² H` and sizes every buffer.
    /// Fails with `BadStepSize` for a bad `h` and `InvalidModel` for inconsistent body sizes or
    /// patterns.
    pub fn new<Model>(model: &Model, h: f64) -> Result<Self, StepError>
    where
        Model: SparseInertia + ?Sized,
        Which: SparseHessian<Model>,
    {
        let h = check_step_size(h)?;
        let system = CarriedSparse::new(model, Which::pattern(model))?;
        let zero = vec![0.0; model.coordinate_count()];
        Self::with_parts(h, FirstIterate(PhantomData), system, zero)
    }
}
