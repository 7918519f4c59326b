//! The seam between the driver and the integrators of both tiers: one trait, three adapters.

use crate::checkpoint::{Carried, CarriedState, CheckpointError, IntegratorIdentity};
use crate::error::StepError;
use crate::integrators::stabilized::AdaptiveRk;
use crate::integrators::{Integrator, SparseIntegrator};
use crate::model::{AppliedForces, HolonomicKinematics, InertiaGradient, Potential};
use crate::state::{DynState, State};

/// A state the driver can read and write rows of: `State<N>` (fixed-size tier) or `DynState`
/// (sparse tier).
pub trait StateView: Clone {
    /// Returns the time.
    fn t(&self) -> f64;
    /// Sets the time (the driver writes a row at a requested time `t` the step landed on within
    /// [`grid_tolerance`](super::grid_tolerance)).
    fn set_t(&mut self, t: f64);
    /// Returns the coordinates `q`.
    fn q(&self) -> &[f64];
    /// Returns the velocities `v`.
    fn v(&self) -> &[f64];
    /// Copies `other` into `self`, reusing `self`'s buffers (no allocation when the sizes
    /// agree; a derived `clone_from` would allocate).
    fn copy_from(&mut self, other: &Self);

    /// Sets the state to `(t, q, v)` (a resumed run's), `q` and `v` as long as the state's.
    fn assign(&mut self, t: f64, q: &[f64], v: &[f64]);
}

impl<const N: usize> StateView for State<N> {
    fn t(&self) -> f64 {
        self.t
    }
    fn set_t(&mut self, t: f64) {
        self.t = t;
    }
    fn q(&self) -> &[f64] {
        self.q.as_slice()
    }
    fn v(&self) -> &[f64] {
        self.v.as_slice()
    }
    fn copy_from(&mut self, other: &Self) {
        *self = *other;
    }

    fn assign(&mut self, t: f64, q: &[f64], v: &[f64]) {
        self.t = t;
        self.q.copy_from_slice(q);
        self.v.copy_from_slice(v);
    }
}

impl StateView for DynState {
    fn t(&self) -> f64 {
        self.t
    }
    fn set_t(&mut self, t: f64) {
        self.t = t;
    }
    fn q(&self) -> &[f64] {
        &self.q
    }
    fn v(&self) -> &[f64] {
        &self.v
    }
    fn copy_from(&mut self, other: &Self) {
        self.t = other.t;
        self.q.clone_from(&other.q);
        self.v.clone_from(&other.v);
    }

    fn assign(&mut self, t: f64, q: &[f64], v: &[f64]) {
        self.t = t;
        self.q.clear();
        self.q.extend_from_slice(q);
        self.v.clear();
        self.v.extend_from_slice(v);
    }
}

/// One step of an integrator of either tier, as the driver sees it.
///
/// The driver is written once over this trait; [`Fixed`], [`Sparse`] and [`Adaptive`] adapt
/// the three kinds of integrator ([`Integrator`], [`SparseIntegrator`], the error-controlled
/// [`AdaptiveRk`] with its `step_toward` and dense output) without a second copy of the loop.
pub trait Stepper<Model: ?Sized> {
    /// The state the integrator advances.
    type State: StateView;
    /// The integrator, as observers see it.
    type Integrator: ?Sized;

    /// Returns the integrator.
    fn integrator(&self) -> &Self::Integrator;

    /// Advances `state` by one step; an adaptive method does not step past `t_stop`. On error
    /// `state` is unchanged.
    fn step(
        &mut self,
        model: &Model,
        state: &mut Self::State,
        t_stop: f64,
    ) -> Result<(), StepError>;

    /// Returns whether [`interpolate`](Self::interpolate) evaluates a continuous extension of
    /// the last step, so that requested times need not be step ends.
    fn has_dense_output(&self) -> bool {
        false
    }

    /// Writes into `out` the state at `t` inside the last step; fails with `Unsupported`
    /// unless [`has_dense_output`](Self::has_dense_output).
    fn interpolate(
        &mut self,
        _model: &Model,
        _t: f64,
        _out: &mut Self::State,
    ) -> Result<(), StepError> {
        Err(StepError::Unsupported {
            integrator: "this stepper",
            requirement: "a continuous extension (dense output) to report between steps",
        })
    }

