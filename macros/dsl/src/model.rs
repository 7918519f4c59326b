//! The validated model: plain data holding symbolic expressions, which later stages consume.

use mechanism_cas::{Id, Store};
use syn::{Attribute, Ident, Visibility};

use crate::lower::Symbols;

/// A model that passed validation.
pub struct Model {
    /// Outer attributes (doc comments) of the model.
    pub attrs: Vec<Attribute>,
    /// Visibility of the generated struct.
    pub vis: Visibility,
    /// The model's type name.
    pub name: Ident,
    /// Coordinates, in the order of `q`.
    pub coordinates: Vec<Ident>,
    /// Parameters with their default values.
    pub parameters: Vec<Parameter>,
    /// Holonomic constraints `g_i(q) = 0`, in row order.
    pub constraints: Vec<Constraint>,
    /// Every expression of the model lives here, shared.
    pub store: Store,
    /// The symbols expressions are built from.
    pub symbols: Symbols,
    /// Kinetic energy `T(q, v)`, a quadratic form in `v`.
    pub kinetic: Id,
    /// Mass matrix `M(q) = ∂²T/∂v²`, row-major.
    pub mass: Vec<Vec<Id>>,
    /// Potential energy `V(q)`.
    pub potential: Id,
}

/// A run-time parameter: a field of the generated struct with a default value.
pub struct Parameter {
    /// Attributes (doc comments) written before the parameter.
    pub attrs: Vec<Attribute>,
    /// The parameter's name, also the field's name.
    pub name: Ident,
    /// The default value.
    pub default: f64,
}

/// A named holonomic constraint row.
pub struct Constraint {
    /// Attributes (doc comments) written before the constraint.
    pub attrs: Vec<Attribute>,
    /// The row's name.
    pub name: Ident,
    /// The expression `g_i(q)`.
    pub expr: Id,
}

impl Model {
    /// Returns the number of coordinates.
    pub fn dof(&self) -> usize {
        self.coordinates.len()
    }
}
