//! The validated model: plain data holding symbolic expressions, which later stages consume.

use mechanism_capabilities::Family;
use mechanism_cas::{Id, Store};
use syn::{Attribute, Ident, Visibility};

use crate::derivatives::Derivative;
use crate::symbols::Symbols;

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
    /// Holonomic constraints `g_i(q, t) = 0`, in row order.
    pub constraints: Vec<Constraint>,
    /// Nonholonomic rows `A_i(q) v = w_i(t)`, in row order.
    pub nonholonomic: Vec<NonholonomicRow>,
    /// Rayleigh dissipation function `R(q, v)`, if any.
    pub dissipation: Option<Id>,
    /// Generalized forces `f(q, v, t)`, one entry per coordinate, if any.
    pub forces: Option<Vec<Id>>,
    /// The integrators the model is compiled for.
    pub integrators: Vec<Family>,
    /// What `derivatives: [..]` asks for beyond the integrators' needs.
    pub derivatives: Vec<Derivative>,
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
    /// The joint accessors of a robot imported from a URDF file, if any.
    pub robot: Option<crate::urdf::outputs::RobotOutputs>,
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
    /// Doc comments written before the constraint.
    pub docs: Vec<Attribute>,
    /// The row's name.
    pub name: Ident,
    /// The expression `g_i(q, t)`.
    pub expr: Id,
    /// SPOOK's compliance `ε` from `#[spook(epsilon = …)]`, if given.
    pub epsilon: Option<f64>,
    /// SPOOK's relaxation time `τ` from `#[spook(tau = …)]` (seconds) or
    /// `#[spook(tau_steps = …)]` (multiples of the step), if given.
    pub tau: Option<Tau>,
}

/// A relaxation time as written by the user.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tau {
    /// In units of time.
    Seconds(f64),
    /// In multiples of the step size.
    Steps(f64),
}

/// A named nonholonomic row `A_i(q) v = w_i(t)`.
pub struct NonholonomicRow {
    /// Doc comments written before the row.
    pub docs: Vec<Attribute>,
    /// The row's name.
    pub name: Ident,
    /// The row `A_i(q)` of the constraint matrix.
    pub matrix: Vec<Id>,
    /// The driving term `w_i(t)`.
    pub drive: Id,
    /// SPOOK's compliance `γ` from `#[spook(gamma = …)]`, if given.
    pub gamma: Option<f64>,
}

impl Model {
    /// Returns the number of coordinates.
    pub fn dof(&self) -> usize {
        self.coordinates.len()
    }

    /// Returns whether some holonomic constraint depends explicitly on time.
    pub fn rheonomic(&self) -> bool {
        self.constraints
            .iter()
            .any(|c| self.store.depends_on(c.expr, self.symbols.t))
    }

    /// Returns whether the mass matrix depends on the configuration.
    pub fn configuration_dependent_mass(&self) -> bool {
        self.mass
            .iter()
            .flatten()
            .any(|&m| self.symbols.q.iter().any(|&q| self.store.depends_on(m, q)))
    }

    /// Returns whether the model is compiled for `integrator`.
    pub fn uses(&self, integrator: Family) -> bool {
        self.integrators.contains(&integrator)
    }
}
