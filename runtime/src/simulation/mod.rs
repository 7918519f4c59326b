//! The simulation layer: a run driver over any integrator of either tier, output at requested
//! times, CSV, and a progress bar.
//!
//! A run is a [`Simulation`]: a model, a [`Stepper`] (an integrator adapted by [`Fixed`],
//! [`Sparse`] or [`Adaptive`]), an initial state, an end time, a [`Schedule`] of output times
//! and [`Observer`]s that add columns ([`Mechanics`] and [`SparseMechanics`]: energy and the
//! residuals at position and velocity level; [`Column`] and [`IntegratorColumn`]: closures of
//! the state, or of the integrator and the state). Rows go into a [`Sink`]: an in-memory [`Table`] or a [`CsvSink`] streaming the examples' CSV contract (`t`, `q.*`,
//! `v.*`, `energy`, `residual.position`, `residual.velocity`, then extras; a family's
//! coordinates as `q.x[i]`, see [`family`]).
//!
//! One file per stage: [`schedule`](Schedule) (when to write), `stepper` (the seam to the
//! integrators), `observer` (what to write), `output` (where to write), `driver` (the loop),
//! and `progress` (the bar).
//!
//! # What lives here and what does not
//!
//! The runtime is linked by code that `mechanism!` generates, so this module adds no
//! dependency to it by default: the driver, schedules, observers, the table and the CSV writer
//! are plain `std` (CSV of numbers needs no crate: the header is names joined by commas, the
//! numbers are written in Rust's shortest round-trip form). The progress bar needs
//! `indicatif` and is behind the runtime's feature `indicatif`
//! (`Simulation::with_progress`); heavier output — plots, GIFs, Parquet, thread pools for
//! ensembles — belongs to the facade crate `mechanism` or the examples, which depend on this
//! driver and not the other way round.

mod driver;
mod observer;
mod output;
#[cfg(feature = "indicatif")]
mod progress;
mod schedule;
mod stepper;

pub use driver::{Simulation, SimulationError, StopReason};
pub use observer::{Column, IntegratorColumn, Mechanics, Observer, SparseMechanics};
pub use output::{family, write_number, CsvSink, Sink, Table};
pub use schedule::{grid_tolerance, Schedule};
pub use stepper::{Adaptive, Fixed, Sparse, StateView, Stepper};
