//! A run's [`Plan`]: its step, number of steps, output schedule, output file and checkpoints.

use std::error::Error;
use std::path::PathBuf;

use mechanism::runtime::simulation::{Every, Schedule};

/// A fixed-step run: the step, the number of steps and when to write rows.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The step size.
    pub h: f64,
    /// The number of steps.
    pub steps: usize,
    /// When the driver writes a row.
    pub schedule: Schedule,
    /// Whether a run longer than one time unit shows the progress bar (not in ensembles, where
    /// many runs share the terminal).
    pub progress: bool,
    /// The file the rows are streamed to while the run goes ([`Plan::stream_to`]), or `None`
    /// to keep them in memory only.
    pub out: Option<PathBuf>,
    /// Keep every `every`-th row of the schedule and the last (`--every`, [`Thin`](crate::Thin)),
    /// in the file and in the [`Trajectory`](crate::Trajectory) alike.
    pub every: usize,
    /// The checkpoint file and how often to write it (`--checkpoint`, `--checkpoint-every`).
    pub checkpoint: Option<(PathBuf, Every)>,
    /// The checkpoint to resume from (`--resume`).
    pub resume: Option<PathBuf>,
}

impl Plan {
    /// Streams the rows to `path` (CSV, or a Parquet dataset directory, through
    /// [`table_sink`](crate::table_sink)) while the run goes, besides keeping them in the
    /// [`Trajectory`](crate::Trajectory), so that a killed or interrupted run leaves its rows on
    /// disk; [`write_outputs`](crate::write_outputs) then does not write the file again.
    pub fn stream_to(mut self, path: PathBuf) -> Self {
        self.out = Some(path);
        self
    }
}

/// Returns the output schedule: [`Schedule::Every`] for `--save-every DT`, else every step.
pub fn schedule(save_every: Option<f64>) -> Result<Schedule, Box<dyn Error>> {
    match save_every {
        None => Ok(Schedule::EveryStep),
        Some(dt) if dt.is_finite() && dt > 0.0 => Ok(Schedule::Every(dt)),
        Some(dt) => Err(format!("--save-every must be a positive number, got {dt}").into()),
    }
}

/// Returns the plan of a fixed-step run of step `h` to `t_end`: the step count
/// ([`step_count`]) and the schedule, refusing before the run a `--save-every` that is not a
/// multiple of `h` ([`Schedule::check_step`]: a fixed-step method reports only on its grid).
pub fn plan(h: f64, t_end: f64, save_every: Option<f64>) -> Result<Plan, Box<dyn Error>> {
    let steps = step_count(h, t_end)?;
    let schedule = schedule(save_every)?;
    schedule
        .check_step(h)
        .map_err(|e| format!("--save-every with --h {h}: {e}"))?;
    Ok(Plan {
        h,
        steps,
        schedule,
        progress: true,
        out: None,
        every: 1,
        checkpoint: None,
        resume: None,
    })
}

/// Returns the plan of an error-controlled run ([`simulate_adaptive`](crate::simulate_adaptive)):
/// rows at the times of `--save-every` (from the dense output) or after every accepted step; it has
/// no step of its own (`h` and `steps` are 0).
pub fn adaptive_plan(save_every: Option<f64>) -> Result<Plan, Box<dyn Error>> {
    Ok(Plan {
        h: 0.0,
        steps: 0,
        schedule: schedule(save_every)?,
        progress: true,
        out: None,
        every: 1,
        checkpoint: None,
        resume: None,
    })
}

/// Returns the number of steps of size `h` that reach `t_end` (rounded to the nearest
/// integer), or an error if `h` or `t_end` is not usable.
pub fn step_count(h: f64, t_end: f64) -> Result<usize, Box<dyn Error>> {
    if !(h.is_finite() && h > 0.0) {
        return Err(format!("--h must be a positive number, got {h}").into());
    }
    if !(t_end.is_finite() && t_end >= 0.0) {
        return Err(format!("--t-end must be a non-negative number, got {t_end}").into());
    }
    let steps = (t_end / h).round();
    if steps > 1e9 {
        return Err(format!("t_end / h = {steps:e} steps is too many to record").into());
    }
    Ok(steps as usize)
}
