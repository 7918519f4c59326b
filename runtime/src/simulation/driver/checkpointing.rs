//! Checkpoints of a [`Simulation`]: when they are written, what goes into them, and how a run
//! resumes from one (the file format and the pieces are [`crate::checkpoint`]'s).

use std::path::{Path, PathBuf};

use super::{Simulation, SimulationError};
use crate::checkpoint::{
    Carried, Checkpoint, CheckpointError, IntegratorIdentity, ModelIdentity, OutputPosition,
    CRATE_VERSION,
};
use crate::simulation::output::Sink;
use crate::simulation::schedule::grid_tolerance;
use crate::simulation::stepper::{StateView, Stepper};

/// How often a run writes a checkpoint ([`Simulation::checkpoint_every`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Every {
    /// After the first step that reaches `t_0 + k Δt`, for every `k ≥ 1`: a checkpoint per
    /// `Δt` of simulated time, whatever the step size (an adaptive method's included).
    Time(f64),
    /// After every `k`-th step (`k ≥ 1`).
    Steps(usize),
}

/// Where and how often a run writes checkpoints, and the model's identity taken when it was
/// set (the run borrows the model immutably, so its parameters cannot change).
#[derive(Debug)]
pub(super) struct Plan {
    path: PathBuf,
    every: Every,
    structure: u64,
    parameters: Vec<(String, Vec<f64>)>,
    /// For [`Every::Time`]: the `k` of the next checkpoint time `t_0 + k Δt`.
    next: u64,
}

impl Plan {
    /// Returns whether a checkpoint is due after the step that made `steps` steps and
    /// reached `t` in a run that started at `t0`.
    pub(super) fn is_due(&self, steps: usize, t: f64, t0: f64) -> bool {
        match self.every {
            Every::Steps(k) => steps.is_multiple_of(k),
            Every::Time(dt) => {
                let due = t0 + self.next as f64 * dt;
                t >= due - grid_tolerance(steps, t, due)
            }
        }
    }

    /// Sets the next checkpoint time after a checkpoint (or a resume) at `t` after `steps`
    /// steps.
    fn rearm(&mut self, steps: usize, t: f64, t0: f64) {
        if let Every::Time(dt) = self.every {
            // `as` saturates a quotient beyond u64 (a Δt far below the run's time scale).
            let mut next = (((t - t0) / dt).floor().max(0.0) as u64).saturating_add(1);
            // The rounding of the quotient must not make the current time due again; a few
            // increments settle it (bounded, so that no Δt can make this loop forever).
            for _ in 0..4 {
                let due = t0 + next as f64 * dt;
                if t < due - grid_tolerance(steps, t, due) {
                    break;
                }
                next = next.saturating_add(1);
            }
            self.next = next;
        }
    }
}

/// What a resumed run must do when it starts: check its columns and continue its output.
#[derive(Debug)]
pub(super) struct Resume {
    path: PathBuf,
    columns: Vec<String>,
    output: OutputPosition,
}

