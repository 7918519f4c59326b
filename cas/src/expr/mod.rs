//! Expression language, finite constants and the hash-consed [`Store`].
//!
//! Every expression of a model lives in one [`Store`]. Nodes are hash-consed, so equal
//! subexpressions get equal [`Id`]s and are computed once by the emitted code; the smart
//! constructors fold constants and drop neutral elements while building, so derivatives do not
//! drown in `0 * x` and `1 * x` terms before the e-graph ever sees them.
//!
//! The language is [`Math`] (here, with the folding of a node's constant operands that the
//! store and the e-graph share); its finite constants are [`Constant`]s (`constant`); the
//! store, its dependency sets and its traversals are in `store`, and its smart constructors in
//! `build`.

mod build;
mod constant;
mod store;

pub(crate) use constant::as_i32;
pub use constant::{Constant, ParseConstantError};
pub use store::Store;

use egg::{Id, Symbol};

egg::define_language! {
    /// Expression nodes: the operators a mechanical model needs, and nothing else.
    ///
    /// | variant | s-expression | meaning |
    /// |---|---|---|
    /// | `Add`, `Sub`, `Mul`, `Div` | `(+ a b)`, `(- a b)`, `(* a b)`, `(/ a b)` | arithmetic |
    /// | `Neg` | `(neg a)` | `-a` |
    /// | `Powi` | `(powi a n)` | `a.powi(n)`; `n` is always an integer-valued `Num` node |
    /// | `Pow` | `(pow a b)` | `a.powf(b)` |
    /// | `Sqrt`, `Sin`, `Cos`, `Tan`, `Exp`, `Ln` | `(sqrt a)`, … | `f64` methods of the same name |
    /// | `Asin`, `Acos`, `Atan` | `(asin a)`, … | `f64` methods of the same name (see below) |
    /// | `Sinh`, `Cosh`, `Tanh` | `(sinh a)`, … | `f64` methods of the same name |
    /// | `Atan2` | `(atan2 y x)` | `y.atan2(x)`, the angle of the point `(x, y)` in `[-π, π]` |
    /// | `Abs` | `(abs a)` | `a.abs()` |
    /// | `Signum` | `(signum a)` | `-1`, `0` or `1` by the sign of `a` (see below) |
    /// | `Min`, `Max` | `(min a b)`, `(max a b)` | `a.min(b)`, `a.max(b)` |
    /// | `Num` | `2.5` | a finite [`Constant`] |
    /// | `Symbol` | `q0` | a variable or parameter |
    ///
    /// Keeping the exponent of `Powi` a literal lets emitted code call `f64::powi`, which LLVM
    /// expands into multiplications. There is no logarithm to a base: `log_b(x)` is
    /// `ln(x) / ln(b)`, which is how [`f64::log`] computes it.
    ///
    /// # Domains
    ///
    /// Every node computes what the `f64` method computes, NaN outside its domain included, and
    /// its derivatives (see [`diff`](crate::diff)) are exact wherever the function is
    /// differentiable:
    ///
    /// * `asin` and `acos` are defined on `[-1, 1]` and differentiable only inside: their
    ///   derivatives `±1/sqrt(1 − a²)` are infinite at `a = ±1` and NaN beyond.
    /// * `atan2(y, x)` is smooth everywhere except at the origin, where its derivatives are NaN
    ///   (`0/0`), and on the branch cut `y = 0, x < 0`, where the angle jumps by `2π` between
    ///   `π` and `-π`. The derivatives are the same from both sides of the cut, so
    ///   derivative-based integrators do not notice it, but energies, energy observers and
    ///   discrete gradients (which difference `V`) do: keep a model's configurations away from
    ///   the cut, e.g. measure a pendulum's angle with `atan2(x, -y)` so that the cut is the
    ///   upright position. [`Math::non_smooth_name`] does not report it: no derivative of any
    ///   order has a kink or jump there.
    /// * `sinh`, `cosh`, `tanh` and `atan` are smooth on the whole real line.
    ///
    /// # Non-smooth nodes
    ///
    /// `Abs`, `Signum`, `Min` and `Max` are continuous (except `Signum`) but not differentiable
    /// everywhere. Their semantics, shared by [`eval`](crate::eval()), constant folding and
    /// [`emit`](crate::emit()):
    ///
    /// * `signum(a)` is `1` for `a > 0`, `-1` for `a < 0`, and `a` itself otherwise, i.e. `0`
    ///   at zero (keeping the sign bit of `-0.0`) and NaN for NaN. This is **not**
    ///   [`f64::signum`], which returns `1` at `+0.0`.
    /// * `abs`, `min` and `max` are [`f64::abs`], [`f64::min`] and [`f64::max`]: `min` and
    ///   `max` return the other operand when one is NaN.
    ///
    /// Their derivatives (see [`diff`](crate::diff)) are exact away from the kinks and average
    /// the one-sided derivatives at a kink; use [`Store::non_smooth_dependencies`] to find out
    /// whether a model's derivatives are affected.
    // egg's macro cannot attach docs to variants; the table above documents them.
    #[allow(missing_docs)]
    pub enum Math {
        "+" = Add([Id; 2]),
        "-" = Sub([Id; 2]),
        "*" = Mul([Id; 2]),
        "/" = Div([Id; 2]),
        "neg" = Neg(Id),
        "powi" = Powi([Id; 2]),
        "pow" = Pow([Id; 2]),
        "sqrt" = Sqrt(Id),
        "sin" = Sin(Id),
        "cos" = Cos(Id),
        "tan" = Tan(Id),
        "exp" = Exp(Id),
        "ln" = Ln(Id),
        "asin" = Asin(Id),
        "acos" = Acos(Id),
        "atan" = Atan(Id),
        "atan2" = Atan2([Id; 2]),
        "sinh" = Sinh(Id),
        "cosh" = Cosh(Id),
        "tanh" = Tanh(Id),
        "abs" = Abs(Id),
        "signum" = Signum(Id),
        "min" = Min([Id; 2]),
        "max" = Max([Id; 2]),
        Num(Constant),
        Symbol(Symbol),
    }
}

