//! Index reduction and stabilization over explicit Runge–Kutta methods: U. M. Ascher,
//! H. Chin, L. R. Petzold and S. Reich, *Stabilization of constrained mechanical systems with
//! DAEs and invariant manifolds*, Mech. Struct. Mach. 23 (1995) 135–157.
//!
//! The index-3 equations of motion (eq. 1.1, with the paper's sign of the multipliers)
//!
//! ```text
//! q̇ = v,    M(q) v̇ = f(q, v, t) − G(q, t)ᵀ λ,    0 = g(q, t)
//! ```
//!
//! are reduced to index 1 by differentiating `g` twice (eq. 1.4–1.5); [`constrained_acceleration`]
//! solves the resulting linear system for `(v̇, λ)` and turns the DAE into the ODE (1.6) that
//! an explicit Runge–Kutta method integrates. That ODE keeps the constraints only as a mildly
//! unstable invariant, so the solution drifts off `g = 0`, `G v + g_t = 0`. Two remedies:
//!
//! - [`Baumgarte`] (§2, eq. 2.1) replaces `g̈ = 0` by `g̈ + α1 ġ + α0 g = 0` in every stage;
//! - [`PostStabilization`] (§4–5, eq. 5.4–5.6) corrects the state after every step with one
//!   cheap Newton-like step towards the invariant manifold; `S-both²` is the paper's
//!   recommendation.
//!
//! The integrators are [`StabilizedRk`] (fixed step; tableaus [`MIDPOINT`], [`HEUN`], [`RK4`],
//! Tables 6.1–6.2) and [`AdaptiveRk`] with [`DOPRI5`] (error control, Tables 6.3–6.4). Both
//! need a model with [`InertiaGradient`](crate::InertiaGradient), [`Potential`](crate::Potential),
//! [`HolonomicKinematics`](crate::HolonomicKinematics) and
//! [`AppliedForces`](crate::AppliedForces); rheonomic constraints `g(q, t)` are supported
//! throughout (`g_t`, `G_t`, `g_tt` enter through
//! [`HolonomicKinematics`](crate::HolonomicKinematics)). [`drift`] measures the residuals the
//! paper tabulates.
//!
//! These methods are not structure-preserving (no symplecticity, no energy conservation); they
//! are the reference the paper compares stabilizations with, and a robust choice for
//! non-stiff constrained systems with forcing, damping or prescribed motion.

mod adaptive;
pub(crate) mod dense;
mod index_one;
mod jacobian;
mod post_stabilization;
pub(crate) mod runge_kutta;
pub(crate) mod sparse;
mod tableau;

pub use adaptive::{AdaptiveRk, AdaptiveStatistics, AdaptiveStep, Dopri5};
pub use dense::StabilizedRk;
pub use index_one::{constrained_acceleration, Baumgarte, ConstrainedAcceleration};
pub use post_stabilization::{drift, Drift, Metric, PostStabilization};
pub use runge_kutta::RkScheme;
pub use sparse::SparseStabilizedRk;
pub use tableau::{EmbeddedTableau, Tableau, DOPRI5, HEUN, MIDPOINT, RK4};

use super::checks::{check_finite, check_state, check_step_size, same_bits};
use super::mass_factor::MassFactor;
use post_stabilization::stabilize;
