//! How a run ends: the reason it stopped, or the error that stopped it.

use std::io;

use thiserror::Error;

use crate::error::StepError;

/// Why [`Simulation::step`](super::Simulation::step) returned without an error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StopReason {
    /// A step was taken and the end time is still ahead.
    InternalStep,
    /// The state has reached the end time; further calls do nothing.
    EndReached,
    /// An event function registered with [`Simulation::stop_when`](super::Simulation::stop_when) changed sign in the step
    /// just taken; the state is the step's end, and stepping on continues the run.
    Event {
        /// The event's number, in the order of the `stop_when` calls (0 for the first).
        index: usize,
        /// The located time of the sign change, inside the step (see [`Crossing`](crate::simulation::Crossing) and the
        /// module `event` for the accuracy: the dense output's with one, the secant's
        /// without).
        t: f64,
    },
}

/// Why a run stopped early or could not start; the rows written before it are kept.
#[derive(Debug, Error)]
pub enum SimulationError {
    /// The integrator failed a step: `step` is its number (1 for the first), `t` the time it
    /// started from; the state is the one before it.
    #[error("step {step} (from t = {t}) failed: {source}")]
    Step {
        /// The number of the failed step, counting from 1.
        step: usize,
        /// The time the failed step started from.
        t: f64,
        /// The integrator's error.
        source: StepError,
    },
    /// A fixed-step integrator stepped over a requested time instead of landing on it: the
    /// time is not on its grid, and the method has no dense output to report it.
    #[error(
        "requested time {requested} is not on the step grid: the step went from {from} to {to}; \
         choose a step size that divides the output interval, or an integrator with dense output"
    )]
    OffGrid {
        /// The requested time.
        requested: f64,
        /// The start of the step that passed it.
        from: f64,
        /// The end of that step.
        to: f64,
    },
    /// The schedule or the end time does not fit the run.
    #[error("bad schedule: {reason} (got {value})")]
    BadSchedule {
        /// What the schedule must satisfy.
        reason: &'static str,
        /// The offending value.
        value: f64,
    },
    /// An observer refused a state (e.g. a state that does not fit the observed model), or
    /// the initial state is not usable.
    #[error("observing the state at t = {t} failed: {source}")]
    Observer {
        /// The state's time.
        t: f64,
        /// The observer's error.
        source: StepError,
    },
    /// The sink could not write a row.
    #[error("writing the output failed: {0}")]
    Output(#[from] io::Error),
    /// The flag of [`Simulation::interrupt_on`](super::Simulation::interrupt_on) was set (e.g. by a SIGINT or SIGTERM
    /// handler): the run stopped before the step from `t`, and the sink was finished, so the
    /// `rows` written so far are complete and readable.
    #[error("interrupted at t = {t}: {rows} rows written")]
    Interrupted {
        /// The time of the state the run stopped at (the end of the last step taken).
        t: f64,
        /// The number of rows written, all of them finished in the sink.
        rows: usize,
    },
    /// A checkpoint could not be written, or the run could not continue the one it resumes
    /// from (see [`CheckpointError`](crate::checkpoint::CheckpointError)).
    #[error(transparent)]
    Checkpoint(#[from] crate::checkpoint::CheckpointError),
}
