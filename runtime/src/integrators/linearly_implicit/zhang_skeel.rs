//! Zhang and Skeel's linearly implicit symplectic method (Z&S) and its simplification (Z&Ss),
//! as variational integrators (Tao and Owhadi 2014).

use nalgebra::{SMatrix, SVector};

use super::newmark::{shared_builders, Core, Solve};
use super::{check_finite, MassFactor};
use crate::error::StepError;
use crate::integrators::{Integrator, StepReport};
use crate::linalg::SymmetricFactor;
use crate::model::{Inertia, PotentialHessian, PotentialThirdDerivative};
use crate::state::State;

/// The name of the matrix of the linear solve, for errors.
const IMPLICIT_MATRIX: &str = "M + βh² Hess V";

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
/// reused while `M` is unchanged if `Inertia::CONSTANT_MASS`.
///
/// `f_{k+1}` is carried to the next step (first same as last): it is cached with the `x` it
/// was computed at and recomputed whenever the incoming state's `q` differs bitwise from it.
/// The cache does not know the model: after changing a model's parameters between steps, or
/// stepping another model from the same `q`, call [`reset`](Self::reset).
///
/// A configuration-dependent `M(q)` is evaluated where each `f` is; the paper assumes a
/// constant `M`, and the method's properties are only proven for that case.
#[derive(Clone, Copy, Debug)]
pub struct ZhangSkeel<const N: usize> {
    core: Core<N>,
    mass: MassFactor<N>,
}

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
/// [`reset`](Self::reset) after changing the model between steps.
#[derive(Clone, Copy, Debug)]
pub struct ZhangSkeelSimplified<const N: usize> {
    core: Core<N>,
}

/// Returns `a = −(M + βh² Hess V(q))⁻¹ ∇V(q)` with `M`, and the LU factorization it took.
fn implicit_acceleration<Model, const N: usize>(
    model: &Model,
    mass: &SMatrix<f64, N, N>,
    q: &SVector<f64, N>,
    beta_h2: f64,
    t: f64,
) -> Result<SVector<f64, N>, StepError>
where
    Model: PotentialHessian<N>,
{
    let mut grad = SVector::<f64, N>::zeros();
    let mut hess = SMatrix::<f64, N, N>::zeros();
    model.potential_gradient_hessian(q, &mut grad, &mut hess);
    check_finite(&grad, "gradient", t)?;
    let lu = SymmetricFactor::try_new(&(mass + hess * beta_h2))
        .map_err(StepError::linear_algebra(IMPLICIT_MATRIX, t))?;
    let a = -lu.solve(&grad);
    check_finite(&a, "acceleration", t)?;
    Ok(a)
}

shared_builders!(ZhangSkeel);
shared_builders!(ZhangSkeelSimplified);

impl<const N: usize> ZhangSkeel<N> {
    /// Creates a Z&S stepper with step size `h` and `β = 0.4`; fails unless `h` is positive
    /// and finite.
    pub fn new(h: f64) -> Result<Self, StepError> {
        Ok(ZhangSkeel {
            core: Core::new(h)?,
            mass: MassFactor::default(),
        })
    }
}

impl<const N: usize> ZhangSkeelSimplified<N> {
    /// Creates a Z&Ss stepper with step size `h` and `β = 0.4`; fails unless `h` is positive
    /// and finite.
    pub fn new(h: f64) -> Result<Self, StepError> {
        Ok(ZhangSkeelSimplified {
            core: Core::new(h)?,
        })
    }
}

#[diagnostic::do_not_recommend]
impl<Model, const N: usize> Integrator<Model, N> for ZhangSkeel<N>
where
    Model: Inertia<N> + PotentialThirdDerivative<N>,
{
    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError> {
        crate::integrators::checks::check_constant_mass::<Model, N>("Z&S")?;
        crate::integrators::checks::check_parameters(model)?;
        let (h, beta) = (self.core.h, self.core.beta);
        let mass_factor = &mut self.mass;
        self.core.verlet_step(state, |q, _, t| {
            let mut mass = SMatrix::<f64, N, N>::zeros();
            model.mass_matrix(q, &mut mass);
            let (mass_chol, mass_factorizations) =
                mass_factor.factor(&mass, Model::CONSTANT_MASS, t)?;
            let a = implicit_acceleration(model, &mass, q, beta * h * h, t)?;
            let mut third = SVector::<f64, N>::zeros();
            model.potential_third_contraction(q, &a, &mut third);
            check_finite(&third, "third contraction", t)?;
            let h2 = h * h;
            let f = a - mass_chol.solve(&third) * (0.5 * beta * beta * h2 * h2);
            check_finite(&f, "acceleration", t)?;
            Ok(Solve {
                a: f,
                factorizations: mass_factorizations + 1,
                iterations: 0,
            })
        })
    }
}

#[diagnostic::do_not_recommend]
impl<Model, const N: usize> Integrator<Model, N> for ZhangSkeelSimplified<N>
where
    Model: Inertia<N> + PotentialHessian<N>,
{
    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError> {
        crate::integrators::checks::check_constant_mass::<Model, N>("Z&Ss")?;
        crate::integrators::checks::check_parameters(model)?;
        let (h, beta) = (self.core.h, self.core.beta);
        self.core.verlet_step(state, |q, _, t| {
            let mut mass = SMatrix::<f64, N, N>::zeros();
            model.mass_matrix(q, &mut mass);
            let a = implicit_acceleration(model, &mass, q, beta * h * h, t)?;
            Ok(Solve {
                a,
                factorizations: 1,
                iterations: 0,
            })
        })
    }
}
