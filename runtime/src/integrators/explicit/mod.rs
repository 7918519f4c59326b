//! Explicit symplectic baselines for unconstrained (or penalized) models: symplectic Euler
//! (order 1) and velocity Verlet (order 2).
//!
//! Both need only `M` and `∇V`, one gradient evaluation per step, and no Newton iteration. They
//! are the reference point the implicit families are measured against, and Verlet is the
//! unconstrained core of [`Shake`](crate::integrators::projection::Shake) and
//! [`Rattle`](crate::integrators::projection::Rattle).
//!
//! The acceleration `−M⁻¹∇V` below is shared with the projection family.

mod jacobian;
mod rk4;
mod symplectic_euler;
mod verlet;

pub use rk4::Rk4;
pub use symplectic_euler::SymplecticEuler;
pub use verlet::{ExplicitAcceleration, SparseVerlet, Verlet};

use nalgebra::SVector;

pub(crate) use super::checks::{check_finite, check_state, check_step_size};
pub(crate) use super::mass_factor::MassFactor;
use crate::error::StepError;
use crate::linalg::Cholesky;
use crate::model::{Inertia, Potential};

/// Returns the acceleration `−M(q)⁻¹ ∇V(q)`, the factor of `M(q)` and the factorizations it took.
pub(super) fn acceleration<Model, const N: usize>(
    model: &Model,
    mass: &mut MassFactor<N>,
    q: &SVector<f64, N>,
    t: f64,
) -> Result<(SVector<f64, N>, Cholesky<N>, u32), StepError>
where
    Model: Inertia<N> + Potential<N>,
{
    let mut grad = SVector::<f64, N>::zeros();
    model.potential_gradient(q, &mut grad);
    check_finite(&grad, "gradient", t)?;
    let (chol, factorizations) = mass.factor_at(model, q, t)?;
    let a = -chol.solve(&grad);
    check_finite(&a, "acceleration", t)?;
    Ok((a, chol, factorizations))
}
