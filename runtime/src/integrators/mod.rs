//! Integrators, grouped by family. Each one is generic over the model traits it needs.
//!
//! # Names of the two tiers
//!
//! A method that serves both tiers is written once as a scheme over a small system trait, and
//! its names follow one rule:
//!
//! - the scheme is `<Family>Scheme` or the family's own name (`SpookScheme`, `ShakeScheme`,
//!   `RattleScheme`, `CarriedScheme`, `RkScheme`), generic over a system;
//! - the system of a tier is `<Family>Dense` on the fixed-size tier and `<Family>Sparse` on the
//!   sparse tier: [`SpookDense`](linearly_implicit::spook::dense::SpookDense) /
//!   [`SpookSparse`](linearly_implicit::spook::sparse::SpookSparse),
//!   [`ProjectionDense`](projection::dense::ProjectionDense) /
//!   [`ProjectionSparse`](projection::sparse::ProjectionSparse),
//!   [`CarriedDense`](linearly_implicit::carried::dense::CarriedDense) /
//!   [`CarriedSparse`](linearly_implicit::carried::sparse::CarriedSparse),
//!   [`IndexOneDense`](stabilized::dense::IndexOneDense) / [`IndexOneSparse`](stabilized::sparse::IndexOneSparse);
//! - the integrators a user names are aliases of the scheme over a system: the fixed-size one
//!   bare ([`Spook`](crate::Spook), [`Shake`](crate::Shake)), the sparse one with the prefix
//!   `Sparse` ([`SparseSpook`](crate::SparseSpook), [`SparseShake`](crate::SparseShake)).
//!
//! Their buffers are a tier's [`TierVector`]; Newton's settings are one [`Newton`]. The
//! system traits and types are gathered, with a table, in the crate's `seam` module.

mod block_mass;
pub(crate) mod checks;
pub(crate) mod energy_guard;
pub mod energy_momentum;
pub mod explicit;
mod jacobian;
pub mod langevin;
pub mod lie_group;
pub mod linearly_implicit;
mod mass_factor;
pub(crate) mod newton;
pub mod nonholonomic;
pub mod projection;
pub(crate) mod saddle_point;
pub mod stabilized;
mod tangent;
pub(crate) mod tier;

pub use crate::guard::DivergenceGuard;
pub use energy_guard::EnergyGuard;
pub(crate) use energy_guard::EnergyWatch;
pub use jacobian::{
    DifferentiableInParameters, DifferentiableStep, ParameterJacobian, SparseDifferentiableStep,
    StepJacobian,
};
pub use newton::Newton;
pub(crate) use tier::TierVector;

use crate::error::StepError;
use crate::state::{DynState, State};

/// Advances a state of a model by one step.
///
/// Every implementation for a scheme that can step a configuration-dependent mass matrix
/// carries `#[diagnostic::do_not_recommend]`, so that stepping a model that lacks a capability
/// trait the integrator needs is reported as this trait's one message (below) rather than as
/// every missing model trait with the list of library models that have it. The schemes bounded
/// on [`ConstantMass`](crate::ConstantMass) do not: rustc reports a failed bound of a
/// `do_not_recommend` impl as the impl's own trait, and a model with a varying mass must see
/// `ConstantMass`'s message, which names the integrators that can step it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot step `{Model}`: the model lacks capability traits this integrator needs",
    label = "`{Model}` is not compiled for this integrator",
    note = "for a model written with `mechanism!`, add the integrator to its `integrators: [..]` (the names and the runtime types they cover: `mechanism::runtime::capabilities::Family`)"
)]
pub trait Integrator<Model, const N: usize> {
    /// Advances `state` by one step; on error `state` is left unchanged.
    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError>;

    /// Tells the integrator's [`EnergyGuard`], if it has one, that the run may exchange up to
    /// `energy` with a heat bath, so that the guard widens its band by it; the default, for an
    /// integrator without an energy guard, does nothing. [`Langevin`](crate::Langevin) calls it
    /// with `n·kT`.
    fn admit_energy_exchange(&mut self, energy: f64) {
        let _ = energy;
    }

    /// Returns the integrator's identity for a checkpoint
    /// ([`CarriedState::identity`](crate::checkpoint::CarriedState::identity)), or `None`, the
    /// default, for an integrator that cannot be checkpointed yet (the driver then refuses to
    /// write or resume one).
    ///
    /// These three methods reach an integrator's [`CarriedState`](crate::checkpoint::CarriedState)
    /// through the trait the driver holds it by (boxed or not); a wrapper such as
    /// [`Langevin`](crate::Langevin) adds its own state to its inner integrator's.
    fn carried_identity(&self) -> Option<crate::checkpoint::IntegratorIdentity> {
        None
    }

    /// Writes what the integrator carries between steps into `out`; the default writes
    /// nothing.
    fn save_carried(&self, out: &mut crate::checkpoint::Carried) {
        let _ = out;
    }