impl<'m, Model, St, K> Simulation<'m, Model, St, K>
where
    Model: ModelIdentity + ?Sized,
    St: Stepper<Model>,
    K: Sink,
{
    /// Writes a checkpoint to `path` at the step boundaries that `every` sets, at the end of
    /// the run, and when the run is interrupted ([`interrupt_on`](Self::interrupt_on)), so
    /// that Ctrl-C and then a resume continue the run.
    ///
    /// A checkpoint holds what the next step depends on: `t`, `q`, `v`, the step count, what
    /// the integrator carries ([`CarriedState`](crate::checkpoint::CarriedState)), the
    /// schedule's and the output's positions (the sink is flushed first, [`Sink::position`]),
    /// and the keys a resume checks (the model's structure and parameters, the integrator and
    /// its settings, the crate version). Each is written to `FILE.tmp` and renamed over
    /// `FILE`, so a kill while writing leaves the previous checkpoint whole.
    ///
    /// Writing allocates (the record is built and encoded); a run without checkpoints pays
    /// one test of an `Option` per step. Fails with `Checkpoint(Unsupported)` if the
    /// integrator cannot save what it carries, and with `BadSchedule` for a `Δt` that is not
    /// positive and finite or a `k` of 0.
    ///
    /// ```
    /// use mechanism_runtime::reference::harmonic::HarmonicOscillator;
    /// use mechanism_runtime::simulation::{Every, Schedule, Simulation};
    /// use mechanism_runtime::{Rk4, State};
    ///
    /// let model = HarmonicOscillator::default();
    /// let path = std::env::temp_dir().join(format!("doc-{}.ckpt", std::process::id()));
    /// let start = State::new(0.0, [1.0], [0.0]);
    /// let rk4 = Rk4::new(0.01)?;
    /// let run = || Simulation::fixed(&model, rk4, start, 2.0, Schedule::Every(0.5));
    /// let mut first = run()?.checkpoint_every(Every::Time(0.25), &path)?;
    /// for _ in 0..60 {
    ///     first.step()?; // to t = 0.6: the last checkpoint is at t = 0.5
    /// }
    /// drop(first); // killed
    /// let mut resumed = run()?.resume_from(&path)?;
    /// resumed.run()?;
    /// let mut whole = run()?;
    /// whole.run()?;
    /// assert_eq!(resumed.state().q[0].to_bits(), whole.state().q[0].to_bits());
    /// assert_eq!(resumed.steps(), 200);
    /// // A table in memory holds the rows from the checkpoint on.
    /// let times: Vec<f64> = resumed.into_output().column("t").unwrap().collect();
    /// assert_eq!(times, [1.0, 1.5, 2.0]);
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn checkpoint_every(
        mut self,
        every: Every,
        path: impl Into<PathBuf>,
    ) -> Result<Self, SimulationError> {
        match every {
            Every::Time(dt) if !(dt.is_finite() && dt > 0.0) => {
                return Err(SimulationError::BadSchedule {
                    reason: "the checkpoint interval must be positive and finite",
                    value: dt,
                })
            }
            Every::Steps(0) => {
                return Err(SimulationError::BadSchedule {
                    reason: "the checkpoint stride must be at least 1",
                    value: 0.0,
                })
            }
            _ => {}
        }
        self.integrator_identity()?;
        let mut plan = Plan {
            path: path.into(),
            every,
            structure: Model::STRUCTURE,
            parameters: self.model.parameters(),
            next: 1,
        };
        plan.rearm(self.steps, self.state.t(), self.t0);
        self.checkpoint = Some(Box::new(plan));
        Ok(self)
    }

    /// Continues the run from the checkpoint at `path`: its state, step count, integrator
    /// state, schedule position and output position replace this run's, after checking that
    /// the checkpoint is of this model (structure and every parameter, bit for bit), this
    /// integrator with these settings, this crate version, this schedule and as many
    /// coordinates; the columns and the output are checked when the run starts (so call this
    /// after [`observe`](Self::observe), before or after [`write_to`](Self::write_to)).
    ///
    /// The output continues where the checkpoint left it: a [`CsvSink`](super::super::CsvSink)
    /// made by [`CsvSink::resume_file`](super::super::CsvSink::resume_file) appends to the file
    /// cut to the checkpoint's length, so the resumed run's file equals the uninterrupted run's
    /// byte for byte; a [`Table`](super::super::Table) holds the rows from the checkpoint on.
    /// The end time may differ from the checkpointed run's (a run can be extended);
    /// [`on_step`](Self::on_step) monitors start afresh (their summaries cover the resumed part).
    ///
    /// Every mismatch is a [`CheckpointError`] naming the file and what differs; the run is
    /// consumed either way.
    pub fn resume_from(mut self, path: impl AsRef<Path>) -> Result<Self, CheckpointError> {
        let path = path.as_ref();
        let checkpoint = Checkpoint::read(path)?;
        let at = |e: CheckpointError| e.at(path);
        checkpoint
            .check_model(Model::STRUCTURE, &self.model.parameters())
            .map_err(at)?;
        let identity = self.integrator_identity().map_err(|e| match e {
            SimulationError::Checkpoint(e) => e,
            other => CheckpointError::Corrupt {
                path: path.to_path_buf(),
                reason: other.to_string(),
            },
        })?;
        if !identity.same_as(&checkpoint.integrator) {
            return Err(CheckpointError::IntegratorMismatch {
                path: path.to_path_buf(),
                found: checkpoint.integrator.to_string(),
                expected: identity.to_string(),
            });
        }
        let mismatch = |what, found: String, expected: String| CheckpointError::RunMismatch {
            path: path.to_path_buf(),
            what,
            found,
            expected,
        };
        if checkpoint.schedule != self.schedule {
            return Err(mismatch(
                "the output schedule",
                format!("{:?}", checkpoint.schedule),
                format!("{:?}", self.schedule),
            ));
        }
        let n = self.state.q().len();
        if checkpoint.q.len() != n || checkpoint.v.len() != n {
            return Err(mismatch(
                "the number of coordinates",
                checkpoint.q.len().to_string(),
                n.to_string(),
            ));
        }
        let count = |what: &'static str, value: u64| {
            usize::try_from(value).map_err(|_| CheckpointError::Corrupt {
                path: path.to_path_buf(),
                reason: format!("{what} {value} does not fit this machine"),
            })
        };
        let steps = count("the step count", checkpoint.steps)?;
        let rows = count("the row count", checkpoint.output.rows)?;
        if !(checkpoint.t.is_finite() && checkpoint.t0.is_finite() && checkpoint.t0 <= checkpoint.t)
        {
            return Err(CheckpointError::Corrupt {
                path: path.to_path_buf(),
                reason: format!("t0 = {}, t = {}", checkpoint.t0, checkpoint.t),
            });
        }
        let mut pending = self.pending.clone();
        pending
            .restore(checkpoint.schedule_position, checkpoint.t0)
            .map_err(|index| CheckpointError::Corrupt {
                path: path.to_path_buf(),
                reason: format!("the schedule has no position {index}"),
            })?;
        // The last change, after every check: the integrator's own restore checks its fields
        // before it changes anything.
        self.stepper
            .restore_carried(&checkpoint.carried)
            .map_err(at)?;
        self.state
            .assign(checkpoint.t, &checkpoint.q, &checkpoint.v);
        self.t0 = checkpoint.t0;
        self.pending = pending;
        self.steps = steps;
        self.rows = rows;
        self.last_step = None;
        if let Some(plan) = &mut self.checkpoint {
            plan.rearm(steps, checkpoint.t, checkpoint.t0);
        }
        self.resume = Some(Box::new(Resume {
            path: path.to_path_buf(),
            columns: checkpoint.columns,
            output: checkpoint.output,
        }));
        Ok(self)
    }

    /// Returns the identity of the run's integrator, or `Unsupported`.
    fn integrator_identity(&self) -> Result<IntegratorIdentity, SimulationError> {
        self.stepper.carried_identity().ok_or_else(|| {
            CheckpointError::Unsupported {
                integrator: crate::checkpoint::short_type_name::<St::Integrator>(),
            }
            .into()
        })
    }
}

