//! The run driver: one loop over any [`Stepper`], writing rows at the scheduled times.

use std::sync::atomic::AtomicBool;

use super::event::{Crossing, Event};
use super::observer::Observer;
use super::output::{Sink, Table};
use super::schedule::{Pending, Schedule};
use super::stepper::{Adaptive, Fixed, Sparse, StateView, Stepper};
use crate::error::StepError;
use crate::integrators::stabilized::AdaptiveRk;
use crate::state::{DynState, State};

mod checkpointing;
mod outcome;
mod stepping;

pub use checkpointing::Every;
pub use outcome::{SimulationError, StopReason};

/// A closure called after every successful step.
type Monitor<'m, I, S> = Box<dyn FnMut(&I, &S) + 'm>;

/// A run of a model from an initial state to an end time, writing rows (`t`, `q.*`, `v.*`,
/// then the observers' columns) into a [`Sink`] at the times of a [`Schedule`].
///
/// # The loop, once for every integrator
///
/// [`step`](Self::step) takes one step of the [`Stepper`] — [`Fixed`] for an
/// [`Integrator`](crate::Integrator) on the fixed-size tier, [`Sparse`] for a
/// [`SparseIntegrator`](crate::SparseIntegrator),
/// [`Adaptive`] for the error-controlled [`AdaptiveRk`] — then writes every requested time
/// the step reached:
///
/// - a step-based schedule writes after every `k`-th step and after the last;
/// - a requested time the step ended on, within [`grid_tolerance`](super::grid_tolerance)
///   (the rounding bound of the summed `t`), is written from the step's state with `t` set to
///   the requested time exactly;
/// - a requested time inside the step is evaluated by the stepper's dense output (DOPRI5's
///   continuous extension, so the steps are the controller's and are never shortened for
///   output); a stepper without one is an [`SimulationError::OffGrid`] — a fixed-step method
///   reports at requested times only when they are on its grid, and says so when they are
///   not. An adaptive method without dense output is handed the next requested time as its
///   stop time and lands on it.
///
/// A fixed-step run ends at the first step that reaches `t_end` (within the tolerance); an
/// adaptive one lands on `t_end`. A failed step is [`SimulationError::Step`] with the step's
/// number and time; the rows written before it stay in the sink and [`state`](Self::state) is
/// the state before the failed step.
///
/// All buffers (the row, a scratch state, the observers' scratch, the in-memory [`Table`] for
/// time-based schedules) are sized before the first step, so a step of the driver allocates
/// nothing; for a step-based schedule the table is reserved once, after the first step, from
/// the estimate `(t_end − t_0)/h` rows.
///
/// ```
/// use mechanism_runtime::reference::double_pendulum::{initial_state, DoublePendulum};
/// use mechanism_runtime::integrators::stabilized::{Dopri5, DOPRI5};
/// use mechanism_runtime::simulation::{Mechanics, Schedule, Simulation};
///
/// let model = DoublePendulum::default();
/// let dopri5 = Dopri5::<4, 2>::new(DOPRI5, 1e-8, 1e-9)?;
/// let mut run = Simulation::adaptive(&model, dopri5, initial_state(), 10.0, Schedule::Every(1.0))?
///     .observe(Mechanics::new(&model));
/// run.run()?;
/// let table = run.into_output();
/// let times: Vec<f64> = table.column("t").unwrap().collect();
/// assert_eq!(times, (0..=10).map(f64::from).collect::<Vec<_>>());
/// assert_eq!(&table.columns()[9..], ["energy", "residual.position", "residual.velocity"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Simulation<'m, Model: ?Sized, St: Stepper<Model>, K: Sink = Table> {
    model: &'m Model,
    stepper: St,
    state: St::State,
    scratch: St::State,
    t0: f64,
    t_end: f64,
    pending: Pending,
    observers: Vec<Box<dyn Observer<St::Integrator, St::State> + 'm>>,
    monitors: Vec<Monitor<'m, St::Integrator, St::State>>,
    events: Vec<Event<'m, St::State>>,
    probe: St::State,
    last_step: Option<(f64, f64)>,
    coordinates: Vec<String>,
    widths: Vec<usize>,
    row: Vec<f64>,
    sink: K,
    steps: usize,
    rows: usize,
    started: bool,
    finished: bool,
    interrupt: Option<&'m AtomicBool>,
    /// The schedule as given, kept for checkpoints.
    schedule: Schedule,
    /// Where and how often to write checkpoints, if at all.
    checkpoint: Option<Box<checkpointing::Plan>>,
    /// The checkpoint this run resumes from, until [`start`](Self::start) continues its output.
    resume: Option<Box<checkpointing::Resume>>,
    #[cfg(feature = "indicatif")]
    progress: Option<super::progress::Progress>,
}

