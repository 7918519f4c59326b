//! A run's positions and their sensitivities at given times (measurement times that need not
//! be step ends), for fitting a model to measured data
//! ([`identification`](crate::identification)).

use nalgebra::{SMatrix, SVector};

use super::{Adaptive, Fixed, Sensitive, Stepper};
use crate::error::StepError;
use crate::state::State;

/// The positions `q(t)` and their sensitivities `∂q(t)/∂θ` to `S` seeds at one time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PositionSample<const N: usize, const S: usize> {
    /// The time.
    pub t: f64,
    /// `q(t)`.
    pub q: SVector<f64, N>,
    /// `∂q(t)/∂θ`, column `s` for seed `s`.
    pub dq: SMatrix<f64, N, S>,
}

/// Why [`sample_positions`] stopped.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SamplingError {
    /// A requested time is not finite, precedes the initial state or the time before it.
    #[error("sample time {index} is {value}: {requirement}")]
    BadTime {
        /// Its index in the requested times.
        index: usize,
        /// The time.
        value: f64,
        /// What it must be.
        requirement: &'static str,
    },
    /// A step failed.
    #[error("the step from t = {t} failed: {source}")]
    Step {
        /// The time the step started from.
        t: f64,
        /// The integrator's error.
        #[source]
        source: StepError,
    },
    /// The caller's `proceed` said stop.
    #[error("interrupted at t = {t}")]
    Interrupted {
        /// The time reached.
        t: f64,
    },
}

/// A [`Stepper`] whose positions can be sampled: the sensitivities it carries (`S = 0` for a
/// plain run).
pub trait Sampled<const N: usize, const S: usize> {
    /// `(∂q/∂θ, ∂v/∂θ)` at the current state.
    fn sensitivities(&self) -> (SMatrix<f64, N, S>, SMatrix<f64, N, S>);
}

impl<I, const N: usize, const P: usize, const S: usize> Sampled<N, S> for Sensitive<I, N, P, S> {
    fn sensitivities(&self) -> (SMatrix<f64, N, S>, SMatrix<f64, N, S>) {
        (self.sensitivity.q, self.sensitivity.v)
    }
}

impl<I, const N: usize> Sampled<N, 0> for Fixed<I, N> {
    fn sensitivities(&self) -> (SMatrix<f64, N, 0>, SMatrix<f64, N, 0>) {
        (SMatrix::zeros(), SMatrix::zeros())
    }
}

impl<const N: usize, const M: usize, const S: usize> Sampled<N, 0> for Adaptive<N, M, S> {
    fn sensitivities(&self) -> (SMatrix<f64, N, 0>, SMatrix<f64, N, 0>) {
        (SMatrix::zeros(), SMatrix::zeros())
    }
}

/// Runs `stepper` on `model` from `initial` until the last of `times` (non-decreasing, none
/// before `initial.t`) and returns the positions, with the sensitivities the stepper carries
/// ([`Sensitive`]; none for [`Fixed`] or [`Adaptive`]), at every one of them. `proceed(t)` is
/// asked before every step; `false` stops the run with [`SamplingError::Interrupted`].
///
/// An adaptive method lands on every requested time (the stepper's stop time); for a
/// fixed-step one, a time inside a step `[t_k, t_{k+1}]` is interpolated by the cubic Hermite
/// polynomial of `(q_k, v_k)` and `(q_{k+1}, v_{k+1})`, with `s = (t − t_k)/h`:
///
/// ```text
/// q(t) = (2s³ − 3s² + 1) q_k + (s³ − 2s² + s) h v_k + (3s² − 2s³) q_{k+1} + (s³ − s²) h v_{k+1}
/// ```
///
/// (error `O(h⁴)` for a smooth motion, below the methods' own), and the sensitivities by the same
/// polynomial of the sensitivities: the exact derivative of the interpolated position, since
/// the step times do not depend on the seeds. A time equal to a step's end is that step's
/// value. Nothing is extrapolated: the run goes on until it has passed the last time.
pub fn sample_positions<St, Model, const N: usize, const S: usize>(
    stepper: &mut St,
    model: &Model,
    initial: &State<N>,
    times: &[f64],
    mut proceed: impl FnMut(f64) -> bool,
) -> Result<Vec<PositionSample<N, S>>, SamplingError>
where
    St: Stepper<Model, State = State<N>> + Sampled<N, S>,
{
    let mut previous = initial.t;
    for (index, &value) in times.iter().enumerate() {
        let requirement = if !value.is_finite() {
            "must be finite"
        } else if value < initial.t {
            "must not precede the initial state's time"
        } else if value < previous {
            "must not precede the time before it (sort the samples by time)"
        } else {
            previous = value;
            continue;
        };
        return Err(SamplingError::BadTime {
            index,
            value,
            requirement,
        });
    }
    let mut samples = Vec::with_capacity(times.len());
    let mut state = *initial;
    let mut next = 0;
    while next < times.len() && times[next] == state.t {
        samples.push(PositionSample {
            t: state.t,
            q: state.q,
            dq: stepper.sensitivities().0,
        });
        next += 1;
    }
    while next < times.len() {
        if !proceed(state.t) {
            return Err(SamplingError::Interrupted { t: state.t });
        }
        let (before, (dq_k, dv_k)) = (state, stepper.sensitivities());
        stepper
            .step(model, &mut state, times[next])
            .map_err(|source| SamplingError::Step {
                t: before.t,
                source,
            })?;
        let (dq, dv) = stepper.sensitivities();
        let h = state.t - before.t;
        while next < times.len() && times[next] <= state.t {
            let t = times[next];
            let sample = if t == state.t {
                PositionSample { t, q: state.q, dq }
            } else {
                let s = (t - before.t) / h;
                let (s2, s3) = (s * s, s * s * s);
                let w = [
                    2.0 * s3 - 3.0 * s2 + 1.0,
                    (s3 - 2.0 * s2 + s) * h,
                    3.0 * s2 - 2.0 * s3,
                    (s3 - s2) * h,
                ];
                PositionSample {
                    t,
                    q: before.q * w[0] + before.v * w[1] + state.q * w[2] + state.v * w[3],
                    dq: dq_k * w[0] + dv_k * w[1] + dq * w[2] + dv * w[3],
                }
            };
            samples.push(sample);
            next += 1;
        }
    }
    Ok(samples)
}
