//! The seam kit: what an integrator author implements or names to put a scheme on a tier.
//!
//! A user of the crate never needs this module: models implement the capability traits of
//! [`model`](crate::model), and the integrators are named at the crate root. An author of an
//! integrator that serves both tiers writes the scheme once over a small system trait and
//! implements it for each tier, with the tier's linear algebra behind
//! [`LinearSolver`](crate::linalg::LinearSolver):
//!
//! | scheme | system trait(s) | fixed-size tier | sparse tier |
//! | --- | --- | --- | --- |
//! | [`SpookScheme`](crate::integrators::linearly_implicit::SpookScheme) | [`SpookSystem`], [`SpookOverrides`] | [`SpookDense`] | [`SpookSparse`] |
//! | [`ShakeScheme`](crate::integrators::projection::ShakeScheme), [`RattleScheme`](crate::integrators::projection::RattleScheme) | [`ProjectionSystem`], [`ProjectionModel`], [`ProjectionAcceleration`] | [`ProjectionDense`] | [`ProjectionSparse`] |
//! | [`CarriedScheme`](crate::integrators::linearly_implicit::CarriedScheme) | [`CarriedTier`], [`AccelerationRule`] and the rules' [`EnergyTerms`], [`MassSolve`], [`ImplicitSolve`], [`NewtonIterate`], [`ThirdContraction`], [`SparseHessian`] | [`CarriedDense`] | [`CarriedSparse`] |
//! | [`NewmarkScheme`](crate::integrators::linearly_implicit::NewmarkScheme) | [`NewmarkCorrector`], [`NewmarkCheckpoint`], [`NewmarkSystem`] and the correctors' [`NewtonIterate`] | [`CarriedDense`] | [`CarriedSparse`] |
//! | [`RkScheme`](crate::integrators::stabilized::RkScheme) | [`IndexOneTier`], [`IndexOneSystem`] | [`IndexOneDense`] | [`IndexOneSparse`] |
//!
//! A system of a tier is named `<Family>Dense` or `<Family>Sparse`; its buffers are a tier's
//! [`TierVector`]; a Newton iteration takes its settings from one
//! [`Newton`](crate::integrators::Newton). What an integrator carries between steps is saved
//! through [`CarriedState`](crate::checkpoint::CarriedState).

pub use crate::integrators::linearly_implicit::carried::dense::CarriedDense;
pub use crate::integrators::linearly_implicit::carried::sparse::{CarriedSparse, SparseHessian};
pub use crate::integrators::linearly_implicit::carried::{
    AccelerationRule, CarriedTier, EnergyTerms, ImplicitSolve, MassSolve, NewmarkSystem,
    NewtonIterate, RuleDefaults, RuleName, ThirdContraction, UsesBeta,
};
pub use crate::integrators::linearly_implicit::newmark::{NewmarkCheckpoint, NewmarkCorrector};
pub use crate::integrators::linearly_implicit::spook::dense::SpookDense;
pub use crate::integrators::linearly_implicit::spook::sparse::SpookSparse;
pub use crate::integrators::linearly_implicit::spook::{SpookOverrides, SpookRows, SpookSystem};
pub use crate::integrators::projection::dense::ProjectionDense;
pub use crate::integrators::projection::sparse::ProjectionSparse;
pub use crate::integrators::projection::system::{
    Point, ProjectionAcceleration, ProjectionModel, ProjectionSystem,
};
pub use crate::integrators::stabilized::dense::IndexOneDense;
pub use crate::integrators::stabilized::runge_kutta::{IndexOneSystem, IndexOneTier};
pub use crate::integrators::stabilized::sparse::IndexOneSparse;
pub use crate::integrators::tier::TierVector;
