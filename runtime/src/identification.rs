//! Fitting a model's parameters to measured data: nonlinear least squares by
//! Levenberg–Marquardt, with the residuals' Jacobian from the exact sensitivities of the
//! simulated motion ([`simulation::sample_positions`](crate::simulation::sample_positions)) or
//! from central differences ([`central_difference_jacobian`]), and the estimates' standard
//! errors from the Gauss–Newton covariance.
//!
//! **The method** (Marquardt 1963 with Moré's scaling, *The Levenberg–Marquardt algorithm:
//! implementation and theory*, 1978, and Nielsen's damping update, *Damping parameter in
//! Marquardt's method*, IMM-REP-1999-05). With residuals `r(x)` (`m` of them), Jacobian
//! `J = ∂r/∂x` and cost `F = ½ |r|²`, a trial step solves
//!
//! ```text
//! (JᵀJ + μ D) δ = −Jᵀ r,     D = diag(max over the iterations of diag(JᵀJ))
//! ```
//!
//! (`D` makes the method invariant to the parameters' units). The gain ratio
//! `ρ = (F(x) − F(x + δ)) / (½ δᵀ(μ D δ − Jᵀ r))` accepts the step when `ρ > 0`, then
//! `μ ← μ · max(1/3, 1 − (2ρ − 1)³)`; a rejected step multiplies `μ` by `ν` and doubles `ν`. A
//! trial point where the model cannot be evaluated (a simulation that fails at absurd
//! parameters) is a rejected step. It stops when the gradient `|Jᵀ r|∞`, the trial step relative
//! to `|x|` or the reduction the step predicts relative to `F` falls below its tolerance
//! ([`Convergence`]; the last two whether or not the trial is accepted, since residuals computed
//! by an adaptive simulation carry noise at its tolerance that no smaller step resolves), and fails
//! with [`FitError::IterationLimit`] after `max_iterations` accepted or rejected trials — never
//! silently.
//!
//! **The uncertainty.** At the minimum, with `s² = 2F/(m − n)` the residual variance, the
//! estimates' covariance is `s² (JᵀJ)⁻¹` (the Gauss–Newton approximation, exact for residuals
//! linear in `x`, and the usual one for independent, equal-variance measurement noise); the
//! standard errors are the square roots of its diagonal.
//!
//! Written here rather than taken from the `levenberg-marquardt` crate, whose current release
//! (0.15) is built on nalgebra 0.34 while this workspace is on 0.35: every build would compile
//! two nalgebras and convert between their types at the boundary.
//!
//! ```
//! use mechanism_runtime::identification::{levenberg_marquardt, Evaluation, LevenbergMarquardt};
//! use mechanism_runtime::identification::{DMatrix, DVector};
//!
//! // y = a exp(b t) at five times, fitted from a poor start.
//! let t = [0.0f64, 0.5, 1.0, 1.5, 2.0];
//! let y: Vec<f64> = t.iter().map(|t| 2.0 * (-0.7 * t).exp()).collect();
//! let fit = levenberg_marquardt(
//!     |x: &[f64]| -> Result<_, Evaluation<std::fmt::Error>> {
//!         let r = DVector::from_iterator(5, t.iter().zip(&y).map(|(t, y)| x[0] * (x[1] * t).exp() - y));
//!         let j = DMatrix::from_fn(5, 2, |i, k| match k {
//!             0 => (x[1] * t[i]).exp(),
//!             _ => x[0] * t[i] * (x[1] * t[i]).exp(),
//!         });
//!         Ok((r, j))
//!     },
//!     &[1.0, 0.0],
//!     &LevenbergMarquardt::default(),
//! )?;
//! assert!((fit.parameters[0] - 2.0).abs() < 1e-10 && (fit.parameters[1] + 0.7).abs() < 1e-10);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub use nalgebra::{DMatrix, DVector};

/// The settings of [`levenberg_marquardt`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LevenbergMarquardt {
    /// The most trial steps (accepted or rejected) before [`FitError::IterationLimit`].
    pub max_iterations: usize,
    /// Converged when `|Jᵀ r|∞ ≤ gradient_tolerance · (1 + F)`.
    pub gradient_tolerance: f64,
    /// Converged when a trial step has `|δ| ≤ step_tolerance · (|x| + step_tolerance)`.
    pub step_tolerance: f64,
    /// Converged when a trial step predicts a reduction of `F` below `reduction_tolerance · F`.
    pub reduction_tolerance: f64,
    /// The initial damping relative to the largest diagonal entry of `JᵀJ` (Nielsen's `τ`).
    pub initial_damping: f64,
}

