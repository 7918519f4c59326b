//! The harness shared by the examples: one command line ([`RunOptions`], read by
//! [`cli::parse`], which refuses bad values before anything runs), the run through the
//! runtime's driver ([`Simulation`]) with the observed model's energy and residuals, a summary
//! over every step, and the pictures. The loop, the recorder, the schedule of rows and the CSV
//! writer are the driver's, the Parquet writer is `mechanism::parquet`; the plots and GIFs are
//! `mechanism::pictures`.
//!
//! An example includes it with `mod common;` and then
//!
//! 1. declares its own `--method` (a `clap::ValueEnum`, since the methods depend on what its
//!    model can feed) next to `#[command(flatten)] run: common::RunOptions`, its sizes with
//!    `value_parser = common::cli::count`, and reads them with [`cli::parse`];
//! 2. builds an integrator and calls [`simulate`] (or [`simulate_adaptive`]) with the model it
//!    steps (e.g. a [`Penalized`](mechanism::runtime::Penalized) model), the model it observes
//!    (the hard constraints), the [`Plan`] from [`RunOptions::plan`] (with `--save-every` and
//!    `--every`) streaming to `--out` ([`Plan::stream_to`]) and method-specific [`Column`]s;
//! 3. draws the plot of the [`Trajectory`] ([`write_outputs`], which writes the table only if
//!    it was not streamed), the GIF and paths of `--animate` and `--paths` with
//!    [`RunOptions::draw_motion`] (a planar model's `Scene`; the others call
//!    [`RunOptions::refuse_motion`] first), prints [`print_summary`], and exits through
//!    [`exit_code`] so that an error is one readable line, not a panic or a `Debug` dump.
//!
//! A step that fails (a Newton iteration that diverges, a blow-up to NaN) ends the trajectory
//! early: the samples up to the failure are kept, and [`Trajectory::failure`] says why, so the
//! partial run can still be written and plotted before the example reports the error.
//!
//! Every example streams the rows of its run to the file while it goes ([`Plan::stream_to`],
//! or a [`table_sink`] given to the driver): the CSV is flushed at least once a second and
//! Parquet is a directory of closed parts (`mechanism::parquet`), so a SIGKILL leaves every row
//! up to the last second readable. SIGINT and SIGTERM set the [`interrupt_flag`] (installed by
//! [`cli::parse`]), which every run of the harness reads once per step: the run stops at a step
//! boundary, its file is finished, and the example exits with 130 or 143 (128 + the signal,
//! the shell's convention) and `interrupted at t = …: N rows written to FILE`
//! ([`interrupted`]). A second signal ends the process at once.

// Each example uses a different subset of the harness.
#![allow(dead_code)]

pub mod cli;
pub mod stabilization;

pub use cli::Thin;

use std::cell::Cell;
use std::error::Error;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use mechanism::parquet::ParquetDataset;
use mechanism::pictures::{self, Animation, Scene};
use mechanism::runtime::checkpoint::{Checkpoint, ModelIdentity};
use mechanism::runtime::integrators::stabilized::Dopri5;
use mechanism::runtime::simulation::{
    write_number, CsvSink, Every, IntegratorColumn, Mechanics, OutputPosition, Schedule,
    Simulation, SimulationError, Sink, Stepper, Table,
};
use mechanism::runtime::{
    observers, AppliedForces, Configuration, Holonomic, HolonomicKinematics, Inertia,
    InertiaGradient, Integrator, Potential, SVector, State,
};

