//! The seam of SHAKE and RATTLE: what a tier provides (storage, `G`, `M⁻¹`, the Newton
//! matrix) so that the two schemes are written once for both tiers.

use crate::error::StepError;
use crate::integrators::TierVector;

/// One of the two configurations a step evaluates: `q_k` (carried from the last step when it
/// ended there) and the Newton iterate, which becomes `q_{k+1}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Point {
    /// `q_k`.
    Start,
    /// The Newton iterate `q⁽ⁱ⁾`, and finally `q_{k+1}`.
    End,
}

/// The storage and linear algebra of SHAKE and RATTLE on one tier: the seam between the
/// schemes and a backend of [`linalg`](crate::linalg). The model-dependent half is
/// [`ProjectionModel`].
///
/// A system holds, for each [`Point`], `G` and, once [completed](ProjectionModel::complete),
/// the acceleration `−M⁻¹∇V` and `M⁻¹Gᵀ` there, plus `g` of its last evaluation.
pub trait ProjectionSystem {
    /// An `n`-vector (coordinates) of the tier.
    type Coordinates: TierVector;
    /// An `m`-vector (constraint rows) of the tier.
    type Rows: TierVector;
    /// The tier's name in checkpoint identities, kept as it was when checkpoints were
    /// introduced (`DenseProjection`, `SparseProjection`) so that a renamed type still resumes
    /// the checkpoints written before.
    const CHECKPOINT_NAME: &'static str;

    /// Returns a zero `n`-vector (called at construction only).
    fn zero_coordinates(&self) -> Self::Coordinates;

    /// Returns a zero `m`-vector (called at construction only).
    fn zero_rows(&self) -> Self::Rows;

    /// Returns `g` of the last [`evaluate`](ProjectionModel::evaluate).
    fn residual(&self) -> &[f64];

    /// Returns `s = max_i Σ_j |G_ij| |q_j|` for `G` of `point` (the size of the first-order
    /// terms of `g`, which sets its rounding error).
    fn first_order_scale(&mut self, point: Point, q: &[f64]) -> f64;

    /// Returns `NonFinite` unless `G` of the last evaluation is finite.
    fn check_jacobian(&self, t: f64) -> Result<(), StepError>;

    /// Returns the acceleration `−M⁻¹∇V` at a completed `point`.
    fn acceleration(&self, point: Point) -> &[f64];

    /// Writes `M⁻¹ G(point)ᵀ y` into `out` (`point` completed).
    fn constraint_direction(&self, point: Point, y: &[f64], out: &mut [f64]);

    /// Writes `G(point) x` into `out`.
    fn jacobian_times(&self, point: Point, x: &[f64], out: &mut [f64]);

    /// Overwrites `rhs` with `(G(End) M⁻¹ G(Start)ᵀ)⁻¹ rhs`: one Newton step.
    fn solve_newton(&mut self, rhs: &mut [f64], t: f64) -> Result<(), StepError>;

    /// Overwrites `rhs` with `(G M⁻¹ Gᵀ)⁻¹ rhs` at the completed end point.
    fn solve_projection(&mut self, rhs: &mut [f64], t: f64) -> Result<(), StepError>;

    /// Makes the end point the start point of the next step.
    fn carry(&mut self);
}

/// The model-dependent half of a [`ProjectionSystem`]: evaluations of a model of the tier.
pub trait ProjectionModel<Model: ?Sized>: ProjectionSystem {
    /// Evaluates `g(q, t)` (kept as the [`residual`](ProjectionSystem::residual)) and
    /// `G(q, t)` of `point`.
    fn evaluate(&mut self, model: &Model, point: Point, q: &[f64], t: f64);

    /// Completes `point`, whose `G` was evaluated at `q`: checks `G`, evaluates `−M⁻¹∇V(q)` and
    /// `M⁻¹Gᵀ`; returns the factorizations it took. `t` is the time reported in errors.
    fn complete(
        &mut self,
        model: &Model,
        point: Point,
        q: &[f64],
        t: f64,
    ) -> Result<u32, StepError>;
}

/// The unconstrained acceleration of a model of the tier, which SHAKE's start
/// ([`ShakeScheme::stagger_velocity`](super::ShakeScheme::stagger_velocity)) needs without the constraints.
pub trait ProjectionAcceleration<Model: ?Sized>: ProjectionSystem {
    /// Writes `−M(q)⁻¹ ∇V(q)` into `out`; returns the factorizations it took.
    fn acceleration_at(
        &mut self,
        model: &Model,
        q: &[f64],
        t: f64,
        out: &mut [f64],
    ) -> Result<u32, StepError>;
}
