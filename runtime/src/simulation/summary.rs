//! The summary of a run over every step, whatever the output schedule, and the trajectory a
//! run leaves: its rows, its summary and why it stopped early if it did.
//!
//! A [`Summary`] is kept by an [`on_step`](super::Simulation::on_step) monitor: it starts at
//! the initial state ([`Summary::start`]) and takes the state after each step
//! ([`Summary::push`]), measuring the energy `E = T + V` and the constraint residuals of an
//! *observed* model (which differs from the stepped one when the integrator runs a modified
//! model, e.g. the penalized `V + ½ω²|g|²`, while the residuals must measure the hard
//! constraints). For a column of rows, [`max_deviation`] and [`max_increment`] are the same
//! two measures: the drift `max_k |x_k − x_0|` of a quantity that should be conserved and the
//! largest change `max_k |x_{k+1} − x_k|` over one step.
//!
//! ```
//! use std::cell::Cell;
//! use mechanism_runtime::reference::double_pendulum::{initial_state, DoublePendulum};
//! use mechanism_runtime::simulation::{Schedule, Simulation, Summary};
//! use mechanism_runtime::Rattle;
//!
//! let pendulum = DoublePendulum::default();
//! let start = initial_state();
//! let summary = Cell::new(Summary::start::<_, 4, 2>(&pendulum, &start));
//! let mut run = Simulation::fixed(&pendulum, Rattle::new(0.01)?, start, 1.0, Schedule::EveryStep)?
//!     .on_step(|_, state| {
//!         let mut s = summary.get();
//!         s.push::<_, 4, 2>(&pendulum, state);
//!         summary.set(s);
//!     });
//! run.run()?;
//! let s = summary.get();
//! assert_eq!(s.steps, 100);
//! assert!(s.max_energy_error < 1e-3 && s.max_position_residual < 1e-9);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::{Path, PathBuf};

use super::{SimulationError, Table};
use crate::model::{Holonomic, Inertia, Potential};
use crate::observers;
use crate::state::State;

/// A summary of a run kept over every step whatever the output schedule (an
/// [`on_step`](super::Simulation::on_step) monitor): the energy drift `max_k |E_k − E_0|`, the
/// largest change over one step `max_k |E_{k+1} − E_k|` and the largest constraint residuals
/// `max_k max_i |g_i(q_k)|` and `max_k max_i |(G(q_k) v_k)_i|` of the observed model.
#[derive(Clone, Copy, Debug, Default)]
pub struct Summary {
    /// The number of successful steps.
    pub steps: usize,
    /// The time after the last successful step.
    pub t_last: f64,
    /// The initial energy.
    pub e0: f64,
    /// The energy after the last step.
    e_last: f64,
    /// `max_k |E_k − E_0|`.
    pub max_energy_error: f64,
    /// `max_k |E_{k+1} − E_k|`.
    pub max_energy_increment: f64,
    /// `max_k max_i |g_i(q_k)|`.
    pub max_position_residual: f64,
    /// `max_k max_i |(G(q_k) v_k)_i|`.
    pub max_velocity_residual: f64,
}

impl Summary {
    /// Starts the summary at the initial `state` of `observed`: no steps, `E_0` and the
    /// residuals of `state`.
    pub fn start<O, const N: usize, const M: usize>(observed: &O, state: &State<N>) -> Self
    where
        O: Inertia<N> + Potential<N> + Holonomic<N, M>,
    {
        let e0 = observers::energy(observed, state);
        Summary {
            t_last: state.t,
            e0,
            e_last: e0,
            max_position_residual: observers::position_residual::<N, M, O>(observed, state),
            max_velocity_residual: observers::velocity_residual::<N, M, O>(observed, state),
            ..Summary::default()
        }
    }

    /// Adds the `state` of `observed` after a step.
    pub fn push<O, const N: usize, const M: usize>(&mut self, observed: &O, state: &State<N>)
    where
        O: Inertia<N> + Potential<N> + Holonomic<N, M>,
    {
        let e = observers::energy(observed, state);
        self.steps += 1;
        self.t_last = state.t;
        self.max_energy_error = self.max_energy_error.max((e - self.e0).abs());
        self.max_energy_increment = self.max_energy_increment.max((e - self.e_last).abs());
        self.e_last = e;
        self.max_position_residual = self
            .max_position_residual
            .max(observers::position_residual::<N, M, O>(observed, state));
        self.max_velocity_residual = self
            .max_velocity_residual
            .max(observers::velocity_residual::<N, M, O>(observed, state));
    }
}

/// A run through the driver: the rows it wrote (at the times of its [`Schedule`](super::Schedule)),
/// the [`Summary`] over every step, and why it stopped early if it did.
#[derive(Debug)]
pub struct Trajectory {
    /// The rows: `t`, `q.*`, `v.*`, `energy`, `residual.position`, `residual.velocity`, then
    /// the method-specific columns.
    pub table: Table,
    /// The summary over every step.
    pub summary: Summary,
    /// The error that ended the run early, if it did (the rows before it are kept).
    pub failure: Option<SimulationError>,
    /// The file the rows were streamed to while the run went, if they were, finished also
    /// after a failure.
    pub file: Option<PathBuf>,
}