/// The options every example takes besides `--method`: step size, end time and output files.
///
/// The defaults depend on the example (and on the method, for `h`), so they are `Option`s
/// resolved with [`RunOptions::h_or`], [`RunOptions::t_end_or`], [`RunOptions::csv_or`] and
/// [`RunOptions::png_or`]. Every value is checked while the command line is read
/// ([`cli::parse`] with the value parsers of [`cli`]): a zero, negative, NaN or infinite number,
/// `--every 0` and an output path that cannot be written end the example with one line before
/// anything runs.
#[derive(Clone, Debug, clap::Args)]
pub struct RunOptions {
    /// Step size h [default: depends on the example and the method].
    #[arg(long, allow_hyphen_values = true, value_parser = cli::positive)]
    pub h: Option<f64>,
    /// End time of the run, and the bound of every other run the example does (see its
    /// --help for the exceptions) [default: depends on the example].
    #[arg(long, allow_hyphen_values = true, value_parser = cli::positive)]
    pub t_end: Option<f64>,
    /// Output table, one row per step: FILE.csv, or FILE.parquet for Parquet (a directory of
    /// parts); rows are written while the run goes [default: out/<example>.csv].
    #[arg(long, value_name = "FILE", value_parser = cli::output)]
    pub out: Option<PathBuf>,
    /// Output plot of energy error and constraint residuals [default: out/<example>.png].
    #[arg(long, value_name = "FILE.png", value_parser = cli::output)]
    pub plot: Option<PathBuf>,
    /// Write rows at exactly t = 0, DT, 2·DT, … and at the end time instead of after every
    /// step (fixed-step methods: DT must be a multiple of h; DOPRI5: from its dense output).
    /// The summaries are still taken over every step.
    #[arg(long, value_name = "DT", allow_hyphen_values = true, value_parser = cli::positive)]
    pub save_every: Option<f64>,
    /// Write every K-th row only (of the steps, or of the times of --save-every), and the
    /// last; the summaries are still taken over every step [default: 1, or the example's].
    #[arg(long, value_name = "K", allow_negative_numbers = true, value_parser = cli::count)]
    pub every: Option<usize>,
    /// Write an animated GIF of the motion from the rows (planar examples only).
    #[arg(long, value_name = "FILE.gif", value_parser = cli::output)]
    pub animate: Option<PathBuf>,
    /// Write a plot of the bodies' paths in the plane from the rows (planar examples only).
    #[arg(long, value_name = "FILE.png", value_parser = cli::output)]
    pub paths: Option<PathBuf>,
    /// Write a checkpoint of the run to FILE (atomically: FILE.tmp, then renamed) every
    /// --checkpoint-every DT of simulated time, at the end and when interrupted (SIGINT,
    /// SIGTERM), so that --resume FILE continues it bit for bit.
    #[arg(long, value_name = "FILE", value_parser = cli::output)]
    pub checkpoint: Option<PathBuf>,
    /// The simulated time between two checkpoints [default: none, only at the end and when
    /// interrupted]; needs --checkpoint.
    #[arg(long, value_name = "DT", allow_hyphen_values = true, value_parser = cli::positive)]
    pub checkpoint_every: Option<f64>,
    /// Continue the run from the checkpoint FILE: the same example, method, options and
    /// output (a CSV is cut to its length at the checkpoint and appended to; a Parquet
    /// dataset loses its parts written after it), with the end time free to grow; the plot and
    /// the summary cover the resumed part. A checkpoint of another model, method, setting or
    /// version is refused with the part that differs.
    #[arg(long, value_name = "FILE", value_parser = cli::input)]
    pub resume: Option<PathBuf>,
}

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
    /// Keep every `every`-th row of the schedule and the last (`--every`, [`Thin`]), in the
    /// file and in the [`Trajectory`] alike.
    pub every: usize,
    /// The checkpoint file and how often to write it (`--checkpoint`, `--checkpoint-every`).
    pub checkpoint: Option<(PathBuf, Every)>,
    /// The checkpoint to resume from (`--resume`).
    pub resume: Option<PathBuf>,
}

impl Plan {
    /// Streams the rows to `path` (CSV, or a Parquet dataset directory, through
    /// [`table_sink`]) while the run goes, besides keeping them in the [`Trajectory`], so that
    /// a killed or interrupted run leaves its rows on disk; [`write_outputs`] then does not
    /// write the file again.
    pub fn stream_to(mut self, path: PathBuf) -> Self {
        self.out = Some(path);
        self
    }
}

/// The flag set by the first SIGINT or SIGTERM, once [`interrupt_flag`] installed the handlers.
static INTERRUPT: OnceLock<(Arc<AtomicBool>, Arc<AtomicUsize>)> = OnceLock::new();

/// Returns the flag that SIGINT and SIGTERM set, installing their handlers on the first call
/// (`signal_hook::flag`: the handler only stores into atomics, which is all a handler may
/// safely do); every run of the harness passes it to
/// [`Simulation::interrupt_on`]. A second signal while the flag is set ends the process at
/// once with 128 + the signal. Without Unix signals (or if a handler cannot be installed,
/// which is reported on stderr) the flag is never set.
pub fn interrupt_flag() -> &'static AtomicBool {
    &INTERRUPT.get_or_init(install_handlers).0
}

