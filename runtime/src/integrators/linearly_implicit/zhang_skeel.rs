//! Zhang and Skeel's linearly implicit symplectic method (Z&S) and its simplification (Z&Ss),
//! as variational integrators (Tao and Owhadi 2014), on both tiers.

use super::carried::{
    AccelerationRule, CarriedDense, CarriedScheme, CarriedSparse, FullHessian,
    ImplicitAcceleration, ImplicitSolve, MassSolve, RuleDefaults, ThirdContraction, UsesBeta,
};
use crate::error::StepError;
use crate::integrators::checks::check_finite_slice;
use crate::integrators::StepReport;
use crate::model::GeneratedSolve;

/// Zhang and Skeel's symplectic method, Z&S (Tao–Owhadi 2014, Integrator 1, eq. 3).
///
/// From M. Tao and H. Owhadi, *Variational and linearly-implicit integrators, with applications*
/// (2014), after M. Zhang and R. D. Skeel, *Cheap implicit symplectic integrators* (1997).
/// For `M ẍ = −∇V(x)` with a constant symmetric positive definite `M`:
///
/// ```text
/// (M + βh² Hess V(x_k)) a_k = −∇V(x_k)
/// f_k     = a_k − ½ β² h⁴ M⁻¹ (a_k · V'''(x_k) · a_k)
/// x_{k+1} = x_k + h v_k + ½ h² f_k
/// v_{k+1} = v_k + ½ h (f_k + f_{k+1})
/// ```
///
/// It is variational, hence symplectic and momentum-map preserving, symmetric, second order,
/// and unconditionally linearly stable if and only if `β ≥ ¼` (Theorems 1.1 and 2.2). One LU
/// solve with `M + βh² Hess V` per step (the matrix may be indefinite, e.g. for a penalized
/// potential, see [`Penalized`](crate::Penalized)), plus solves with the Cholesky factor of `M`,
/// reused while `M` is unchanged. A configuration-dependent `M` is refused with
/// [`StepError::Unsupported`].
///
/// `f_{k+1}` is carried to the next step (first same as last): it is cached with the `x` it
/// was computed at and recomputed whenever the incoming state's `q` differs bitwise from it.
/// The cache does not know the model: after changing a model's parameters between steps, or
/// stepping another model from the same `q`, call [`reset`](CarriedScheme::reset).
///
/// It is the [`CarriedScheme`] with the acceleration [`FullAcceleration`]; its twin on the
/// sparse tier is [`SparseZhangSkeel`].
pub type ZhangSkeel<const N: usize> = CarriedScheme<CarriedDense<N>, FullAcceleration>;

/// Z&S on the sparse tier: the scheme of [`ZhangSkeel`], with `M + βh² Hess V` factored by a
/// sparse `LDLᵀ` on the union of the mass blocks' and the Hessian's patterns (analysed in
/// [`SparseZhangSkeel::new`](CarriedScheme::new)`(&model, h)`, positive definite required, see
/// [`CarriedSparse`]) and `M⁻¹` applied body by body; no allocation per step.
pub type SparseZhangSkeel = CarriedScheme<CarriedSparse, FullAcceleration>;