/// Evaluates `node` when all its children are known constants and the result is finite.
///
/// Shared by the [`Store`] constructors and the e-graph analysis, so that both fold alike.
pub(crate) fn fold_node(node: &Math, value: impl Fn(Id) -> Option<f64>) -> Option<f64> {
    let v = match node {
        Math::Num(c) => c.value(),
        Math::Symbol(_) => return None,
        Math::Add([a, b]) => value(*a)? + value(*b)?,
        Math::Sub([a, b]) => value(*a)? - value(*b)?,
        Math::Mul([a, b]) => value(*a)? * value(*b)?,
        Math::Div([a, b]) => value(*a)? / value(*b)?,
        Math::Neg(a) => -value(*a)?,
        Math::Powi([a, n]) => value(*a)?.powi(as_i32(value(*n)?)?),
        Math::Pow([a, b]) => value(*a)?.powf(value(*b)?),
        Math::Sqrt(a) => value(*a)?.sqrt(),
        Math::Sin(a) => value(*a)?.sin(),
        Math::Cos(a) => value(*a)?.cos(),
        Math::Tan(a) => value(*a)?.tan(),
        Math::Exp(a) => value(*a)?.exp(),
        Math::Ln(a) => value(*a)?.ln(),
        Math::Asin(a) => value(*a)?.asin(),
        Math::Acos(a) => value(*a)?.acos(),
        Math::Atan(a) => value(*a)?.atan(),
        Math::Atan2([y, x]) => value(*y)?.atan2(value(*x)?),
        Math::Sinh(a) => value(*a)?.sinh(),
        Math::Cosh(a) => value(*a)?.cosh(),
        Math::Tanh(a) => value(*a)?.tanh(),
        Math::Abs(a) => value(*a)?.abs(),
        Math::Signum(a) => signum(value(*a)?),
        Math::Min([a, b]) => value(*a)?.min(value(*b)?),
        Math::Max([a, b]) => value(*a)?.max(value(*b)?),
    };
    v.is_finite().then_some(v)
}

/// The sign function of [`Math::Signum`]: `1` for positive, `-1` for negative, and `x` itself
/// for `±0` and NaN (so `signum(0) = 0`, unlike [`f64::signum`]).
pub(crate) fn signum(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        x
    }
}

impl Math {
    /// Returns the name of a non-smooth node (`"abs"`, `"signum"`, `"min"` or `"max"`), or
    /// `None` for the nodes that are smooth wherever they are defined.
    pub fn non_smooth_name(&self) -> Option<&'static str> {
        match self {
            Math::Abs(_) => Some("abs"),
            Math::Signum(_) => Some("signum"),
            Math::Min(_) => Some("min"),
            Math::Max(_) => Some("max"),
            _ => None,
        }
    }
}