    /// Returns the integrator's identity for a checkpoint, or `None` if it cannot be
    /// checkpointed ([`Integrator::carried_identity`]).
    fn carried_identity(&self) -> Option<IntegratorIdentity> {
        None
    }

    /// Writes what the integrator carries between steps into `out`; the default writes
    /// nothing.
    fn save_carried(&self, out: &mut Carried) {
        let _ = out;
    }

    /// Restores what [`save_carried`](Self::save_carried) wrote; the default fails with
    /// `Unsupported`.
    fn restore_carried(&mut self, from: &Carried) -> Result<(), CheckpointError> {
        let _ = from;
        Err(CheckpointError::Unsupported {
            integrator: crate::checkpoint::short_type_name::<Self>(),
        })
    }
}

/// Adapts a fixed-size-tier [`Integrator`] with state [`State<N>`].
#[derive(Clone, Debug)]
pub struct Fixed<I, const N: usize>(pub I);

impl<Model, I, const N: usize> Stepper<Model> for Fixed<I, N>
where
    I: Integrator<Model, N>,
{
    type State = State<N>;
    type Integrator = I;

    fn integrator(&self) -> &I {
        &self.0
    }

    fn step(&mut self, model: &Model, state: &mut State<N>, _t_stop: f64) -> Result<(), StepError> {
        self.0.step(model, state).map(|_| ())
    }

    fn carried_identity(&self) -> Option<IntegratorIdentity> {
        self.0.carried_identity()
    }

    fn save_carried(&self, out: &mut Carried) {
        self.0.save_carried(out)
    }

    fn restore_carried(&mut self, from: &Carried) -> Result<(), CheckpointError> {
        self.0.restore_carried(from)
    }
}

/// Adapts a sparse-tier [`SparseIntegrator`] with state [`DynState`] (also a
/// `Box<dyn SparseIntegrator<Model>>`).
#[derive(Clone, Debug)]
pub struct Sparse<I>(pub I);

impl<Model, I> Stepper<Model> for Sparse<I>
where
    Model: ?Sized,
    I: SparseIntegrator<Model>,
{
    type State = DynState;
    type Integrator = I;

    fn integrator(&self) -> &I {
        &self.0
    }

    fn step(&mut self, model: &Model, state: &mut DynState, _t_stop: f64) -> Result<(), StepError> {
        self.0.step(model, state).map(|_| ())
    }

    fn carried_identity(&self) -> Option<IntegratorIdentity> {
        self.0.carried_identity()
    }

    fn save_carried(&self, out: &mut Carried) {
        self.0.save_carried(out)
    }

    fn restore_carried(&mut self, from: &Carried) -> Result<(), CheckpointError> {
        self.0.restore_carried(from)
    }
}

/// Adapts the error-controlled [`AdaptiveRk`]: each step is
/// [`step_toward`](AdaptiveRk::step_toward) the stop time, and with DOPRI5 the driver reports
/// requested times through [`dense_output`](AdaptiveRk::dense_output) instead of shortening
/// steps.
#[derive(Clone, Debug)]
pub struct Adaptive<const N: usize, const M: usize, const S: usize>(pub AdaptiveRk<N, M, S>);

impl<Model, const N: usize, const M: usize, const S: usize> Stepper<Model> for Adaptive<N, M, S>
where
    Model: InertiaGradient<N> + Potential<N> + HolonomicKinematics<N, M> + AppliedForces<N>,
{
    type State = State<N>;
    type Integrator = AdaptiveRk<N, M, S>;

    fn integrator(&self) -> &AdaptiveRk<N, M, S> {
        &self.0
    }

    fn step(&mut self, model: &Model, state: &mut State<N>, t_stop: f64) -> Result<(), StepError> {
        self.0.step_toward(model, state, t_stop).map(|_| ())
    }

    fn has_dense_output(&self) -> bool {
        self.0.has_dense_output()
    }

    fn interpolate(&mut self, model: &Model, t: f64, out: &mut State<N>) -> Result<(), StepError> {
        self.0.dense_output(model, t, out)
    }

    fn carried_identity(&self) -> Option<IntegratorIdentity> {
        Some(self.0.identity())
    }

    fn save_carried(&self, out: &mut Carried) {
        self.0.save(out)
    }

    fn restore_carried(&mut self, from: &Carried) -> Result<(), CheckpointError> {
        self.0.restore(from)
    }
}