/// Registers the SIGINT and SIGTERM handlers of [`interrupt_flag`].
fn install_handlers() -> (Arc<AtomicBool>, Arc<AtomicUsize>) {
    let (flag, signal) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicUsize::new(0)),
    );
    #[cfg(unix)]
    for number in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // The first registration exits if the flag is already set (the second signal); the
        // others then record the signal and set the flag.
        let installed = signal_hook::flag::register_conditional_shutdown(
            number,
            128 + number,
            Arc::clone(&flag),
        )
        .and_then(|_| {
            signal_hook::flag::register_usize(number, Arc::clone(&signal), number as usize)
        })
        .and_then(|_| signal_hook::flag::register(number, Arc::clone(&flag)));
        if let Err(error) = installed {
            eprintln!("warning: cannot handle signal {number} (it will kill the run): {error}");
        }
    }
    (flag, signal)
}

/// Returns `error`, with the message of [`interrupted`] if it is a run's interrupt (the
/// driver's error boxed by `?`), for an example whose run returns a boxed error.
pub fn in_file(error: Box<dyn Error>, path: &Path) -> Box<dyn Error> {
    match error.downcast::<SimulationError>() {
        Ok(error) => interrupted(&error, path).into(),
        Err(error) => error,
    }
}

/// Returns the message of a run that `error` ended, naming the file its rows went to:
/// `interrupted at t = …: N rows written to FILE` for an interrupt, the error otherwise.
pub fn interrupted(error: &SimulationError, path: &Path) -> String {
    match error {
        SimulationError::Interrupted { .. } => format!("{error} to {}", path.display()),
        other => other.to_string(),
    }
}

impl RunOptions {
    /// Returns `--h`, or `default` if it was not given.
    pub fn h_or(&self, default: f64) -> f64 {
        self.h.unwrap_or(default)
    }

    /// Returns `--t-end`, or `default` if it was not given.
    pub fn t_end_or(&self, default: f64) -> f64 {
        self.t_end.unwrap_or(default)
    }

    /// Returns `--every`, or else `default` for rows after every step and 1 with
    /// `--save-every` (whose times already choose the rows).
    pub fn every_or(&self, default: usize) -> usize {
        match (self.every, self.save_every) {
            (Some(every), _) => every,
            (None, Some(_)) => 1,
            (None, None) => default,
        }
    }

    /// Returns `--out`, or `out/<example>.csv`.
    pub fn csv_or(&self, example: &str) -> PathBuf {
        self.out
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("out/{example}.csv")))
    }

    /// Returns `--plot`, or `out/<example>.png`.
    pub fn png_or(&self, example: &str) -> PathBuf {
        self.plot
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("out/{example}.png")))
    }
}

impl RunOptions {
    /// Fails with one line if `--animate` or `--paths` was given to `example`, whose model is
    /// not planar (`why`).
    pub fn refuse_motion(&self, example: &str, why: &str) -> Result<(), Box<dyn Error>> {
        match (&self.animate, &self.paths) {
            (Some(_), _) => Err(format!("--animate is for planar models; {example}: {why}").into()),
            (_, Some(_)) => Err(format!("--paths is for planar models; {example}: {why}").into()),
            (None, None) => Ok(()),
        }
    }

    /// Fails with one line if `--checkpoint`, `--checkpoint-every` or `--resume` was given to
    /// `what`, a run or a table the example does not checkpoint (`why`), so that the options
    /// are never silently ignored.
    pub fn refuse_checkpoints(&self, what: &str, why: &str) -> Result<(), Box<dyn Error>> {
        let given = [
            (self.checkpoint.is_some(), "--checkpoint"),
            (self.checkpoint_every.is_some(), "--checkpoint-every"),
            (self.resume.is_some(), "--resume"),
        ];
        match given.iter().find(|(set, _)| *set) {
            Some((_, option)) => Err(format!("{option} is not supported by {what}: {why}").into()),
            None => Ok(()),
        }
    }

    /// Writes the GIF of `--animate` and the plot of `--paths` of `table` (the rows: `t`,
    /// `q.*`, …) as `scene` draws a configuration, and prints what it wrote.
    pub fn draw_motion(
        &self,
        title: &str,
        table: &Table,
        scene: &dyn Scene,
    ) -> Result<(), Box<dyn Error>> {
        self.draw_motion_with(Animation::new(title), title, table, scene)
    }

