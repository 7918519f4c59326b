//! Fitting a model to measured data: the damped planar double pendulum
//! ([`DampedDoublePendulum`]) released from rest, its unknown second mass, gravity, damping and
//! initial angles estimated from measured bob positions by Levenberg–Marquardt
//! ([`runtime::identification`](crate::runtime::identification)) with the exact
//! sensitivities of the simulated motion (or central differences, to compare), with standard
//! errors from the Gauss–Newton covariance. The engine of the `identify` example.
//!
//! The measurements are positions `(x1, y1, x2, y2)` at any times `t ≥ 0` (a CSV file with the
//! columns `t,x1,y1,x2,y2`, [`Measurements`]); the model is simulated from the release at
//! `t = 0` to the last measurement and sampled at every one
//! ([`sample_positions`]), so nothing is
//! extrapolated. The residuals are `q(tᵢ; θ) − dataᵢ`, four per row, and the fitted
//! `θ = (m2, g, c, θ₁, θ₂)` ([`FITTED`]); `m1`, `l1` and `l2` are known ([`Known`]).

use std::path::Path;
use std::time::{Duration, Instant};

use crate::models::DampedDoublePendulum;
use crate::runtime::identification::{
    central_difference_jacobian, levenberg_marquardt, Convergence, DMatrix, DVector, Evaluation,
    FitError, LevenbergMarquardt,
};
use crate::runtime::integrators::stabilized::{
    Dopri5, PostStabilization, StabilizedRk, DOPRI5, RK4,
};
use crate::runtime::simulation::{
    sample_positions, Adaptive, Fixed, PositionSample, SamplingError, Sensitive,
};
use crate::runtime::{DifferentiableInParameters, Spook, StepError};

/// The fitted quantities, in the order of every `[f64; 5]` of this module.
pub const FITTED: [&str; 5] = ["m2", "g", "c", "theta1", "theta2"];

/// The measured columns, in the order of [`Measurements::positions`].
pub const MEASURED: [&str; 4] = ["x1", "y1", "x2", "y2"];

/// Measured bob positions, sorted by time.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurements {
    /// The times, non-decreasing, none negative.
    pub t: Vec<f64>,
    /// `(x1, y1, x2, y2)` at each time.
    pub positions: Vec<[f64; 4]>,
}

/// Why measurements could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// The file could not be read.
    #[error("cannot read the data file {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The reason.
        #[source]
        source: std::io::Error,
    },
    /// The header lacks a column.
    #[error("{file}: no column `{column}` in the header `{header}` (the data need t,x1,y1,x2,y2)")]
    MissingColumn {
        /// The file.
        file: String,
        /// The column.
        column: &'static str,
        /// The header found.
        header: String,
    },
    /// A row has fewer fields than the header.
    #[error("{file}, line {line}: {found} fields where the header has {expected}")]
    ShortRow {
        /// The file.
        file: String,
        /// The line, from 1.
        line: usize,
        /// The header's fields.
        expected: usize,
        /// The row's.
        found: usize,
    },
    /// A field is not a finite number, or a time is negative.
    #[error("{file}, line {line}, column `{column}`: {problem}")]
    BadValue {
        /// The file.
        file: String,
        /// The line, from 1.
        line: usize,
        /// The column.
        column: &'static str,
        /// What is wrong.
        problem: String,
    },
    /// Measurements built field by field break what parsing guarantees
    /// ([`Measurements::check`]).
    #[error("inconsistent measurements: {problem}")]
    Inconsistent {
        /// What is wrong.
        problem: String,
    },
    /// Too few rows to fit five quantities.
    #[error("{file}: {rows} data rows; the fit needs at least 2 (8 residuals for 5 unknowns)")]
    TooFew {
        /// The file.
        file: String,
        /// The rows found.
        rows: usize,
    },
}

