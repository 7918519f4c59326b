//! The exact state Jacobian of a Z&Ss step on the fixed-size tier (Tao–Owhadi 2014,
//! Integrator 4, eq. 18).
//!
//! Z&Ss is the carried update (`q' = q + h v + ½h² a(q)`, `v' = v + ½h (a(q) + a(q'))`) with the
//! linearly implicit acceleration `a(x) = −K(x)⁻¹ ∇V(x)`, `K = M + βh² ∇²V`. Differentiating
//! `K a = −∇V` with `M` constant,
//!
//! ```text
//! K δa + βh² (∂(∇²V)·δx) a = −∇²V δx     ⇒     A = ∂a/∂x = −K⁻¹ (∇²V + βh² V‴[a])
//! ```
//!
//! where `V‴[a]` is the `N × N` matrix `(V‴[a])_ij = Σ_k ∂³V/∂x_i∂x_j∂x_k a_k`, the derivative of
//! `∇²V(x) a` in `x` with `a` held. It comes from the contraction `c(y) = y·V‴(x)·y` that
//! `mechanism!` generates for the full Z&S ([`PotentialThirdDerivative`]), by polarization:
//! `c` is a quadratic form in `y`, so `V‴[a] e_j = (c(a + s e_j) − c(a − s e_j)) / (4s)`
//! exactly; with `s = |a|` its rounding is `O(ε |V‴| |a|)`, that of `V‴[a]` itself. The tangents
//! of the update are the chain rule through `a` at `q` and at `q'`
//! ([`carried_tangents`], shared with Verlet), with one factorization of `K` at each (the
//! step's own at `q'` is not kept; `K(q)`'s was the previous step's). A penalized model
//! ([`Penalized`](crate::Penalized)) is the same with `W = V + ½ω²|g|²` for `V`.
//!
//! Cost, measured (`cargo bench --bench step -- zss_step_jacobian`, the penalized double
//! pendulum at `ω = 20`, `h = 0.1`): 834 ns against 59 ns for the step alone, about 13 steps —
//! generic dense code with two factorizations and `4N` contractions, against a step whose
//! solve `mechanism!` specialized.
//!
//! **In the parameters**, differentiating `K a = −∇V` in `p_j` (with `M_j = ∂M/∂p_j`)
//!
//! ```text
//! A_p e_j = −K⁻¹ (M_j a + βh² ∂(∇²V a)/∂p_j + ∂∇V/∂p_j)
//! ```
//!
//! with `∂(∇²V a)/∂p` at `a` held ([`PotentialHessianParameterDerivative`], generated for `zss`
//! with `derivatives: [step_jacobians]`), solved with the same factor of `K`. A penalized model
//! has no parameter Jacobian: [`Penalized`](crate::Penalized) does not differentiate its rows'
//! penalty in the parameters. The full Z&S needs the fourth derivative of `V` (its correction
//! `½β²h⁴ M⁻¹ c(a)` differentiated), which is not generated.
//!
//! **Stiff Z&Ss** ([`ZhangSkeelStiff`], Integrator 5) factors `K = M + βh² ε⁻¹ ∇²V1` with the
//! stiff part's Hessian only, so `A = −K⁻¹ (∇²V + βh² (ε⁻¹V1)‴[a])` with `∇²V` the total
//! Hessian and the stiff part's third derivative along `a`, by the same polarization of its
//! contraction ([`StiffThirdDerivative`]: for a penalized model `a·W‴·a − a·V‴·a`). Its state
//! Jacobian only.

use nalgebra::{SMatrix, SVector};

use super::carried::{CarriedDense, CarriedScheme, ImplicitAcceleration};
use super::stiff::ZhangSkeelStiff;
use super::zhang_skeel::ZhangSkeelSimplified;
use crate::error::StepError;
use crate::integrators::checks::check_finite;
use crate::integrators::jacobian::step_and_differentiate;
use crate::integrators::tangent::{carried_tangents, write, AccelerationJacobian, Tangent};
use crate::integrators::{
    DifferentiableInParameters, DifferentiableStep, Integrator, ParameterJacobian, StepJacobian,
    StepReport,
};
use crate::linalg::SymmetricFactor;
use crate::model::{
    ConstantMass, ParameterDerivatives, PotentialHessianParameterDerivative,
    PotentialThirdDerivative, StiffThirdDerivative,
};
use crate::state::State;

