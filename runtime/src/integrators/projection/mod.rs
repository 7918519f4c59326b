//! Projection methods for holonomic constraints: SHAKE and RATTLE.
//!
//! Both are Verlet with constraint forces `−G(q_k)ᵀ λ` whose multipliers are chosen so that the
//! new configuration satisfies `g(q_{k+1}) = 0` exactly (up to a Newton tolerance): the
//! constrained variational Verlet scheme of Lacoursière (2007) eq. 13. RATTLE adds a second
//! multiplier that projects the velocity onto the tangent space `G(q_{k+1}) v = 0`.
//!
//! The position step solves the `M` nonlinear equations `g(q̃ − M⁻¹ G(q_k)ᵀ μ) = 0` for the
//! scaled multipliers `μ` by full Newton iteration, which converges quadratically (two
//! iterations per step on the double pendulum at `h = 1/60`); the one-constraint-at-a-time
//! Gauss–Seidel sweep of the original SHAKE converges only linearly.
//!
//! A state the integrator did not produce itself must satisfy `g(q) = 0` to the Newton
//! tolerance: an offset would be removed in one step and become a velocity jump of about
//! `offset / h`, so it is refused with [`StepError::OffManifold`] instead (neither SHAKE nor
//! RATTLE projects it silently).

mod rattle;
mod shake;

pub use rattle::Rattle;
pub use shake::Shake;

use nalgebra::{SMatrix, SVector};

use super::checks::{check_max_iterations, check_on_manifold, check_tolerance};
pub(crate) use super::explicit::same_bits;
use super::explicit::{acceleration, check_finite, check_step_size, MassFactor};
use crate::error::StepError;
use crate::linalg::Lu;
use crate::model::{Holonomic, Inertia, Potential};
use crate::state::State;

/// The default Newton tolerance factor `τ` (see [`Shake::with_tolerance`]).
const DEFAULT_TOLERANCE: f64 = 1e-13;

/// The default cap on Newton iterations per step.
const DEFAULT_MAX_ITERATIONS: usize = 50;

/// The name of the Newton matrix, for errors.
const NEWTON_MATRIX: &str = "Newton matrix G(q) M⁻¹ G(q_k)ᵀ";

/// What a step needs at a configuration, carried from the end of one step to the next.
#[derive(Clone, Copy, Debug)]
struct Point<const N: usize, const M: usize> {
    q: SVector<f64, N>,
    t: f64,
    /// `−M(q)⁻¹ ∇V(q)`.
    acceleration: SVector<f64, N>,
    /// `G(q, t)`.
    jac: SMatrix<f64, M, N>,
    /// `M(q)⁻¹ G(q, t)ᵀ`.
    minv_jac_t: SMatrix<f64, N, M>,
}

/// The converged position step.
struct Projected<const N: usize, const M: usize> {
    q: SVector<f64, N>,
    /// The scaled multipliers `μ` with `q = q̃ − M⁻¹ G(q_k)ᵀ μ`.
    mu: SVector<f64, M>,
    /// `G(q, t_{k+1})` at the converged `q`.
    jac: SMatrix<f64, M, N>,
    iterations: u32,
    factorizations: u32,
}

/// What SHAKE and RATTLE share: parameters, the mass factor and the carried point.
#[derive(Clone, Copy, Debug)]
struct Core<const N: usize, const M: usize> {
    h: f64,
    tolerance: f64,
    max_iterations: usize,
    mass: MassFactor<N>,
    carried: Option<Point<N, M>>,
}

impl<const N: usize, const M: usize> Core<N, M> {
    fn new(h: f64) -> Result<Self, StepError> {
        Ok(Core {
            h: check_step_size(h)?,
            tolerance: DEFAULT_TOLERANCE,
            max_iterations: DEFAULT_MAX_ITERATIONS,
            mass: MassFactor::default(),
            carried: None,
        })
    }

    fn with_tolerance(mut self, tolerance: f64) -> Result<Self, StepError> {
        self.tolerance = check_tolerance(tolerance)?;
        Ok(self)
    }

    fn with_max_iterations(mut self, max_iterations: usize) -> Result<Self, StepError> {
        self.max_iterations = check_max_iterations(max_iterations)?;
        Ok(self)
    }

    /// Evaluates the point at `(q, t)` with the constraint Jacobian `jac` already known there;
    /// returns it and the factorizations it took. `t_err` is the time reported in errors.
    fn point_at<Model>(
        &mut self,
        model: &Model,
        q: &SVector<f64, N>,
        t: f64,
        jac: SMatrix<f64, M, N>,
        t_err: f64,
    ) -> Result<(Point<N, M>, u32), StepError>
    where
        Model: Inertia<N> + Potential<N>,
    {
        check_finite(&jac, "constraint jacobian", t_err)?;
        let (acceleration, mass_factor, factorizations) =
            acceleration(model, &mut self.mass, q, t_err)?;
        let mut minv_jac_t = jac.transpose();
        mass_factor.solve_in_place(&mut minv_jac_t);
        let point = Point {
            q: *q,
            t,
            acceleration,
            jac,
            minv_jac_t,
        };
        Ok((point, factorizations))
    }

