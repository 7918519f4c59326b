//! The simulation layer: a run driver over any integrator of either tier, output at requested
//! times, CSV, and a progress bar.
//!
//! A run is a [`Simulation`]: a model, a [`Stepper`] (an integrator adapted by [`Fixed`],
//! [`Sparse`] or [`Adaptive`]), an initial state, an end time, a [`Schedule`] of output times
//! and [`Observer`]s that add columns ([`Mechanics`] and [`SparseMechanics`]: energy and the
//! residuals at position and velocity level; [`Column`] and [`IntegratorColumn`]: closures of
//! the state, or of the integrator and the state). Rows go into a [`Sink`]: an in-memory
//! [`Table`] or a [`CsvSink`] streaming the examples' CSV contract (`t`, `q.*`, `v.*`,
//! `energy`, `residual.position`, `residual.velocity`, then extras; a family's coordinates as
//! `q.x[i]`, see [`family`]). [`Simulation::stop_when`] adds events: sign changes of functions
//! of the state that stop the run with [`StopReason::Event`] at the located time (through the
//! dense output where there is one).
//!
//! On the sparse tier, streaming the CSV contract while a monitor keeps a summary of every
//! step (the shape of the ladder example's loop):
//!
//! ```
//! use mechanism_runtime::reference::PendulumChain;
//! use mechanism_runtime::simulation::{family, CsvSink, Schedule, Simulation, SparseMechanics};
//! use mechanism_runtime::{SparseIntegrator, SparseSpook};
//!
//! let chain = PendulumChain::tao_owhadi(100);
//! let spook: Box<dyn SparseIntegrator<PendulumChain>> =
//!     Box::new(SparseSpook::new(&chain, 0.01)?);
//! let fastest = std::cell::Cell::new(0.0f64);
//! let start = chain.tao_owhadi_state();
//! let mut run = Simulation::sparse(&chain, spook, start, 1.0, Schedule::EveryNthStep(10))?
//!     .coordinates(family(&["x", "y"], chain.links()))?
//!     .observe(SparseMechanics::new(&chain))
//!     .on_step(|_, s| fastest.set(s.v.iter().fold(fastest.get(), |m, v| m.max(v.abs()))))
//!     .write_to(CsvSink::new(Vec::new())); // a BufWriter<File> in an example
//! run.run()?;
//! let csv = String::from_utf8(run.into_output().into_inner())?;
//! assert!(csv.starts_with("t,q.x[0],q.y[0],q.x[1]"));
//! assert_eq!(csv.lines().count(), 1 + 11); // the header, t = 0, 0.1, …, 1
//! assert!(fastest.get() > 0.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The examples' loops map onto it one for one: `common::simulate(&mut integrator, stepped,
//! observed, initial, steps, &columns)` is [`Simulation::fixed`] with
//! `.coordinates(Observed::COORDINATES)`, `.observe(Mechanics::new(observed))` and an
//! [`IntegratorColumn`] per method-specific column; `Trajectory::thinned(k)` is
//! [`Schedule::EveryNthStep`], with the summaries over every step as
//! [`on_step`](Simulation::on_step) monitors; the ladder's streaming writer is a [`CsvSink`];
//! `--save-every DT` is [`Schedule::Every`].
//!
//! A run that must survive its job's time limit writes checkpoints
//! ([`Simulation::checkpoint_every`]: every `Δt` of simulated time or every `k` steps, at the
//! end and on an interrupt) and a fresh run continues from one bit for bit
//! ([`Simulation::resume_from`], with [`CsvSink::resume_file`] continuing the CSV); the
//! format, the keys and the errors are [`crate::checkpoint`]'s.
//!
//! One file per stage: [`schedule`](Schedule) (when to write), `stepper` (the seam to the
//! integrators), `observer` (what to write), `output` (where to write), `event` (when to stop
//! early, and where the crossing was), `driver` (the loop), `driver/checkpointing`
//! (checkpoints and resume), `progress` (the bar), `statistics` (batch means over every
//! step, for [`on_step`](Simulation::on_step) monitors), `summary` (a run's [`Summary`] over
//! every step and its [`Trajectory`]) and `sensitivity` ([`ForwardSensitivity`]: derivatives
//! of a fixed-step run with respect to its initial state and parameters) and `adjoint`
//! ([`adjoint_gradient`]: the gradient of a loss over a run by a backward pass).
//!
//! # What lives here and what does not
//!
//! The runtime is linked by code that `mechanism!` generates, so this module adds no
//! dependency to it by default beyond the checkpoints' (`serde`, `postcard` and `crc32fast`,
//! small and used only when a checkpoint is written or read): the driver, schedules,
//! observers, the table and the CSV writer are plain `std` (CSV of numbers needs no crate: the header is names joined by commas, the
//! numbers are written in Rust's shortest round-trip form). The progress bar needs
//! `indicatif` and is behind the runtime's feature `indicatif`
//! (`Simulation::with_progress`); heavier output — plots, GIFs, Parquet, thread pools for
//! ensembles — belongs to the facade crate `mechanism` or the examples, which depend on this
//! driver and not the other way round.

mod adjoint;
mod driver;
mod event;
mod observer;
mod output;
#[cfg(feature = "indicatif")]
mod progress;
mod samples;
mod schedule;
mod sensitivity;
mod statistics;
mod stepper;
mod summary;

pub use adjoint::{
    adjoint_gradient, sparse_adjoint_gradient, AdjointGradient, AdjointSettings, LossTerm,
    SparseAdjointGradient,
};
pub use driver::{Every, Simulation, SimulationError, StopReason};
pub use event::Crossing;
pub use observer::{Column, IntegratorColumn, Mechanics, Observer, SparseMechanics};
pub use output::{family, write_number, CsvSink, OutputPosition, Sink, Table, FLUSH_INTERVAL};
pub use samples::{sample_positions, PositionSample, Sampled, SamplingError};
pub use schedule::{grid_tolerance, Schedule};
pub use sensitivity::{
    ForwardSensitivity, Sensitive, SensitivityColumns, SparseForwardSensitivity, SparseSeed,
};
pub use statistics::{BatchMeans, Estimate};
pub use stepper::{Adaptive, Fixed, Sparse, StateView, Stepper};
pub use summary::{interruption_message, max_deviation, max_increment, Summary, Trajectory};
