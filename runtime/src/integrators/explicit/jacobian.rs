//! The exact Jacobians of the explicit methods' steps on the fixed-size tier: symplectic
//! Euler, velocity Verlet and the classical RK4, for `M q̈ = −∇V(q, p)` with a constant `M`.
//!
//! All three step with the acceleration `a(q) = −M⁻¹ ∇V(q)`, whose derivatives are
//!
//! ```text
//! A = ∂a/∂q = −M⁻¹ ∇²V(q),      A_p = ∂a/∂p = −M⁻¹ (∂∇V/∂p + [M_j a]_j)
//! ```
//!
//! (`M_j = ∂M/∂p_j`: differentiating `M a = −∇V`). An explicit step is a composition of
//! evaluations of `a`, so its Jacobian is the chain rule through them, with no solve beyond
//! `M`'s factor:
//!
//! ```text
//! symplectic Euler   v' = v + h a(q),  q' = q + h v'
//!                    δv' = δv + h (A δq + A_p δp),  δq' = δq + h δv'
//! Verlet             q' = q + h v + ½h² a(q),  v' = v + ½h (a(q) + a(q'))
//!                    δq' = δq + h δv + ½h² (A δq + A_p δp)
//!                    δv' = δv + ½h (A δq + A_p δp + A' δq' + A'_p δp)     (A', A'_p at q')
//! RK4                the variational equations δq̇ = δv, δv̇ = A(q) δq + A_p δp taken through
//!                    the step's own four stages (each stage's A at that stage's q)
//! ```
//!
//! for all `2N` state directions and `P` parameters at once, as `N × N` and `N × P` blocks.
//! These are the exact derivatives of the discrete maps the integrators take (`Verlet`'s
//! carried acceleration is `a(q_k)` itself, so the step is a function of `(q_k, v_k)` alone).

use nalgebra::{SMatrix, SVector};

use super::{Rk4, SymplecticEuler, Verlet};
use crate::error::StepError;
use crate::integrators::checks::check_finite;
use crate::integrators::jacobian::step_and_differentiate;
use crate::integrators::tangent::{
    carried_tangents, write, Accelerate, AccelerationJacobian, Tangent,
};
use crate::integrators::{
    DifferentiableInParameters, DifferentiableStep, Integrator, ParameterJacobian, StepJacobian,
    StepReport,
};
use crate::linalg::Cholesky;
use crate::model::{ConstantMass, ParameterDerivatives, PotentialHessian};
use crate::state::State;

/// The name of the mass matrix, for errors.
const MASS_MATRIX: &str = "mass matrix M";

/// The model's `M`, factored once per step Jacobian (`M` is constant).
struct Mass<const N: usize> {
    factor: Cholesky<N>,
}

impl<const N: usize> Mass<N> {
    fn at<Model: ConstantMass<N>>(
        model: &Model,
        q: &SVector<f64, N>,
        t: f64,
    ) -> Result<Self, StepError> {
        let mut mass = SMatrix::<f64, N, N>::zeros();
        model.mass_matrix(q, &mut mass);
        let factor = Cholesky::try_new(&mass).map_err(StepError::linear_algebra(MASS_MATRIX, t))?;
        Ok(Mass { factor })
    }

    /// `A = −M⁻¹ ∇²V(q)`.
    fn state_part<Model>(
        &self,
        model: &Model,
        q: &SVector<f64, N>,
        t: f64,
    ) -> Result<SMatrix<f64, N, N>, StepError>
    where
        Model: PotentialHessian<N>,
    {
        let mut hessian = SMatrix::<f64, N, N>::zeros();
        model.potential_hessian(q, &mut hessian);
        check_finite(&hessian, "potential hessian", t)?;
        self.factor.solve_in_place(&mut hessian);
        Ok(-hessian)
    }

    /// `A` and `A_p = −M⁻¹ (∂∇V/∂p + [M_j a]_j)` at `q`.
    fn both<Model, const P: usize>(
        &self,
        model: &Model,
        q: &SVector<f64, N>,
        t: f64,
    ) -> Result<AccelerationJacobian<N, P>, StepError>
    where
        Model: PotentialHessian<N> + ParameterDerivatives<N, 0, 0, P>,
    {
        let state = self.state_part(model, q, t)?;
        let mut gradient = SVector::<f64, N>::zeros();
        model.potential_gradient(q, &mut gradient);
        let a = -self.factor.solve(&gradient);
        let mut by_parameter = SMatrix::<f64, N, P>::zeros();
        model.potential_gradient_parameter_jacobian(q, &mut by_parameter);
        let mut masses = [SMatrix::<f64, N, N>::zeros(); P];
        model.mass_parameter_derivatives(q, &mut masses);
        for (j, mass) in masses.iter().enumerate() {
            let column = by_parameter.column(j) + mass * a;
            by_parameter.set_column(j, &column);
        }
        check_finite(&by_parameter, "parameter derivatives", t)?;
        self.factor.solve_in_place(&mut by_parameter);
        Ok(AccelerationJacobian {
            q: state,
            p: -by_parameter,
        })
    }
}

/// An explicit method whose step the chain rule through its evaluations of `a` differentiates.
trait ExplicitTangents<const N: usize> {
    /// Returns the tangents of `(q', v')` of the step from `before`, which ended at `after`,
    /// with `accelerate` giving `a(x)` and its tangent.
    fn tangents<const P: usize>(
        &self,
        before: &State<N>,
        after: &State<N>,
        accelerate: &mut Accelerate<'_, N, P>,
    ) -> Result<(Tangent<N, P>, Tangent<N, P>), StepError>;
}

