//! Projection methods for holonomic constraints: SHAKE and RATTLE, on both tiers.
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
//!
//! # One scheme, two tiers
//!
//! [`ShakeScheme`] and [`RattleScheme`] are written once, on slices, over a
//! [`ProjectionSystem`]: the Newton iteration and its tolerance rule, the predictor, the kicks,
//! the velocity projection, the multipliers, the reuse of the point carried from the last step,
//! the `OffManifold` test and keeping the state unchanged on failure are all here. A system
//! knows only the tier's storage and linear algebra: how to evaluate `g`, `G`, `−M⁻¹∇V` and
//! `M⁻¹Gᵀ` at a configuration, apply `G` and `M⁻¹Gᵀ` to vectors, and factor and solve the two
//! matrices of a step through [`LinearSolver`](crate::linalg::LinearSolver):
//!
//! - [`ProjectionDense`], the fixed-size tier ([`Shake`], [`Rattle`]): stack matrices, an `LU`
//!   with partial pivoting of the Newton matrix and a Cholesky factorization of `G M⁻¹ Gᵀ`;
//! - [`ProjectionSparse`], the sparse tier ([`SparseShake`], [`SparseRattle`]): a
//!   block-diagonal `M` factored per body, `G` and `M⁻¹Gᵀ` stored per body, and a sparse `LU`
//!   without pivoting ([`SparseLu`](crate::linalg::SparseLu)) of both matrices on the pattern
//!   of `G M⁻¹ Gᵀ`, analysed once.
//!
//! Why a shared scheme over a seam rather than the fixed-size tier expressed through the sparse
//! traits: as for [`SpookScheme`](crate::integrators::linearly_implicit::SpookScheme), what
//! differs between the tiers is only how the matrices are stored and factored; small models
//! keep stack arrays (no heap, no pattern, pivoting LU), large ones a pattern analysed once.
//! Both tiers are checked against each other step by step in
//! `runtime/tests/it/sparse_projection/tiers.rs`.

pub(crate) mod dense;
mod jacobian;
mod rattle;
mod shake;
pub(crate) mod sparse;
mod sparse_jacobian;
mod sparse_linearization;
pub(crate) mod system;

pub(crate) use dense::ProjectionDense;
pub use rattle::{Rattle, RattleScheme, SparseRattle};
pub use shake::{Shake, ShakeScheme, SparseShake};
pub(crate) use sparse::ProjectionSparse;
pub(crate) use system::{Point, ProjectionAcceleration, ProjectionModel, ProjectionSystem};

use super::checks::{check_finite_slice, check_residual_on_manifold, check_step_size};
use crate::error::StepError;
use crate::integrators::{Newton, TierVector};

/// The default Newton tolerance factor `τ` (see [`ShakeScheme::with_tolerance`]).
const DEFAULT_TOLERANCE: f64 = 1e-13;

/// The default cap on Newton iterations per step.
const DEFAULT_MAX_ITERATIONS: usize = 50;

/// The name of the Newton matrix, for errors.
const NEWTON_MATRIX: &str = "Newton matrix G(q) M⁻¹ G(q_k)ᵀ";

/// The name of the velocity projection's matrix, for errors.
const PROJECTION_MATRIX: &str = "G M⁻¹ Gᵀ";

/// What SHAKE and RATTLE share: parameters, the system, the carried point and the Newton
/// iteration's buffers.
#[derive(Clone, Debug)]
struct Projection<S: ProjectionSystem> {
    h: f64,
    newton: Newton,
    system: S,
    /// Whether the system's start point is that of `(carried_t, carried_q)`.
    carried: bool,
    carried_t: f64,
    carried_q: S::Coordinates,
    /// The predictor `q̃`, the Newton iterate `q⁽ⁱ⁾` (finally `q_{k+1}`) and `M⁻¹Gᵀ μ`.
    predictor: S::Coordinates,
    trial: S::Coordinates,
    direction: S::Coordinates,
    /// The scaled multipliers `μ` and the Newton update.
    mu: S::Rows,
    delta: S::Rows,
}

impl<S> Copy for Projection<S>
where
    S: ProjectionSystem + Copy,
    S::Coordinates: Copy,
    S::Rows: Copy,
{
}