impl Default for LevenbergMarquardt {
    /// 100 trials; tolerances `10⁻¹⁰` (gradient), `10⁻¹⁰` (step), `10⁻¹²` (reduction);
    /// `τ = 10⁻³`.
    fn default() -> Self {
        LevenbergMarquardt {
            max_iterations: 100,
            gradient_tolerance: 1e-10,
            step_tolerance: 1e-10,
            reduction_tolerance: 1e-12,
            initial_damping: 1e-3,
        }
    }
}

/// Which test ended a successful fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Convergence {
    /// The gradient `Jᵀ r` vanished.
    Gradient,
    /// The step became negligible against the parameters.
    Step,
    /// The predicted reduction of the cost became negligible.
    Reduction,
}

/// The result of a converged fit.
#[derive(Clone, Debug, PartialEq)]
pub struct LeastSquaresFit {
    /// The estimates `x`.
    pub parameters: Vec<f64>,
    /// `r(x)`.
    pub residuals: DVector<f64>,
    /// `J(x)`.
    pub jacobian: DMatrix<f64>,
    /// Trial steps taken (accepted and rejected).
    pub iterations: usize,
    /// Evaluations of the residuals and the Jacobian, the start's included.
    pub evaluations: usize,
    /// The test that ended the fit.
    pub convergence: Convergence,
}

/// Why a fit failed.
#[derive(Debug, thiserror::Error)]
pub enum FitError<E: std::error::Error + 'static> {
    /// The model could not be evaluated at the starting point.
    #[error("the residuals cannot be evaluated at the starting point: {0}")]
    Start(#[source] E),
    /// The evaluation asked to stop.
    #[error("{0}")]
    Aborted(#[source] E),
    /// The residuals or the Jacobian at the starting point are not finite, or their sizes
    /// disagree with each other or with the parameters.
    #[error("bad residuals or Jacobian at the starting point: {0}")]
    BadStart(String),
    /// No convergence within the trial budget.
    #[error(
        "no convergence after {iterations} trial steps (cost ½|r|² = {cost:e}, |Jᵀr|∞ = \
         {gradient:e}); raise the iteration limit or start closer"
    )]
    IterationLimit {
        /// The trials taken.
        iterations: usize,
        /// The cost at the last accepted point.
        cost: f64,
        /// The gradient's norm there.
        gradient: f64,
    },
    /// The damped normal equations could not be solved even with a huge damping.
    #[error("the damping grew to {damping:e} without a descent step: the model is not differentiable near {parameters:?}")]
    Stalled {
        /// The damping reached.
        damping: f64,
        /// The parameters where it stalled.
        parameters: Vec<f64>,
    },
    /// Fewer residuals than parameters, or `JᵀJ` singular at the estimate: the parameters are
    /// not all determined by the data.
    #[error("the covariance does not exist: {0}")]
    Unidentifiable(String),
}

/// Multiplies the damping `μ` by `ν` and doubles `ν` after a rejected step; fails with
/// [`FitError::Stalled`] when `μ` is absurd.
fn raise<E: std::error::Error + 'static>(
    damping: f64,
    nu: f64,
    x: &DVector<f64>,
) -> Result<(f64, f64), FitError<E>> {
    let damping = damping * nu;
    if damping.is_finite() && damping <= 1e100 {
        Ok((damping, 2.0 * nu))
    } else {
        Err(FitError::Stalled {
            damping,
            parameters: x.as_slice().to_vec(),
        })
    }
}

/// Why the residuals could not be evaluated at a point.
#[derive(Debug)]
pub enum Evaluation<E> {
    /// The model cannot be evaluated there (a simulation that fails at absurd parameters): a
    /// trial point is rejected, the starting point is an error.
    Reject(E),
    /// Stop the fit (an interruption).
    Abort(E),
}

