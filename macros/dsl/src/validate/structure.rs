//! Structural checks: energies have the form mechanics needs, constraints are what they claim.

use std::collections::HashMap;

use mechanism_cas::{eval, hessian, Id, Store, Symbol};
use syn::{Expr, Ident};

use crate::ast::Named;
use crate::errors::Errors;
use crate::lower::{Context, Lowerer, Symbols};

/// The energy of a model in the form the integrators use: `T = ½ vᵀ M(q) v`, `V(q)`.
pub struct Energy {
    /// Kinetic energy `T(q, v)`.
    pub kinetic: Id,
    /// Mass matrix `M(q)`.
    pub mass: Vec<Vec<Id>>,
    /// Potential energy `V(q)`.
    pub potential: Id,
}

/// Lowers the energy sections and checks that they describe `L = T − V` with `T` quadratic in
/// the velocities. `None` when an error was recorded.
pub fn lower_energy(
    lowerer: &mut Lowerer,
    model_name: &Ident,
    kinetic: Option<&Expr>,
    potential: Option<&Expr>,
    lagrangian: Option<&Expr>,
) -> Option<Energy> {
    let symbols = lowerer.symbols;
    match (kinetic, potential, lagrangian) {
        (Some(_), _, Some(lagrangian)) | (_, Some(_), Some(lagrangian)) => {
            lowerer.errors.error_spanned(
                lagrangian,
                "give either a `lagrangian` or `kinetic` and `potential` energies, not both",
            );
            None
        }
        (None, None, None) => {
            lowerer.errors.error_spanned(
                model_name,
                "a mechanism needs its energy; add `kinetic:` and `potential:`, or a `lagrangian:`",
            );
            None
        }
        (None, Some(potential), None) => {
            lowerer.lower(potential, Context::Dynamic);
            lowerer.errors.error_spanned(
                model_name,
                "this mechanism has a potential but no kinetic energy; add `kinetic:`",
            );
            None
        }
        (Some(kinetic_expr), potential_expr, None) => {
            let kinetic = lowerer.lower(kinetic_expr, Context::Dynamic);
            let potential = match potential_expr {
                Some(expr) => lowerer.lower(expr, Context::Dynamic),
                None => Some(lowerer.store.num(0.0)),
            };
            let (kinetic, potential) = (kinetic?, potential?);
            if let Some(expr) = potential_expr {
                if symbols
                    .v
                    .iter()
                    .any(|&v| lowerer.store.depends_on(potential, v))
                {
                    lowerer.errors.error_spanned(
                        expr,
                        "the potential energy depends on velocities; move velocity-dependent terms into `kinetic`, or write a `lagrangian`",
                    );
                    return None;
                }
            }
            let mass = mass_matrix(lowerer, kinetic, kinetic_expr, "kinetic energy")?;
            let quadratic = quadratic_form(lowerer.store, symbols, &mass);
            if !agree(lowerer.store, symbols, kinetic, quadratic) {
                lowerer.errors.error_spanned(
                    kinetic_expr,
                    "the kinetic energy is not a quadratic form ½ vᵀ M(q) v in the velocities; remove terms that are constant or linear in `dot(..)`",
                );
                return None;
            }
            Some(Energy {
                kinetic,
                mass,
                potential,
            })
        }
        (None, None, Some(lagrangian_expr)) => {
            let lagrangian = lowerer.lower(lagrangian_expr, Context::Dynamic)?;
            let mass = mass_matrix(lowerer, lagrangian, lagrangian_expr, "lagrangian")?;
            let zero = lowerer.store.num(0.0);
            let at_rest: HashMap<Symbol, Id> = symbols.v.iter().map(|&v| (v, zero)).collect();
            let minus_potential = lowerer.store.substitute(lagrangian, &at_rest);
            let potential = lowerer.store.neg(minus_potential);
            let kinetic = quadratic_form(lowerer.store, symbols, &mass);
            let split = lowerer.store.sub(kinetic, potential);
            if !agree(lowerer.store, symbols, lagrangian, split) {
                lowerer.errors.error_spanned(
                    lagrangian_expr,
                    "the lagrangian is not of the form ½ vᵀ M(q) v − V(q); terms linear in velocities (gyroscopic) are not supported yet",
                );
                return None;
            }
            Some(Energy {
                kinetic,
                mass,
                potential,
            })
        }
    }
}

