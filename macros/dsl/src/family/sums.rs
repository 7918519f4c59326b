//! The shapes of an energy's terms: `a + b + c` split into terms, and a term recognized as
//! `sum(a..b, |i| body)`, a pair sum `sum(a..b, |i, j| body)`, or a pair sum with a cutoff
//! `sum(a..b, |i, j| body, cutoff(…))`.

use syn::{Expr, Ident};

/// Splits `a + b + c` into its terms.
pub fn split_sum<'e>(expr: &'e Expr, parts: &mut Vec<&'e Expr>) {
    match expr {
        Expr::Binary(binary) if matches!(binary.op, syn::BinOp::Add(_)) => {
            split_sum(&binary.left, parts);
            split_sum(&binary.right, parts);
        }
        Expr::Paren(inner) if matches!(&*inner.expr, Expr::Binary(b) if matches!(b.op, syn::BinOp::Add(_))) => {
            split_sum(&inner.expr, parts)
        }
        other => parts.push(other),
    }
}

/// Recognizes `sum(a..b, |i| body)` and the pair sum `sum(a..b, |i, j| body)` (over `i < j`),
/// each with an optional third argument (a pair sum's `cutoff(…)`, checked by the caller):
/// `None` if `expr` is no call of `sum`, an error if it is a malformed one.
#[allow(clippy::type_complexity)]
pub fn as_sum(
    expr: &Expr,
) -> Option<syn::Result<(&Ident, Option<&Ident>, &Expr, &Expr, Option<&Expr>)>> {
    let Expr::Call(call) = expr else {
        return None;
    };
    if !matches!(&*call.func, Expr::Path(p) if p.path.is_ident("sum")) {
        return None;
    }
    let malformed = || {
        syn::Error::new_spanned(
            call,
            "a sum is written `sum(a..b, |i| body)` (a half-open range and a closure of one index), or `sum(a..b, |i, j| body)` over the pairs i < j, optionally with a smooth cutoff `sum(a..b, |i, j| body, cutoff(r = …, on = r_on, off = r_off))`",
        )
    };
    let args: Vec<&Expr> = call.args.iter().collect();
    let (range, closure, cut) = match args[..] {
        [range, Expr::Closure(closure)] => (range, closure, None),
        [range, Expr::Closure(closure), cut] => (range, closure, Some(cut)),
        _ => return Some(Err(malformed())),
    };
    match &closure.inputs.iter().collect::<Vec<_>>()[..] {
        [syn::Pat::Ident(index)] => Some(Ok((&index.ident, None, range, &closure.body, cut))),
        [syn::Pat::Ident(index), syn::Pat::Ident(pair)] => Some(Ok((
            &index.ident,
            Some(&pair.ident),
            range,
            &closure.body,
            cut,
        ))),
        _ => Some(Err(malformed())),
    }
}