impl<S: ProjectionSystem> Projection<S> {
    fn new(h: f64, system: S) -> Result<Self, StepError> {
        Ok(Projection {
            h: check_step_size(h)?,
            newton: Newton::preset(DEFAULT_TOLERANCE, DEFAULT_MAX_ITERATIONS),
            carried: false,
            carried_t: 0.0,
            carried_q: system.zero_coordinates(),
            predictor: system.zero_coordinates(),
            trial: system.zero_coordinates(),
            direction: system.zero_coordinates(),
            mu: system.zero_rows(),
            delta: system.zero_rows(),
            system,
        })
    }

    /// Makes the system's start point that of `(q, t)`: the carried one if it was computed at
    /// exactly this `q` and `t`, else a fresh evaluation; returns the factorizations it took. A
    /// fresh state off the constraint manifold (beyond the Newton tolerance) is `OffManifold`.
    fn start<Model: ?Sized>(&mut self, model: &Model, q: &[f64], t: f64) -> Result<u32, StepError>
    where
        S: ProjectionModel<Model>,
    {
        if self.carried
            && self.carried_t.to_bits() == t.to_bits()
            && same_bits(self.carried_q.as_slice(), q)
        {
            return Ok(0);
        }
        self.carried = false;
        // A state this integrator did not produce must already satisfy g(q) = 0.
        self.system.evaluate(model, Point::Start, q, t);
        self.system.check_jacobian(t)?;
        let scale = self.system.first_order_scale(Point::Start, q);
        check_residual_on_manifold(self.system.residual(), scale, self.newton.tolerance(), t)?;
        self.system.complete(model, Point::Start, q, t)
    }

    /// Solves `g(q̃ − M⁻¹ G(q_k)ᵀ μ, t_next) = 0` for `μ` by Newton's method from `μ = 0`,
    /// `q̃` being `predictor`; leaves `q_{k+1}` in `trial`, `μ` in `mu` and `G(q_{k+1})` in the
    /// system's end point; returns the number of iterations.
    ///
    /// With `q⁽ⁱ⁾ = q̃ − M⁻¹ G(q_k)ᵀ μ⁽ⁱ⁾`, each iteration solves
    ///
    /// ```text
    /// G(q⁽ⁱ⁾) M⁻¹ G(q_k)ᵀ Δμ = g(q⁽ⁱ⁾),    μ⁽ⁱ⁺¹⁾ = μ⁽ⁱ⁾ + Δμ
    /// ```
    ///
    /// (the matrix is not symmetric once `q⁽ⁱ⁾ ≠ q_k`). It stops when
    /// `max_i |g_i(q⁽ⁱ⁾)| ≤ τ (1 + s)`, `s = max_i Σ_j |G_ij(q⁽ⁱ⁾)| |q⁽ⁱ⁾_j|` (the size of the
    /// first-order terms of `g`, which sets its rounding error), and fails with
    /// `NewtonDiverged` after `max_iterations` iterations or on a non-finite residual.
    fn project<Model: ?Sized>(
        &mut self,
        model: &Model,
        t_next: f64,
        t_err: f64,
    ) -> Result<u32, StepError>
    where
        S: ProjectionModel<Model>,
    {
        let trial = self.trial.as_mut_slice();
        trial.copy_from_slice(self.predictor.as_slice());
        self.mu.as_mut_slice().fill(0.0);
        let mut iterations = 0u32;
        loop {
            let trial = self.trial.as_mut_slice();
            self.system.evaluate(model, Point::End, trial, t_next);
            let residual = max_abs(self.system.residual());
            let scale = self.system.first_order_scale(Point::End, trial);
            if residual <= self.newton.tolerance() * (1.0 + scale) {
                self.system.check_jacobian(t_err)?;
                return Ok(iterations);
            }
            if !residual.is_finite() || iterations as usize >= self.newton.max_iterations() {
                return Err(StepError::NewtonDiverged {
                    iterations: iterations as usize,
                    residual,
                    t: t_err,
                });
            }
            let delta = self.delta.as_mut_slice();
            delta.copy_from_slice(self.system.residual());
            self.system.solve_newton(delta, t_err)?;
            for (mu, delta) in self.mu.as_mut_slice().iter_mut().zip(delta.iter()) {
                *mu += delta;
            }
            let direction = self.direction.as_mut_slice();
            self.system
                .constraint_direction(Point::Start, self.mu.as_slice(), direction);
            for ((q, predictor), d) in self
                .trial
                .as_mut_slice()
                .iter_mut()
                .zip(self.predictor.as_slice())
                .zip(direction.iter())
            {
                *q = predictor - d;
            }
            iterations += 1;
        }
    }

