//! A pair sum's optional smooth cutoff, `sum(0..N, |i, j| body, cutoff(r = …, on = r_on,
//! off = r_off))`: its parsing and the check of its switching distance. The run-time product
//! rule around the body is emitted by [`super::switch`].

use quote::ToTokens;
use syn::{Expr, Ident};

use crate::errors::Errors;
use crate::family::model::{member_indices, mentions_index, Cutoff, Kernel};
use crate::model::Parameter;

/// What to write instead of a malformed cutoff.
const FORM: &str = "a cutoff is written `cutoff(r = <distance of the pair>, on = r_on, off = r_off)`, with `r_on < r_off` scalar parameters";

/// Parses `cutoff(r = expr, on = name, off = name)`, checking that `on` and `off` name scalar
/// parameters; errors at the user's tokens otherwise.
pub fn parse(expr: &Expr, parameters: &[Parameter], errors: &mut Errors) -> Option<Cutoff> {
    let Expr::Call(call) = expr else {
        errors.error_spanned(
            expr,
            format!("a sum's third argument is its cutoff; {FORM}"),
        );
        return None;
    };
    if !matches!(&*call.func, Expr::Path(p) if p.path.is_ident("cutoff")) {
        errors.error_spanned(
            &call.func,
            format!("a sum's third argument is its cutoff; {FORM}"),
        );
        return None;
    }
    let (mut r, mut on, mut off) = (None, None, None);
    for arg in &call.args {
        let Expr::Assign(assign) = arg else {
            errors.error_spanned(arg, format!("name each argument of the cutoff; {FORM}"));
            return None;
        };
        let key = match &*assign.left {
            Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
            _ => None,
        };
        let slot = match key.as_deref() {
            Some("r") => &mut r,
            Some("on") => &mut on,
            Some("off") => &mut off,
            _ => {
                errors.error_spanned(
                    &assign.left,
                    format!("a cutoff takes the arguments `r`, `on` and `off`; {FORM}"),
                );
                return None;
            }
        };
        if slot.is_some() {
            errors.error_spanned(&assign.left, "this argument of the cutoff is given twice");
            return None;
        }
        *slot = Some(&*assign.right);
    }
    let (Some(r), Some(on), Some(off)) = (r, on, off) else {
        let missing: Vec<&str> = [
            ("r", r.is_none()),
            ("on", on.is_none()),
            ("off", off.is_none()),
        ]
        .into_iter()
        .filter(|&(_, m)| m)
        .map(|(name, _)| name)
        .collect();
        errors.error_spanned(
            call,
            format!("the cutoff misses `{}`; {FORM}", missing.join("`, `")),
        );
        return None;
    };
    let parameter = |value: &Expr, errors: &mut Errors| -> Option<Ident> {
        let name = match value {
            Expr::Path(p) => p.path.get_ident(),
            _ => None,
        };
        match name {
            Some(name) if parameters.iter().any(|p| p.name == *name) => Some(name.clone()),
            _ => {
                errors.error_spanned(
                    value,
                    "the ends of a cutoff's switching region are scalar parameters, so that they can be changed at run time and checked: declare one (`r_on = 8.0` in `parameters`) and write its name here",
                );
                None
            }
        }
    };
    let on = parameter(on, errors);
    let off = parameter(off, errors);
    Some(Cutoff {
        source: call.to_token_stream(),
        r: r.clone(),
        on: on?,
        off: off?,
    })
}

/// Checks that the switching distance, the kernel's second value, depends on coordinates of
/// both indices `first` and `second` of the pair.
pub fn check_distance(
    kernel: &Kernel,
    cutoff: &Cutoff,
    first: &Ident,
    second: &Ident,
    errors: &mut Errors,
) {
    let r = kernel.values[1];
    let read = member_indices(
        kernel
            .slots
            .iter()
            .zip(&kernel.symbols.q)
            .filter(|&(_, &s)| kernel.store.depends_on(r, s))
            .map(|(slot, _)| slot),
    );
    if !(mentions_index(&read, first) && mentions_index(&read, second)) {
        errors.error_spanned(
            &cutoff.r,
            format!(
                "a cutoff's `r` is the pair's switching distance, a function of members of both `{first}` and `{second}` (e.g. `((x[{first}] - x[{second}]).powi(2) + (y[{first}] - y[{second}]).powi(2)).sqrt()`)"
            ),
        );
    }
}
