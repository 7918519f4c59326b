//! Structural checks of the lowered model: constraints and dissipation are what they claim.

use mechanism_cas::{Id, Store};
use syn::Expr;

use crate::ast::Named;
use crate::errors::Errors;
use crate::symbols::Symbols;

/// Checks that a holonomic constraint row depends on the coordinates (velocity uses are
/// reported where they occur, by the caller).
pub fn check_constraint(
    store: &Store,
    symbols: &Symbols,
    row: &Named<Expr>,
    expr: Id,
    errors: &mut Errors,
) {
    let uses_velocities = symbols.v.iter().any(|&v| store.depends_on(expr, v));
    if !uses_velocities && !symbols.q.iter().any(|&q| store.depends_on(expr, q)) {
        errors.error_spanned(
            &row.value,
            format!(
                "constraint `{}` does not depend on the coordinates, so it is either always or never satisfied; remove it or make it a function of the coordinates",
                row.name
            ),
        );
    }
}

/// Checks that a Rayleigh dissipation function depends on the velocities.
pub fn check_dissipation(
    store: &Store,
    symbols: &Symbols,
    expr: &Expr,
    id: Id,
    errors: &mut Errors,
) {
    if !symbols.v.iter().any(|&v| store.depends_on(id, v)) {
        errors.error_spanned(
            expr,
            "the Rayleigh dissipation function does not depend on velocities, so it dissipates nothing; write it in terms of `dot(..)`, e.g. `0.5 * c * dot(x).powi(2)`",
        );
    }
}