impl<const N: usize> ExplicitTangents<N> for SymplecticEuler<N> {
    fn tangents<const P: usize>(
        &self,
        before: &State<N>,
        _after: &State<N>,
        accelerate: &mut Accelerate<'_, N, P>,
    ) -> Result<(Tangent<N, P>, Tangent<N, P>), StepError> {
        let h = self.step_size();
        let (dq, dv) = (Tangent::start(true), Tangent::start(false));
        let (_, da) = accelerate(&before.q, &dq)?;
        let dv_next = dv.plus(h, &da);
        Ok((dq.plus(h, &dv_next), dv_next))
    }
}

impl<const N: usize> ExplicitTangents<N> for Verlet<N> {
    fn tangents<const P: usize>(
        &self,
        before: &State<N>,
        after: &State<N>,
        accelerate: &mut Accelerate<'_, N, P>,
    ) -> Result<(Tangent<N, P>, Tangent<N, P>), StepError> {
        carried_tangents(self.step_size(), before, after, accelerate)
    }
}

impl<const N: usize> ExplicitTangents<N> for Rk4<N> {
    fn tangents<const P: usize>(
        &self,
        before: &State<N>,
        _after: &State<N>,
        accelerate: &mut Accelerate<'_, N, P>,
    ) -> Result<(Tangent<N, P>, Tangent<N, P>), StepError> {
        // The stages of `Rk4::step` with their tangents: stage s at (q_s, v_s), k_s = (v_s, a(q_s)).
        let h = self.step_size();
        let (q, v) = (before.q, before.v);
        let (dq, dv) = (Tangent::start(true), Tangent::start(false));
        let (a1, da1) = accelerate(&q, &dq)?;
        let (v2, dv2) = (v + a1 * (0.5 * h), dv.plus(0.5 * h, &da1));
        let (a2, da2) = accelerate(&(q + v * (0.5 * h)), &dq.plus(0.5 * h, &dv))?;
        let (v3, dv3) = (v + a2 * (0.5 * h), dv.plus(0.5 * h, &da2));
        let (_, da3) = accelerate(&(q + v2 * (0.5 * h)), &dq.plus(0.5 * h, &dv2))?;
        let dv4 = dv.plus(h, &da3);
        let (_, da4) = accelerate(&(q + v3 * h), &dq.plus(h, &dv3))?;
        let sixth = h / 6.0;
        let dq_next = dq
            .plus(sixth, &dv)
            .plus(2.0 * sixth, &dv2)
            .plus(2.0 * sixth, &dv3)
            .plus(sixth, &dv4);
        let dv_next = dv
            .plus(sixth, &da1)
            .plus(2.0 * sixth, &da2)
            .plus(2.0 * sixth, &da3)
            .plus(sixth, &da4);
        Ok((dq_next, dv_next))
    }
}

/// Implements both traits for an explicit method.
macro_rules! explicit_jacobians {
    ($method:ident) => {
        impl<Model, const N: usize> DifferentiableStep<Model, N> for $method<N>
        where
            Model: ConstantMass<N> + PotentialHessian<N>,
            $method<N>: Integrator<Model, N>,
        {
            fn step_with_jacobian(
                &mut self,
                model: &Model,
                state: &mut State<N>,
                jacobian: &mut StepJacobian<N>,
            ) -> Result<StepReport, StepError> {
                step_and_differentiate(self, model, state, |method, before, after| {
                    let t = before.t;
                    let mass = Mass::at(model, &before.q, t)?;
                    let mut accelerate = |x: &SVector<f64, N>, tangent: &Tangent<N, 0>| {
                        let a = mass.state_part(model, x, t)?;
                        Ok((acceleration(&mass, model, x), tangent.accelerate_state(&a)))
                    };
                    let tangents = method.tangents::<0>(before, after, &mut accelerate)?;
                    write(tangents, jacobian, None, t)
                })
            }
        }

        impl<Model, const N: usize, const P: usize> DifferentiableInParameters<Model, N, P>
            for $method<N>
        where
            Model: ConstantMass<N> + PotentialHessian<N> + ParameterDerivatives<N, 0, 0, P>,
            $method<N>: Integrator<Model, N>,
        {
            fn step_with_jacobians(
                &mut self,
                model: &Model,
                state: &mut State<N>,
                jacobian: &mut StepJacobian<N>,
                parameters: &mut ParameterJacobian<N, P>,
            ) -> Result<StepReport, StepError> {
                step_and_differentiate(self, model, state, |method, before, after| {
                    let t = before.t;
                    let mass = Mass::at(model, &before.q, t)?;
                    let mut accelerate = |x: &SVector<f64, N>, tangent: &Tangent<N, P>| {
                        let a = mass.both(model, x, t)?;
                        Ok((acceleration(&mass, model, x), tangent.accelerate(&a)))
                    };
                    let tangents = method.tangents::<P>(before, after, &mut accelerate)?;
                    write(tangents, jacobian, Some(parameters), t)
                })
            }
        }
    };
}

explicit_jacobians!(SymplecticEuler);
explicit_jacobians!(Verlet);
explicit_jacobians!(Rk4);

/// `a(x) = −M⁻¹ ∇V(x)`.
fn acceleration<Model: PotentialHessian<N>, const N: usize>(
    mass: &Mass<N>,
    model: &Model,
    x: &SVector<f64, N>,
) -> SVector<f64, N> {
    let mut gradient = SVector::<f64, N>::zeros();
    model.potential_gradient(x, &mut gradient);
    -mass.factor.solve(&gradient)
}