    /// Does [`draw_motion`](Self::draw_motion) with the settings of `animation`.
    pub fn draw_motion_with(
        &self,
        animation: Animation,
        title: &str,
        table: &Table,
        scene: &dyn Scene,
    ) -> Result<(), Box<dyn Error>> {
        if let Some(gif) = &self.animate {
            let summary = animation.write(gif, table, scene)?;
            println!("wrote {}: {summary}", gif.display());
        }
        if let Some(png) = &self.paths {
            pictures::trajectory_plot(png, title, table, scene, (800, 800))?;
            println!("wrote {}", png.display());
        }
        Ok(())
    }

    /// Returns the output schedule of `--save-every` ([`schedule`]).
    pub fn schedule(&self) -> Result<Schedule, Box<dyn Error>> {
        schedule(self.save_every)
    }

    /// Returns the [`plan`] of a fixed-step run of step `h` to `t_end` with `--save-every`,
    /// `--every`, `--checkpoint`, `--checkpoint-every` and `--resume`.
    pub fn plan(&self, h: f64, t_end: f64) -> Result<Plan, Box<dyn Error>> {
        let plan = plan(h, t_end, self.save_every)?;
        self.with_run_options(plan)
    }

    /// Returns the [`adaptive_plan`] of `--save-every` with `--every`, `--checkpoint`,
    /// `--checkpoint-every` and `--resume`.
    pub fn adaptive_plan(&self) -> Result<Plan, Box<dyn Error>> {
        self.with_run_options(adaptive_plan(self.save_every)?)
    }

    /// Returns `plan` with `--every`, `--checkpoint`, `--checkpoint-every` and `--resume`.
    fn with_run_options(&self, plan: Plan) -> Result<Plan, Box<dyn Error>> {
        Ok(Plan {
            every: self.every_or(1),
            checkpoint: self.checkpointing()?,
            resume: self.resume.clone(),
            ..plan
        })
    }

    /// Returns the checkpoint file and interval of `--checkpoint` and `--checkpoint-every`
    /// (both already checked by the command line's value parsers), refusing an interval
    /// without a file. Without `--checkpoint-every` a checkpoint is written only at the end
    /// and when the run is interrupted.
    pub fn checkpointing(&self) -> Result<Option<(PathBuf, Every)>, Box<dyn Error>> {
        match (&self.checkpoint, self.checkpoint_every) {
            (None, None) => Ok(None),
            (None, Some(_)) => Err("--checkpoint-every needs --checkpoint FILE".into()),
            (Some(file), Some(dt)) => Ok(Some((file.clone(), Every::Time(dt)))),
            (Some(file), None) => Ok(Some((file.clone(), Every::Steps(usize::MAX)))),
        }
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

/// Returns the plan of an error-controlled run ([`simulate_adaptive`]): rows at the times of
/// `--save-every` (from the dense output) or after every accepted step; it has no step of its
/// own (`h` and `steps` are 0).
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

/// How a [`Column`] computes its value from the integrator and the state.
type ColumnFn<'a, I, const N: usize> = Box<dyn Fn(&I, &State<N>) -> f64 + 'a>;

/// A method-specific output column: its name and how to compute it from the integrator (for
/// quantities it carries, such as multipliers or a momentum) and the state. It is the driver's
/// [`IntegratorColumn`] with the closure boxed, so that an example can list columns of
/// different closures in one array.
pub struct Column<'a, I, const N: usize> {
    name: String,
    value: ColumnFn<'a, I, N>,
}

impl<'a, I, const N: usize> Column<'a, I, N> {
    /// Creates a column named `name` whose value is `value(integrator, state)`.
    pub fn new(name: impl Into<String>, value: impl Fn(&I, &State<N>) -> f64 + 'a) -> Self {
        Column {
            name: name.into(),
            value: Box::new(value),
        }
    }

    /// Returns the driver's observer of this column.
    fn observer(self) -> IntegratorColumn<ColumnFn<'a, I, N>> {
        IntegratorColumn::new(self.name, self.value)
    }
}

/// The summary printed by [`print_summary`], kept over every step whatever the output
/// schedule (an [`on_step`](Simulation::on_step) monitor): energy drift, the largest change
/// over one step and the largest constraint residuals of the observed model.
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
    /// Starts the summary at the initial state of `observed`.
    fn start<O, const N: usize, const M: usize>(observed: &O, state: &State<N>) -> Self
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

    /// Adds the state after a step.
    fn push<O, const N: usize, const M: usize>(&mut self, observed: &O, state: &State<N>)
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

