//! Equilibria, linearization and modes of a constrained fixed-size model.
//!
//! A static equilibrium of a model with potential `V(q)` and holonomic rows `g(q, t) = 0` is a
//! stationary point of `V` on the constraint manifold: a pair `(q, λ)` with
//!
//! ```text
//! ∇V(q) + G(q)ᵀ λ = 0,    g(q, t) = 0,                         G = ∂g/∂q,
//! ```
//!
//! `λ` being the static constraint forces ([`equilibrium`], a damped Newton iteration on these
//! equations). About it, the equations of motion `M q̈ + ∇V + Gᵀλ = f` linearize, for small
//! motions `δq = T y` that keep `G δq = 0`, into
//!
//! ```text
//! Tᵀ M T ÿ + Tᵀ D T ẏ + Tᵀ K T y = 0,        K = ∇²V + Σₖ λₖ ∇²gₖ,
//! ```
//!
//! with `T` an orthonormal basis of the null space of `G` and `D` the damping (`−∂f/∂v`).
//! The columns of `T` are the mechanism's degrees of freedom at `q`: a rigid body written with
//! a quaternion or a rotation matrix has 3 rotational ones, not 4 or 9, because its
//! normalization rows are rows of `G` ([`Linearization`]). The term `Σ λₖ ∇²gₖ` is the
//! geometric stiffness of the loaded constraints: a hanging pendulum's restoring force is its
//! rod's tension turning with the rod, all of it in this term. The undamped modes are the
//! generalized eigenpairs `Tᵀ K T y = ω² Tᵀ M T y` ([`Linearization::modes`]), returned in the
//! model's own coordinates `φ = T y`.
//!
//! ```
//! use mechanism_runtime::linearization::{equilibrium, EquilibriumSettings, Linearization, Stability};
//! use mechanism_runtime::reference::DoublePendulum;
//! use mechanism_runtime::SVector;
//!
//! // Tao–Owhadi's double pendulum (m = 1, 1; l = 1, √2; g = 1), released near its rest.
//! let pendulum = DoublePendulum::default();
//! let guess = SVector::<f64, 4>::new(0.3, -0.9, 0.5, -2.3);
//! let rest = equilibrium::<_, 4, 2>(&pendulum, &guess, &EquilibriumSettings::default())?;
//! assert_eq!(rest.stability, Stability::Minimum);
//! let modes = Linearization::at(&pendulum, &rest)?.modes()?;
//! // In the rods' angles, det(K − ω² M) = 0 gives ω² = (2 + √2 ∓ √6) / 2.
//! let (root2, root6) = (2f64.sqrt(), 6f64.sqrt());
//! let expected = [((2.0 + root2 - root6) / 2.0).sqrt(), ((2.0 + root2 + root6) / 2.0).sqrt()];
//! for (omega, reference) in modes.frequencies().iter().zip(expected) {
//!     assert!((omega - reference).abs() < 1e-12 * reference);
//! }
//! # Ok::<(), mechanism_runtime::linearization::LinearizationError>(())
//! ```
//!
//! The analysis needs `∇²V` ([`PotentialHessian`](crate::PotentialHessian)) and the rows'
//! Hessians ([`HolonomicHessians`](crate::HolonomicHessians)): a `mechanism!` model has both
//! when it asks for them with `derivatives: [hessians]`, whatever its integrators (or when it
//! is compiled for an integrator that needs them, such as `livens`).
//!
//! This is the null-space method of linear vibration analysis for a constrained system (as in
//! Géradin & Rixen, *Mechanical Vibrations*), on the fixed-size tier with nalgebra's dense
//! decompositions (the analysis allocates; it is not a step).
//!
//! With damping, [`Linearization::damped_eigenvalues`] gives the eigenvalues `s` of
//! `(s² Mᵣ + s Dᵣ + Kᵣ) y = 0` with natural frequencies and damping ratios, and
//! [`Linearization::damped_modes`] their complex shapes. Away from rest,
//! [`MotionLinearization`] linearizes a constant-mass model about a point `(q, v)` of a
//! trajectory (the descriptor form with the motion's multipliers), and
//! [`SteadyLinearization`] about a steady motion `q(t) = exp(tΩS) q*` of a symmetric model
//! (a top spinning upright) in its co-rotating frame, where the gyroscopic term decides
//! stability ([`SteadyStability`]).
//!
//! # The sparse tier
//!
//! A model of the sparse tier (a chain of a thousand pendula, a ladder of a hundred cells) has
//! no dense `n × n` matrix worth forming, nor a dense basis of `ker G`. [`sparse_equilibrium`]
//! and [`sparse_modes`] stay in the model's coordinates and solve only saddle-point systems
//!
//! ```text
//! [ a M + b K + ρ GᵀG   Gᵀ ] [ x ]   [ r ]
//! [ G                   0  ] [ y ] = [ s ]
//! ```
//!
//! on the pattern of the mass blocks, the Hessians and `G`, analysed once and factored by the
//! sparse `LDLᵀ` of the integrators, each solve refined twice. The augmentation `ρ GᵀG`
//! (Hestenes 1969) changes nothing on `ker G` and keeps the factorization without pivoting
//! stable where `K` alone is indefinite. The inertia of the matrix counts what the dense path
//! reads off eigenvalues: `[K − σM, Gᵀ; G, 0]` has `m` negative eigenvalues plus one per
//! constrained `ω² < σ` (Gould 1985; Sylvester's law on `L D Lᵀ`). So
//!
//! - [`sparse_equilibrium`] descends `V` on the manifold as [`equilibrium`] does, with the
//!   Levenberg–Marquardt shift `μ M` chosen by the inertia of `[K + μM, Gᵀ; G, 0]`, and tells
//!   a minimum from a saddle by the inertia at `K ∓ ζ M`;
//! - [`sparse_modes`] finds the lowest `k` modes by shift-invert Lanczos in the `M` inner
//!   product (Ericsson & Ruhe 1980; Grimes, Lewis & Simon 1994): the operator
//!   `y ↦ x` of `[K − σM, Gᵀ; G, 0] [x; ν] = [M y; 0]` maps into `ker G`, is self-adjoint in
//!   `⟨·,·⟩_M` with eigenvalues `1 / (ω² − σ)`, and the shift is lowered until the inertia
//!   says no `ω²` lies below it.
//!
//! A sparse model needs [`SparsePotentialHessian`](crate::model::SparsePotentialHessian) and
//! [`SparseHolonomicHessians`](crate::model::SparseHolonomicHessians); its applied forces must
//! vanish at rest (the sparse tier has no force Jacobian), and its modes are the undamped
//! ones. [`reference::HeldLadder`](crate::reference::HeldLadder) and
//! [`reference::PendulumChain`](crate::reference::PendulumChain) have both.

