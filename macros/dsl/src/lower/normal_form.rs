//! The normal form a fixed-size model is lowered into, the form every later stage and the
//! runtime's model traits use: `T = ½ vᵀ M(q) v` and `V(q)` from `kinetic` and `potential`
//! (or from a `lagrangian` `L = T − V`), and each nonholonomic row as `A(q) v − w(t)`. A part
//! that cannot be put in this form is reported here, at the user's tokens, as a lowering error.

use std::collections::HashMap;

use mechanism_cas::{gradient, hessian, Id, Store, Symbol};
use quote::ToTokens;
use syn::{Expr, Ident};

use crate::ast::Named;
use crate::errors::Errors;
use crate::expr::{Context, Lowerer};
use crate::sample::agree;
use crate::symbols::Symbols;

/// The energy of a model in the form the integrators use: `T = ½ vᵀ M(q) v`, `V(q)`.
pub struct Energy {
    /// Kinetic energy `T(q, v)`.
    pub kinetic: Id,
    /// Mass matrix `M(q)`.
    pub mass: Vec<Vec<Id>>,
    /// Potential energy `V(q)`.
    pub potential: Id,
}

/// The energies of a robot imported from a URDF file ([`crate::urdf`]), already in the
/// model's store.
pub struct Imported {
    /// The robot's kinetic energy.
    pub kinetic: Id,
    /// The robot's potential energy.
    pub potential: Id,
    /// The file literal, where errors about the robot's energy point.
    pub file: syn::LitStr,
}

/// Lowers the energy sections and checks that they describe `L = T − V` with `T` quadratic in
/// the velocities; the energies of an imported robot are added to them. `None` when an error
/// was recorded.
pub fn lower_energy(
    lowerer: &mut Lowerer,
    model_name: &Ident,
    kinetic: Option<&Expr>,
    potential: Option<&Expr>,
    lagrangian: Option<&Expr>,
    imported: Option<&Imported>,
) -> Option<Energy> {
    let symbols = lowerer.symbols;
    if let Some(imported) = imported {
        return with_robot(lowerer, kinetic, potential, lagrangian, imported);
    }
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
                reject_velocities(lowerer, potential, expr)?;
            }
            quadratic_energy(lowerer, kinetic, potential, kinetic_expr)
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

/// The energy of a model that imports a robot: the user's `kinetic` and `potential`, if any,
/// plus the robot's; a `lagrangian` beside a robot is an error.
fn with_robot(
    lowerer: &mut Lowerer,
    kinetic: Option<&Expr>,
    potential: Option<&Expr>,
    lagrangian: Option<&Expr>,
    imported: &Imported,
) -> Option<Energy> {
    if let Some(lagrangian) = lagrangian {
        lowerer.errors.error_spanned(
            lagrangian,
            "a model that imports a robot adds its own terms to the robot's energies with              `kinetic` and `potential`, not with a `lagrangian`",
        );
        return None;
    }
    let user_kinetic = match kinetic {
        Some(expr) => lowerer.lower(expr, Context::Dynamic),
        None => Some(lowerer.store.num(0.0)),
    };
    let user_potential = match potential {
        Some(expr) => lowerer.lower(expr, Context::Dynamic),
        None => Some(lowerer.store.num(0.0)),
    };
    let (user_kinetic, user_potential) = (user_kinetic?, user_potential?);
    if let Some(expr) = potential {
        reject_velocities(lowerer, user_potential, expr)?;
    }
    let total_kinetic = lowerer.store.add(user_kinetic, imported.kinetic);
    let total_potential = lowerer.store.add(user_potential, imported.potential);
    let at: &dyn ToTokens = match kinetic {
        Some(expr) => expr,
        None => &imported.file,
    };
    quadratic_energy(lowerer, total_kinetic, total_potential, at)
}

/// Reports a potential energy `potential` (written at `expr`) that depends on velocities.
fn reject_velocities(lowerer: &mut Lowerer, potential: Id, expr: &Expr) -> Option<()> {
    if lowerer
        .symbols
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
    Some(())
}

/// The energy with kinetic energy `kinetic` (written at `at`) and potential `potential`,
/// checking that `kinetic` is a quadratic form `½ vᵀ M(q) v`.
fn quadratic_energy(
    lowerer: &mut Lowerer,
    kinetic: Id,
    potential: Id,
    at: &dyn ToTokens,
) -> Option<Energy> {
    let symbols = lowerer.symbols;
    let mass = mass_matrix(lowerer, kinetic, at, "kinetic energy")?;
    let quadratic = quadratic_form(lowerer.store, symbols, &mass);
    if !agree(lowerer.store, symbols, kinetic, quadratic) {
        lowerer.errors.error_spanned(
            at,
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

/// Returns `∂²f/∂v²`, reporting an error if it depends on the velocities.
fn mass_matrix(
    lowerer: &mut Lowerer,
    f: Id,
    expr: &dyn ToTokens,
    what: &str,
) -> Option<Vec<Vec<Id>>> {
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

/// Splits a nonholonomic row `a(q, v, t)` into `A(q)` and `w(t)` with `a = A(q) v − w(t)`,
/// reporting rows that are not of that form.
pub fn split_nonholonomic(
    store: &mut Store,
    symbols: &Symbols,
    row: &Named<Expr>,
    expr: Id,
    errors: &mut Errors,
) -> Option<(Vec<Id>, Id)> {
    let matrix = gradient(store, expr, &symbols.v);
    if matrix.iter().all(|&a| store.is_zero(a)) {
        errors.error_spanned(
            &row.value,
            format!(
                "nonholonomic row `{}` does not depend on velocities; a constraint on positions belongs in `holonomic`",
                row.name
            ),
        );
        return None;
    }
    if matrix
        .iter()
        .any(|&a| symbols.v.iter().any(|&v| store.depends_on(a, v)))
    {
        errors.error_spanned(
            &row.value,
            format!(
                "nonholonomic row `{}` is not linear in the velocities; write it as A(q)·v − w(t), e.g. `dot(x) - r * dot(phi)`",
                row.name
            ),
        );
        return None;
    }
    if matrix.iter().any(|&a| store.depends_on(a, symbols.t)) {
        errors.error_spanned(
            &row.value,
            format!(
                "the velocity coefficients of nonholonomic row `{}` depend on time; only the driving term w(t) may",
                row.name
            ),
        );
        return None;
    }
    let zero = store.num(0.0);
    let at_rest: HashMap<Symbol, Id> = symbols.v.iter().map(|&v| (v, zero)).collect();
    let offset = store.substitute(expr, &at_rest);
    if symbols.q.iter().any(|&q| store.depends_on(offset, q)) {
        errors.error_spanned(
            &row.value,
            format!(
                "the driving term of nonholonomic row `{}` (its part without velocities) depends on the coordinates; it may depend on time `t` and parameters only",
                row.name
            ),
        );
        return None;
    }
    let drive = store.neg(offset);
    Some((matrix, drive))
}
