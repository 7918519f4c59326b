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
//! | [`Spook`] | Lacoursière 2007, eq. 24–29 | [`Inertia`] (constant), [`Potential`], [`Holonomic`], [`Nonholonomic`], [`AppliedForces`] |
//! | [`ZhangSkeelSimplified`] (Z&Ss) | Tao–Owhadi 2014, eq. 18 | [`Inertia`], [`PotentialHessian`] |
//! | [`ZhangSkeel`] (Z&S) | Tao–Owhadi 2014, eq. 3 | [`Inertia`], [`PotentialThirdDerivative`] |
//! | [`ZhangSkeelStiff`] (stiff Z&Ss) | Tao–Owhadi 2014, eq. 19 | [`Inertia`], [`SplitPotential`] |
//! | [`Newmark`], [`NewmarkOneIteration`] | Tao–Owhadi 2014, eq. 12 (γ = ½) | [`Inertia`], [`PotentialHessian`] |
//! | [`PushForwardNewmark`] | Tao–Owhadi 2014, eq. 14 | [`Inertia`], [`PotentialHessian`] |
//! | [`Livens`] | Kinon–Betsch, eq. 30 | [`InertiaGradient`], [`PotentialHessian`], [`HolonomicHessians`] |
//! | [`Shake`], [`Rattle`] | Ryckaert et al. 1977; Andersen 1983; Lacoursière eq. 13 | [`Inertia`], [`Potential`], [`Holonomic`] |
//! | [`DiscreteLagrangeDAlembert`] | Cuell 2005, eq. 31–32, 53–58 | [`Inertia`], [`Potential`], [`Nonholonomic`], [`AppliedForces`] |
//! | [`CortesMartinez`] | Lacoursière 2007, eq. 24 (`γ → 0`) | as above + [`NonholonomicDerivative`] |
//! | [`SymplecticEuler`], [`Verlet`], [`Rk4`] | baselines | [`Inertia`], [`Potential`] |
//! | [`StabilizedRk`], [`Dopri5`] / [`AdaptiveRk`] | Ascher et al. 1995, eq. 1.5, 4.3–5.6 (index 1, Baumgarte, post-stabilization) | [`InertiaGradient`], [`Potential`], [`HolonomicKinematics`], [`AppliedForces`] |
//! | [`Langevin`] (GLA) | Tao–Owhadi 2014, §4.3 eq. 27 | [`Inertia`] + the wrapped integrator's |
//!
//! Holonomic constraints run with Z&S through the penalty `½ ω² |g|²` ([`Penalized`]). Every
//! scheme that freezes the mass matrix over a step (all but Livens and the index-1 Runge–Kutta
//! methods) refuses a configuration-dependent one with [`StepError::Unsupported`] rather than
//! integrate equations without the velocity terms `∂T/∂q − Ṁv`.
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
pub use integrators::explicit::{Rk4, SymplecticEuler, Verlet};
pub use integrators::langevin::Langevin;
pub use integrators::linearly_implicit::{
    holonomic_penalty_hessian, Newmark, NewmarkOneIteration, PenaltyHessian, PushForwardNewmark,
    SplitPotential, Spook, ZhangSkeel, ZhangSkeelSimplified, ZhangSkeelStiff,
};
pub use integrators::nonholonomic::{
    CortesMartinez, DiscreteLagrangeDAlembert, NonholonomicDerivative,
};
pub use integrators::projection::{Rattle, Shake};
pub use integrators::stabilized::{
    AdaptiveRk, Baumgarte, Dopri5, Metric, PostStabilization, StabilizedRk,
};
pub use integrators::{DivergenceGuard, Integrator, StepReport};
pub use model::{
    AppliedForces, Configuration, Dissipation, Forces, Holonomic, HolonomicHessians,
    HolonomicKinematics, Inertia, InertiaGradient, Nonholonomic, Penalized, PenalizedHessian,
    PenalizedPotential, PenalizedThirdDerivative, Potential, PotentialHessian,
    PotentialThirdDerivative, Regularization, Relaxation,
};
pub use nalgebra::{SMatrix, SVector};
pub use state::State;
