//! Integer index expressions: sizes (`R = 4 + 3 * (L - 1)`), ranges (`1..N`), filters
//! (`(j + 1) % 3 == 0`), bindings (`p = if j % 3 == 1 { j - 3 } else { j - 2 }`) and the
//! indices of family members (`x[i - 1]`).
//!
//! They are checked here, once, against a small language — integer literals, names of sizes,
//! index variables and bindings, `+ - * / %`, comparisons, `&& || !`, parentheses and
//! `if c { a } else { b }` — and then used twice: evaluated by [`eval`] in the macro (with the
//! default sizes, so that an out-of-range literal offset is a compile error), and emitted as
//! the user's own tokens into the generated constructor, where they are evaluated once per
//! instance in `i64` arithmetic.

use std::collections::HashMap;

use syn::{BinOp, Expr, Lit, UnOp};

use crate::errors::Errors;

/// Checks that `expr` is an index expression over the names `known`; reports every other
/// construct at its tokens. `what` names the place in messages ("a size", "a range", …).
pub fn check(expr: &Expr, known: &dyn Fn(&str) -> bool, what: &str, errors: &mut Errors) {
    match expr {
        Expr::Lit(lit) => {
            if !matches!(&lit.lit, Lit::Int(i) if i.base10_parse::<i64>().is_ok()) {
                errors.error_spanned(
                    lit,
                    format!("{what} is an integer expression; write an integer literal here"),
                );
            }
        }
        Expr::Path(path) => match path.path.get_ident() {
            Some(ident) if known(&ident.to_string()) => {}
            Some(ident) => errors.error_spanned(
                ident,
                format!(
                    "`{ident}` is not a size, an index or a binding in scope; {what} may use \
                     only those, integer literals and `+ - * / %` (an index is in scope only \
                     inside its own `sum(a..b, |i| …)` or row family `name[i in a..b]`)"
                ),
            ),
            None => errors.error_spanned(path, format!("paths are not allowed in {what}")),
        },
        Expr::Paren(inner) => check(&inner.expr, known, what, errors),
        Expr::Group(inner) => check(&inner.expr, known, what, errors),
        Expr::Unary(unary) => match unary.op {
            UnOp::Neg(_) | UnOp::Not(_) => check(&unary.expr, known, what, errors),
            _ => errors.error_spanned(unary, format!("unsupported operator in {what}")),
        },
        Expr::Binary(binary) => {
            let supported = matches!(
                binary.op,
                BinOp::Add(_)
                    | BinOp::Sub(_)
                    | BinOp::Mul(_)
                    | BinOp::Div(_)
                    | BinOp::Rem(_)
                    | BinOp::Eq(_)
                    | BinOp::Ne(_)
                    | BinOp::Lt(_)
                    | BinOp::Le(_)
                    | BinOp::Gt(_)
                    | BinOp::Ge(_)
                    | BinOp::And(_)
                    | BinOp::Or(_)
            );
            if !supported {
                errors.error_spanned(
                    binary.op,
                    format!(
                        "unsupported operator in {what}; use `+ - * / %`, comparisons, `&&`, `||`"
                    ),
                );
            }
            check(&binary.left, known, what, errors);
            check(&binary.right, known, what, errors);
        }
        Expr::If(branch) => {
            check(&branch.cond, known, what, errors);
            match (&branch.then_branch.stmts[..], &branch.else_branch) {
                ([syn::Stmt::Expr(then, None)], Some((_, otherwise))) => {
                    check(then, known, what, errors);
                    match otherwise.as_ref() {
                        Expr::Block(block) => match &block.block.stmts[..] {
                            [syn::Stmt::Expr(e, None)] => check(e, known, what, errors),
                            _ => errors.error_spanned(
                                block,
                                "an `else` branch of an index expression is one expression",
                            ),
                        },
                        other => check(other, known, what, errors),
                    }
                }
                _ => errors.error_spanned(
                    branch,
                    "an `if` in an index expression needs an `else` and one expression per branch",
                ),
            }
        }
        other => errors.error_spanned(
            other,
            format!(
                "unsupported expression in {what}; use integer literals, sizes, indices, \
                 `+ - * / %`, comparisons and `if c {{ a }} else {{ b }}`"
            ),
        ),
    }
}

/// The value of an index expression: an integer, or a truth value for filters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    /// An integer.
    Int(i64),
    /// A truth value.
    Bool(bool),
}