impl Trajectory {
    /// Returns the values of the column `name`, one per row.
    pub fn column(&self, name: &str) -> Option<Vec<f64>> {
        Some(self.table.column(name)?.collect())
    }

    /// Returns the total energy, one value per row.
    pub fn energy(&self) -> Vec<f64> {
        self.column("energy").unwrap_or_default()
    }

    /// Returns the times of the rows.
    pub fn times(&self) -> Vec<f64> {
        self.column("t").unwrap_or_default()
    }

    /// Returns the time of the last row.
    pub fn t_last(&self) -> f64 {
        self.times().last().copied().unwrap_or(0.0)
    }

    /// Returns `Err` with the failure if the run stopped early, else `Ok(())`.
    pub fn completed(&self) -> Result<(), &SimulationError> {
        self.failure.as_ref().map_or(Ok(()), Err)
    }

    /// Returns `Err` with the failure's message if the run stopped early, naming the file the
    /// rows were streamed to for an interrupt ([`interruption_message`]).
    pub fn outcome(&self) -> Result<(), String> {
        match (&self.failure, &self.file) {
            (None, _) => Ok(()),
            (Some(error), Some(file)) => Err(interruption_message(error, file)),
            (Some(error), None) => Err(error.to_string()),
        }
    }
}

/// Returns the message of a run that `error` ended, naming the file its rows went to:
/// `interrupted at t = …: N rows written to FILE` for an interrupt
/// ([`SimulationError::Interrupted`]), the error's own message otherwise.
pub fn interruption_message(error: &SimulationError, file: &Path) -> String {
    match error {
        SimulationError::Interrupted { .. } => format!("{error} to {}", file.display()),
        other => other.to_string(),
    }
}

/// Returns `max_k |x_k − x_0|`: the drift of a quantity that should be conserved (0 for no
/// values).
pub fn max_deviation(values: &[f64]) -> f64 {
    let first = values.first().copied().unwrap_or(0.0);
    values.iter().fold(0.0, |m, x| m.max((x - first).abs()))
}

/// Returns `max_k |x_{k+1} − x_k|`: the largest change of a quantity over one step (0 for
/// fewer than two values).
pub fn max_increment(values: &[f64]) -> f64 {
    values
        .windows(2)
        .fold(0.0, |m, w| m.max((w[1] - w[0]).abs()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::double_pendulum::{initial_state, DoublePendulum};

    #[test]
    fn deviation_and_increment_of_a_column() {
        assert_eq!(max_deviation(&[]), 0.0);
        assert_eq!(max_increment(&[1.0]), 0.0);
        assert_eq!(max_deviation(&[1.0, 3.0, -2.0, 1.5]), 3.0);
        assert_eq!(max_increment(&[1.0, 3.0, -2.0, 1.5]), 5.0);
    }

    #[test]
    fn a_summary_starts_at_the_initial_state_and_counts_steps() {
        let pendulum = DoublePendulum::default();
        let start = initial_state();
        let mut summary = Summary::start::<_, 4, 2>(&pendulum, &start);
        assert_eq!((summary.steps, summary.t_last), (0, 0.0));
        assert_eq!(summary.max_energy_error, 0.0);
        let mut later = start;
        later.t = 0.5;
        later.v[0] = 1.0; // E grows by ½ m1 v²
        summary.push::<_, 4, 2>(&pendulum, &later);
        summary.push::<_, 4, 2>(&pendulum, &later);
        assert_eq!((summary.steps, summary.t_last), (2, 0.5));
        assert!((summary.max_energy_error - 0.5 * pendulum.m1).abs() < 1e-15);
        assert_eq!(summary.max_energy_increment, summary.max_energy_error);
        assert!(summary.max_velocity_residual > 0.0);
    }

    #[test]
    fn a_trajectory_reads_its_columns_and_reports_its_failure() {
        use super::super::Sink;
        let mut table = Table::default();
        table
            .begin(&["t".to_string(), "energy".to_string()], None)
            .unwrap();
        Sink::row(&mut table, &[0.0, 1.0]).unwrap();
        Sink::row(&mut table, &[0.1, 1.5]).unwrap();
        let mut trajectory = Trajectory {
            table,
            summary: Summary::default(),
            failure: None,
            file: None,
        };
        assert_eq!(trajectory.times(), [0.0, 0.1]);
        assert_eq!(trajectory.energy(), [1.0, 1.5]);
        assert_eq!(trajectory.t_last(), 0.1);
        assert!(trajectory.column("q.x").is_none());
        assert!(trajectory.completed().is_ok() && trajectory.outcome().is_ok());
        trajectory.failure = Some(SimulationError::Interrupted { t: 0.1, rows: 2 });
        trajectory.file = Some(PathBuf::from("out/run.csv"));
        assert!(trajectory.completed().is_err());
        assert!(trajectory
            .outcome()
            .unwrap_err()
            .ends_with(" to out/run.csv"));
    }
}
