//! Structure-preserving integrators for constrained mechanical systems.
//!
//! This crate is the run-time half of `mechanism`: the `mechanism!` macro turns a model into a
//! type implementing the capability traits of [`model`], and the integrators here are generic
//! over those traits, so a fixed model is monomorphized into allocation-free, fixed-size code.
//! It is not a general ODE/DAE suite: every method here exploits mechanical structure
//! (a mass matrix, a potential, constraints).
//!
//! | integrator | paper | needs |
//! | --- | --- | --- |
//! | [`Spook`] | Lacoursière 2007, eq. 27–29 | [`Inertia`], [`Potential`], [`Holonomic`] |
//! | [`ZhangSkeelSimplified`] (Z&Ss) | Tao–Owhadi 2014, eq. 18 | [`Inertia`], [`PotentialHessian`] |
//! | [`ZhangSkeel`] (Z&S) | Tao–Owhadi 2014, eq. 3 | [`Inertia`], [`PotentialThirdDerivative`] |
//! | [`ZhangSkeelStiff`] (stiff Z&Ss) | Tao–Owhadi 2014, eq. 19 | [`Inertia`], [`SplitPotential`] |
//! | [`Newmark`], [`NewmarkOneIteration`] | Tao–Owhadi 2014, eq. 12 (γ = ½) | [`Inertia`], [`PotentialHessian`] |
//! | [`PushForwardNewmark`] | Tao–Owhadi 2014, eq. 14 | [`Inertia`], [`PotentialHessian`] |
//! | [`Livens`] | Kinon–Betsch, eq. 30 | [`InertiaGradient`], [`PotentialHessian`], [`HolonomicHessians`] |
//! | [`Shake`], [`Rattle`] | Ryckaert et al. 1977; Andersen 1983; Lacoursière eq. 13 | [`Inertia`], [`Potential`], [`Holonomic`] |
//! | [`SymplecticEuler`], [`Verlet`] | baselines | [`Inertia`], [`Potential`] |
//!
//! Holonomic constraints run with Z&S through the penalty `½ ω² |g|²` ([`Penalized`]).
//!
//! [`discrete_gradient`] provides Gonzalez discrete gradients of the potential, the constraints
//! and the kinetic energy (Kinon–Betsch–Livens eq. 26–29) for every model with the matching
//! capability, the building blocks of energy-consistent implicit schemes.
#![warn(missing_docs)]

pub mod discrete_gradient;
pub mod error;
pub mod fma;
pub mod integrators;
pub mod linalg;
pub mod model;
pub mod observers;
pub mod reference;
pub mod state;

pub use discrete_gradient::{
    ConstraintDiscreteGradient, ConstraintDiscreteGradientJacobians, KineticDiscreteGradient,
    KineticJacobians, PotentialDiscreteGradient, PotentialDiscreteGradientJacobian,
};
pub use error::StepError;
pub use integrators::energy_momentum::Livens;
pub use integrators::explicit::{SymplecticEuler, Verlet};
pub use integrators::linearly_implicit::{
    holonomic_penalty_hessian, Newmark, NewmarkOneIteration, PenaltyHessian, PushForwardNewmark,
    SplitPotential, Spook, ZhangSkeel, ZhangSkeelSimplified, ZhangSkeelStiff,
};
pub use integrators::projection::{Rattle, Shake};
pub use integrators::{Integrator, StepReport};
pub use model::{
    AppliedForces, Configuration, Dissipation, Forces, Holonomic, HolonomicHessians,
    HolonomicKinematics, Inertia, InertiaGradient, Nonholonomic, Penalized, PenalizedHessian,
    PenalizedPotential, PenalizedThirdDerivative, Potential, PotentialHessian,
    PotentialThirdDerivative, Regularization, Relaxation,
};
pub use nalgebra::{SMatrix, SVector};
pub use state::State;