mod equilibrium;
mod modes;
mod motion;
mod sparse;
mod steady;
mod stiffness;
mod tangent;

pub use equilibrium::{equilibrium, Equilibrium, EquilibriumSettings, Seek};
pub use modes::{DampedEigenvalue, DampedMode, Mode, ModeKind, Modes};
pub use motion::MotionLinearization;
pub use sparse::{
    sparse_equilibrium, sparse_modes, SparseEquilibrium, SparseLinearizable, SparseModeSettings,
};
pub use steady::{SteadyLinearization, SteadyMotion, SteadyStability};
pub use stiffness::Stability;
pub use tangent::Linearization;

use thiserror::Error;

/// Why an equilibrium, a linearization or a modal analysis failed.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum LinearizationError {
    /// The model returned a non-finite value for the named quantity.
    #[error("non-finite {quantity} at q = {q:?}")]
    NonFinite {
        /// Which quantity (`∇V`, `g`, `G`, `∇²V`, `∇²g`, `M`) was not finite.
        quantity: &'static str,
        /// The configuration where it was evaluated.
        q: Vec<f64>,
    },
    /// The Newton iteration for an equilibrium did not reach the tolerance.
    #[error(
        "no equilibrium found from the guess: after {iterations} Newton iterations the residual \
         |∇V + Gᵀλ, g| is {residual:e} (tolerance {tolerance:e}); start closer to one, or raise \
         the iteration limit"
    )]
    NotConverged {
        /// The iterations taken.
        iterations: usize,
        /// The residual reached.
        residual: f64,
        /// The tolerance asked for.
        tolerance: f64,
    },
    /// The guess could not be brought onto the constraints.
    #[error(
        "the guess q = {q:?} could not be brought onto the constraints g(q, t) = 0 by 50 \
         Gauss–Newton steps; start nearer to them"
    )]
    OffManifold {
        /// The guess.
        q: Vec<f64>,
    },
    /// A linear system of the analysis is singular.
    #[error("{what} is singular at q = {q:?}")]
    Singular {
        /// Which matrix, and what that means for the model.
        what: &'static str,
        /// The configuration.
        q: Vec<f64>,
    },
    /// The point given is not an equilibrium where one is required.
    #[error(
        "the point is not an equilibrium: |∇V + Gᵀλ, g| = {residual:e} > {tolerance:e}; find one \
         with `equilibrium` first"
    )]
    NotAnEquilibrium {
        /// The residual of the equilibrium equations at the point.
        residual: f64,
        /// The tolerance.
        tolerance: f64,
    },
    /// The stiffness is not symmetric on the tangent space: forces at rest that depend on the
    /// configuration without a potential (circulatory, e.g. follower forces), whose modes are
    /// complex; the undamped modes need a symmetric one.
    #[error(
        "the stiffness Tᵀ K T is not symmetric (largest asymmetry {asymmetry:e}): the forces          at rest are circulatory; use `damped_eigenvalues`"
    )]
    Circulatory {
        /// The largest entry of `Tᵀ K T − (Tᵀ K T)ᵀ`.
        asymmetry: f64,
    },
    /// The model does not fit the analysis: patterns that do not fit its sizes, a guess of the
    /// wrong length, applied forces at rest on the sparse tier.
    #[error("the model cannot be analysed: {reason}")]
    InvalidModel {
        /// What is wrong.
        reason: String,
    },
    /// A steady motion's generator is not a symmetry of the model at the point.
    #[error("the steady motion's generator S is not a symmetry of the model: {what}")]
    NotASymmetry {
        /// What fails.
        what: &'static str,
    },
    /// A setting is outside its admissible range.
    #[error("setting {name} = {value} is invalid: {requirement}")]
    BadSetting {
        /// The setting's name.
        name: &'static str,
        /// The rejected value.
        value: f64,
        /// What it must satisfy.
        requirement: &'static str,
    },
}

/// Returns `Err(NonFinite)` naming `quantity` if a value of `values` is not finite.
fn finite<'a>(
    quantity: &'static str,
    values: impl IntoIterator<Item = &'a f64>,
    q: &[f64],
) -> Result<(), LinearizationError> {
    if values.into_iter().all(|x| x.is_finite()) {
        Ok(())
    } else {
        Err(LinearizationError::NonFinite {
            quantity,
            q: q.to_vec(),
        })
    }
}