    /// Writes `out = base + a h_a − M⁻¹ G(q_k)ᵀ (μ c)` (`a` the acceleration at `q_k`): the
    /// half-step velocity `v_{k+½} = (q_{k+1} − q_k)/h` of both schemes, without the
    /// cancellation of that difference. Uses `delta` and `direction` as scratch.
    fn half_step_velocity(&mut self, base: &[f64], h_a: f64, c: f64, out: &mut [f64]) {
        for (d, mu) in self.delta.as_mut_slice().iter_mut().zip(self.mu.as_slice()) {
            *d = mu * c;
        }
        let direction = self.direction.as_mut_slice();
        self.system
            .constraint_direction(Point::Start, self.delta.as_slice(), direction);
        let a = self.system.acceleration(Point::Start);
        for (((out, base), a), d) in out.iter_mut().zip(base).zip(a).zip(direction.iter()) {
            *out = base + a * h_a - d;
        }
    }

    /// Ends a successful step at `(q, t)`: the end point becomes the carried start point.
    fn carry(&mut self, q: &[f64], t: f64) {
        self.system.carry();
        self.carried_q.as_mut_slice().copy_from_slice(q);
        self.carried_t = t;
        self.carried = true;
    }

    /// Checks the predictor `q̃` (written by the caller) for non-finite components.
    fn check_predictor(&self, t: f64) -> Result<(), StepError> {
        check_finite_slice(self.predictor.as_slice(), "q", t)
    }

    /// Returns the identity of the scheme `name` on this core's tier and settings.
    fn identity(&self, name: &str) -> crate::checkpoint::IntegratorIdentity {
        let tier = crate::checkpoint::short_type_name::<S>();
        let arguments = &tier[tier.find('<').unwrap_or(tier.len())..];
        crate::checkpoint::IntegratorIdentity::new(format!(
            "{name}<{}{arguments}>",
            S::CHECKPOINT_NAME
        ))
        .setting("h", self.h)
        .setting("tolerance", self.newton.tolerance())
        .setting("max_iterations", self.newton.max_iterations() as f64)
    }
}

/// Returns whether `a` and `b` are equal bit for bit.
fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// Returns `max_i |x_i|`, or NaN if any component is NaN.
fn max_abs(x: &[f64]) -> f64 {
    x.iter()
        .map(|c| c.abs())
        .fold(0.0, |m, c| if c > m || c.is_nan() { c } else { m })
}

/// Implements the builders and accessors SHAKE and RATTLE share through their `core`, but for
/// Newton's ([`newton_builders!`](crate::integrators::newton)).
macro_rules! projection_builders {
    ($name:ident) => {
        impl<S: ProjectionSystem> $name<S> {
            /// Returns the step size `h`.
            pub fn step_size(&self) -> f64 {
                self.core.h
            }

            /// Forgets the point carried from the last step, so the next step re-evaluates it.
            pub fn reset(&mut self) {
                self.core.carried = false;
            }

            /// Returns the tier's system (storage and linear algebra).
            pub fn system(&self) -> &S {
                &self.core.system
            }
        }
    };
}

use projection_builders;

/// Restores the rows `name` of `from` into `rows`, checking the length first.
fn restore_rows(
    from: &crate::checkpoint::Carried,
    name: &str,
    rows: &mut [f64],
) -> Result<(), crate::checkpoint::CheckpointError> {
    let values = from.values(name, rows.len())?;
    rows.copy_from_slice(values);
    Ok(())
}

/// The stopping rule of SHAKE's and RATTLE's Newton iteration, for the docs of their builders.
macro_rules! tolerance_rule {
    () => {
        "Newton stops when `max_i |g_i(q)| ≤ τ (1 + s)` with `s = max_i Σ_j |G_ij(q)| |q_j|`, the magnitude of the first-order terms of `g`: `τ` is a relative accuracy, and values near `f64::EPSILON` may never be met."
    };
}

use tolerance_rule;
