//! Least-squares slopes: the observed order of convergence of a method (the slope of `ln error`
//! against `ln h`), a scaling exponent (`ln cost` against `ln n`), or a drift (`y` against `t`).
//!
//! One fit for the whole workspace: the tests, the examples and the benchmarks import it, so
//! that "the measured order" means the same number everywhere. The fit is accumulated online
//! ([`LinearFit`], Welford's centred updates, so a run of a million steps need not be stored
//! and the means do not cancel); [`slope`] and [`loglog_slope`] fold slices into it.
//!
//! ```
//! use mechanism_runtime::reference::fit::{loglog_slope, FitError};
//!
//! // Errors of a second-order method at three step sizes.
//! let hs = [0.1, 0.05, 0.025];
//! let errors = hs.map(|h| 3.0 * h * h);
//! let order = loglog_slope(&hs, &errors)?;
//! assert!((order - 2.0).abs() < 1e-12);
//!
//! // An error that is exactly zero has no logarithm: the fit says which point it was.
//! assert_eq!(
//!     loglog_slope(&hs, &[1e-3, 0.0, 1e-5]),
//!     Err(FitError::NotPositive { index: 1, value: 0.0 })
//! );
//! # Ok::<(), FitError>(())
//! ```

use thiserror::Error;

/// Why a slope could not be fitted.
#[derive(Clone, Copy, Debug, PartialEq, Error)]
pub enum FitError {
    /// The abscissas and the ordinates are of different lengths.
    #[error("{x} abscissas but {y} ordinates: one ordinate per abscissa")]
    LengthMismatch {
        /// The number of abscissas.
        x: usize,
        /// The number of ordinates.
        y: usize,
    },
    /// Fewer than two points: a line through them is not determined.
    #[error("{points} points: a slope needs at least two")]
    TooFewPoints {
        /// The number of points given.
        points: usize,
    },
    /// A value of a log-log fit is zero or negative (or NaN), so it has no logarithm.
    #[error("value {value:e} at point {index} is not positive: no logarithm")]
    NotPositive {
        /// The index of the first offending point.
        index: usize,
        /// That value (of the abscissa if it is the offending one, else of the ordinate).
        value: f64,
    },
    /// All abscissas are equal, so the slope is not determined.
    #[error("all {points} abscissas are equal: the slope is not determined")]
    EqualAbscissas {
        /// The number of points given.
        points: usize,
    },
}

/// A least-squares line `y ≈ a + b x` accumulated one point at a time.
///
/// Non-finite points are not rejected: they make the slope NaN or infinite, as they would any
/// sum of squares.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinearFit {
    points: usize,
    mean_x: f64,
    mean_y: f64,
    /// `Σ (x − x̄)²` over the points so far.
    sxx: f64,
    /// `Σ (x − x̄)(y − ȳ)` over the points so far.
    sxy: f64,
}

impl LinearFit {
    /// Returns a fit of no points.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the point `(x, y)`.
    pub fn push(&mut self, x: f64, y: f64) {
        self.points += 1;
        let n = self.points as f64;
        let dx = x - self.mean_x;
        self.mean_x += dx / n;
        self.mean_y += (y - self.mean_y) / n;
        self.sxx += dx * (x - self.mean_x);
        self.sxy += dx * (y - self.mean_y);
    }

    /// Returns the number of points added.
    pub fn points(&self) -> usize {
        self.points
    }

    /// Returns the least-squares slope `b` of the points added.
    ///
    /// # Errors
    ///
    /// [`FitError::TooFewPoints`] below two points, [`FitError::EqualAbscissas`] if every `x`
    /// is the same.
    pub fn slope(&self) -> Result<f64, FitError> {
        if self.points < 2 {
            return Err(FitError::TooFewPoints {
                points: self.points,
            });
        }
        if self.sxx == 0.0 {
            return Err(FitError::EqualAbscissas {
                points: self.points,
            });
        }
        Ok(self.sxy / self.sxx)
    }
}