/// Returns `∂²f/∂v²`, reporting an error if it depends on the velocities.
fn mass_matrix(lowerer: &mut Lowerer, f: Id, expr: &Expr, what: &str) -> Option<Vec<Vec<Id>>> {
    let symbols = lowerer.symbols;
    let mass = hessian(lowerer.store, f, &symbols.v);
    let depends_on_velocity = mass
        .iter()
        .flatten()
        .any(|&m| symbols.v.iter().any(|&v| lowerer.store.depends_on(m, v)));
    if depends_on_velocity {
        lowerer.errors.error_spanned(
            expr,
            format!("the {what} is not quadratic in the velocities: its second derivative with respect to `dot(..)` still depends on velocities"),
        );
        return None;
    }
    Some(mass)
}

/// Builds `½ vᵀ M v`.
fn quadratic_form(store: &mut Store, symbols: &Symbols, mass: &[Vec<Id>]) -> Id {
    let mut terms = Vec::new();
    for (i, row) in mass.iter().enumerate() {
        for (j, &m) in row.iter().enumerate() {
            if store.is_zero(m) {
                continue;
            }
            let vi = store.symbol(symbols.v[i]);
            let vj = store.symbol(symbols.v[j]);
            let vivj = store.mul(vi, vj);
            terms.push(store.mul(m, vivj));
        }
    }
    let sum = store.sum(terms);
    let half = store.num(0.5);
    store.mul(half, sum)
}

/// Returns whether two expressions agree numerically at pseudo-random points where both are
/// defined. Used to check identities that structural comparison cannot decide.
fn agree(store: &Store, symbols: &Symbols, a: Id, b: Id) -> bool {
    let mut rng = SplitMix64(0x6d65_6368_616e_6973);
    for _ in 0..8 {
        let mut values: HashMap<Symbol, f64> = HashMap::new();
        for &s in symbols.q.iter().chain(&symbols.v) {
            values.insert(s, rng.uniform(-1.3, 1.3));
        }
        for &s in &symbols.p {
            values.insert(s, rng.uniform(0.5, 1.5));
        }
        let env = |s: Symbol| values.get(&s).copied();
        let (Ok(x), Ok(y)) = (eval(store, a, &env), eval(store, b, &env)) else {
            continue;
        };
        if !(x.is_finite() && y.is_finite()) {
            continue;
        }
        if (x - y).abs() > 1e-9 * (1.0 + x.abs().max(y.abs())) {
            return false;
        }
    }
    // Where the expressions are nowhere defined at the sample points there is no evidence
    // against the identity; the generated code then reports non-finite values at run time.
    true
}

/// Checks one holonomic constraint row: it must depend on coordinates and not on velocities.
pub fn check_constraint(
    store: &Store,
    symbols: &Symbols,
    row: &Named<Expr>,
    expr: Id,
    errors: &mut Errors,
) {
    if symbols.v.iter().any(|&v| store.depends_on(expr, v)) {
        errors.error_spanned(
            &row.value,
            format!(
                "holonomic constraint `{}` depends on velocities; a holonomic constraint is a function of the coordinates only",
                row.name
            ),
        );
    } else if !symbols.q.iter().any(|&q| store.depends_on(expr, q)) {
        errors.error_spanned(
            &row.value,
            format!(
                "constraint `{}` does not depend on the coordinates, so it is either always or never satisfied; remove it or make it a function of the coordinates",
                row.name
            ),
        );
    }
}

/// A small deterministic generator, so that a model compiles to the same code every time.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn uniform(&mut self, low: f64, high: f64) -> f64 {
        let unit = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        low + (high - low) * unit
    }
}
