//! The run driver: one loop over any [`Stepper`], writing rows at the scheduled times.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use thiserror::Error;

use super::event::{illinois, secant, Crossing, Event};
use super::observer::Observer;
use super::output::{Sink, Table};
use super::schedule::{grid_tolerance, Pending, Schedule};
use super::stepper::{Adaptive, Fixed, Sparse, StateView, Stepper};
use crate::error::StepError;
use crate::integrators::stabilized::AdaptiveRk;
use crate::state::{DynState, State};

mod checkpointing;

pub use checkpointing::Every;

/// A closure called after every successful step.
type Monitor<'m, I, S> = Box<dyn FnMut(&I, &S) + 'm>;

/// Why [`Simulation::step`] returned without an error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StopReason {
    /// A step was taken and the end time is still ahead.
    InternalStep,
    /// The state has reached the end time; further calls do nothing.
    EndReached,
    /// An event function registered with [`Simulation::stop_when`] changed sign in the step
    /// just taken; the state is the step's end, and stepping on continues the run.
    Event {
        /// The event's number, in the order of the `stop_when` calls (0 for the first).
        index: usize,
        /// The located time of the sign change, inside the step (see [`Crossing`] and the
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
    /// The flag of [`Simulation::interrupt_on`] was set (e.g. by a SIGINT or SIGTERM
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

    /// Runs [`step`](Self::step) until the end time, where it flushes the sink, or until an
    /// event; returns why it stopped ([`StopReason::EndReached`] or [`StopReason::Event`]).
    pub fn run(&mut self) -> Result<StopReason, SimulationError> {
        loop {
            match self.step()? {
                StopReason::InternalStep => {}
                stop => return Ok(stop),
            }
        }
    }

    /// Writes into `out` the state at time `t`: the current state when `t` is its time, the
    /// stepper's dense output when `t` lies inside the last step and the stepper has one (e.g.
    /// at the time of a [`StopReason::Event`]).
    ///
    /// Fails with `OffGrid` for any other `t` (a fixed-step method knows only its step ends),
    /// and with `Step` for an error of the dense output.
    pub fn state_at(&mut self, t: f64, out: &mut St::State) -> Result<(), SimulationError> {
        if t == self.state.t() {
            out.copy_from(&self.state);
            return Ok(());
        }
        match self.last_step {
            Some((from, to)) if self.stepper.has_dense_output() && from <= t && t <= to => self
                .stepper
                .interpolate(self.model, t, out)
                .map_err(|source| SimulationError::Step {
                    step: self.steps,
                    t: from,
                    source,
                }),
            Some((from, to)) => Err(SimulationError::OffGrid {
                requested: t,
                from,
                to,
            }),
            None => Err(SimulationError::OffGrid {
                requested: t,
                from: self.t0,
                to: self.t0,
            }),
        }
    }

    /// Takes one step and writes the rows it reached; see the type's documentation.
    ///
    /// The first call also sends the columns to the sink and writes the initial row.
    pub fn step(&mut self) -> Result<StopReason, SimulationError> {
        if !self.started {
            self.start()?;
        }
        if self.finished {
            return Ok(StopReason::EndReached);
        }
        if self
            .interrupt
            .is_some_and(|flag| flag.load(Ordering::Relaxed))
        {
            // The checkpoint first: it records the output as the uninterrupted run has it at
            // this step boundary, before finishing the sink may write a row a thinning sink
            // held back for the end. The sink is finished whatever the checkpoint's outcome.
            let checkpoint = match self.checkpoint {
                Some(_) => self.write_checkpoint(),
                None => Ok(()),
            };
            self.sink.finish()?;
            checkpoint?;
            return Err(SimulationError::Interrupted {
                t: self.state.t(),
                rows: self.rows,
            });
        }
        let t_before = self.state.t();
        let dense = self.stepper.has_dense_output();
        let t_stop = match self.pending.next_time() {
            Some(t) if !dense => t.min(self.t_end),
            _ => self.t_end,
        };
        let t_stop = if t_stop > t_before {
            t_stop
        } else {
            self.t_end
        };
        if let Err(source) = self.stepper.step(self.model, &mut self.state, t_stop) {
            return Err(SimulationError::Step {
                step: self.steps + 1,
                t: t_before,
                source,
            });
        }
        let advanced = self.state.t() > t_before;
        if !advanced {
            // A stepper that does not advance time would loop forever; the integrators of this
            // crate never do.
            return Err(SimulationError::Step {
                step: self.steps + 1,
                t: t_before,
                source: StepError::BadStepSize {
                    h: self.state.t() - t_before,
                },
            });
        }
        self.steps += 1;
        self.last_step = Some((t_before, self.state.t()));
        for monitor in &mut self.monitors {
            monitor(self.stepper.integrator(), &self.state);
        }
        let t_now = self.state.t();
        let at_end = t_now >= self.t_end - grid_tolerance(self.steps, t_now, self.t_end);
        if let Pending::Steps(k) = self.pending {
            if self.steps == 1 {
                let h = t_now - t_before;
                let estimate = ((self.t_end - t_now) / h / k as f64).ceil();
                if (0.0..1e9).contains(&estimate) {
                    self.sink.reserve(estimate as usize + 2);
                }
            }
            if self.steps.is_multiple_of(k) || at_end {
                self.scratch.copy_from(&self.state);
                self.write_scratch()?;
            }
        } else {
            while let Some(requested) = self.pending.next_time() {
                if (requested - t_now).abs() <= grid_tolerance(self.steps, t_now, requested) {
                    self.scratch.copy_from(&self.state);
                    self.scratch.set_t(requested);
                } else if requested < t_now && dense {
                    if let Err(source) =
                        self.stepper
                            .interpolate(self.model, requested, &mut self.scratch)
                    {
                        return Err(SimulationError::Step {
                            step: self.steps,
                            t: t_before,
                            source,
                        });
                    }
                } else if requested < t_now {
                    return Err(SimulationError::OffGrid {
                        requested,
                        from: t_before,
                        to: t_now,
                    });
                } else {
                    break;
                }
                self.write_scratch()?;
                self.pending.advance();
            }
        }
        let event = self.detect_events(t_before)?;
        #[cfg(feature = "indicatif")]
        if let Some(progress) = &self.progress {
            progress.update((t_now - self.t0) / (self.t_end - self.t0));
        }
        if let Some(plan) = &self.checkpoint {
            if !at_end && plan.is_due(self.steps, t_now, self.t0) {
                self.write_checkpoint()?;
            }
        }
        if at_end {
            self.finished = true;
            // The sink first, then the checkpoint: a finished run's checkpoint holds the
            // whole output, with any row a thinning sink held back for the end, so that a
            // resume from it leaves the file as it is.
            self.sink.finish()?;
            if self.checkpoint.is_some() {
                self.write_checkpoint()?;
            }
            #[cfg(feature = "indicatif")]
            if let Some(progress) = &self.progress {
                progress.finish();
            }
        }
        Ok(match event {
            Some((index, t)) => StopReason::Event { index, t },
            None if at_end => StopReason::EndReached,
            None => StopReason::InternalStep,
        })
    }

    /// Evaluates the events at the end of the step from `t_before` and returns the earliest
    /// crossing, located by the dense output when the stepper has one and by the secant of
    /// the end values otherwise (see the module `event`).
    fn detect_events(&mut self, t_before: f64) -> Result<Option<(usize, f64)>, SimulationError> {
        let t_now = self.state.t();
        let dense = self.stepper.has_dense_output();
        let mut earliest: Option<(usize, f64)> = None;
        for (index, event) in self.events.iter_mut().enumerate() {
            let observe = |source| SimulationError::Observer { t: t_now, source };
            let before = event.last;
            let after = event.evaluate(index, &self.state, t_now).map_err(observe)?;
            event.last = after;
            if !event.crossing.crosses(before, after) {
                continue;
            }
            let t = if dense {
                let (model, stepper, probe) = (self.model, &mut self.stepper, &mut self.probe);
                let condition = &mut event.condition;
                illinois((t_before, t_now), (before, after), |t| {
                    stepper.interpolate(model, t, probe)?;
                    let value = condition(probe);
                    if value.is_finite() {
                        Ok(value)
                    } else {
                        Err(StepError::NonFinite {
                            quantity: "event function",
                            index,
                            t,
                        })
                    }
                })
                .map_err(|source| SimulationError::Step {
                    step: self.steps,
                    t: t_before,
                    source,
                })?
            } else {
                secant(t_before, t_now, before, after)
            };
            if earliest.is_none_or(|(_, first)| t < first) {
                earliest = Some((index, t));
            }
        }
        Ok(earliest)
    }

    /// Sends the columns to the sink, sizes the row and writes the initial row if scheduled.
    fn start(&mut self) -> Result<(), SimulationError> {
        let columns = self.columns();
        self.widths = self.observers.iter().map(|o| o.names().len()).collect();
        self.row = vec![0.0; columns.len()];
        if let Some(resume) = self.resume.take() {
            return self.continue_output(&columns, &resume);
        }
        self.sink.begin(&columns, self.pending.rows())?;
        for (index, event) in self.events.iter_mut().enumerate() {
            event.last = event
                .evaluate(index, &self.state, self.t0)
                .map_err(|source| SimulationError::Observer { t: self.t0, source })?;
        }
        self.started = true;
        self.scratch.copy_from(&self.state);
        match self.pending.next_time() {
            None => self.write_scratch(),
            Some(t) if t == self.t0 => {
                self.write_scratch()?;
                self.pending.advance();
                Ok(())
            }
            Some(_) => Ok(()),
        }
    }

    /// Observes `scratch` and writes its row.
    fn write_scratch(&mut self) -> Result<(), SimulationError> {
        let state = &self.scratch;
        let integrator = self.stepper.integrator();
        let n = self.coordinates.len();
        for (what, len) in [("state q", state.q().len()), ("state v", state.v().len())] {
            if len != n {
                return Err(SimulationError::Observer {
                    t: state.t(),
                    source: StepError::InvalidModel {
                        what,
                        index: len,
                        reason: "its length differs from the run's number of coordinates",
                    },
                });
            }
        }
        self.row[0] = state.t();
        self.row[1..=n].copy_from_slice(state.q());
        self.row[n + 1..=2 * n].copy_from_slice(state.v());
        let mut offset = 2 * n + 1;
        for (observer, &columns) in self.observers.iter_mut().zip(&self.widths) {
            observer
                .observe(integrator, state, &mut self.row[offset..offset + columns])
                .map_err(|source| SimulationError::Observer {
                    t: state.t(),
                    source,
                })?;
            offset += columns;
        }
        self.sink.row(&self.row)?;
        self.rows += 1;
        Ok(())
    }
}
