//! Rewrite rules for bounded clean-up, each an identity of real functions.
//!
//! Every rule holds wherever its left-hand side is defined, for all real inputs: there is no
//! rule guarded by "is not zero" (unsound in an e-graph, where a class may later turn out to be
//! zero; egg issues #15 and #297) and no `x / x => 1`, `sqrt(x)^2 => x` or `exp(ln x) => x`.
//! The two guarded power rules only look at integer exponents, which are known constants.

use egg::{rewrite as rw, EGraph, Id, Rewrite, Subst, Var};

use super::constant_fold::ConstantFold;
use crate::expr::Math;

/// Returns all clean-up rules.
///
/// The patterns are literals of this file and are checked by the tests, so the `rewrite!`
/// macro's internal unwraps cannot fail at run time.
#[rustfmt::skip]
pub fn rules() -> Vec<Rewrite<Math, ConstantFold>> {
    let mut rules = vec![
        // Commutativity and associativity.
        rw!("comm-add";        "(+ ?a ?b)"                 => "(+ ?b ?a)"),
        rw!("comm-mul";        "(* ?a ?b)"                 => "(* ?b ?a)"),
        rw!("assoc-add";       "(+ ?a (+ ?b ?c))"          => "(+ (+ ?a ?b) ?c)"),
        rw!("assoc-mul";       "(* ?a (* ?b ?c))"          => "(* (* ?a ?b) ?c)"),
        // Neutral and absorbing elements.
        rw!("zero-add";        "(+ ?a 0)"                  => "?a"),
        rw!("zero-mul";        "(* ?a 0)"                  => "0"),
        rw!("one-mul";         "(* ?a 1)"                  => "?a"),
        rw!("one-div";         "(/ ?a 1)"                  => "?a"),
        // Subtraction and negation.
        rw!("sub-canon";       "(- ?a ?b)"                 => "(+ ?a (neg ?b))"),
        rw!("add-neg";         "(+ ?a (neg ?b))"           => "(- ?a ?b)"),
        rw!("sub-self";        "(- ?a ?a)"                 => "0"),
        rw!("add-neg-self";    "(+ ?a (neg ?a))"           => "0"),
        rw!("cancel-add-sub";  "(- (+ ?a ?b) ?b)"          => "?a"),
        rw!("neg-neg";         "(neg (neg ?a))"            => "?a"),
        rw!("neg-sub";         "(neg (- ?a ?b))"           => "(- ?b ?a)"),
        rw!("neg-mul";         "(* (neg ?a) ?b)"           => "(neg (* ?a ?b))"),
        rw!("neg-div";         "(/ (neg ?a) ?b)"           => "(neg (/ ?a ?b))"),
        rw!("mul-minus-one";   "(* -1 ?a)"                 => "(neg ?a)"),
        // Distribution and factoring.
        rw!("distribute";      "(* ?a (+ ?b ?c))"          => "(+ (* ?a ?b) (* ?a ?c))"),
        rw!("factor";          "(+ (* ?a ?b) (* ?a ?c))"   => "(* ?a (+ ?b ?c))"),
        rw!("factor-one";      "(+ ?a (* ?a ?c))"          => "(* ?a (+ 1 ?c))"),
        rw!("double";          "(+ ?a ?a)"                 => "(* 2 ?a)"),
        // Quotients (each holds wherever the left-hand side is defined).
        rw!("mul-div";         "(* ?a (/ ?b ?c))"          => "(/ (* ?a ?b) ?c)"),
        rw!("div-mul";         "(/ (* ?a ?b) ?c)"          => "(* ?a (/ ?b ?c))"),
        rw!("div-div";         "(/ (/ ?a ?b) ?c)"          => "(/ ?a (* ?b ?c))"),
        rw!("add-div";         "(+ (/ ?a ?c) (/ ?b ?c))"   => "(/ (+ ?a ?b) ?c)"),
        // Integer powers.
        rw!("square";          "(* ?a ?a)"                 => "(powi ?a 2)"),
        rw!("powi-zero";       "(powi ?a 0)"               => "1"),
        rw!("powi-one";        "(powi ?a 1)"               => "?a"),
        rw!("powi-mul";        "(* (powi ?a ?n) (powi ?a ?m))" => "(powi ?a (+ ?n ?m))"
                               if same_sign("?n", "?m")),
        rw!("powi-mul-base";   "(* ?a (powi ?a ?n))"       => "(powi ?a (+ ?n 1))"
                               if nonnegative("?n")),
        // Trigonometry.
        rw!("pythagoras";      "(+ (powi (sin ?a) 2) (powi (cos ?a) 2))" => "1"),
        rw!("one-minus-sin2";  "(- 1 (powi (sin ?a) 2))"   => "(powi (cos ?a) 2)"),
        rw!("one-minus-cos2";  "(- 1 (powi (cos ?a) 2))"   => "(powi (sin ?a) 2)"),
        // Non-smooth functions (also valid for NaN under the semantics of `Math`).
        rw!("comm-min";        "(min ?a ?b)"               => "(min ?b ?a)"),
        rw!("comm-max";        "(max ?a ?b)"               => "(max ?b ?a)"),
        rw!("min-self";        "(min ?a ?a)"               => "?a"),
        rw!("max-self";        "(max ?a ?a)"               => "?a"),
        rw!("abs-neg";         "(abs (neg ?a))"            => "(abs ?a)"),
        rw!("abs-abs";         "(abs (abs ?a))"            => "(abs ?a)"),
        rw!("abs-sub";         "(abs (- ?a ?b))"           => "(abs (- ?b ?a))"),
        rw!("signum-signum";   "(signum (signum ?a))"      => "(signum ?a)"),
    ];
    rules.shrink_to_fit();
    rules
}

/// Returns the constant value of the class bound to `var`, if any.
fn constant_of(
    egraph: &EGraph<Math, ConstantFold>,
    subst: &Subst,
    var: Option<Var>,
) -> Option<f64> {
    let id = subst.get(var?)?;
    egraph[*id].data.map(|c| c.value())
}

/// Condition: both exponents are constants of the same sign.
///
/// `x^n * x^m = x^(n+m)` fails at `x = 0` when the signs differ (`x^-1 * x` is NaN there, `x^0`
/// is 1), which is the `x / x => 1` trap in disguise; with equal signs it holds everywhere.
fn same_sign(
    n: &'static str,
    m: &'static str,
) -> impl Fn(&mut EGraph<Math, ConstantFold>, Id, &Subst) -> bool {
    let (n, m) = (n.parse::<Var>().ok(), m.parse::<Var>().ok());
    move |egraph, _, subst| match (constant_of(egraph, subst, n), constant_of(egraph, subst, m)) {
        (Some(a), Some(b)) => (a >= 0.0 && b >= 0.0) || (a <= 0.0 && b <= 0.0),
        _ => false,
    }
}

/// Condition: the exponent is a nonnegative constant, so `x * x^n = x^(n+1)` holds everywhere.
fn nonnegative(n: &'static str) -> impl Fn(&mut EGraph<Math, ConstantFold>, Id, &Subst) -> bool {
    let n = n.parse::<Var>().ok();
    move |egraph, _, subst| constant_of(egraph, subst, n).is_some_and(|a| a >= 0.0)
}