impl Measurements {
    /// Reads a CSV file with a header naming `t`, `x1`, `y1`, `x2`, `y2` (in any order; other
    /// columns are ignored) and one row per measurement at any time `t ≥ 0`, in any order.
    pub fn read_csv(path: &Path) -> Result<Self, DataError> {
        let text = std::fs::read_to_string(path).map_err(|source| DataError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses CSV text as [`read_csv`](Self::read_csv) does; `source` names it in errors.
    pub fn parse(text: &str, source: &str) -> Result<Self, DataError> {
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let header: Vec<&str> = lines
            .next()
            .map(|(_, l)| l.split(',').map(str::trim).collect())
            .unwrap_or_default();
        let names = ["t", "x1", "y1", "x2", "y2"];
        let mut index = [0usize; 5];
        for (slot, name) in index.iter_mut().zip(names) {
            *slot =
                header
                    .iter()
                    .position(|h| *h == name)
                    .ok_or_else(|| DataError::MissingColumn {
                        file: source.into(),
                        column: name,
                        header: header.join(","),
                    })?;
        }
        let mut rows = Vec::new();
        for (number, line) in lines {
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            if fields.len() < header.len() {
                return Err(DataError::ShortRow {
                    file: source.into(),
                    line: number + 1,
                    expected: header.len(),
                    found: fields.len(),
                });
            }
            let mut values = [0.0; 5];
            for ((value, &at), name) in values.iter_mut().zip(&index).zip(names) {
                let bad = |problem: String| DataError::BadValue {
                    file: source.into(),
                    line: number + 1,
                    column: name,
                    problem,
                };
                *value = fields[at]
                    .parse::<f64>()
                    .map_err(|_| bad(format!("`{}` is not a number", fields[at])))?;
                if !value.is_finite() {
                    return Err(bad(format!("{value} is not finite")));
                }
            }
            if values[0] < 0.0 {
                return Err(DataError::BadValue {
                    file: source.into(),
                    line: number + 1,
                    column: "t",
                    problem: format!(
                        "{} precedes the release at t = 0 (times count from the release)",
                        values[0]
                    ),
                });
            }
            rows.push(values);
        }
        if rows.len() < 2 {
            return Err(DataError::TooFew {
                file: source.into(),
                rows: rows.len(),
            });
        }
        rows.sort_by(|a, b| a[0].total_cmp(&b[0]));
        Ok(Measurements {
            t: rows.iter().map(|r| r[0]).collect(),
            positions: rows.iter().map(|r| [r[1], r[2], r[3], r[4]]).collect(),
        })
    }

    /// Writes the measurements as CSV (`t,x1,y1,x2,y2`, full precision).
    pub fn write_csv(&self, path: &Path) -> std::io::Result<()> {
        use std::fmt::Write;
        let mut text = String::from("t,x1,y1,x2,y2\n");
        for (t, p) in self.t.iter().zip(&self.positions) {
            let _ = writeln!(text, "{t},{},{},{},{}", p[0], p[1], p[2], p[3]);
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, text)
    }

    /// The rods' angles from −y at the first measurement, a starting guess for `θ₁`, `θ₂`
    /// when the data start near the release (`[0, 0]` without measurements).
    pub fn first_angles(&self) -> [f64; 2] {
        let Some(&[x1, y1, x2, y2]) = self.positions.first() else {
            return [0.0; 2];
        };
        [x1.atan2(-y1), (x2 - x1).atan2(-(y2 - y1))]
    }

    /// Checks what [`parse`](Self::parse) guarantees, for measurements built field by field:
    /// as many times as positions, at least 2, times finite, non-negative and non-decreasing,
    /// positions finite.
    pub fn check(&self) -> Result<(), DataError> {
        let bad = |problem: String| Err(DataError::Inconsistent { problem });
        if self.t.len() != self.positions.len() {
            return bad(format!(
                "{} times for {} positions",
                self.t.len(),
                self.positions.len()
            ));
        }
        if self.t.len() < 2 {
            return bad(format!("{} rows; the fit needs at least 2", self.t.len()));
        }
        let mut previous = 0.0;
        for (row, (&t, p)) in self.t.iter().zip(&self.positions).enumerate() {
            if !(t.is_finite() && t >= previous) {
                return bad(format!(
                    "time {t} of row {row} is not finite, negative or before the one above it"
                ));
            }
            if !p.iter().all(|x| x.is_finite()) {
                return bad(format!(
                    "the positions of row {row}, {p:?}, are not all finite"
                ));
            }
            previous = t;
        }
        Ok(())
    }
}

/// Simulates the pendulum with the known values and `θ = (m2, g, c, θ₁, θ₂)` by `method` at
/// `times` and adds independent Gaussian noise of standard deviation `noise` to every position,
/// from a ChaCha8 stream seeded with `seed` (the same data on every platform): measurements
/// whose true parameters are known, to test a fit with.
pub fn synthesize(
    known: &Known,
    theta: &[f64; 5],
    method: Method,
    times: &[f64],
    (noise, seed): (f64, u64),
    proceed: &mut dyn FnMut(f64) -> bool,
) -> Result<Measurements, SamplingError> {
    use chacha20::rand_core::SeedableRng;
    use rand_distr::{Distribution, StandardNormal};
    let mut rng = chacha20::ChaCha8Rng::seed_from_u64(seed);
    let positions = simulate(known, theta, method, times, proceed)?
        .into_iter()
        .map(|p| {
            p.map(|x| {
                let z: f64 = StandardNormal.sample(&mut rng);
                x + noise * z
            })
        })
        .collect();
    Ok(Measurements {
        t: times.to_vec(),
        positions,
    })
}

/// The known quantities: the first mass and the rods' lengths.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Known {
    /// Mass of the first bob.
    pub m1: f64,
    /// Length of the first rod.
    pub l1: f64,
    /// Length of the second rod.
    pub l2: f64,
}

impl Default for Known {
    /// `m1 = 1`, `l1 = 1`, `l2 = √2`.
    fn default() -> Self {
        Known {
            m1: 1.0,
            l1: 1.0,
            l2: std::f64::consts::SQRT_2,
        }
    }
}

impl Known {
    /// The model with these known values and the fitted `θ = (m2, g, c, θ₁, θ₂)`.
    pub fn model(&self, theta: &[f64; 5]) -> DampedDoublePendulum {
        DampedDoublePendulum {
            m1: self.m1,
            m2: theta[0],
            l1: self.l1,
            l2: self.l2,
            g: theta[1],
            c: theta[2],
        }
    }
}

/// The integrator of the simulations.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Method {
    /// DOPRI5 with error control and S-both² post-stabilization (Ascher et al. 1995), landing
    /// on every measurement time.
    Dopri5 {
        /// Relative tolerance.
        rtol: f64,
        /// Absolute tolerance.
        atol: f64,
        /// The first step, or the pair's own choice.
        first_step: Option<f64>,
    },
    /// RK4 at a fixed step with S-both².
    Rk4 {
        /// The step.
        h: f64,
    },
    /// SPOOK (Lacoursière 2007) at a fixed step.
    Spook {
        /// The step.
        h: f64,
    },
}