impl<Model, const N: usize> DifferentiableStep<Model, N> for ZhangSkeelSimplified<N>
where
    Model: ConstantMass<N> + PotentialThirdDerivative<N>,
    ZhangSkeelSimplified<N>: Integrator<Model, N>,
{
    fn step_with_jacobian(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        jacobian: &mut StepJacobian<N>,
    ) -> Result<StepReport, StepError> {
        step_with_state_jacobian(self, model, state, jacobian, |mass, c, x, t| {
            implicit_acceleration_jacobian(model, mass, c, x, t).map(|(a, a_q, _)| (a, a_q))
        })
    }
}

/// The step of a Z&Ss-type method (`ImplicitAcceleration<Which>`) with its state Jacobian:
/// the carried update's tangents through the acceleration and its Jacobian that
/// `acceleration(M, βh², x, t)` returns.
fn step_with_state_jacobian<Model, Which, const N: usize>(
    method: &mut CarriedScheme<CarriedDense<N>, ImplicitAcceleration<Which>>,
    model: &Model,
    state: &mut State<N>,
    jacobian: &mut StepJacobian<N>,
    acceleration: impl Fn(
        &SMatrix<f64, N, N>,
        f64,
        &SVector<f64, N>,
        f64,
    ) -> Result<(SVector<f64, N>, SMatrix<f64, N, N>), StepError>,
) -> Result<StepReport, StepError>
where
    Model: ConstantMass<N>,
    CarriedScheme<CarriedDense<N>, ImplicitAcceleration<Which>>: Integrator<Model, N> + Clone,
{
    step_and_differentiate(method, model, state, |method, before, after| {
        let (h, t) = (method.h, before.t);
        let c = method.beta * h * h;
        let mut mass = SMatrix::<f64, N, N>::zeros();
        model.mass_matrix(&before.q, &mut mass);
        check_finite(&mass, "mass matrix M", t)?;
        let mut accelerate = |x: &SVector<f64, N>, tangent: &Tangent<N, 0>| {
            let (a, a_jacobian) = acceleration(&mass, c, x, t)?;
            Ok((a, tangent.accelerate_state(&a_jacobian)))
        };
        let tangents = carried_tangents(h, before, after, &mut accelerate)?;
        write(tangents, jacobian, None, t)
    })
}

impl<Model, const N: usize, const P: usize> DifferentiableInParameters<Model, N, P>
    for ZhangSkeelSimplified<N>
where
    Model: ConstantMass<N>
        + PotentialThirdDerivative<N>
        + ParameterDerivatives<N, 0, 0, P>
        + PotentialHessianParameterDerivative<N, P>,
    ZhangSkeelSimplified<N>: Integrator<Model, N>,
{
    fn step_with_jacobians(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        jacobian: &mut StepJacobian<N>,
        parameters: &mut ParameterJacobian<N, P>,
    ) -> Result<StepReport, StepError> {
        step_and_differentiate(self, model, state, |method, before, after| {
            let (h, t) = (method.h, before.t);
            let c = method.beta * h * h;
            let mut mass = SMatrix::<f64, N, N>::zeros();
            model.mass_matrix(&before.q, &mut mass);
            check_finite(&mass, "mass matrix M", t)?;
            let mut mass_p = [SMatrix::<f64, N, N>::zeros(); P];
            model.mass_parameter_derivatives(&before.q, &mut mass_p);
            let mut accelerate = |x: &SVector<f64, N>, tangent: &Tangent<N, P>| {
                let (a, a_q, factor) = implicit_acceleration_jacobian(model, &mass, c, x, t)?;
                // The right-hand sides M_j a + c ∂(∇²V a)/∂p_j + ∂∇V/∂p_j.
                let (mut along, mut gradient) =
                    (SMatrix::<f64, N, P>::zeros(), SMatrix::<f64, N, P>::zeros());
                model.potential_hessian_parameter_derivative(x, &a, &mut along);
                model.potential_gradient_parameter_jacobian(x, &mut gradient);
                let mut rhs = along * c + gradient;
                for (j, mass_p) in mass_p.iter().enumerate() {
                    let mut column = rhs.column_mut(j);
                    column += mass_p * a;
                }
                check_finite(
                    &rhs,
                    "parameter derivatives of the acceleration's equation",
                    t,
                )?;
                let a_p = -factor.solve_columns(&rhs);
                Ok((
                    a,
                    tangent.accelerate(&AccelerationJacobian { q: a_q, p: a_p }),
                ))
            };
            let tangents = carried_tangents(h, before, after, &mut accelerate)?;
            write(tangents, jacobian, Some(parameters), t)
        })
    }
}

