//! Capability traits of the sparse tier: models whose sizes are known when they are constructed.
//!
//! A chain of 10 000 pendula or a ladder of 1000 rods has tens of thousands of coordinates; one
//! dense `N × N` matrix of it is gigabytes. Models of this tier therefore never hand over a dense
//! matrix: vectors are slices of the length the model reports, the mass matrix is block
//! diagonal (one block per body, in coordinate order), and every Jacobian is a sparsity pattern
//! fixed for the model's lifetime plus values written in the pattern's order. Integrators read
//! the patterns once, when they are constructed for a model, and build their factorizations'
//! symbolic analysis from them; each step then only asks for values.
//!
//! The traits mirror the fixed-size ones ([`Inertia`](super::Inertia),
//! [`Potential`](super::Potential), [`Holonomic`](super::Holonomic),
//! [`Nonholonomic`](super::Nonholonomic), [`AppliedForces`](super::AppliedForces)); the
//! integrators that serve both tiers share their scheme and differ only in the linear algebra
//! behind [`LinearSolver`](crate::linalg::LinearSolver).

use super::{Regularization, DEFAULT_GAMMA};

/// Coordinates grouped into bodies, with a block-diagonal mass matrix.
pub trait SparseInertia {
    /// Returns the number of coordinates `n`.
    fn coordinate_count(&self) -> usize;

    /// Returns the number of coordinates of each body, in coordinate order (they add up to `n`).
    ///
    /// Body `b` owns the consecutive coordinates after those of bodies `0..b`, and its block of
    /// the mass matrix is the only one coupling them. Integrators number the unknowns of their
    /// linear systems body by body.
    fn body_sizes(&self) -> &[usize];

    /// Returns whether `M` does not depend on `q`.
    fn constant_mass(&self) -> bool;

    /// Writes the diagonal blocks of `M(q)`, each dense and row-major, concatenated in body
    /// order (`Σ sᵦ²` values).
    fn mass_blocks(&self, q: &[f64], blocks: &mut [f64]);

    /// Returns the kinetic energy `½ vᵀ M(q) v`.
    fn kinetic_energy(&self, q: &[f64], v: &[f64]) -> f64;

    /// Returns the name and value of the model's first parameter that is not finite, if any,
    /// so that an integrator reports the culprit instead of its effect (a non-finite mass
    /// matrix or gradient). `None` by default.
    fn non_finite_parameter(&self) -> Option<(&'static str, f64)> {
        None
    }
}

/// A potential energy `V(q)` and its gradient.
pub trait SparsePotential {
    /// Returns `V(q)`.
    fn potential(&self, q: &[f64]) -> f64;

    /// Writes `∇V(q)` into `grad`.
    fn potential_gradient(&self, q: &[f64], grad: &mut [f64]);
}

/// Holonomic constraints `g(q, t) = 0` with a sparse Jacobian `G = ∂g/∂q`.
pub trait SparseHolonomic {
    /// Returns the number of constraint rows `m`.
    fn constraint_count(&self) -> usize;

    /// Returns the structural nonzeros of `G` as `(row, coordinate)` pairs, each once; the
    /// values of [`constraints_and_jacobian`](Self::constraints_and_jacobian) come in this
    /// order. The pattern is fixed for the model's lifetime.
    fn jacobian_pattern(&self) -> &[(usize, usize)];

    /// Writes `g(q, t)` into `g` and the values of `G(q, t)` on its pattern into `jac`.
    fn constraints_and_jacobian(&self, q: &[f64], t: f64, g: &mut [f64], jac: &mut [f64]);

    /// Returns row `row`'s default SPOOK regularization; integrators may override it.
    fn regularization(&self, _row: usize) -> Regularization {
        Regularization::default()
    }
}

/// Nonholonomic rows linear in the velocities, `A(q) v = w(t)`, with a sparse `A`.
///
/// Every method has a default that describes no rows, so a model without such rows implements
/// it with an empty `impl`.
pub trait SparseNonholonomic {
    /// Returns the number of nonholonomic rows `k`.
    fn nonholonomic_count(&self) -> usize {
        0
    }

    /// Returns the structural nonzeros of `A` as `(row, coordinate)` pairs, each once.
    fn nonholonomic_pattern(&self) -> &[(usize, usize)] {
        &[]
    }

    /// Writes the values of `A(q)` on its pattern into `a`.
    fn nonholonomic_matrix(&self, _q: &[f64], _a: &mut [f64]) {}

    /// Writes the driving term `w(t)` into `w`.
    fn nonholonomic_drive(&self, _t: f64, _w: &mut [f64]) {}

    /// Returns row `row`'s SPOOK compliance `γ`; integrators may override it.
    fn nonholonomic_compliance(&self, _row: usize) -> f64 {
        DEFAULT_GAMMA
    }
}

/// Non-potential generalized forces `f(q, v, t)` (dissipation and applied forces); zero by
/// default, so a model without them implements it with an empty `impl`.
pub trait SparseAppliedForces {
    /// Writes `f(q, v, t)` into `out`.
    fn applied_force(&self, _q: &[f64], _v: &[f64], _t: f64, out: &mut [f64]) {
        out.fill(0.0);
    }
}

/// Time derivatives of sparse holonomic constraints, for index reduction (Ascher et al. 1995,
/// eq. 1.5): the sparse tier's [`HolonomicKinematics`](super::HolonomicKinematics).
pub trait SparseHolonomicKinematics: SparseHolonomic {
    /// Writes `g_t = ∂g/∂t` (zero for scleronomic constraints), so that `ġ = G v + g_t`.
    fn constraint_time_derivative(&self, q: &[f64], t: f64, out: &mut [f64]);

    /// Writes `(G v)_q v + 2 G_t v + g_tt`, so that `g̈ = G q̈ + (this)`: for a scleronomic row,
    /// `vᵀ Hess gᵢ v`.
    fn constraint_acceleration_bias(&self, q: &[f64], v: &[f64], t: f64, out: &mut [f64]);
}