/// How the residuals' Jacobian is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Derivatives {
    /// From the forward sensitivities of the run (one run with its step Jacobians).
    Exact,
    /// By central differences (ten more runs).
    FiniteDifferences,
}

/// Why a simulation or a fit failed.
#[derive(Debug, thiserror::Error)]
pub enum IdentifyError {
    /// The integrator could not be built (a bad step or tolerance).
    #[error("bad integrator setting: {0}")]
    Setting(#[from] StepError),
    /// A simulation failed or was interrupted.
    #[error("simulating the model failed: {0}")]
    Simulation(#[from] SamplingError),
    /// The measurements are inconsistent.
    #[error(transparent)]
    Data(#[from] DataError),
    /// The fit failed.
    #[error("the fit failed: {0}")]
    Fit(#[from] Box<FitError<SamplingError>>),
}

/// One fitted quantity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// The estimate.
    pub value: f64,
    /// Its standard error.
    pub std: f64,
}

/// The result of [`identify`].
#[derive(Clone, Debug, PartialEq)]
pub struct Identification {
    /// The estimates of [`FITTED`], in order.
    pub estimates: [Estimate; 5],
    /// `√(|r|²/m)` at the estimate.
    pub rms_residual: f64,
    /// Levenberg–Marquardt's trial steps.
    pub iterations: usize,
    /// Evaluations of the residuals with their Jacobian.
    pub evaluations: usize,
    /// The test that ended the fit.
    pub convergence: Convergence,
    /// The fit's wall time.
    pub elapsed: Duration,
}

/// Positions at `times` (non-decreasing, none negative) for `θ = (m2, g, c, θ₁, θ₂)`,
/// without sensitivities (a plain run); `proceed(t)` as for [`identify`].
pub fn simulate(
    known: &Known,
    theta: &[f64; 5],
    method: Method,
    times: &[f64],
    proceed: &mut dyn FnMut(f64) -> bool,
) -> Result<Vec<[f64; 4]>, SamplingError> {
    let model = known.model(theta);
    let initial = model.released(theta[3], theta[4]);
    let setting = |source| SamplingError::Step { t: 0.0, source };
    let samples: Vec<PositionSample<4, 0>> = match method {
        Method::Dopri5 {
            rtol,
            atol,
            first_step,
        } => {
            let mut stepper = Adaptive(dopri(rtol, atol, first_step).map_err(setting)?);
            sample_positions(&mut stepper, &model, &initial, times, proceed)?
        }
        Method::Rk4 { h } => {
            let mut stepper = Fixed::<_, 4>(rk4(h).map_err(setting)?);
            sample_positions(&mut stepper, &model, &initial, times, proceed)?
        }
        Method::Spook { h } => {
            let mut stepper = Fixed::<_, 4>(Spook::<4, 2>::new(h).map_err(setting)?);
            sample_positions(&mut stepper, &model, &initial, times, proceed)?
        }
    };
    Ok(samples
        .iter()
        .map(|s| [s.q[0], s.q[1], s.q[2], s.q[3]])
        .collect())
}

/// Positions at `times` for `θ` and their derivatives in `θ`.
fn simulate_with_sensitivities(
    known: &Known,
    theta: &[f64; 5],
    method: Method,
    times: &[f64],
    proceed: &mut dyn FnMut(f64) -> bool,
) -> Result<Vec<PositionSample<4, 5>>, SamplingError> {
    fn run<I: DifferentiableInParameters<DampedDoublePendulum, 4, 6>>(
        integrator: I,
        model: &DampedDoublePendulum,
        angles: (f64, f64),
        times: &[f64],
        proceed: &mut dyn FnMut(f64) -> bool,
    ) -> Result<Vec<PositionSample<4, 5>>, SamplingError> {
        let mut stepper = Sensitive {
            integrator,
            sensitivity: model.release_seeds(angles.0, angles.1),
        };
        let initial = model.released(angles.0, angles.1);
        sample_positions(&mut stepper, model, &initial, times, proceed)
    }
    let model = known.model(theta);
    let angles = (theta[3], theta[4]);
    let setting = |source| SamplingError::Step { t: 0.0, source };
    match method {
        Method::Dopri5 {
            rtol,
            atol,
            first_step,
        } => run(
            dopri(rtol, atol, first_step).map_err(setting)?,
            &model,
            angles,
            times,
            proceed,
        ),
        Method::Rk4 { h } => run(rk4(h).map_err(setting)?, &model, angles, times, proceed),
        Method::Spook { h } => run(
            Spook::<4, 2>::new(h).map_err(setting)?,
            &model,
            angles,
            times,
            proceed,
        ),
    }
}

/// The fitted quantities from the optimizer's vector (always five long; a missing entry would
/// be a NaN parameter, which the simulation refuses).
fn five(theta: &[f64]) -> [f64; 5] {
    std::array::from_fn(|k| theta.get(k).copied().unwrap_or(f64::NAN))
}

/// DOPRI5 at `rtol`, `atol` with S-both², its first step `first_step` if given.
fn dopri(rtol: f64, atol: f64, first_step: Option<f64>) -> Result<Dopri5<4, 2>, StepError> {
    let dopri = Dopri5::<4, 2>::new(DOPRI5, rtol, atol)?
        .with_post_stabilization(PostStabilization::BothTwice);
    match first_step {
        Some(h) => dopri.with_initial_step(h),
        None => Ok(dopri),
    }
}

/// RK4 at step `h` with S-both².
fn rk4(h: f64) -> Result<StabilizedRk<4, 2, 4>, StepError> {
    Ok(StabilizedRk::<4, 2, 4>::new(RK4, h)?.with_post_stabilization(PostStabilization::BothTwice))
}

/// Fits `θ = (m2, g, c, θ₁, θ₂)` to `data` from `guess` (see the [module docs](self));
/// `proceed(t)` is asked before every step of every simulation, and `false` aborts the fit.
///
/// A trial point where the simulation fails (a negative mass, a blow-up) is a rejected
/// Levenberg–Marquardt step; a failure at `guess` is an error naming the step that failed.
pub fn identify(
    data: &Measurements,
    known: &Known,
    guess: &[f64; 5],
    method: Method,
    derivatives: Derivatives,
    settings: &LevenbergMarquardt,
    proceed: &mut dyn FnMut(f64) -> bool,
) -> Result<Identification, IdentifyError> {
    data.check()?;
    // Refuse a bad setting before the fit, which would take it for a bad trial point.
    match method {
        Method::Dopri5 {
            rtol,
            atol,
            first_step,
        } => drop(dopri(rtol, atol, first_step)?),
        Method::Rk4 { h } => drop(rk4(h)?),
        Method::Spook { h } => drop(Spook::<4, 2>::new(h)?),
    }
    let measured: Vec<f64> = data.positions.iter().flatten().copied().collect();
    let m = measured.len();
    let residuals = |positions: &mut dyn Iterator<Item = f64>| {
        DVector::from_iterator(m, positions.zip(&measured).map(|(q, d)| q - d))
    };
    let started = Instant::now();
    let mut simulate_residuals =
        |theta: &[f64]| -> Result<(DVector<f64>, DMatrix<f64>), SamplingError> {
            match derivatives {
                Derivatives::Exact => {
                    let theta = five(theta);
                    let samples =
                        simulate_with_sensitivities(known, &theta, method, &data.t, proceed)?;
                    let r = residuals(&mut samples.iter().flat_map(|s| s.q.iter().copied()));
                    let j = DMatrix::from_fn(m, 5, |row, k| samples[row / 4].dq[(row % 4, k)]);
                    Ok((r, j))
                }
                Derivatives::FiniteDifferences => central_difference_jacobian(
                    |theta: &[f64]| {
                        let positions = simulate(known, &five(theta), method, &data.t, proceed)?;
                        Ok(residuals(&mut positions.iter().flatten().copied()))
                    },
                    theta,
                    &[1.0; 5],
                ),
            }
        };
    // An interruption ends the fit; any other failure rejects the trial point.
    let evaluate = |theta: &[f64]| {
        simulate_residuals(theta).map_err(|error| match error {
            SamplingError::Interrupted { .. } => Evaluation::Abort(error),
            _ => Evaluation::Reject(error),
        })
    };
    let fit = levenberg_marquardt(evaluate, guess, settings).map_err(Box::new)?;
    let errors = fit.standard_errors().map_err(Box::new)?;
    Ok(Identification {
        estimates: std::array::from_fn(|k| Estimate {
            value: fit.parameters[k],
            std: errors[k],
        }),
        rms_residual: fit.rms_residual(),
        iterations: fit.iterations,
        evaluations: fit.evaluations,
        convergence: fit.convergence,
        elapsed: started.elapsed(),
    })
}
