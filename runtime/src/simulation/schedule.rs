//! When the driver writes a row: every step, every k-th step, every `Δt`, or at listed times.

use super::SimulationError;

// The schedule is data a checkpoint stores, so it is defined with the checkpoint's format
// (`checkpoint/file.rs`, below the driver); the driver's behaviour for it is here.
pub use crate::checkpoint::file::Schedule;

impl Schedule {
    /// Checks that a fixed-step method of step `h` lands on every time of an
    /// [`Every(Δt)`](Schedule::Every) schedule, i.e. that `Δt = k h` for a whole `k ≥ 1` (to a
    /// relative `1e-9`), before a run that would otherwise stop with
    /// [`SimulationError::OffGrid`] at the first time off the grid; other schedules pass.
    ///
    /// ```
    /// use mechanism_runtime::simulation::Schedule;
    ///
    /// assert!(Schedule::Every(0.5).check_step(0.01).is_ok());
    /// assert!(Schedule::Every(0.505).check_step(0.01).is_err());
    /// assert!(Schedule::Every(0.005).check_step(0.01).is_err());
    /// assert!(Schedule::EveryStep.check_step(0.01).is_ok());
    /// ```
    pub fn check_step(&self, h: f64) -> Result<(), SimulationError> {
        let Schedule::Every(dt) = *self else {
            return Ok(());
        };
        let k = (dt / h).round();
        if k >= 1.0 && (k * h - dt).abs() <= 1e-9 * dt {
            Ok(())
        } else {
            Err(SimulationError::BadSchedule {
                reason: "a fixed-step method reports only on its grid: Δt must be a whole \
                         multiple of the step size (or use a method with dense output)",
                value: dt,
            })
        }
    }
}

/// Returns the tolerance within which a step ending at `t` after `steps` steps counts as
/// landing on the requested time `requested`: `(steps + 4) ε max(|t|, |requested|)`.
///
/// Fixed-step integrators advance time by summation, `t_{k+1} = fl(t_k + h)`, and `h` itself
/// is rounded, so after `k` steps `t` can be `k ε max|t|` away from `t_0 + k h` in exact
/// arithmetic (each addition rounds by at most half an ulp of its result, and the rounding of
/// `h` adds up to as much again); the `4` covers the rounding of the requested time. The
/// tolerance is a few ulps of `t` for short runs and grows with the bound for long ones (the
/// summed `t` of 10⁴ steps of `h = 0.1` is 715 ε|t| off the grid,
/// `runtime/tests/it/simulation/schedules.rs`), staying far below any step size a run can
/// afford.
pub fn grid_tolerance(steps: usize, t: f64, requested: f64) -> f64 {
    (steps as f64 + 4.0) * f64::EPSILON * t.abs().max(requested.abs())
}

/// The pending requested times of a time-based schedule, or the stride of a step-based one.
#[derive(Clone, Debug)]
pub(super) enum Pending {
    /// Write after every `k`-th step and after the last.
    Steps(usize),
    /// Write at `t_0 + iΔt` for `i ≥ next` below `t_end`, then at `t_end`.
    Every {
        t0: f64,
        dt: f64,
        next: usize,
        t_end: f64,
        end_written: bool,
    },
    /// Write at `times[next..]`.
    At { times: Vec<f64>, next: usize },
}

impl Pending {
    /// Checks `schedule` against the run from `t0` to `t_end` and returns its pending times.
    pub(super) fn new(schedule: Schedule, t0: f64, t_end: f64) -> Result<Self, SimulationError> {
        let bad = |reason: &'static str, value: f64| SimulationError::BadSchedule { reason, value };
        match schedule {
            Schedule::EveryStep => Ok(Pending::Steps(1)),
            Schedule::EveryNthStep(k) if k >= 1 => Ok(Pending::Steps(k)),
            Schedule::EveryNthStep(k) => Err(bad("the stride k must be at least 1", k as f64)),
            Schedule::Every(dt) if dt.is_finite() && dt > 0.0 => Ok(Pending::Every {
                t0,
                dt,
                next: 0,
                t_end,
                end_written: false,
            }),
            Schedule::Every(dt) => Err(bad("Δt must be positive and finite", dt)),
            Schedule::At(times) => {
                if let Some(&t) = times.iter().find(|t| !t.is_finite()) {
                    return Err(bad("requested times must be finite", t));
                }
                if let Some(w) = times.windows(2).find(|w| w[1] <= w[0]) {
                    return Err(bad("requested times must increase", w[1]));
                }
                if let Some(&t) = times.iter().find(|&&t| t < t0 || t > t_end) {
                    return Err(bad("requested times must lie in [t0, t_end]", t));
                }
                Ok(Pending::At { times, next: 0 })
            }
        }
    }

    /// Returns the number of rows the schedule writes, when it is known before the run.
    pub(super) fn rows(&self) -> Option<usize> {
        match self {
            Pending::Steps(_) => None,
            // Beyond 10⁸ rows no table is reserved up front (it grows as rows come).
            Pending::Every { t0, dt, t_end, .. } => {
                let rows = ((t_end - t0) / dt).floor() + 2.0;
                (rows <= 1e8).then_some(rows as usize)
            }
            Pending::At { times, .. } => Some(times.len()),
        }
    }

    /// Returns the next requested time, if the schedule is time-based and one is left.
    pub(super) fn next_time(&self) -> Option<f64> {
        match self {
            Pending::Steps(_) => None,
            Pending::Every {
                t0,
                dt,
                next,
                t_end,
                end_written,
            } => {
                let t = t0 + *next as f64 * dt;
                if t < t_end - grid_tolerance(0, *t_end, t) {
                    Some(t)
                } else if !end_written {
                    Some(*t_end)
                } else {
                    None
                }
            }
            Pending::At { times, next } => times.get(*next).copied(),
        }
    }

    /// Returns the position of the schedule, for a checkpoint.
    pub(super) fn position(&self) -> crate::checkpoint::SchedulePosition {
        match self {
            Pending::Steps(_) => crate::checkpoint::SchedulePosition::default(),
            Pending::Every {
                next, end_written, ..
            } => crate::checkpoint::SchedulePosition {
                next: *next as u64,
                end_written: *end_written,
            },
            Pending::At { next, .. } => crate::checkpoint::SchedulePosition {
                next: *next as u64,
                end_written: false,
            },
        }
    }

    /// Moves the schedule to `position` of a run that started at `start` (a resumed run's
    /// start is the checkpointed run's); fails naming the index if the schedule has no such
    /// position.
    pub(super) fn restore(
        &mut self,
        position: crate::checkpoint::SchedulePosition,
        start: f64,
    ) -> Result<(), String> {
        let index = usize::try_from(position.next).map_err(|_| position.next.to_string())?;
        match self {
            Pending::Steps(_) => {}
            Pending::Every {
                t0,
                next,
                end_written,
                ..
            } => {
                *t0 = start;
                *next = index;
                *end_written = position.end_written;
            }
            Pending::At { times, next } if index <= times.len() => *next = index,
            Pending::At { .. } => return Err(position.next.to_string()),
        }
        Ok(())
    }

    /// Marks the time returned by [`next_time`](Self::next_time) as written.
    pub(super) fn advance(&mut self) {
        match self {
            Pending::Steps(_) => {}
            Pending::Every {
                t0,
                dt,
                next,
                t_end,
                end_written,
            } => {
                let t = *t0 + *next as f64 * *dt;
                if t < *t_end - grid_tolerance(0, *t_end, t) {
                    *next += 1;
                } else {
                    *end_written = true;
                }
            }
            Pending::At { next, .. } => *next += 1,
        }
    }
}