/// A run through the driver: the rows it wrote (at the times of `--save-every`, or after every
/// step), the [`Summary`] over every step, and why it stopped early if it did.
#[derive(Debug)]
pub struct Trajectory {
    /// The rows: `t`, `q.*`, `v.*`, `energy`, `residual.position`, `residual.velocity`, then
    /// the method-specific columns.
    pub table: Table,
    /// The summary over every step.
    pub summary: Summary,
    /// The error that ended the run early, if it did (the rows before it are kept).
    pub failure: Option<SimulationError>,
    /// The file the rows were streamed to ([`Plan::stream_to`]), finished also after a
    /// failure.
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
    /// rows were streamed to for an interrupt ([`interrupted`]).
    pub fn outcome(&self) -> Result<(), String> {
        match (&self.failure, &self.file) {
            (None, _) => Ok(()),
            (Some(error), Some(file)) => Err(interrupted(error, file)),
            (Some(error), None) => Err(error.to_string()),
        }
    }
}

/// Returns `max_k |x_k − x_0|`: the drift of a quantity that should be conserved.
pub fn max_deviation(values: &[f64]) -> f64 {
    let first = values.first().copied().unwrap_or(0.0);
    values.iter().fold(0.0, |m, x| m.max((x - first).abs()))
}

/// Returns `max_k |x_{k+1} − x_k|`: the largest change of a quantity over one step.
pub fn max_increment(values: &[f64]) -> f64 {
    values
        .windows(2)
        .fold(0.0, |m, w| m.max((w[1] - w[0]).abs()))
}

/// Runs `integrator` on the `stepped` model from `initial` for `plan.steps` steps of `plan.h`
/// through the driver ([`Simulation::fixed`]), writing rows at the times of `plan.schedule` with the energy and
/// constraint residuals of the `observed` model ([`Mechanics`]) and the `columns`, and keeping
/// the [`Summary`] of every step.
///
/// `stepped` and `observed` differ when the integrator runs a modified model, e.g. the
/// penalized `V + ½ω²|g|²`, while the residuals must measure the hard constraints. A failed
/// step ends the run early and is kept in [`Trajectory::failure`]; so is a requested time off
/// the step grid ([`SimulationError::OffGrid`]).
pub fn simulate<'a, I, Stepped, Observed, const N: usize, const M: usize>(
    integrator: I,
    stepped: &'a Stepped,
    observed: &'a Observed,
    initial: State<N>,
    plan: &Plan,
    columns: impl IntoIterator<Item = Column<'a, I, N>>,
) -> Result<Trajectory, Box<dyn Error>>
where
    I: Integrator<Stepped, N> + 'a,
    Stepped: ModelIdentity,
    Observed: Configuration<N> + Inertia<N> + Potential<N> + Holonomic<N, M>,
{
    // The driver stops at the first step that reaches its end time: ask for `steps · h`.
    let t_end = initial.t + plan.steps as f64 * plan.h;
    let run = Simulation::fixed(stepped, integrator, initial, t_end, plan.schedule.clone())?;
    finish(run, observed, columns, plan, |_| {})
}

/// Runs the error-controlled `integrator` (DOPRI5) on `model` from `initial` to `t_end`
/// through the driver ([`Simulation::adaptive`]): requested times of `plan.schedule` come from
/// its dense output (its `h` and `steps` are not used; [`RunOptions::adaptive_plan`]); the
/// columns are `columns`, then `h`, the step that reached the row.
pub fn simulate_adaptive<'a, Model, const N: usize, const M: usize>(
    integrator: Dopri5<N, M>,
    model: &'a Model,
    initial: State<N>,
    t_end: f64,
    columns: Vec<Column<'a, Dopri5<N, M>, N>>,
    plan: &Plan,
) -> Result<Trajectory, Box<dyn Error>>
where
    Model: ModelIdentity
        + InertiaGradient<N>
        + Potential<N>
        + HolonomicKinematics<N, M>
        + AppliedForces<N>
        + Configuration<N>
        + Holonomic<N, M>
        + Inertia<N>,
{
    let run = Simulation::adaptive(model, integrator, initial, t_end, plan.schedule.clone())?;
    let step = Column::new("h", |dopri: &Dopri5<N, M>, _: &State<N>| {
        dopri.dense_interval().map_or(0.0, |(from, to)| to - from)
    });
    finish(
        run,
        model,
        columns.into_iter().chain([step]),
        plan,
        |dopri| {
            let stats = dopri.statistics();
            println!(
                "DOPRI5: {} accepted, {} rejected steps (NSTEP = {}), {} evaluations",
                stats.accepted,
                stats.rejected,
                stats.steps(),
                stats.evaluations
            );
        },
    )
}