impl<Model, St, K> Simulation<'_, Model, St, K>
where
    Model: ?Sized,
    St: Stepper<Model>,
    K: Sink,
{
    /// Writes a checkpoint of the current step boundary to the plan's file (none without a
    /// plan) and sets the next checkpoint time.
    pub(super) fn write_checkpoint(&mut self) -> Result<(), SimulationError> {
        let Some(plan) = self.checkpoint.as_deref() else {
            return Ok(());
        };
        let Some(integrator) = self.stepper.carried_identity() else {
            return Err(CheckpointError::Unsupported {
                integrator: crate::checkpoint::short_type_name::<St::Integrator>(),
            }
            .into());
        };
        let mut output = self
            .sink
            .position()
            .map_err(|source| CheckpointError::Output {
                path: plan.path.clone(),
                source,
            })?;
        output.rows = self.rows as u64;
        let mut carried = Carried::default();
        self.stepper.save_carried(&mut carried);
        let checkpoint = Checkpoint {
            crate_version: CRATE_VERSION.to_string(),
            structure: plan.structure,
            parameters: plan.parameters.clone(),
            integrator,
            carried,
            t0: self.t0,
            t: self.state.t(),
            q: self.state.q().to_vec(),
            v: self.state.v().to_vec(),
            steps: self.steps as u64,
            schedule: self.schedule.clone(),
            schedule_position: self.pending.position(),
            columns: self.columns(),
            output,
        };
        checkpoint.write(&plan.path)?;
        let (steps, t, t0) = (self.steps, self.state.t(), self.t0);
        if let Some(plan) = self.checkpoint.as_deref_mut() {
            plan.rearm(steps, t, t0);
        }
        Ok(())
    }

    /// Starts a resumed run: checks the columns against the checkpoint's, continues the sink
    /// at the checkpoint's output position and evaluates the events at the restored state; a
    /// run resumed at its end time is finished at once.
    pub(super) fn continue_output(
        &mut self,
        columns: &[String],
        resume: &Resume,
    ) -> Result<(), SimulationError> {
        if columns != resume.columns {
            return Err(CheckpointError::RunMismatch {
                path: resume.path.clone(),
                what: "the columns",
                found: resume.columns.join(","),
                expected: columns.join(","),
            }
            .into());
        }
        self.sink
            .resume(columns, &resume.output)
            .map_err(|source| CheckpointError::Output {
                path: resume.path.clone(),
                source,
            })?;
        let t = self.state.t();
        for (index, event) in self.events.iter_mut().enumerate() {
            event.last = event
                .evaluate(index, &self.state, t)
                .map_err(|source| SimulationError::Observer { t, source })?;
        }
        self.started = true;
        if t >= self.t_end - grid_tolerance(self.steps, t, self.t_end) {
            self.finished = true;
            self.sink.finish()?;
        }
        Ok(())
    }
}