/// Returns `a = −K⁻¹ ∇V(x)` and `A = −K⁻¹ (∇²V + c V‴[a])` at `x`, `K = M + c ∇²V(x)`, as
/// the module docs derive them, with the factor of `K` (for the parameters' right-hand sides).
fn implicit_acceleration_jacobian<Model, const N: usize>(
    model: &Model,
    mass: &SMatrix<f64, N, N>,
    c: f64,
    x: &SVector<f64, N>,
    t: f64,
) -> Result<(SVector<f64, N>, SMatrix<f64, N, N>, SymmetricFactor<N>), StepError>
where
    Model: PotentialThirdDerivative<N>,
{
    let (mut gradient, mut hessian) = (SVector::<f64, N>::zeros(), SMatrix::<f64, N, N>::zeros());
    model.potential_gradient_hessian(x, &mut gradient, &mut hessian);
    check_finite(&gradient, "potential gradient", t)?;
    check_finite(&hessian, "potential Hessian", t)?;
    let matrix = mass + hessian * c;
    let factor = SymmetricFactor::try_new(&matrix)
        .map_err(StepError::linear_algebra("M + βh² Hess V", t))?;
    let a = -factor.solve(&gradient);
    let third = third_derivative_along(&a, |y, out| model.potential_third_contraction(x, y, out));
    check_finite(&third, "third derivative of the potential along a", t)?;
    let jacobian = -factor.solve_columns(&(hessian + third * c));
    Ok((a, jacobian, factor))
}

/// Returns `V‴[a]`, `(V‴[a])_ij = Σ_k ∂³V/∂x_i∂x_j∂x_k a_k`, from a contraction
/// `c(y) = y·V‴·y` (`contract(y, out)`) by polarization: column `j` is
/// `(c(a + s e_j) − c(a − s e_j)) / (4s)` with `s = |a|` (zero for `a = 0`).
fn third_derivative_along<const N: usize>(
    a: &SVector<f64, N>,
    mut contract: impl FnMut(&SVector<f64, N>, &mut SVector<f64, N>),
) -> SMatrix<f64, N, N> {
    let mut third = SMatrix::<f64, N, N>::zeros();
    let s = a.norm();
    if s == 0.0 {
        return third;
    }
    let (mut plus, mut minus) = (SVector::<f64, N>::zeros(), SVector::<f64, N>::zeros());
    for j in 0..N {
        let (mut up, mut down) = (*a, *a);
        up[j] += s;
        down[j] -= s;
        contract(&up, &mut plus);
        contract(&down, &mut minus);
        third.set_column(j, &((plus - minus) / (4.0 * s)));
    }
    third
}

impl<Model, const N: usize> DifferentiableStep<Model, N> for ZhangSkeelStiff<N>
where
    Model: ConstantMass<N> + StiffThirdDerivative<N>,
    ZhangSkeelStiff<N>: Integrator<Model, N>,
{
    fn step_with_jacobian(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        jacobian: &mut StepJacobian<N>,
    ) -> Result<StepReport, StepError> {
        step_with_state_jacobian(self, model, state, jacobian, |mass, c, x, t| {
            stiff_acceleration_jacobian(model, mass, c, x, t)
        })
    }
}

/// Returns stiff Z&Ss's `a = −K⁻¹ ∇V(x)` and `A = −K⁻¹ (∇²V + c (ε⁻¹V1)‴[a])` at `x`,
/// `K = M + c ε⁻¹ ∇²V1(x)` (the module docs with the stiff Hessian in `K`; `∇²V` is the total
/// Hessian, `∇V`'s derivative).
fn stiff_acceleration_jacobian<Model, const N: usize>(
    model: &Model,
    mass: &SMatrix<f64, N, N>,
    c: f64,
    x: &SVector<f64, N>,
    t: f64,
) -> Result<(SVector<f64, N>, SMatrix<f64, N, N>), StepError>
where
    Model: StiffThirdDerivative<N>,
{
    let (mut gradient, mut stiff) = (SVector::<f64, N>::zeros(), SMatrix::<f64, N, N>::zeros());
    model.potential_gradient_stiff_hessian(x, &mut gradient, &mut stiff);
    let mut hessian = SMatrix::<f64, N, N>::zeros();
    model.potential_hessian(x, &mut hessian);
    check_finite(&gradient, "potential gradient", t)?;
    check_finite(&stiff, "stiff Hessian", t)?;
    check_finite(&hessian, "potential Hessian", t)?;
    let factor = SymmetricFactor::try_new(&(mass + stiff * c))
        .map_err(StepError::linear_algebra("M + βh² ε⁻¹ Hess V1", t))?;
    let a = -factor.solve(&gradient);
    let third = third_derivative_along(&a, |y, out| model.stiff_third_contraction(x, y, out));
    check_finite(&third, "third derivative of the stiff potential along a", t)?;
    Ok((a, -factor.solve_columns(&(hessian + third * c))))
}