/// Adds the observers and the summary to `run`, runs it until its end or the
/// [`interrupt_flag`], hands the integrator to `report` and collects the [`Trajectory`]; the
/// rows (every `plan.every`-th and the last, [`Thin`]) also go to `plan.out` while the run
/// goes, if it is set. With `plan.progress`, runs longer than one time unit show the progress
/// bar (the plan's step and schedule are the run's already).
fn finish<'a, Model, St, Observed, const N: usize, const M: usize>(
    run: Simulation<'a, Model, St>,
    observed: &'a Observed,
    columns: impl IntoIterator<Item = Column<'a, St::Integrator, N>>,
    plan: &Plan,
    report: impl FnOnce(&St::Integrator),
) -> Result<Trajectory, Box<dyn Error>>
where
    Model: ModelIdentity + ?Sized,
    St: Stepper<Model, State = State<N>>,
    St::Integrator: Sized + 'a,
    Observed: Configuration<N> + Inertia<N> + Potential<N> + Holonomic<N, M>,
{
    let summary = Cell::new(Summary::start::<Observed, N, M>(observed, run.state()));
    let mut run = run
        .coordinates(Observed::COORDINATES)?
        .observe(Mechanics::<Observed, N, M>::new(observed));
    for column in columns {
        run = run.observe(column.observer());
    }
    let (run, stream) = checkpointed(run, plan)?;
    let summary_ref = &summary;
    let mut run = run
        .on_step(move |_, state| {
            let mut s = summary_ref.get();
            s.push::<Observed, N, M>(observed, state);
            summary_ref.set(s);
        })
        .interrupt_on(interrupt_flag())
        .write_to(Thin::new((Table::default(), stream), plan.every));
    if plan.progress && run.t_end() - run.state().t > 1.0 {
        run = run.with_progress("simulating");
    }
    let failure = run.run().err();
    report(run.stepper().integrator());
    let mut thin = run.into_output();
    // The driver finishes the sink at the end and on an interrupt, not after a failed step:
    // the rows up to the failure must stay readable (the Parquet part needs its footer), and
    // the last row that `--every` held back is written.
    thin.finish()?;
    let failure = failure.map(|error| thinned(error, thin.written()));
    let (table, _) = thin.into_inner();
    Ok(Trajectory {
        table,
        summary: summary.get(),
        failure,
        file: plan.out.clone(),
    })
}

/// Returns `error` with the rows that reached the file after `--every` ([`Thin`]) if it is an
/// interrupt (the driver counts the rows of its schedule).
pub fn thinned(error: SimulationError, rows: usize) -> SimulationError {
    match error {
        SimulationError::Interrupted { t, .. } => SimulationError::Interrupted { t, rows },
        other => other,
    }
}

/// The stream of a run's rows to its file, if it has one ([`plan_sink`]).
pub type Stream = Option<Box<dyn Sink>>;

/// Sets up the checkpoints of `plan` on `run` ([`Simulation::checkpoint_every`]) and resumes
/// it from `plan.resume` ([`Simulation::resume_from`]), and returns it with the stream of
/// `plan.out` ([`plan_sink`]). Call it after the observers are added (a resume checks the
/// columns).
pub fn checkpointed<'m, Model, St>(
    run: Simulation<'m, Model, St>,
    plan: &Plan,
) -> Result<(Simulation<'m, Model, St>, Stream), Box<dyn Error>>
where
    Model: ModelIdentity + ?Sized,
    St: Stepper<Model>,
{
    let run = with_checkpoints(run, plan)?;
    Ok((run, plan_sink(plan)?))
}

/// Sets up the checkpoints of `plan` on `run` and resumes it from `plan.resume`, for an
/// example with a loop of its own (the sink is [`plan_sink`]'s).
pub fn with_checkpoints<'m, Model, St, K>(
    run: Simulation<'m, Model, St, K>,
    plan: &Plan,
) -> Result<Simulation<'m, Model, St, K>, Box<dyn Error>>
where
    Model: ModelIdentity + ?Sized,
    St: Stepper<Model>,
    K: Sink,
{
    let mut run = run;
    if let Some((file, every)) = &plan.checkpoint {
        create_parent(file)?;
        run = run.checkpoint_every(*every, file.clone())?;
    }
    match &plan.resume {
        Some(from) => Ok(run.resume_from(from)?),
        None => Ok(run),
    }
}

