//! The linearized equations at a point of a trajectory, `v ≠ 0`: the descriptor form.

use nalgebra::{DMatrix, SMatrix, SVector};

use super::stiffness::Stiffness;
use super::tangent::descriptor;
use super::{finite, LinearizationError};
use crate::model::{
    AppliedForces, ConstantMass, HolonomicHessians, HolonomicKinematics, PotentialHessian,
};
use crate::state::State;

/// The linearized equations of motion about a point `(q, v)` of a trajectory of a model with a
/// constant mass matrix, at time `t`:
///
/// ```text
/// M δq̈ + D δq̇ + K δq + Gᵀ δλ = 0,    G δq = 0,
/// K = ∇²V + Σₖ λₖ ∇²gₖ − ∂f_a/∂q,    D = −∂f_a/∂v    at (q, v, t),
/// ```
///
/// with `λ` the motion's multipliers there, from the index-1 equations (Ascher et al. 1995,
/// eq. 1.5) `M a + Gᵀ λ = f_a − ∇V`, `G a = −((G v)_q v + 2 G_t v + g_tt)`: the variation of
/// `M q̈ + ∇V + Gᵀλ = f_a`, `g = 0` along nearby motions (a constant `M` has no velocity
/// terms). The coefficients change along the trajectory, so this is a linear time-varying
/// system, frozen at one instant; its tangent space turns with `q`, which is why only the
/// descriptor form ([`descriptor`](Self::descriptor)), in the model's own coordinates, is
/// given. At rest (`v = 0` at an equilibrium) it is [`Linearization`](super::Linearization)'s.
#[derive(Clone, Debug, PartialEq)]
pub struct MotionLinearization<const N: usize, const M: usize> {
    /// The configuration.
    pub q: SVector<f64, N>,
    /// The velocity.
    pub v: SVector<f64, N>,
    /// The time.
    pub t: f64,
    /// The motion's multipliers at `(q, v, t)`.
    pub lambda: SVector<f64, M>,
    /// The acceleration `q̈` at `(q, v, t)`.
    pub acceleration: SVector<f64, N>,
    /// `M`.
    pub mass: SMatrix<f64, N, N>,
    /// `K = ∇²V + Σₖ λₖ ∇²gₖ − ∂f_a/∂q`.
    pub stiffness: SMatrix<f64, N, N>,
    /// `D = −∂f_a/∂v`.
    pub damping: SMatrix<f64, N, N>,
    /// `G = ∂g/∂q`.
    pub jacobian: SMatrix<f64, M, N>,
}

impl<const N: usize, const M: usize> MotionLinearization<N, M> {
    /// Linearizes `model` about the state `state` (its `q`, `v` and `t`). Errors: a non-finite
    /// state or model value, a singular `[M, Gᵀ; G, 0]` (redundant rows).
    pub fn at<S>(model: &S, state: &State<N>) -> Result<Self, LinearizationError>
    where
        S: ConstantMass<N>
            + PotentialHessian<N>
            + HolonomicHessians<N, M>
            + HolonomicKinematics<N, M>
            + AppliedForces<N>,
    {
        let (q, v, t) = (&state.q, &state.v, state.t);
        finite("q", q.iter(), q.as_slice())?;
        finite("v", v.iter(), q.as_slice())?;
        if !t.is_finite() {
            return Err(LinearizationError::BadSetting {
                name: "t",
                value: t,
                requirement: "a finite time",
            });
        }
        let mut mass = SMatrix::<f64, N, N>::zeros();
        model.mass_matrix(q, &mut mass);
        finite("M", mass.iter(), q.as_slice())?;
        let mut gradient = SVector::<f64, N>::zeros();
        model.potential_gradient(q, &mut gradient);
        finite("∇V", gradient.iter(), q.as_slice())?;
        let mut applied = SVector::<f64, N>::zeros();
        model.applied_force(q, v, t, &mut applied);
        finite("f_a", applied.iter(), q.as_slice())?;
        let mut g = SVector::<f64, M>::zeros();
        let mut jacobian = SMatrix::<f64, M, N>::zeros();
        model.constraints_and_jacobian(q, t, &mut g, &mut jacobian);
        finite("G", jacobian.iter(), q.as_slice())?;
        let mut bias = SVector::<f64, M>::zeros();
        model.constraint_acceleration_bias(q, v, t, &mut bias);
        finite("the rows' acceleration bias", bias.iter(), q.as_slice())?;
        // [M, Gᵀ; G, 0] [a; λ] = [f_a − ∇V; −bias].
        let mut system = DMatrix::<f64>::zeros(N + M, N + M);
        system.view_mut((0, 0), (N, N)).copy_from(&mass);
        system
            .view_mut((0, N), (N, M))
            .copy_from(&jacobian.transpose());
        system.view_mut((N, 0), (M, N)).copy_from(&jacobian);
        let rhs = DMatrix::from_iterator(
            N + M,
            1,
            (applied - gradient)
                .iter()
                .copied()
                .chain(bias.iter().map(|b| -b)),
        );
        let solution = system
            .full_piv_lu()
            .solve(&rhs)
            .filter(|x| x.iter().all(|x| x.is_finite()))
            .ok_or_else(|| LinearizationError::Singular {
                what: "the index-1 matrix [M, Gᵀ; G, 0] (redundant constraint rows, or a \
                       direction without inertia)",
                q: q.as_slice().to_vec(),
            })?;
        let acceleration = SVector::<f64, N>::from_iterator(solution.iter().take(N).copied());
        let lambda = SVector::<f64, M>::from_iterator(solution.iter().skip(N).copied());
        let stiffness = Stiffness::moving(model, q, v, &lambda, t)?;
        Ok(MotionLinearization {
            q: *q,
            v: *v,
            t,
            lambda,
            acceleration,
            mass,
            stiffness: stiffness.stiffness,
            damping: stiffness.damping,
            jacobian,
        })
    }

    /// The descriptor form `E ẋ = A x` in `x = (δq, δv, δλ)`, as
    /// [`Linearization::descriptor`](super::Linearization::descriptor) with the matrices at
    /// `(q, v, t)`.
    pub fn descriptor(&self) -> (DMatrix<f64>, DMatrix<f64>) {
        descriptor(&self.mass, &self.stiffness, &self.damping, &self.jacobian)
    }
}