    /// Restores what [`save_carried`](Self::save_carried) wrote; the default fails with
    /// [`CheckpointError::Unsupported`](crate::checkpoint::CheckpointError::Unsupported).
    fn restore_carried(
        &mut self,
        from: &crate::checkpoint::Carried,
    ) -> Result<(), crate::checkpoint::CheckpointError> {
        let _ = from;
        Err(crate::checkpoint::CheckpointError::Unsupported {
            integrator: crate::checkpoint::short_type_name::<Self>(),
        })
    }
}

/// Advances a state of a sparse-tier model (sizes known at construction) by one step.
///
/// An integrator of this tier is built for one model ([`SparseSpook::new`](crate::SparseSpook)
/// analyses the model's sparsity patterns); stepping it with a model of other sizes or patterns
/// is an [`StepError::InvalidModel`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot step `{Model}` on the sparse tier",
    label = "not a sparse-tier integrator for `{Model}`",
    note = "the sparse tier needs a model implementing `model::sparse` (`SparseInertia`, `SparsePotential`, `SparseHolonomic`, …) and an integrator built for it, e.g. `SparseSpook::new(&model, h)`; fixed-size models step with `Integrator`"
)]
pub trait SparseIntegrator<Model: ?Sized> {
    /// Advances `state` by one step; on error `state` is left unchanged.
    fn step(&mut self, model: &Model, state: &mut DynState) -> Result<StepReport, StepError>;

    /// Tells the integrator's [`EnergyGuard`], if it has one, that the run may exchange up to
    /// `energy` with a heat bath ([`Integrator::admit_energy_exchange`]); the default does
    /// nothing.
    fn admit_energy_exchange(&mut self, energy: f64) {
        let _ = energy;
    }

    /// Returns the integrator's identity for a checkpoint
    /// ([`CarriedState::identity`](crate::checkpoint::CarriedState::identity)), or `None`, the
    /// default, for an integrator that cannot be checkpointed yet (the driver then refuses to
    /// write or resume one).
    ///
    /// These three methods reach an integrator's [`CarriedState`](crate::checkpoint::CarriedState)
    /// through the trait the driver holds it by (boxed or not); a wrapper such as
    /// [`Langevin`](crate::Langevin) adds its own state to its inner integrator's.
    fn carried_identity(&self) -> Option<crate::checkpoint::IntegratorIdentity> {
        None
    }

    /// Writes what the integrator carries between steps into `out`; the default writes
    /// nothing.
    fn save_carried(&self, out: &mut crate::checkpoint::Carried) {
        let _ = out;
    }

    /// Restores what [`save_carried`](Self::save_carried) wrote; the default fails with
    /// [`CheckpointError::Unsupported`](crate::checkpoint::CheckpointError::Unsupported).
    fn restore_carried(
        &mut self,
        from: &crate::checkpoint::Carried,
    ) -> Result<(), crate::checkpoint::CheckpointError> {
        let _ = from;
        Err(crate::checkpoint::CheckpointError::Unsupported {
            integrator: crate::checkpoint::short_type_name::<Self>(),
        })
    }
}

/// What one step cost, for statistics and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepReport {
    /// Linear systems factored in this step.
    pub factorizations: u32,
    /// Newton iterations performed in this step (0 for linearly implicit methods).
    pub newton_iterations: u32,
}

/// A boxed integrator steps as the integrator it holds (e.g. `Box<dyn Integrator<Model, N>>`
/// chosen at run time).
#[diagnostic::do_not_recommend]
impl<Model, I, const N: usize> Integrator<Model, N> for Box<I>
where
    I: Integrator<Model, N> + ?Sized,
{
    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError> {
        (**self).step(model, state)
    }

    fn admit_energy_exchange(&mut self, energy: f64) {
        (**self).admit_energy_exchange(energy)
    }

    fn carried_identity(&self) -> Option<crate::checkpoint::IntegratorIdentity> {
        (**self).carried_identity()
    }

    fn save_carried(&self, out: &mut crate::checkpoint::Carried) {
        (**self).save_carried(out)
    }

    fn restore_carried(
        &mut self,
        from: &crate::checkpoint::Carried,
    ) -> Result<(), crate::checkpoint::CheckpointError> {
        (**self).restore_carried(from)
    }
}

/// A boxed sparse-tier integrator steps as the integrator it holds (e.g.
/// `Box<dyn SparseIntegrator<Model>>` chosen at run time).
#[diagnostic::do_not_recommend]
impl<Model, I> SparseIntegrator<Model> for Box<I>
where
    Model: ?Sized,
    I: SparseIntegrator<Model> + ?Sized,
{
    fn step(&mut self, model: &Model, state: &mut DynState) -> Result<StepReport, StepError> {
        (**self).step(model, state)
    }

    fn admit_energy_exchange(&mut self, energy: f64) {
        (**self).admit_energy_exchange(energy)
    }

    fn carried_identity(&self) -> Option<crate::checkpoint::IntegratorIdentity> {
        (**self).carried_identity()
    }

    fn save_carried(&self, out: &mut crate::checkpoint::Carried) {
        (**self).save_carried(out)
    }

    fn restore_carried(
        &mut self,
        from: &crate::checkpoint::Carried,
    ) -> Result<(), crate::checkpoint::CheckpointError> {
        (**self).restore_carried(from)
    }
}