/// Returns the stream of `plan.out`: a new file ([`table_sink`]), or on a resume the file
/// continued from the checkpoint's position ([`resume_sink`]); `None` without `plan.out`.
pub fn plan_sink(plan: &Plan) -> Result<Stream, Box<dyn Error>> {
    let Some(out) = plan.out.as_deref() else {
        return Ok(None);
    };
    match &plan.resume {
        None => table_sink(out).map(Some),
        Some(from) => resume_sink(out, &Checkpoint::read(from)?.output).map(Some),
    }
}

/// Returns a sink that continues the output `path` of a checkpointed run at `position`: the
/// CSV cut to its length at the checkpoint and appended to ([`CsvSink::resume_file`]), or the
/// Parquet dataset without the parts written after the checkpoint ([`ParquetDataset::open`];
/// a checkpoint closes the open part, so none is ever rewritten).
pub fn resume_sink(
    path: &Path,
    position: &OutputPosition,
) -> Result<Box<dyn Sink>, Box<dyn Error>> {
    if is_parquet(path) {
        let dataset = ParquetDataset::open(path)
            .map_err(|e| format!("cannot continue {}: {e}", path.display()))?;
        return Ok(Box::new(dataset));
    }
    let sink = CsvSink::resume_file(path, position)
        .map_err(|e| format!("cannot continue {}: {e}", path.display()))?;
    Ok(Box::new(sink))
}

/// Steps `integrator` (of step `h`) on `model` from `initial` for `steps` steps through the driver and
/// returns the initial state and every `every`-th state after it, without observing anything:
/// the loop to time, or to compare with a reference tabulated at fixed times.
pub fn sample<I, Model, const N: usize>(
    integrator: I,
    model: &Model,
    initial: State<N>,
    h: f64,
    steps: usize,
    every: usize,
) -> Result<Vec<State<N>>, SimulationError>
where
    I: Integrator<Model, N>,
{
    let every = every.max(1);
    let t_end = initial.t + steps as f64 * h;
    let mut run = Simulation::fixed(
        model,
        integrator,
        initial,
        t_end,
        Schedule::EveryNthStep(every),
    )?;
    run.run()?;
    // The driver also writes the last step; the tabulated references stop at the last k-th.
    Ok(run
        .into_output()
        .rows()
        .take(steps / every + 1)
        .map(|row| State {
            t: row[0],
            q: SVector::from_column_slice(&row[1..=N]),
            v: SVector::from_column_slice(&row[N + 1..=2 * N]),
        })
        .collect())
}

/// Creates the parent directory of `path` if it has one and it does not exist.
pub fn create_parent(path: &Path) -> Result<(), Box<dyn Error>> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create directory {}: {e}", dir.display()))?;
    }
    Ok(())
}

/// Returns whether `path` names a Parquet file (its extension is `.parquet`, in any case).
pub fn is_parquet(path: &Path) -> bool {
    path.extension()
        .is_some_and(|extension| extension.eq_ignore_ascii_case("parquet"))
}