/// Zhang and Skeel's method simplified, Z&Ss (Tao–Owhadi 2014, Integrator 4, eq. 18).
///
/// Z&S without the `O(h⁵)` third-derivative correction, so it needs only `Hess V`:
///
/// ```text
/// a_k     = −(M + βh² Hess V(x_k))⁻¹ ∇V(x_k)
/// x_{k+1} = x_k + h v_k + ½ h² a_k
/// v_{k+1} = v_k + ½ h (a_k + a_{k+1})
/// ```
///
/// Second order, symmetric and unconditionally linearly stable if `β ≥ ¼` (Theorem 2.1), but
/// symplectic only under a commutation condition (e.g. one degree of freedom). One LU solve
/// with `M + βh² Hess V` per step and no solve with `M`.
///
/// `a_{k+1}` is carried to the next step exactly as in [`ZhangSkeel`]; call
/// [`reset`](CarriedScheme::reset) after changing the model between steps. It is the
/// [`CarriedScheme`] with the acceleration [`ImplicitAcceleration`]`<FullHessian>`; its twin on
/// the sparse tier is [`SparseZhangSkeelSimplified`].
///
/// # Example
///
/// ```
/// use mechanism_runtime::reference::HarmonicOscillator;
/// use mechanism_runtime::{Integrator, State, ZhangSkeelSimplified};
/// let model = HarmonicOscillator::default();
/// let mut zss = ZhangSkeelSimplified::<1>::new(0.1)?.with_beta(0.25)?;
/// let mut state = State::new(0.0, [1.0], [0.0]);
/// for _ in 0..10 {
///     zss.step(&model, &mut state)?;
/// }
/// assert!((state.t - 1.0).abs() < 1e-12);
/// # Ok::<(), mechanism_runtime::StepError>(())
/// ```
pub type ZhangSkeelSimplified<const N: usize> =
    CarriedScheme<CarriedDense<N>, ImplicitAcceleration<FullHessian>>;

/// Z&Ss on the sparse tier: the scheme of [`ZhangSkeelSimplified`], with `M + βh² Hess V`
/// factored by a sparse `LDLᵀ` analysed in
/// [`SparseZhangSkeelSimplified::new`](CarriedScheme::new)`(&model, h)` (positive definite
/// required, see [`CarriedSparse`]); no allocation per step.
pub type SparseZhangSkeelSimplified =
    CarriedScheme<CarriedSparse, ImplicitAcceleration<FullHessian>>;

/// The acceleration of full Z&S: `f = a − ½ β² h⁴ M⁻¹ (a·V‴·a)` with
/// `a = −(M + βh² Hess V)⁻¹ ∇V`.
#[derive(Clone, Copy, Debug, Default)]
pub struct FullAcceleration;

impl RuleDefaults for FullAcceleration {
    const DEFAULT_BETA: f64 = super::carried::DEFAULT_BETA;
}

impl UsesBeta for FullAcceleration {}

impl<Model: ?Sized, S> AccelerationRule<Model, S> for FullAcceleration
where
    S: ImplicitSolve<Model, FullHessian> + MassSolve<Model> + ThirdContraction<Model>,
{
    const NAME: &'static str = "Z&S";

    fn acceleration(
        &mut self,
        system: &mut S,
        model: &Model,
        x: &[f64],
        _guess: Option<&[f64]>,
        beta_h2: f64,
        out: &mut [f64],
        scratch: &mut [f64],
        t: f64,
    ) -> Result<StepReport, StepError> {
        let implicit = system.implicit_acceleration(model, x, beta_h2, out, t)?;
        check_finite_slice(out, "acceleration", t)?;
        system.third_contraction(model, x, out, scratch);
        check_finite_slice(scratch, "third contraction", t)?;
        let mass = system.solve_mass(model, x, scratch, t)?;
        // ½ β² h⁴ = ½ (βh²)².
        let scale = 0.5 * beta_h2 * beta_h2;
        for (f, c) in out.iter_mut().zip(&*scratch) {
            *f -= scale * c;
        }
        check_finite_slice(out, "acceleration", t)?;
        Ok(StepReport {
            factorizations: implicit + mass,
            newton_iterations: 0,
        })
    }

    // Always inlined, as `ImplicitAcceleration`'s.
    #[inline(always)]
    fn generated_acceleration(
        &mut self,
        system: &mut S,
        model: &Model,
        x: &[f64],
        beta_h2: f64,
        out: &mut [f64],
        scratch: &mut [f64],
    ) -> Option<StepReport> {
        if system.generated_implicit_acceleration(model, x, beta_h2, out) != GeneratedSolve::Solved
        {
            return None;
        }
        system.third_contraction(model, x, out, scratch);
        if system.generated_solve_mass(model, x, scratch) != GeneratedSolve::Solved {
            return None;
        }
        let scale = 0.5 * beta_h2 * beta_h2;
        for (f, c) in out.iter_mut().zip(&*scratch) {
            *f -= scale * c;
        }
        Some(StepReport {
            factorizations: 1,
            newton_iterations: 0,
        })
    }
}
