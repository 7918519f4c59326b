//! The names of a model and the symbols its expressions are built from: one symbol per
//! coordinate, velocity, parameter and contraction direction, plus the penalty frequency and
//! the time.

use mechanism_cas::Symbol;
use syn::Ident;

/// What a name in the model refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Name {
    /// The coordinate with this index.
    Coordinate(usize),
    /// The parameter with this index.
    Parameter(usize),
}

/// The symbols a model's expressions are built from.
pub struct Symbols {
    /// Coordinates `q_i`.
    pub q: Vec<Symbol>,
    /// Velocities `v_i = dot(q_i)`.
    pub v: Vec<Symbol>,
    /// Parameters.
    pub p: Vec<Symbol>,
    /// Directions `a_i` of the third-derivative contraction `a·V'''·a`.
    pub a: Vec<Symbol>,
    /// The penalty frequency `ω` of `V + ½ω²|g|²`.
    pub omega: Symbol,
    /// The time `t`.
    pub t: Symbol,
}

impl Symbols {
    /// Creates the symbols of a model with these coordinate and parameter names.
    pub fn new(coordinates: &[Ident], parameters: &[Ident]) -> Self {
        let make = |prefix: &str, names: &[Ident]| -> Vec<Symbol> {
            names
                .iter()
                .map(|name| Symbol::from(format!("{prefix}.{name}")))
                .collect()
        };
        Symbols {
            q: make("q", coordinates),
            v: make("v", coordinates),
            p: make("p", parameters),
            a: make("a", coordinates),
            omega: Symbol::from("penalty.omega"),
            t: Symbol::from("time.t"),
        }
    }
}