impl<'m, Model, I, const N: usize> Simulation<'m, Model, Fixed<I, N>>
where
    Model: ?Sized,
    Fixed<I, N>: Stepper<Model, State = State<N>>,
{
    /// Runs the fixed-size-tier `integrator` on `model` from `initial` to `t_end`.
    pub fn fixed(
        model: &'m Model,
        integrator: I,
        initial: State<N>,
        t_end: f64,
        schedule: Schedule,
    ) -> Result<Self, SimulationError> {
        Simulation::new(model, Fixed(integrator), initial, t_end, schedule)
    }
}

impl<'m, Model, I> Simulation<'m, Model, Sparse<I>>
where
    Model: ?Sized,
    Sparse<I>: Stepper<Model, State = DynState>,
{
    /// Runs the sparse-tier `integrator` (built for `model`) from `initial` to `t_end`.
    pub fn sparse(
        model: &'m Model,
        integrator: I,
        initial: DynState,
        t_end: f64,
        schedule: Schedule,
    ) -> Result<Self, SimulationError> {
        Simulation::new(model, Sparse(integrator), initial, t_end, schedule)
    }
}

impl<'m, Model, const N: usize, const M: usize, const S: usize>
    Simulation<'m, Model, Adaptive<N, M, S>>
where
    Adaptive<N, M, S>: Stepper<Model, State = State<N>>,
{
    /// Runs the error-controlled `integrator` on `model` from `initial` to `t_end`, reporting
    /// requested times through its dense output when it has one (DOPRI5).
    pub fn adaptive(
        model: &'m Model,
        integrator: AdaptiveRk<N, M, S>,
        initial: State<N>,
        t_end: f64,
        schedule: Schedule,
    ) -> Result<Self, SimulationError> {
        Simulation::new(model, Adaptive(integrator), initial, t_end, schedule)
    }
}

impl<'m, Model: ?Sized, St: Stepper<Model>> Simulation<'m, Model, St> {
    /// Runs `stepper` on `model` from `initial` to `t_end`, writing rows into a [`Table`] at
    /// the times of `schedule`; coordinates are named `x[0]`, `x[1]`, … until
    /// [`coordinates`](Self::coordinates) names them.
    ///
    /// Fails with `BadSchedule` unless `t_end` is finite and later than `initial`'s time and
    /// the schedule fits `[t_0, t_end]`, and with `Observer` for an initial state whose time is
    /// not finite or whose `q` and `v` differ in length.
    pub fn new(
        model: &'m Model,
        stepper: St,
        initial: St::State,
        t_end: f64,
        schedule: Schedule,
    ) -> Result<Self, SimulationError> {
        let t0 = initial.t();
        let invalid = |what, index, reason| SimulationError::Observer {
            t: t0,
            source: StepError::InvalidModel {
                what,
                index,
                reason,
            },
        };
        if !t0.is_finite() {
            return Err(SimulationError::Observer {
                t: t0,
                source: StepError::NonFinite {
                    quantity: "t",
                    index: 0,
                    t: t0,
                },
            });
        }
        if initial.q().len() != initial.v().len() {
            return Err(invalid(
                "state v",
                initial.v().len(),
                "its length differs from the length of q",
            ));
        }
        if !(t_end.is_finite() && t_end > t0) {
            return Err(SimulationError::BadSchedule {
                reason: "the end time must be finite and later than the initial time",
                value: t_end,
            });
        }
        let pending = Pending::new(schedule.clone(), t0, t_end)?;
        let n = initial.q().len();
        Ok(Simulation {
            model,
            stepper,
            scratch: initial.clone(),
            probe: initial.clone(),
            state: initial,
            t0,
            t_end,
            pending,
            observers: Vec::new(),
            monitors: Vec::new(),
            events: Vec::new(),
            last_step: None,
            coordinates: (0..n).map(|i| format!("x[{i}]")).collect(),
            widths: Vec::new(),
            row: Vec::new(),
            sink: Table::default(),
            steps: 0,
            rows: 0,
            started: false,
            finished: false,
            interrupt: None,
            schedule,
            checkpoint: None,
            resume: None,
            #[cfg(feature = "indicatif")]
            progress: None,
        })
    }
}

