//! Integrators, grouped by family. Each one is generic over the model traits it needs.

mod checks;
pub mod energy_momentum;
pub mod explicit;
pub mod langevin;
pub mod linearly_implicit;
mod mass_factor;
pub mod nonholonomic;
pub mod projection;
pub mod stabilized;

pub use checks::DivergenceGuard;

use crate::error::StepError;
use crate::state::State;

/// Advances a state of a model by one step.
pub trait Integrator<Model, const N: usize> {
    /// Advances `state` by one step; on error `state` is left unchanged.
    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError>;
}

/// What one step cost, for statistics and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepReport {
    /// Linear systems factored in this step.
    pub factorizations: u32,
    /// Newton iterations performed in this step (0 for linearly implicit methods).
    pub newton_iterations: u32,
}
