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
//! | [`Spook`], [`SparseSpook`] | Lacoursière 2007, eq. 24–29 | [`ConstantMass`], [`Potential`], [`Holonomic`], [`Nonholonomic`], [`AppliedForces`] |
//! | [`ZhangSkeelSimplified`] (Z&Ss), [`SparseZhangSkeelSimplified`] | Tao–Owhadi 2014, eq. 18 | [`ConstantMass`], [`PotentialHessian`] (sparse: [`SparsePotentialHessian`](model::SparsePotentialHessian)) |
//! | [`ZhangSkeel`] (Z&S), [`SparseZhangSkeel`] | Tao–Owhadi 2014, eq. 3 | [`ConstantMass`], [`PotentialThirdDerivative`] (sparse: [`SparsePotentialThirdDerivative`](model::SparsePotentialThirdDerivative)) |
//! | [`ZhangSkeelStiff`] (stiff Z&Ss), [`SparseZhangSkeelStiff`] | Tao–Owhadi 2014, eq. 19 | [`ConstantMass`], [`SplitPotential`] (sparse: [`SparseSplitPotential`](model::SparseSplitPotential)) |
//! | [`Newmark`], [`NewmarkOneIteration`], [`SparseNewmarkOneIteration`], [`SparseNewmarkOneIterationStiff`] | Tao–Owhadi 2014, eq. 12 (γ = ½) | [`ConstantMass`], [`PotentialHessian`] (sparse: [`SparsePotentialHessian`](model::SparsePotentialHessian), or [`SparseSplitPotential`](model::SparseSplitPotential) for the stiff variant) |
//! | [`PushForwardNewmark`] | Tao–Owhadi 2014, eq. 14 | [`ConstantMass`], [`PotentialHessian`] |
//! | [`Livens`] | Kinon–Betsch, eq. 30 | [`InertiaGradient`], [`PotentialHessian`], [`HolonomicHessians`] |
//! | [`Shake`], [`Rattle`], [`SparseShake`], [`SparseRattle`] | Ryckaert et al. 1977; Andersen 1983; Lacoursière eq. 13 | [`ConstantMass`], [`Potential`], [`Holonomic`] |
//! | [`DiscreteLagrangeDAlembert`] | Cuell 2005, eq. 31–32, 53–58 | [`ConstantMass`], [`Potential`], [`Nonholonomic`], [`AppliedForces`] |
//! | [`CortesMartinez`] | Lacoursière 2007, eq. 24 (`γ → 0`) | [`ConstantMass`], [`Potential`], [`NonholonomicDerivative`], [`AppliedForces`] |
//! | [`MidpointLagrangeDAlembert`] | McLachlan–Perlmutter 2006 (midpoint DLA); Cuell 2005 §7 | [`InertiaGradient`], [`PotentialHessian`], [`NonholonomicDerivative`] |
//! | [`SymplecticEuler`], [`Verlet`], [`SparseVerlet`], [`Rk4`] | baselines | [`ConstantMass`], [`Potential`] |
//! | [`StabilizedRk`], [`SparseStabilizedRk`], [`Dopri5`] / [`AdaptiveRk`] | Ascher et al. 1995, eq. 1.5, 4.3–5.6 (index 1, Baumgarte, post-stabilization) | [`InertiaGradient`], [`Potential`], [`HolonomicKinematics`], [`AppliedForces`] |
//! | [`LieGroupEuler`](integrators::lie_group::LieGroupEuler), [`LinearizedSo3`](integrators::lie_group::LinearizedSo3) | Tao–Owhadi 2014, §4.5 eq. 34–37 | [`RigidBody`](model::RigidBody) (hand-written; no `mechanism!` model) |
//! | [`Langevin`], [`SparseLangevin`] (GLA) | Tao–Owhadi 2014, §4.3 eq. 27 | [`Inertia`] (sparse tier: [`SparseInertia`](model::SparseInertia)) + the wrapped integrator's |
//!
//! The table is the documentation of [`capabilities`], the data `mechanism!` checks a model
//! against (each family's types of both tiers, and the schemes that are no family's,
//! [`capabilities::OTHER_SCHEMES`]); a unit test keeps the two in agreement.
//!
//! Holonomic constraints run with Z&S through the penalty `½ ω² |g|²` ([`Penalized`]). Every
//! scheme that freezes the mass matrix over a step (all but Livens, the index-1 Runge–Kutta
//! methods and the midpoint discrete Lagrange–d'Alembert) needs [`ConstantMass`], so that
//! stepping a configuration-dependent one with it does not compile rather than integrate
//! equations without the velocity terms `∂T/∂q − Ṁv` (a hand-written model that implements the
//! marker but says `CONSTANT_MASS = false` is refused with [`StepError::Unsupported`]). Every
//! sparse-tier integrator freezes `M`, [`SparseStabilizedRk`] included, and needs
//! [`SparseConstantMass`](model::SparseConstantMass).
//!
//! No integrator returns `Ok` on a run that blows up. The constrained methods watch their rows
//! ([`DivergenceGuard`]: a residual as large as the row's own first-order scale), the
//! unconstrained and penalized ones their energy ([`EnergyGuard`]: `|H − H₀|` against ten times
//! the energy scale fixed when the run started); both refuse the step with a typed error and
//! leave the state as it was, and both can be changed or switched off (`with_divergence_guard`,
//! `with_energy_guard`). Every method also refuses a state that is not finite.
//!
//! Rigid bodies on `SO(3)` (not yet written with `mechanism!`): a model implements
//! [`model::RigidBody`] and is stepped on the group by the Lie-group variational Euler with
//! Cayley, or relaxed to `ℝ³ˣ³` with a penalty and stepped by the variational linearized `SO(3)`
//! integrator (Tao–Owhadi 2014 §4.5, [`integrators::lie_group`]); [`reference::MagnetizedBody`]
//! is the paper's magnetized body.
//!
//! # Two tiers
//!
//! Small models use the **fixed-size tier**: const-generic traits ([`Inertia<N>`](Inertia),
//! [`Holonomic<N, M>`](Holonomic), …), `SMatrix`/`SVector` on the stack, dense kernels.
//! Large models — a ladder of 1000 rods, a chain of 10 000 pendula — use the **sparse tier**:
//! sizes known when the model is constructed, a block-diagonal mass matrix, Jacobians as a fixed
//! sparsity pattern plus values ([`model::sparse`]), states as [`DynState`], and integrators
//! implementing [`SparseIntegrator`]. An integrator that serves both tiers is written once as a
//! scheme over a small "system" trait that each tier implements with its own linear algebra
//! behind [`linalg::LinearSolver`] (dense kernels, or a sparse `LDLᵀ` on faer analysed once and
//! refilled in place, with no heap allocation per step). On the sparse tier run [`SparseSpook`],
//! [`SparseShake`], [`SparseRattle`], [`SparseVerlet`], [`SparseZhangSkeel`],
//! [`SparseZhangSkeelSimplified`], [`SparseZhangSkeelStiff`], [`SparseNewmarkOneIteration`],
//! [`SparseNewmarkOneIterationStiff`], [`SparseStabilizedRk`] and [`SparseLangevin`];
//! [`reference::PendulumChain`] and [`reference::SpookLadder`] are hand-written models of it
//! (penalized through [`Penalized`] for the Z&S family). Newmark solved to convergence,
//! push-forward Newmark, Livens, the nonholonomic integrators and the adaptive Runge–Kutta
//! method are fixed-size only.
//!
//! ```
//! use mechanism_runtime::reference::PendulumChain;
//! use mechanism_runtime::{SparseIntegrator, SparseSpook};
//!
//! // Tao–Owhadi's chain of pendula, 1000 links, released at rest.
//! let chain = PendulumChain::tao_owhadi(1000);
//! let mut state = chain.tao_owhadi_state();
//! let mut spook = SparseSpook::new(&chain, 0.01)?; // numbering, pattern, symbolic LDLᵀ
//! for _ in 0..100 {
//!     spook.step(&chain, &mut state)?; // one sparse LDLᵀ per step, no allocation
//! }
//! assert!((state.t - 1.0).abs() < 1e-12);
//! # Ok::<(), mechanism_runtime::StepError>(())
//! ```
//!
//! [`simulation`] runs any of these integrators, of either tier, from an initial state to an
//! end time with output at requested times (DOPRI5 through its dense output), observers and
//! CSV: [`simulation::Simulation`].
//!
//! [`seam`] gathers what only an author of a new integrator needs: the system traits a scheme
//! is written over, the `<Family>Dense` / `<Family>Sparse` systems of the two tiers and the
//! tier vector. The crate root shows the models' capability traits, the integrators, the
//! states, the errors and the simulation driver.
//!
//! [`linearization`] finds a model's static equilibria on the constraint manifold (and whether
//! each is a minimum), linearizes the equations there in the tangent space of the rows, and
//! computes the modes: frequencies, mass-normalized shapes in the model's own coordinates,
//! rigid-body (zero) and unstable modes, and damping ratios.
//!
//! [`discrete_gradient`] provides Gonzalez discrete gradients of the potential, the constraints
//! and the kinetic energy (Kinon–Betsch–Livens eq. 26–29) for every model with the matching
//! capability, the building blocks of energy-consistent implicit schemes.
#![warn(missing_docs)]