/// Minimizes `½ |r(x)|²` from `start`, where `evaluate(x)` returns `(r(x), J(x))`; see the
/// [module docs](self).
pub fn levenberg_marquardt<E, F>(
    mut evaluate: F,
    start: &[f64],
    settings: &LevenbergMarquardt,
) -> Result<LeastSquaresFit, FitError<E>>
where
    E: std::error::Error + 'static,
    F: FnMut(&[f64]) -> Result<(DVector<f64>, DMatrix<f64>), Evaluation<E>>,
{
    let n = start.len();
    if n == 0 || start.iter().any(|x| !x.is_finite()) {
        return Err(FitError::BadStart(format!(
            "the start {start:?} must be a non-empty vector of finite numbers"
        )));
    }
    let mut x = DVector::from_column_slice(start);
    let (mut r, mut j) = evaluate(x.as_slice()).map_err(|e| match e {
        Evaluation::Reject(e) => FitError::Start(e),
        Evaluation::Abort(e) => FitError::Aborted(e),
    })?;
    if j.ncols() != n || j.nrows() != r.len() {
        return Err(FitError::BadStart(format!(
            "{} residuals, a {}×{} Jacobian and {n} parameters",
            r.len(),
            j.nrows(),
            j.ncols()
        )));
    }
    if !(r.iter().all(|v| v.is_finite()) && j.iter().all(|v| v.is_finite())) {
        return Err(FitError::BadStart("a value is not finite".into()));
    }
    let mut evaluations = 1;
    let mut cost = 0.5 * r.norm_squared();
    let mut scale = DVector::<f64>::zeros(n);
    let mut damping = -1.0;
    let mut nu = 2.0;
    let finish = |x: &DVector<f64>, r, j, iterations, evaluations, convergence| LeastSquaresFit {
        parameters: x.as_slice().to_vec(),
        residuals: r,
        jacobian: j,
        iterations,
        evaluations,
        convergence,
    };
    for iteration in 1..=settings.max_iterations {
        let normal = j.tr_mul(&j);
        let gradient = j.tr_mul(&r);
        if gradient.amax() <= settings.gradient_tolerance * (1.0 + cost) {
            return Ok(finish(
                &x,
                r,
                j,
                iteration - 1,
                evaluations,
                Convergence::Gradient,
            ));
        }
        for k in 0..n {
            scale[k] = scale[k].max(normal[(k, k)]).max(f64::MIN_POSITIVE);
        }
        if damping < 0.0 {
            damping = settings.initial_damping * normal.diagonal().amax().max(f64::MIN_POSITIVE);
        }
        let mut system = normal.clone();
        for k in 0..n {
            system[(k, k)] += damping * scale[k];
        }
        let Some(step) = system.cholesky().map(|c| -c.solve(&gradient)) else {
            (damping, nu) = raise(damping, nu, &x)?;
            continue;
        };
        // The reduction the damped model predicts, `½ δᵀ(μ D δ − Jᵀ r)`.
        let predicted = 0.5 * step.dot(&(step.component_mul(&scale) * damping - &gradient));
        let small_step =
            step.norm() <= settings.step_tolerance * (x.norm() + settings.step_tolerance);
        let small_prediction = predicted <= settings.reduction_tolerance * cost;
        let candidate = &x + &step;
        evaluations += 1;
        let trial = match evaluate(candidate.as_slice()) {
            Ok((r, j)) => {
                Some((r, j)).filter(|(r, j)| r.iter().chain(j.iter()).all(|v| v.is_finite()))
            }
            Err(Evaluation::Reject(_)) => None,
            Err(Evaluation::Abort(e)) => return Err(FitError::Aborted(e)),
        };
        let mut moved = false;
        if let Some((r_new, j_new)) = trial {
            let cost_new = 0.5 * r_new.norm_squared();
            let rho = (cost - cost_new) / predicted;
            if rho > 0.0 {
                (x, r, j, cost) = (candidate, r_new, j_new, cost_new);
                damping *= (1.0 - (2.0 * rho - 1.0).powi(3)).max(1.0 / 3.0);
                nu = 2.0;
                moved = true;
            }
        }
        // Converged when the step or the reduction it promises is negligible, whether or not
        // it was taken: a smaller one would be lost in the residuals' own noise (an adaptive
        // simulation's tolerance) rather than found.
        if small_step {
            return Ok(finish(&x, r, j, iteration, evaluations, Convergence::Step));
        }
        if small_prediction {
            return Ok(finish(
                &x,
                r,
                j,
                iteration,
                evaluations,
                Convergence::Reduction,
            ));
        }
        if !moved {
            (damping, nu) = raise(damping, nu, &x)?;
        }
    }
    Err(FitError::IterationLimit {
        iterations: settings.max_iterations,
        cost,
        gradient: j.tr_mul(&r).amax(),
    })
}