/// Returns the least-squares slope of `y` against `x`: a drift, a rate.
///
/// # Errors
///
/// [`FitError::LengthMismatch`] if the slices differ in length; otherwise as
/// [`LinearFit::slope`].
pub fn slope(x: &[f64], y: &[f64]) -> Result<f64, FitError> {
    check_lengths(x, y)?;
    let mut fit = LinearFit::new();
    for (&x, &y) in x.iter().zip(y) {
        fit.push(x, y);
    }
    fit.slope()
}

/// Returns the least-squares slope of `ln y` against `ln x`: an observed order of convergence
/// (`x` the step sizes, `y` the errors) or a scaling exponent.
///
/// # Errors
///
/// [`FitError::NotPositive`] for the first point with `x ≤ 0` or `y ≤ 0` (or NaN);
/// otherwise as [`slope`].
pub fn loglog_slope(x: &[f64], y: &[f64]) -> Result<f64, FitError> {
    check_lengths(x, y)?;
    let mut fit = LinearFit::new();
    for (index, (&x, &y)) in x.iter().zip(y).enumerate() {
        for value in [x, y] {
            if value.is_nan() || value <= 0.0 {
                return Err(FitError::NotPositive { index, value });
            }
        }
        fit.push(x.ln(), y.ln());
    }
    fit.slope()
}

fn check_lengths(x: &[f64], y: &[f64]) -> Result<(), FitError> {
    if x.len() != y.len() {
        return Err(FitError::LengthMismatch {
            x: x.len(),
            y: y.len(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_recovered_exactly() {
        let x = [1.0, 2.0, 4.0, 7.0];
        let y = x.map(|x| 0.5 - 3.0 * x);
        assert!((slope(&x, &y).unwrap() + 3.0).abs() < 1e-14);
    }

    #[test]
    fn a_power_law_has_its_exponent_as_slope() {
        let hs = [0.1, 0.05, 0.025, 0.0125];
        let errors = hs.map(|h: f64| 7.0 * h.powi(4));
        assert!((loglog_slope(&hs, &errors).unwrap() - 4.0).abs() < 1e-12);
    }

    #[test]
    fn two_points_give_the_slope_of_their_chord() {
        let (h, e): ([f64; 2], [f64; 2]) = ([0.002, 0.001], [4.1e-6, 1.0e-6]);
        let chord = (e[0] / e[1]).ln() / (h[0] / h[1]).ln();
        assert!((loglog_slope(&h, &e).unwrap() - chord).abs() < 1e-12);
    }

    #[test]
    fn the_online_fit_equals_the_fit_of_the_slices() {
        let x: Vec<f64> = (0..1000).map(|i| i as f64 * 1e-3).collect();
        let y: Vec<f64> = x
            .iter()
            .map(|x| 1e6 + 2e-3 * x + (x * 97.0).sin())
            .collect();
        let mut fit = LinearFit::new();
        x.iter().zip(&y).for_each(|(&x, &y)| fit.push(x, y));
        assert_eq!(fit.points(), 1000);
        assert_eq!(fit.slope(), slope(&x, &y));
    }

    #[test]
    fn bad_input_is_a_typed_error() {
        assert_eq!(
            slope(&[1.0, 2.0], &[1.0]),
            Err(FitError::LengthMismatch { x: 2, y: 1 })
        );
        assert_eq!(
            slope(&[1.0], &[1.0]),
            Err(FitError::TooFewPoints { points: 1 })
        );
        assert_eq!(slope(&[], &[]), Err(FitError::TooFewPoints { points: 0 }));
        assert_eq!(
            slope(&[3.0, 3.0, 3.0], &[1.0, 2.0, 3.0]),
            Err(FitError::EqualAbscissas { points: 3 })
        );
        assert_eq!(
            loglog_slope(&[1.0, -2.0], &[1.0, 2.0]),
            Err(FitError::NotPositive {
                index: 1,
                value: -2.0
            })
        );
        assert!(matches!(
            loglog_slope(&[1.0, 2.0], &[f64::NAN, 2.0]),
            Err(FitError::NotPositive { index: 0, .. })
        ));
    }
}