/// Returns a sink streaming rows to `path`, creating the directory: a Parquet dataset
/// directory of closed parts ([`ParquetDataset`]) if [`is_parquet`], the driver's CSV
/// ([`CsvSink`], flushed at least once a second) otherwise, so that a killed run leaves its
/// rows readable. Call [`Sink::finish`] after the run, also after a failed one: it flushes the
/// CSV and closes the last Parquet part.
pub fn table_sink(path: &Path) -> Result<Box<dyn Sink>, Box<dyn Error>> {
    create_parent(path)?;
    if is_parquet(path) {
        let dataset = ParquetDataset::create(path)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        return Ok(Box::new(dataset));
    }
    let file =
        fs::File::create(path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(Box::new(CsvSink::new(io::BufWriter::new(file))))
}

/// Writes `table` to `path` through [`table_sink`]: CSV (the driver's contract: `t`, `q.*`,
/// `v.*`, `energy`, `residual.position`, `residual.velocity`, then the extras) or, for a name
/// ending in `.parquet`, Parquet with the same columns.
pub fn write_table(path: &Path, table: &Table) -> Result<(), Box<dyn Error>> {
    let mut sink = table_sink(path)?;
    sink.begin(table.columns(), Some(table.len()))?;
    for row in table.rows() {
        sink.row(row)?;
    }
    sink.finish()?;
    Ok(())
}

/// Fails with one line if `path` names a Parquet file: `what` is written as CSV only (its rows
/// hold text, which the examples' Parquet tables of `f64` columns do not).
pub fn csv_only(path: &Path, what: &str) -> Result<(), Box<dyn Error>> {
    if is_parquet(path) {
        return Err(format!(
            "{}: {what} is written as CSV only (it has text cells); use a .csv name",
            path.display()
        )
        .into());
    }
    Ok(())
}

/// Formats `x` as the driver's CSV writer does ([`write_number`]: it reads back to the same
/// `f64`), for an example that writes a table of its own.
pub fn format_number(x: f64) -> String {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail, and the digits are ASCII.
    let _ = write_number(&mut out, x);
    String::from_utf8(out).unwrap_or_default()
}

/// Prints the common summary of `trajectory` (over every step, whatever `--save-every`): its
/// time span, the maximal energy error, the largest relative energy change over one step, and
/// the maximal constraint residuals.
pub fn print_summary(title: &str, trajectory: &Trajectory) {
    let s = &trajectory.summary;
    let scale = if s.e0 == 0.0 { 1.0 } else { s.e0.abs() };
    println!("{title}, t = 0 … {:.6} ({} steps)", s.t_last, s.steps);
    println!("  max |E - E0|           = {:.3e}", s.max_energy_error);
    println!(
        "  max |E_n+1 - E_n|      = {:.3e} (relative to |E0|: {:.3e})",
        s.max_energy_increment,
        s.max_energy_increment / scale
    );
    println!("  max |g_i|              = {:.3e}", s.max_position_residual);
    println!("  max |(G v)_i|          = {:.3e}", s.max_velocity_residual);
}

/// Prints the energy increments per step that Kinon–Betsch–Livens plot: the total energy
/// (their eq. 35, over every step, with its increment relative to `|E0|` if `relative`) and,
/// if the method tracks it, the generalized energy (eq. 31, column `energy.generalized`);
/// `notes` are the figures to compare with.
pub fn print_kinon_betsch(trajectory: &Trajectory, relative: bool, notes: [&str; 2]) {
    let e0 = trajectory.summary.e0.abs();
    let increment = trajectory.summary.max_energy_increment;
    let note = |n: &str| {
        if n.is_empty() {
            String::new()
        } else {
            format!("  ({n})")
        }
    };
    let relative = if relative {
        format!(", relative {:.3e}", increment / e0)
    } else {
        String::new()
    };
    println!(
        "  total energy (35):       max |E_n+1 - E_n| = {increment:.3e}{relative}{}",
        note(notes[0])
    );
    if let Some(generalized) = trajectory.column("energy.generalized") {
        println!(
            "  generalized energy (31): max |E_n+1 - E_n| = {:.3e}, relative {:.3e}{}",
            max_increment(&generalized),
            max_increment(&generalized) / e0,
            note(notes[1])
        );
    }
}

/// Writes `table` as CSV or Parquet ([`write_table`]; not again if the trajectory's rows were
/// streamed to `out` and `table` is all of them) and plot, prints where, and returns the
/// trajectory's failure (after writing what was computed up to it) as an error.
pub fn write_outputs(
    out: &Path,
    png: &Path,
    title: &str,
    trajectory: &Trajectory,
    table: &Table,
) -> Result<(), Box<dyn Error>> {
    let streamed = trajectory.file.as_deref() == Some(out) && table == &trajectory.table;
    if !streamed {
        write_table(out, table)?;
    }
    pictures::plot_run(png, title, table)?;
    println!(
        "wrote {} ({} rows) and {}",
        out.display(),
        table.len(),
        png.display()
    );
    trajectory.outcome()?;
    Ok(())
}

/// Turns the result of an example's `run` into its exit code, printing an error as one
/// readable line (`main` returning `Err` would print its `Debug` form); a run stopped by
/// SIGINT or SIGTERM ([`interrupt_flag`]) exits with 128 + the signal, 130 or 143.
pub fn exit_code(result: Result<(), Box<dyn Error>>) -> ExitCode {
    ExitCode::from(exit_status(result))
}

/// Returns the exit status of [`exit_code`] (0, 1, or 128 + the signal that interrupted the
/// run), printing an error as one line.
pub fn exit_status(result: Result<(), Box<dyn Error>>) -> u8 {
    let Err(error) = result else {
        return 0;
    };
    eprintln!("error: {error}");
    match INTERRUPT.get() {
        Some((flag, signal)) if flag.load(Ordering::Relaxed) => {
            u8::try_from(128 + signal.load(Ordering::Relaxed)).unwrap_or(1)
        }
        _ => 1,
    }
}