pub mod capabilities;
pub mod checkpoint;
pub mod discrete_gradient;
pub mod error;
pub mod fma;
mod guard;
pub mod identification;
pub mod integrators;
pub mod linalg;
pub mod linearization;
pub mod model;
pub mod observers;
pub mod reference;
pub mod seam;
pub mod simulation;
pub mod state;
pub mod switch;

pub use error::StepError;
pub use integrators::energy_momentum::Livens;
pub use integrators::explicit::{Rk4, SparseVerlet, SymplecticEuler, Verlet};
pub use integrators::langevin::{Langevin, SparseLangevin};
pub use integrators::linearly_implicit::{
    Newmark, NewmarkOneIteration, PushForwardNewmark, SparseNewmarkOneIteration,
    SparseNewmarkOneIterationStiff, SparseSpook, SparseZhangSkeel, SparseZhangSkeelSimplified,
    SparseZhangSkeelStiff, Spook, ZhangSkeel, ZhangSkeelSimplified, ZhangSkeelStiff,
};
pub use integrators::nonholonomic::{
    CortesMartinez, DiscreteLagrangeDAlembert, MidpointLagrangeDAlembert,
};
pub use integrators::projection::{Rattle, Shake, SparseRattle, SparseShake};
pub use integrators::stabilized::{
    AdaptiveRk, Dopri5, PostStabilization, SparseStabilizedRk, StabilizedRk,
};
pub use integrators::{
    DifferentiableInParameters, DifferentiableStep, DivergenceGuard, EnergyGuard, Integrator,
    ParameterJacobian, SparseDifferentiableStep, SparseIntegrator, StepJacobian, StepReport,
};
pub use model::{
    AppliedForces, Configuration, ConstantMass, Dissipation, Forces, Holonomic, HolonomicHessians,
    HolonomicKinematics, Inertia, InertiaGradient, KinematicsJacobians,
    KinematicsParameterDerivatives, MassParameterDerivatives, Nonholonomic, NonholonomicDerivative,
    ParameterDerivatives, Parameters, Penalized, PenalizedHessian, PenalizedPotential,
    PenalizedThirdDerivative, PenaltyHessian, Potential, PotentialHessian,
    PotentialHessianParameterDerivative, PotentialThirdDerivative, Regularization, Relaxation,
    SplitPotential, StiffThirdDerivative, VelocityTermJacobians, VelocityTermParameterJacobian,
};
pub use nalgebra::{SMatrix, SVector};
pub use simulation::Simulation;
pub use state::{DynState, State};

// Kept at the root, out of its docs, for the code `mechanism!` generates
// (`::mechanism::runtime::{GeneratedSolve, SpookCoefficients}`) and for code written before
// they moved; each is documented where it lives: the generated solves' outcome and SPOOK's
// coefficients in `model`, the discrete gradients in `discrete_gradient` (what energy-consistent
// integrators are built from), the Langevin scheme behind `Langevin`/`SparseLangevin` in
// `integrators::langevin`.
#[doc(hidden)]
pub use discrete_gradient::{
    ConstraintDiscreteGradient, ConstraintDiscreteGradientJacobians, KineticDiscreteGradient,
    KineticJacobians, PotentialDiscreteGradient, PotentialDiscreteGradientJacobian,
};
#[doc(hidden)]
pub use integrators::langevin::LangevinScheme;
#[doc(hidden)]
pub use model::{GeneratedSolve, SpookCoefficients};
