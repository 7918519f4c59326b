//! The run driver: schedules on fixed-step grids, the off-grid notice, DOPRI5's dense output
//! (accuracy against an angle-coordinate reference, order by a fitted slope, post-stabilized
//! residuals), stop reasons, an error mid-run, the CSV contract and zero allocations per step on
//! a sparse model.

mod dense_output;
mod output;
mod runs;
mod schedules;

use crate::support::allocations;
use crate::support::spring::{sine_start, Spring};
use mechanism_runtime::integrators::stabilized::{
    AdaptiveRk, Dopri5, EmbeddedTableau, PostStabilization, DOPRI5, HEUN,
};
use mechanism_runtime::reference::double_pendulum::{initial_state, DoublePendulum};
use mechanism_runtime::reference::fit::loglog_slope;
use mechanism_runtime::reference::harmonic::HarmonicOscillator;
use mechanism_runtime::reference::PendulumChain;
use mechanism_runtime::simulation::{
    family, Column, CsvSink, IntegratorColumn, Mechanics, Schedule, Simulation, SimulationError,
    Sink, SparseMechanics, StopReason, Table,
};
use mechanism_runtime::{
    Configuration, ConstantMass, Inertia, Potential, Rk4, SMatrix, SVector, SparseIntegrator,
    SparseSpook, State, StepError,
};

use std::io::BufWriter;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Returns the column `name` of `table`.
fn column(table: &Table, name: &str) -> Vec<f64> {
    table.column(name).expect("the column exists").collect()
}
