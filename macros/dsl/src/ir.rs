//! The one model that every kind of `mechanism!` lowers into, and that every stage after
//! validation takes: a fixed-size model and a model with families differ in data (whether
//! the sizes are known at expansion or at `new`), not in which compiler runs.
//!
//! Each stage dispatches on the size inside: with fixed sizes it works on every coordinate
//! (straight-line code over `q`); with run-time sizes on each family's kernel in its local
//! slots (loops over instances in the generated code).

use crate::family::checks::BodyOf;
use crate::family::model::FamilyModel;
use crate::model::Model;
use crate::plan::Plan;

/// A validated model.
pub enum Ir {
    /// Every size known at expansion: one symbolic expression per coordinate.
    Fixed(Box<Model>),
    /// Sizes known at `new` (`sizes: { N = 10 }`, `x[N]`): one kernel per term and row.
    Runtime {
        /// The resolved families, terms and rows.
        model: Box<FamilyModel>,
        /// The body each kinetic term's velocities belong to (the sparse tier's mass matrix is
        /// block diagonal).
        bodies: Vec<Option<BodyOf>>,
    },
}

impl Ir {
    /// Returns the derived quantities the model's integrators need ([`Plan::new`]).
    pub fn plan(&self) -> Plan {
        match self {
            Ir::Fixed(model) => Plan::for_model(model),
            Ir::Runtime { model, .. } => model.plan(),
        }
    }
}
