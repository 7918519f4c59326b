//! The loop of a run: one step of the stepper, the rows it owes, the events it crosses.

use std::sync::atomic::Ordering;

use super::{Simulation, SimulationError, StopReason};
use crate::error::StepError;
use crate::simulation::event::{illinois, secant};
use crate::simulation::output::Sink;
use crate::simulation::schedule::{grid_tolerance, Pending};
use crate::simulation::stepper::{StateView, Stepper};

impl<'m, Model: ?Sized, St: Stepper<Model>, K: Sink> Simulation<'m, Model, St, K> {
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
