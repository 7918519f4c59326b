//! Per-row options written as attributes: `#[spook(epsilon = 1e-6, tau = 0.05)]` on holonomic
//! rows, `#[spook(gamma = 1e-6)]` on nonholonomic rows. Doc comments pass through to rustdoc.

use syn::{Attribute, Expr};

use crate::expr::{Context, Lowerer};
use crate::model::Tau;

/// The options of one row.
#[derive(Default)]
pub struct RowOptions {
    /// Doc comments.
    pub docs: Vec<Attribute>,
    /// SPOOK compliance `ε`.
    pub epsilon: Option<f64>,
    /// SPOOK relaxation time `τ`.
    pub tau: Option<Tau>,
    /// SPOOK nonholonomic compliance `γ`.
    pub gamma: Option<f64>,
}

/// Reads the attributes of a row; `allowed` lists the `spook(..)` keys this kind of row takes.
pub fn row_options(attrs: &[Attribute], allowed: &[&str], lowerer: &mut Lowerer) -> RowOptions {
    let mut options = RowOptions::default();
    for attr in attrs {
        if attr.path().is_ident("doc") {
            options.docs.push(attr.clone());
            continue;
        }
        if !attr.path().is_ident("spook") {
            lowerer.errors.error_spanned(
                attr,
                format!(
                    "unknown attribute on a row; rows take doc comments and `#[spook({} = …)]`",
                    allowed.join(" = …, ")
                ),
            );
            continue;
        }
        let parsed = attr.parse_nested_meta(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(|i| i.to_string())
                .unwrap_or_default();
            if !allowed.contains(&key.as_str()) {
                return Err(meta.error(format!(
                    "unknown SPOOK option `{key}` for this row; expected one of: {}",
                    allowed.join(", ")
                )));
            }
            let expr: Expr = meta.value()?.parse()?;
            let Some(value) = constant(&expr, lowerer) else {
                return Ok(());
            };
            if !(value.is_finite() && value >= 0.0) {
                lowerer.errors.error_spanned(
                    &expr,
                    format!("`{key}` must be a finite, non-negative number"),
                );
                return Ok(());
            }
            match key.as_str() {
                "epsilon" => options.epsilon = Some(value),
                "tau" => options.tau = Some(Tau::Seconds(value)),
                "tau_steps" => options.tau = Some(Tau::Steps(value)),
                _ => options.gamma = Some(value),
            }
            Ok(())
        });
        if let Err(error) = parsed {
            lowerer.errors.push(error);
        }
    }
    options
}

/// Evaluates a constant expression, reporting an error if it is not one.
fn constant(expr: &Expr, lowerer: &mut Lowerer) -> Option<f64> {
    let id = lowerer.lower(expr, Context::Constant)?;
    match mechanism_cas::eval(lowerer.store, id, &|_| None) {
        Ok(value) => Some(value),
        Err(_) => {
            lowerer.errors.error_spanned(expr, "expected a number");
            None
        }
    }
}