impl<'m, Model: ?Sized, St: Stepper<Model>, K: Sink> Simulation<'m, Model, St, K> {
    /// Adds `observer`'s columns after those added before; an observer added after the first
    /// step is not called (the columns are fixed when the run starts).
    pub fn observe(mut self, observer: impl Observer<St::Integrator, St::State> + 'm) -> Self {
        self.observers.push(Box::new(observer));
        self
    }

    /// Calls `monitor(integrator, state)` after every successful step, whatever the schedule:
    /// for summaries over every step (a running maximum of a residual, a count) while rows
    /// are written more sparsely.
    pub fn on_step(mut self, monitor: impl FnMut(&St::Integrator, &St::State) + 'm) -> Self {
        self.monitors.push(Box::new(monitor));
        self
    }

    /// Stops the run when `condition(state)` changes sign in the direction `crossing` during a
    /// step: [`step`](Self::step) returns [`StopReason::Event`] with the event's number (in the
    /// order of these calls) and the located time, and [`run`](Self::run) returns there.
    ///
    /// The condition is evaluated at the initial state and at the end of every step (and,
    /// with dense output, along the interpolant to locate the crossing); a value that is not
    /// finite fails the run with `Observer`. An event added after the first step counts from
    /// its value at the end of the next step.
    /// When several events cross in one step, the earliest is reported.
    ///
    /// ```
    /// use mechanism_runtime::reference::double_pendulum::{initial_state, DoublePendulum};
    /// use mechanism_runtime::integrators::stabilized::{Dopri5, DOPRI5};
    /// use mechanism_runtime::simulation::{Crossing, Schedule, Simulation, StopReason};
    /// use mechanism_runtime::State;
    ///
    /// // Stop when the lower bob first swings through the vertical through the pivot.
    /// let model = DoublePendulum::default();
    /// let dopri5 = Dopri5::<4, 2>::new(DOPRI5, 1e-9, 1e-10)?;
    /// let mut run = Simulation::adaptive(&model, dopri5, initial_state(), 10.0, Schedule::Every(0.5))?
    ///     .stop_when(Crossing::Either, |s: &State<4>| s.q[2]);
    /// let StopReason::Event { index: 0, t } = run.run()? else { panic!("no crossing") };
    /// let mut at_event = *run.state();
    /// run.state_at(t, &mut at_event)?; // the dense output at the crossing
    /// assert!(at_event.q[2].abs() < 1e-9 && t < run.state().t);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stop_when(
        mut self,
        crossing: Crossing,
        condition: impl FnMut(&St::State) -> f64 + 'm,
    ) -> Self {
        self.events.push(Event {
            crossing,
            condition: Box::new(condition),
            last: f64::NAN,
        });
        self
    }

    /// Names the coordinates (the columns `q.<name>` and `v.<name>`), e.g. a model's
    /// [`Configuration::COORDINATES`](crate::Configuration::COORDINATES) or
    /// [`family`](super::family)`(&["x", "y"], links)`; a list of the wrong length is ignored
    /// with `BadSchedule`.
    pub fn coordinates<S: Into<String>>(
        mut self,
        names: impl IntoIterator<Item = S>,
    ) -> Result<Self, SimulationError> {
        let names: Vec<String> = names.into_iter().map(Into::into).collect();
        if names.len() != self.state.q().len() {
            return Err(SimulationError::BadSchedule {
                reason: "one coordinate name per coordinate is needed",
                value: names.len() as f64,
            });
        }
        self.coordinates = names;
        Ok(self)
    }

    /// Writes the rows into `sink` instead (e.g. a [`CsvSink`](super::CsvSink) streaming to a
    /// file).
    pub fn write_to<K2: Sink>(self, sink: K2) -> Simulation<'m, Model, St, K2> {
        Simulation {
            model: self.model,
            stepper: self.stepper,
            state: self.state,
            scratch: self.scratch,
            t0: self.t0,
            t_end: self.t_end,
            pending: self.pending,
            observers: self.observers,
            monitors: self.monitors,
            events: self.events,
            probe: self.probe,
            last_step: self.last_step,
            coordinates: self.coordinates,
            widths: self.widths,
            row: self.row,
            sink,
            steps: self.steps,
            rows: self.rows,
            started: self.started,
            finished: self.finished,
            interrupt: self.interrupt,
            schedule: self.schedule,
            checkpoint: self.checkpoint,
            resume: self.resume,
            #[cfg(feature = "indicatif")]
            progress: self.progress,
        }
    }

    /// Stops the run at the next step boundary once `flag` is set: [`step`](Self::step) reads
    /// it before each step and, when it is set, finishes the sink ([`Sink::finish`]: the CSV
    /// is flushed, the Parquet part closed) and returns [`SimulationError::Interrupted`] with
    /// the time reached and the rows written, leaving the state at the last completed step.
    ///
    /// The flag is meant for a signal handler (SIGINT, SIGTERM: `signal_hook::flag::register`
    /// sets an `AtomicBool` and nothing else, which is what a handler may safely do); the
    /// driver only reads it, once per step with a relaxed load, so it costs no allocation and
    /// no measurable time. Clearing the flag lets [`step`](Self::step) go on, into a sink that
    /// was finished (a [`CsvSink`](super::CsvSink) appends, a finished Parquet sink refuses).
    ///
    /// ```
    /// use std::sync::atomic::{AtomicBool, Ordering};
    /// use mechanism_runtime::reference::harmonic::HarmonicOscillator;
    /// use mechanism_runtime::simulation::{Schedule, Simulation, SimulationError};
    /// use mechanism_runtime::{Rk4, State};
    ///
    /// static STOP: AtomicBool = AtomicBool::new(false);
    /// let model = HarmonicOscillator::default();
    /// let start = State::new(0.0, [1.0], [0.0]);
    /// let mut run = Simulation::fixed(&model, Rk4::new(0.1)?, start, 10.0, Schedule::EveryStep)?
    ///     .interrupt_on(&STOP);
    /// for _ in 0..3 {
    ///     run.step()?;
    /// }
    /// STOP.store(true, Ordering::Relaxed); // what the signal handler does
    /// let Err(SimulationError::Interrupted { t, rows }) = run.run() else { panic!("not stopped") };
    /// assert_eq!((rows, run.steps()), (4, 3)); // t = 0 and three steps
    /// assert!((t - 0.3).abs() < 1e-12);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn interrupt_on(mut self, flag: &'m AtomicBool) -> Self {
        self.interrupt = Some(flag);
        self
    }

    /// Shows a progress bar of the simulated time on stderr, labelled `label`; it is hidden
    /// when stderr is not a terminal (redirected output, CI, test harnesses that capture it).
    ///
    /// The bar moves in per-mille ticks of `t_end − t_0` and a drawn bar allocates when it
    /// redraws (at most 20 times a second); a hidden bar allocates nothing per step.
    #[cfg(feature = "indicatif")]
    pub fn with_progress(mut self, label: &str) -> Self {
        self.progress = Some(super::progress::Progress::new(label));
        self
    }

    /// Returns whether a progress bar is drawn (false without one, or when it is hidden).
    #[cfg(feature = "indicatif")]
    pub fn progress_visible(&self) -> bool {
        self.progress.as_ref().is_some_and(|p| p.is_visible())
    }

    /// Returns the column names: `t`, `q.*`, `v.*`, then each observer's.
    pub fn columns(&self) -> Vec<String> {
        let mut columns = vec!["t".to_string()];
        columns.extend(self.coordinates.iter().map(|c| format!("q.{c}")));
        columns.extend(self.coordinates.iter().map(|c| format!("v.{c}")));
        for observer in &self.observers {
            columns.extend(observer.names());
        }
        columns
    }

    /// Returns the current state (after the last successful step).
    pub fn state(&self) -> &St::State {
        &self.state
    }

    /// Returns the stepper, e.g. to read an integrator's statistics.
    pub fn stepper(&self) -> &St {
        &self.stepper
    }

    /// Returns the sink.
    pub fn output(&self) -> &K {
        &self.sink
    }

    /// Returns the sink, with the rows written so far (also after an error).
    pub fn into_output(self) -> K {
        self.sink
    }

    /// Returns the end time of the run.
    pub fn t_end(&self) -> f64 {
        self.t_end
    }

    /// Returns the number of successful steps.
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// Returns the number of rows written.
    pub fn rows(&self) -> usize {
        self.rows
    }
}