impl LeastSquaresFit {
    /// The root mean square of the residuals, `√(|r|² / m)`.
    pub fn rms_residual(&self) -> f64 {
        (self.residuals.norm_squared() / self.residuals.len() as f64).sqrt()
    }

    /// The Gauss–Newton covariance `s² (JᵀJ)⁻¹` with `s² = |r|² / (m − n)`; fails with
    /// [`FitError::Unidentifiable`] for `m ≤ n` or a singular `JᵀJ`.
    pub fn covariance<E: std::error::Error + 'static>(&self) -> Result<DMatrix<f64>, FitError<E>> {
        let (m, n) = self.jacobian.shape();
        if m <= n {
            return Err(FitError::Unidentifiable(format!(
                "{m} residuals for {n} parameters leave no degrees of freedom"
            )));
        }
        let variance = self.residuals.norm_squared() / (m - n) as f64;
        let normal = self.jacobian.tr_mul(&self.jacobian);
        // Scaled to unit diagonal, so that the test of rank does not depend on the units.
        let d = normal
            .diagonal()
            .map(|v| if v > 0.0 { 1.0 / v.sqrt() } else { 0.0 });
        let scaled = DMatrix::from_fn(n, n, |i, k| normal[(i, k)] * d[i] * d[k]);
        let eigen = scaled.clone().symmetric_eigen();
        let (low, high) = (eigen.eigenvalues.min(), eigen.eigenvalues.max());
        let regular = low > 1e-14 * high;
        if !regular || d.iter().any(|&v| v == 0.0) {
            return Err(FitError::Unidentifiable(format!(
                "JᵀJ is singular (scaled eigenvalues {low:e} … {high:e}): the data do not \
                 determine every parameter"
            )));
        }
        let inverse = scaled
            .cholesky()
            .map(|c| c.inverse())
            .ok_or_else(|| FitError::Unidentifiable("JᵀJ is not positive definite".into()))?;
        Ok(DMatrix::from_fn(n, n, |i, k| {
            variance * inverse[(i, k)] * d[i] * d[k]
        }))
    }

    /// The standard errors, the square roots of the covariance's diagonal.
    pub fn standard_errors<E: std::error::Error + 'static>(&self) -> Result<Vec<f64>, FitError<E>> {
        Ok(self
            .covariance()?
            .diagonal()
            .iter()
            .map(|v| v.sqrt())
            .collect())
    }
}