/// Evaluates a [`check`]ed expression with `env` giving the names' values; `None` when it
/// divides by zero, overflows, or mixes integers and truth values.
pub fn eval(expr: &Expr, env: &HashMap<String, i64>) -> Option<Value> {
    use Value::{Bool, Int};
    Some(match expr {
        Expr::Lit(lit) => match &lit.lit {
            Lit::Int(i) => Int(i.base10_parse().ok()?),
            _ => return None,
        },
        Expr::Path(path) => Int(*env.get(&path.path.get_ident()?.to_string())?),
        Expr::Paren(inner) => eval(&inner.expr, env)?,
        Expr::Group(inner) => eval(&inner.expr, env)?,
        Expr::Unary(unary) => match (unary.op, eval(&unary.expr, env)?) {
            (UnOp::Neg(_), Int(a)) => Int(a.checked_neg()?),
            (UnOp::Not(_), Bool(a)) => Bool(!a),
            _ => return None,
        },
        Expr::Binary(binary) => {
            let (a, b) = (eval(&binary.left, env)?, eval(&binary.right, env)?);
            match (binary.op, a, b) {
                (BinOp::Add(_), Int(a), Int(b)) => Int(a.checked_add(b)?),
                (BinOp::Sub(_), Int(a), Int(b)) => Int(a.checked_sub(b)?),
                (BinOp::Mul(_), Int(a), Int(b)) => Int(a.checked_mul(b)?),
                (BinOp::Div(_), Int(a), Int(b)) => Int(a.checked_div(b)?),
                (BinOp::Rem(_), Int(a), Int(b)) => Int(a.checked_rem(b)?),
                (BinOp::Eq(_), Int(a), Int(b)) => Bool(a == b),
                (BinOp::Ne(_), Int(a), Int(b)) => Bool(a != b),
                (BinOp::Lt(_), Int(a), Int(b)) => Bool(a < b),
                (BinOp::Le(_), Int(a), Int(b)) => Bool(a <= b),
                (BinOp::Gt(_), Int(a), Int(b)) => Bool(a > b),
                (BinOp::Ge(_), Int(a), Int(b)) => Bool(a >= b),
                (BinOp::And(_), Bool(a), Bool(b)) => Bool(a && b),
                (BinOp::Or(_), Bool(a), Bool(b)) => Bool(a || b),
                _ => return None,
            }
        }
        Expr::If(branch) => {
            let Bool(condition) = eval(&branch.cond, env)? else {
                return None;
            };
            if condition {
                match &branch.then_branch.stmts[..] {
                    [syn::Stmt::Expr(e, None)] => eval(e, env)?,
                    _ => return None,
                }
            } else {
                match branch.else_branch.as_ref()?.1.as_ref() {
                    Expr::Block(block) => match &block.block.stmts[..] {
                        [syn::Stmt::Expr(e, None)] => eval(e, env)?,
                        _ => return None,
                    },
                    other => eval(other, env)?,
                }
            }
        }
        _ => return None,
    })
}

/// Returns `(start, end)` of a range expression `a..b`, or `None` if `expr` is not a
/// half-open range with both ends.
pub fn range_ends(expr: &Expr) -> Option<(&Expr, &Expr)> {
    match expr {
        Expr::Range(range) if matches!(range.limits, syn::RangeLimits::HalfOpen(_)) => {
            Some((range.start.as_deref()?, range.end.as_deref()?))
        }
        Expr::Paren(inner) => range_ends(&inner.expr),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Expr {
        syn::parse_str(text).unwrap()
    }

    fn value(text: &str, env: &[(&str, i64)]) -> Option<Value> {
        let env = env.iter().map(|&(k, v)| (k.to_string(), v)).collect();
        eval(&parse(text), &env)
    }

    #[test]
    fn the_ladder_binding_evaluates_as_rust_would() {
        let binding = "if (j + 1) % 3 == 2 { j - 3 } else { j - 2 }";
        for j in 2..20i64 {
            let expected = if (j + 1) % 3 == 2 { j - 3 } else { j - 2 };
            assert_eq!(value(binding, &[("j", j)]), Some(Value::Int(expected)));
        }
        assert_eq!(value("4 + 3 * (L - 1)", &[("L", 20)]), Some(Value::Int(61)));
        assert_eq!(
            value("(j + 1) % 3 == 0 && j < R - 1", &[("j", 5), ("R", 61)]),
            Some(Value::Bool(true))
        );
        assert_eq!(value("N / 0", &[("N", 3)]), None);
        assert_eq!(value("N + (1 < 2)", &[("N", 3)]), None);
    }

    #[test]
    fn everything_outside_the_language_is_reported() {
        let known = |name: &str| matches!(name, "i" | "N");
        for bad in [
            "1.5",
            "x",
            "i.pow(2)",
            "f(i)",
            "i << 1",
            "&i",
            "if i > 0 { 1 }",
        ] {
            let mut errors = Errors::new();
            check(&parse(bad), &known, "an index", &mut errors);
            assert!(!errors.is_empty(), "{bad} was accepted");
        }
        for good in [
            "i - 1",
            "N - 1 - i",
            "if i % 2 == 0 { i } else { N - i }",
            "-(i)",
        ] {
            let mut errors = Errors::new();
            check(&parse(good), &known, "an index", &mut errors);
            assert!(errors.is_empty(), "{good} was rejected");
        }
    }

    #[test]
    fn ranges_are_half_open_with_both_ends() {
        assert!(range_ends(&parse("1..N")).is_some());
        assert!(range_ends(&parse("(0..N - 1)")).is_some());
        for bad in ["0..=N", "..N", "1..", "N"] {
            assert!(range_ends(&parse(bad)).is_none(), "{bad}");
        }
    }
}
