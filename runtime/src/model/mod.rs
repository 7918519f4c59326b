//! What an integrator may ask of a model, as small capability traits.
//!
//! Every trait is generic over the number of coordinates `N` (and constraint rows `M`), so a
//! fixed-size model is monomorphized into allocation-free code. Each integrator asks only for the
//! capabilities it needs (see the table in the crate docs); `mechanism!` implements exactly the
//! ones the model can feed. Required methods are the minimum; provided methods (fused
//! evaluations, kinetic energy) have defaults that generated code overrides when it can share
//! work between outputs.

mod constraints;
mod forces;
mod inertia;
mod nonholonomic;
mod parameters;
mod penalty;
mod potential;
mod rigid;
pub mod size_checks;
pub mod sparse;
mod sparse_derivatives;
mod split;

pub use constraints::{
    spook_rhs, Holonomic, HolonomicHessians, HolonomicKinematics, KinematicsJacobians,
    KinematicsParameterDerivatives, Regularization, Relaxation, SpookCoefficients, SpookStep,
};
pub use forces::{AppliedForces, Dissipation, Forces};
pub use inertia::{
    ConstantMass, Inertia, InertiaGradient, VelocityTermJacobians, VelocityTermParameterJacobian,
};
pub use nonholonomic::{Nonholonomic, NonholonomicDerivative, DEFAULT_GAMMA};
pub use parameters::{MassParameterDerivatives, ParameterDerivatives, Parameters};
pub use penalty::{Penalized, PenalizedHessian, PenalizedPotential, PenalizedThirdDerivative};
pub use potential::{
    GeneratedSolve, Potential, PotentialHessian, PotentialHessianParameterDerivative,
    PotentialThirdDerivative,
};
pub use rigid::{hat, vee, RigidBody, RigidBodyHessians};
pub use sparse::{
    SparseAppliedForces, SparseConstantMass, SparseHolonomic, SparseHolonomicKinematics,
    SparseInertia, SparseNonholonomic, SparsePotential,
};
pub use sparse::{
    SparseHolonomicHessians, SparsePenalizedHessian, SparsePenalizedPotential,
    SparsePenalizedThirdDerivative, SparsePenaltyHessian, SparsePotentialHessian,
    SparsePotentialThirdDerivative, SparseSplitPotential, SparseStiffThirdDerivative,
};
pub use sparse_derivatives::{
    SparseParameterDerivatives, SparseParameters, SparsePotentialHessianParameterDerivative,
    SparseStepDerivatives,
};
pub use split::{holonomic_penalty_hessian, PenaltyHessian, SplitPotential, StiffThirdDerivative};

/// Names a model's coordinates and parameters, for output files and error messages.
pub trait Configuration<const N: usize> {
    /// The coordinate names, in the order of `q`.
    const COORDINATES: [&'static str; N];
}
