//! Quantities observed along a trajectory: energy and constraint residuals.

use nalgebra::{SMatrix, SVector};

use crate::model::{Holonomic, Inertia, Potential};
use crate::state::State;

/// Returns the total energy `T(q, v) + V(q)`.
pub fn energy<const N: usize, Model>(model: &Model, state: &State<N>) -> f64
where
    Model: Inertia<N> + Potential<N>,
{
    model.kinetic_energy(&state.q, &state.v) + model.potential(&state.q)
}

/// Returns the position-level residual `max_i |g_i(q, t)|`.
pub fn position_residual<const N: usize, const M: usize, Model>(
    model: &Model,
    state: &State<N>,
) -> f64
where
    Model: Holonomic<N, M>,
{
    let mut g = SVector::<f64, M>::zeros();
    model.constraints(&state.q, state.t, &mut g);
    g.amax()
}

/// Returns the velocity-level residual `max_i |(G(q, t) v)_i|` of a scleronomic constraint.
pub fn velocity_residual<const N: usize, const M: usize, Model>(
    model: &Model,
    state: &State<N>,
) -> f64
where
    Model: Holonomic<N, M>,
{
    let mut jac = SMatrix::<f64, M, N>::zeros();
    model.constraint_jacobian(&state.q, state.t, &mut jac);
    (jac * state.v).amax()
}