/// Returns the Jacobian of `residuals` at `x` by central differences with steps
/// `δ_k = ε^{1/3} max(|x_k|, scale_k)` (truncation and rounding balanced), two evaluations per
/// parameter, together with the residuals at `x`.
pub fn central_difference_jacobian<E, F>(
    mut residuals: F,
    x: &[f64],
    scale: &[f64],
) -> Result<(DVector<f64>, DMatrix<f64>), E>
where
    F: FnMut(&[f64]) -> Result<DVector<f64>, E>,
{
    let center = residuals(x)?;
    let mut jacobian = DMatrix::zeros(center.len(), x.len());
    let mut point = x.to_vec();
    for k in 0..x.len() {
        let d = f64::EPSILON.cbrt() * x[k].abs().max(scale[k]);
        point[k] = x[k] + d;
        let up = residuals(&point)?;
        point[k] = x[k] - d;
        let down = residuals(&point)?;
        point[k] = x[k];
        jacobian.set_column(k, &((up - down) / (2.0 * d)));
    }
    Ok((center, jacobian))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outside the domain")]
    struct Outside;

    /// Rosenbrock's valley as residuals `(10 (y − x²), 1 − x)`, minimum at `(1, 1)`.
    fn rosenbrock(x: &[f64]) -> Result<(DVector<f64>, DMatrix<f64>), Evaluation<Outside>> {
        let r = DVector::from_vec(vec![10.0 * (x[1] - x[0] * x[0]), 1.0 - x[0]]);
        let j = DMatrix::from_row_slice(2, 2, &[-20.0 * x[0], 10.0, -1.0, 0.0]);
        Ok((r, j))
    }

    #[test]
    fn it_finds_the_bottom_of_rosenbrocks_valley_and_reports_a_short_budget() {
        let fit =
            levenberg_marquardt(rosenbrock, &[-1.2, 1.0], &LevenbergMarquardt::default()).unwrap();
        assert!((fit.parameters[0] - 1.0).abs() < 1e-9 && (fit.parameters[1] - 1.0).abs() < 1e-9);
        let short = LevenbergMarquardt {
            max_iterations: 3,
            ..LevenbergMarquardt::default()
        };
        let error = levenberg_marquardt(rosenbrock, &[-1.2, 1.0], &short).unwrap_err();
        assert!(
            matches!(error, FitError::IterationLimit { iterations: 3, .. }),
            "{error}"
        );
    }

    /// Trial points outside `x > 0` are rejected, not fatal; the start outside is an error,
    /// and an abort stops the fit.
    #[test]
    fn rejected_trial_points_shrink_the_step_and_aborts_stop() {
        // r = (ln x − ln 2), defined for x > 0 only; a long first step from x = 8 overshoots.
        let log = |x: &[f64]| {
            if x[0] <= 0.0 {
                return Err(Evaluation::Reject(Outside));
            }
            Ok((
                DVector::from_vec(vec![x[0].ln() - 2f64.ln(), 0.0]),
                DMatrix::from_row_slice(2, 1, &[1.0 / x[0], 0.0]),
            ))
        };
        let settings = LevenbergMarquardt {
            initial_damping: 1e-12,
            ..LevenbergMarquardt::default()
        };
        let fit = levenberg_marquardt(log, &[8.0], &settings).unwrap();
        assert!(
            (fit.parameters[0] - 2.0).abs() < 1e-9,
            "{:?}",
            fit.parameters
        );
        let start = levenberg_marquardt(log, &[-1.0], &settings).unwrap_err();
        assert!(matches!(start, FitError::Start(Outside)), "{start}");
        let abort = |_: &[f64]| -> Result<(DVector<f64>, DMatrix<f64>), _> {
            Err(Evaluation::Abort(Outside))
        };
        let stopped = levenberg_marquardt(abort, &[1.0], &settings).unwrap_err();
        assert!(matches!(stopped, FitError::Aborted(Outside)), "{stopped}");
    }

    /// Residuals that see only `x₀ + x₁` determine no covariance.
    #[test]
    fn an_unidentifiable_pair_has_no_covariance() {
        let sum = |x: &[f64]| -> Result<_, Evaluation<Outside>> {
            let t = [0.0, 1.0, 2.0];
            let r = DVector::from_iterator(3, t.iter().map(|t| (x[0] + x[1]) * t - 2.0 * t + 0.01));
            let j = DMatrix::from_fn(3, 2, |i, _| t[i]);
            Ok((r, j))
        };
        let fit = levenberg_marquardt(sum, &[0.3, 0.4], &LevenbergMarquardt::default()).unwrap();
        let error = fit.covariance::<Outside>().unwrap_err();
        assert!(matches!(error, FitError::Unidentifiable(_)), "{error}");
    }

    /// The standard errors of a straight-line fit are the textbook ones:
    /// `σ_b² = s² / Σ(t − t̄)²`, `σ_a² = s² (1/m + t̄² / Σ(t − t̄)²)`.
    #[test]
    fn a_straight_lines_standard_errors_are_the_textbook_ones() {
        let t = [0.0, 1.0, 2.0, 3.0, 4.0];
        let y = [0.1, 1.9, 4.2, 5.8, 8.1];
        let line = |x: &[f64]| -> Result<_, Evaluation<Outside>> {
            let r = DVector::from_iterator(5, t.iter().zip(&y).map(|(t, y)| x[0] + x[1] * t - y));
            let j = DMatrix::from_fn(5, 2, |i, k| if k == 0 { 1.0 } else { t[i] });
            Ok((r, j))
        };
        let fit = levenberg_marquardt(line, &[0.0, 0.0], &LevenbergMarquardt::default()).unwrap();
        let errors = fit.standard_errors::<Outside>().unwrap();
        let mean = 2.0;
        let sxx: f64 = t.iter().map(|t| (t - mean) * (t - mean)).sum();
        let s2 = fit.residuals.norm_squared() / 3.0;
        assert!((errors[1] - (s2 / sxx).sqrt()).abs() < 1e-12 * errors[1]);
        let a = (s2 * (1.0 / 5.0 + mean * mean / sxx)).sqrt();
        assert!((errors[0] - a).abs() < 1e-12 * a);
    }
}