    /// Returns the point at the state's `(q, t)`: the carried one if it was computed at exactly
    /// this `q` and `t`, else a fresh evaluation; and the factorizations it took. A fresh
    /// state off the constraint manifold (beyond the Newton tolerance) is `OffManifold`.
    fn start<Model>(
        &mut self,
        model: &Model,
        state: &State<N>,
    ) -> Result<(Point<N, M>, u32), StepError>
    where
        Model: Inertia<N> + Potential<N> + Holonomic<N, M>,
    {
        if let Some(point) = &self.carried {
            if same_bits(&point.q, &state.q) && point.t.to_bits() == state.t.to_bits() {
                return Ok((*point, 0));
            }
        }
        // A state this integrator did not produce must already satisfy g(q) = 0.
        let mut g = SVector::<f64, M>::zeros();
        let mut jac = SMatrix::<f64, M, N>::zeros();
        model.constraints_and_jacobian(&state.q, state.t, &mut g, &mut jac);
        check_finite(&jac, "constraint jacobian", state.t)?;
        check_on_manifold(&g, &jac, &state.q, self.tolerance, state.t)?;
        self.point_at(model, &state.q, state.t, jac, state.t)
    }

    /// Solves `g(q̃ − M⁻¹ G(q_k)ᵀ μ, t_next) = 0` for `μ` by Newton's method from `μ = 0`.
    ///
    /// With `q⁽ⁱ⁾ = q̃ − M⁻¹ G(q_k)ᵀ μ⁽ⁱ⁾`, each iteration solves
    ///
    /// ```text
    /// G(q⁽ⁱ⁾) M⁻¹ G(q_k)ᵀ Δμ = g(q⁽ⁱ⁾),    μ⁽ⁱ⁺¹⁾ = μ⁽ⁱ⁾ + Δμ
    /// ```
    ///
    /// with an LU factorization (the matrix is not symmetric once `q⁽ⁱ⁾ ≠ q_k`). It stops when
    /// `max_i |g_i(q⁽ⁱ⁾)| ≤ τ (1 + s)`, `s = max_i Σ_j |G_ij(q⁽ⁱ⁾)| |q⁽ⁱ⁾_j|` (the size of the
    /// first-order terms of `g`, which sets its rounding error), and fails with
    /// `NewtonDiverged` after `max_iterations` iterations or on a non-finite residual.
    fn project<Model>(
        &self,
        model: &Model,
        predictor: &SVector<f64, N>,
        start: &Point<N, M>,
        t_next: f64,
        t_err: f64,
    ) -> Result<Projected<N, M>, StepError>
    where
        Model: Holonomic<N, M>,
    {
        let mut q = *predictor;
        let mut mu = SVector::<f64, M>::zeros();
        let mut g = SVector::<f64, M>::zeros();
        let mut jac = SMatrix::<f64, M, N>::zeros();
        let mut iterations = 0u32;
        loop {
            model.constraints_and_jacobian(&q, t_next, &mut g, &mut jac);
            let residual = max_abs(&g);
            let scale = jac
                .row_iter()
                .map(|row| row.iter().zip(q.iter()).map(|(a, x)| (a * x).abs()).sum())
                .fold(0.0, f64::max);
            if residual <= self.tolerance * (1.0 + scale) {
                check_finite(&jac, "constraint jacobian", t_err)?;
                return Ok(Projected {
                    q,
                    mu,
                    jac,
                    iterations,
                    factorizations: iterations,
                });
            }
            if !residual.is_finite() || iterations as usize >= self.max_iterations {
                return Err(StepError::NewtonDiverged {
                    iterations: iterations as usize,
                    residual,
                    t: t_err,
                });
            }
            let newton = Lu::try_new(&(jac * start.minv_jac_t))
                .map_err(StepError::linear_algebra(NEWTON_MATRIX, t_err))?;
            let delta = newton.solve(&g);
            mu += delta;
            q = predictor - start.minv_jac_t * mu;
            iterations += 1;
        }
    }
}

/// Returns `max_i |x_i|`, or NaN if any component is NaN.
fn max_abs<const R: usize>(x: &SVector<f64, R>) -> f64 {
    x.iter()
        .map(|c| c.abs())
        .fold(0.0, |m, c| if c > m || c.is_nan() { c } else { m })
}

/// Implements the builders and accessors SHAKE and RATTLE share through their `core`.
macro_rules! shared_builders {
    ($name:ident) => {
        impl<const N: usize, const M: usize> $name<N, M> {
            /// Returns the step size `h`.
            pub fn step_size(&self) -> f64 {
                self.core.h
            }

            /// Returns the Newton tolerance factor `τ`.
            pub fn tolerance(&self) -> f64 {
                self.core.tolerance
            }

            /// Returns the cap on Newton iterations per step.
            pub fn max_iterations(&self) -> usize {
                self.core.max_iterations
            }

            /// Sets the Newton tolerance factor `τ` (default `1e-13`); fails with `BadParameter`
            /// unless it is positive and finite.
            ///
            /// Newton stops when `max_i |g_i(q)| ≤ τ (1 + s)` with `s = max_i Σ_j |G_ij(q)| |q_j|`,
            /// the magnitude of the first-order terms of `g`: `τ` is a relative accuracy, and
            /// values near `f64::EPSILON` may never be met.
            pub fn with_tolerance(mut self, tolerance: f64) -> Result<Self, StepError> {
                self.core = self.core.with_tolerance(tolerance)?;
                Ok(self)
            }

            /// Sets the cap on Newton iterations per step (default 50); fails with
            /// `BadParameter` if it is 0.
            pub fn with_max_iterations(mut self, max_iterations: usize) -> Result<Self, StepError> {
                self.core = self.core.with_max_iterations(max_iterations)?;
                Ok(self)
            }

            /// Forgets the point carried from the last step, so the next step re-evaluates it.
            pub fn reset(&mut self) {
                self.core.carried = None;
            }
        }
    };
}

use shared_builders;
