//! Expression language, finite constants and the hash-consed [`Store`].
//!
//! Every expression of a model lives in one [`Store`]. Nodes are hash-consed, so equal
//! subexpressions get equal [`Id`]s and are computed once by the emitted code; the smart
//! constructors fold constants and drop neutral elements while building, so derivatives do not
//! drown in `0 * x` and `1 * x` terms before the e-graph ever sees them.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::str::FromStr;

use egg::{Id, Language, Symbol};

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

/// A finite `f64`, totally ordered and hashed by its bits so that it can label e-nodes.
///
/// `-0.0` is normalized to `0.0`, so the two zeros hash-cons to one node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Constant(OrderedBits);

/// Bits of a finite `f64`, mapped so that integer order equals numeric order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct OrderedBits(i64);

impl Constant {
    /// Wraps a finite value, returning `None` for infinities and NaN.
    pub fn new(value: f64) -> Option<Constant> {
        if !value.is_finite() {
            return None;
        }
        // Adding 0.0 turns -0.0 into 0.0 and leaves every other value alone.
        let bits = (value + 0.0).to_bits() as i64;
        // Flip the magnitude bits of negative values so that signed integer order is numeric
        // order (the usual total-order trick of `f64::total_cmp`).
        let ordered = bits ^ ((((bits >> 63) as u64) >> 1) as i64);
        Some(Constant(OrderedBits(ordered)))
    }

    /// Returns the wrapped value.
    pub fn value(self) -> f64 {
        let ordered = self.0 .0;
        let bits = ordered ^ ((((ordered >> 63) as u64) >> 1) as i64);
        f64::from_bits(bits as u64)
    }

    /// Returns the value as an `i32` when it is an integer in range.
    pub fn as_i32(self) -> Option<i32> {
        as_i32(self.value())
    }
}

/// Converts an integer-valued `f64` in `i32` range to `i32`.
pub(crate) fn as_i32(v: f64) -> Option<i32> {
    if v.fract() == 0.0 && v >= f64::from(i32::MIN) && v <= f64::from(i32::MAX) {
        Some(v as i32)
    } else {
        None
    }
}

impl fmt::Display for Constant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.value(), f)
    }
}

/// Error returned when a string is not a finite `f64`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseConstantError;

impl fmt::Display for ParseConstantError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a finite f64 literal")
    }
}

impl std::error::Error for ParseConstantError {}

impl FromStr for Constant {
    type Err = ParseConstantError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let v: f64 = s.parse().map_err(|_| ParseConstantError)?;
        Constant::new(v).ok_or(ParseConstantError)
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

/// Set of symbol indices (into the store's symbol table) that a node depends on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Deps(Vec<u64>);

impl Deps {
    fn single(index: usize) -> Deps {
        let mut words = vec![0; index / 64 + 1];
        words[index / 64] |= 1 << (index % 64);
        Deps(words)
    }

    fn union(&self, other: &Deps) -> Deps {
        let (long, short) = if self.0.len() >= other.0.len() {
            (self, other)
        } else {
            (other, self)
        };
        let mut words = long.0.clone();
        for (w, o) in words.iter_mut().zip(&short.0) {
            *w |= *o;
        }
        Deps(words)
    }

    pub(crate) fn contains(&self, index: usize) -> bool {
        self.0
            .get(index / 64)
            .is_some_and(|w| w & (1 << (index % 64)) != 0)
    }

    pub(crate) fn intersects(&self, other: &Deps) -> bool {
        self.0.iter().zip(&other.0).any(|(a, b)| a & b != 0)
    }

    fn indices(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &bits)| {
            (0..64)
                .filter(move |b| bits & (1 << b) != 0)
                .map(move |b| w * 64 + b)
        })
    }
}

/// Hash-consed DAG of [`Math`] nodes shared by all expressions of one model.
///
/// Children always have smaller [`Id`]s than their parents, so ascending `Id` order is a
/// topological order; the algorithms of this crate rely on that instead of recursion, which
/// keeps them free of stack overflows on deep expressions.
///
/// The constructors ([`Store::add`], [`Store::mul`], …) fold constants when the result is
/// finite, drop neutral elements and put the operands of `+` and `*` in a fixed order
/// (constants first, then by `Id`), so `a + b` and `b + a` are the same node. Expressions are
/// treated as real functions: `x * 0` and `0 / x` fold to `0`, which is correct wherever the
/// original expression is defined.
#[derive(Clone, Debug, Default)]
pub struct Store {
    nodes: Vec<Math>,
    deps: Vec<Deps>,
    memo: HashMap<Math, Id>,
    symbols: Vec<Symbol>,
    symbol_index: HashMap<Symbol, usize>,
}

impl Store {
    /// Creates an empty store.
    pub fn new() -> Store {
        Store::default()
    }

    /// Returns the number of nodes in the store.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Returns whether the store holds no node.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Returns the node behind `id`.
    ///
    /// An `id` that does not come from this store yields the constant `0` node rather than a
    /// panic, so that a caller's mistake cannot crash the compiler.
    pub fn node(&self, id: Id) -> &Math {
        const ZERO: Math = Math::Num(Constant(OrderedBits(0)));
        self.nodes.get(usize::from(id)).unwrap_or(&ZERO)
    }

    /// Returns the value of `id` when it is a constant node.
    pub fn constant(&self, id: Id) -> Option<f64> {
        match self.node(id) {
            Math::Num(c) => Some(c.value()),
            _ => None,
        }
    }

    /// Returns whether `id` is the constant zero, i.e. structurally zero.
    pub fn is_zero(&self, id: Id) -> bool {
        self.constant(id) == Some(0.0)
    }

    /// Returns whether `id` is the constant one.
    pub fn is_one(&self, id: Id) -> bool {
        self.constant(id) == Some(1.0)
    }

    /// Returns whether the expression `id` contains the symbol `s`, in constant time.
    pub fn depends_on(&self, id: Id, s: Symbol) -> bool {
        match self.symbol_index.get(&s) {
            Some(&i) => self.deps_of(id).contains(i),
            None => false,
        }
    }

    /// Returns the symbols the expression `id` depends on, sorted by name.
    pub fn symbols(&self, id: Id) -> Vec<Symbol> {
        let mut out: Vec<Symbol> = self
            .deps_of(id)
            .indices()
            .filter_map(|i| self.symbols.get(i).copied())
            .collect();
        out.sort_by(|a, b| a.as_str().cmp(b.as_str()));
        out
    }

    /// Returns, for each of `vars`, whether some expression of `roots` depends on it.
    ///
    /// The dependency is structural, so a `false` is a proof of independence (the expressions
    /// never read the symbol) while a `true` may be spurious (`sin(x)² + cos(x)²`). This is the
    /// mask that tells a discrete gradient which coordinates a function depends on.
    pub fn dependency_mask(&self, roots: &[Id], vars: &[Symbol]) -> Vec<bool> {
        vars.iter()
            .map(|&s| roots.iter().any(|&id| self.depends_on(id, s)))
            .collect()
    }

    pub(crate) fn deps_of(&self, id: Id) -> &Deps {
        static EMPTY: Deps = Deps(Vec::new());
        self.deps.get(usize::from(id)).unwrap_or(&EMPTY)
    }

    /// Returns the dependency set of a list of symbols (unknown symbols are ignored).
    pub(crate) fn symbol_mask(&self, symbols: &[Symbol]) -> Deps {
        symbols
            .iter()
            .filter_map(|s| self.symbol_index.get(s))
            .fold(Deps::default(), |acc, &i| acc.union(&Deps::single(i)))
    }

    /// Interns `node` as is, without simplification; its children must already exist.
    fn intern(&mut self, node: Math) -> Id {
        if let Some(&id) = self.memo.get(&node) {
            return id;
        }
        let deps = match &node {
            Math::Symbol(s) => {
                let next = self.symbols.len();
                let index = *self.symbol_index.entry(*s).or_insert(next);
                if index == next {
                    self.symbols.push(*s);
                }
                Deps::single(index)
            }
            other => other
                .children()
                .iter()
                .fold(Deps::default(), |acc, &c| acc.union(self.deps_of(c))),
        };
        let id = Id::from(self.nodes.len());
        self.nodes.push(node.clone());
        self.deps.push(deps);
        self.memo.insert(node, id);
        id
    }

    /// Drops every node with an `Id` of at least `len`, undoing speculative work.
    pub(crate) fn truncate(&mut self, len: usize) {
        for node in self.nodes.drain(len.min(self.nodes.len())..) {
            self.memo.remove(&node);
        }
        self.deps.truncate(len);
    }

    /// Inserts a constant node.
    ///
    /// Non-finite values cannot be [`Constant`]s; they are stored as the unfolded quotients
    /// `0 / 0` (NaN), `1 / 0` (+∞) and `-1 / 0` (−∞), which evaluate to the same value and are
    /// never folded, so this constructor is total. Use [`Store::try_num`] to reject them.
    pub fn num(&mut self, value: f64) -> Id {
        match Constant::new(value) {
            Some(c) => self.intern(Math::Num(c)),
            None => {
                let numerator = if value.is_nan() { 0.0 } else { value.signum() };
                let n = self.num(numerator);
                let zero = self.num(0.0);
                self.intern(Math::Div([n, zero]))
            }
        }
    }

    /// Inserts a constant node, returning `None` when `value` is not finite.
    pub fn try_num(&mut self, value: f64) -> Option<Id> {
        Constant::new(value).map(|c| self.intern(Math::Num(c)))
    }

    /// Inserts a symbol node.
    pub fn symbol(&mut self, s: Symbol) -> Id {
        self.intern(Math::Symbol(s))
    }

    /// Inserts the symbol named `name`.
    pub fn var(&mut self, name: &str) -> Id {
        self.symbol(Symbol::from(name))
    }

    /// Folds `node` when its operands are constants and the result is finite.
    fn fold(&mut self, node: &Math) -> Option<Id> {
        let v = fold_node(node, |c| self.constant(c))?;
        self.try_num(v)
    }

    /// Orders the operands of a commutative node: constants first, then by `Id`.
    fn ordered(&self, a: Id, b: Id) -> [Id; 2] {
        let key = |id: Id| (self.constant(id).is_none(), id);
        if key(a) <= key(b) {
            [a, b]
        } else {
            [b, a]
        }
    }

    /// Builds `a + b`.
    pub fn add(&mut self, a: Id, b: Id) -> Id {
        let node = Math::Add(self.ordered(a, b));
        if let Some(id) = self.fold(&node) {
            return id;
        }
        if self.is_zero(a) {
            return b;
        }
        if self.is_zero(b) {
            return a;
        }
        match (self.node(a).clone(), self.node(b).clone()) {
            (_, Math::Neg(y)) => self.sub(a, y),
            (Math::Neg(x), _) => self.sub(b, x),
            _ => self.intern(node),
        }
    }

    /// Builds `a - b`.
    pub fn sub(&mut self, a: Id, b: Id) -> Id {
        let node = Math::Sub([a, b]);
        if let Some(id) = self.fold(&node) {
            return id;
        }
        if a == b {
            return self.num(0.0);
        }
        if self.is_zero(b) {
            return a;
        }
        if self.is_zero(a) {
            return self.neg(b);
        }
        if let Math::Neg(y) = *self.node(b) {
            return self.add(a, y);
        }
        if let Some(c) = self.constant(b) {
            // x - c == (-c) + x, so both spellings share one node.
            let m = self.num(-c);
            return self.add(m, a);
        }
        self.intern(node)
    }

    /// Builds `a * b`.
    pub fn mul(&mut self, a: Id, b: Id) -> Id {
        let [a, b] = self.ordered(a, b);
        let node = Math::Mul([a, b]);
        if let Some(id) = self.fold(&node) {
            return id;
        }
        if self.is_zero(a) || self.is_zero(b) {
            return self.num(0.0);
        }
        if self.is_one(a) {
            return b;
        }
        if self.is_one(b) {
            return a;
        }
        if self.constant(a) == Some(-1.0) {
            return self.neg(b);
        }
        match (self.node(a).clone(), self.node(b).clone()) {
            (Math::Neg(x), Math::Neg(y)) => self.mul(x, y),
            (Math::Num(c), Math::Neg(y)) => {
                let m = self.num(-c.value());
                self.mul(m, y)
            }
            (Math::Neg(x), _) => {
                let p = self.mul(x, b);
                self.neg(p)
            }
            (_, Math::Neg(y)) => {
                let p = self.mul(a, y);
                self.neg(p)
            }
            _ => self.intern(node),
        }
    }

    /// Builds `a / b`.
    pub fn div(&mut self, a: Id, b: Id) -> Id {
        let node = Math::Div([a, b]);
        if self.constant(b) != Some(0.0) {
            if let Some(id) = self.fold(&node) {
                return id;
            }
        }
        if self.is_one(b) {
            return a;
        }
        if self.constant(b) == Some(-1.0) {
            return self.neg(a);
        }
        if self.is_zero(a) {
            // 0 / x is 0 wherever it is defined (x != 0), like x * 0 == 0.
            return a;
        }
        self.intern(node)
    }

    /// Builds `-a`.
    pub fn neg(&mut self, a: Id) -> Id {
        let node = Math::Neg(a);
        if let Some(id) = self.fold(&node) {
            return id;
        }
        match *self.node(a) {
            Math::Neg(x) => x,
            Math::Sub([x, y]) => self.sub(y, x),
            _ => self.intern(node),
        }
    }

    /// Builds `a` raised to the integer power `n`.
    pub fn powi(&mut self, a: Id, n: i32) -> Id {
        match n {
            0 => return self.num(1.0),
            1 => return a,
            _ => {}
        }
        let e = self.num(f64::from(n));
        let node = Math::Powi([a, e]);
        if let Some(id) = self.fold(&node) {
            return id;
        }
        self.intern(node)
    }

    /// Builds `a` raised to an integer power given as `i64`, as a real power when out of range.
    pub(crate) fn powi_i64(&mut self, a: Id, n: i64) -> Id {
        match i32::try_from(n) {
            Ok(n) => self.powi(a, n),
            Err(_) => {
                let e = self.num(n as f64);
                self.pow(a, e)
            }
        }
    }

    /// Builds `a` raised to the real power `b`.
    ///
    /// A constant integer exponent becomes [`Store::powi`] and `0.5` becomes [`Store::sqrt`].
    pub fn pow(&mut self, a: Id, b: Id) -> Id {
        let node = Math::Pow([a, b]);
        if let Some(id) = self.fold(&node) {
            return id;
        }
        if let Some(c) = self.constant(b) {
            if let Some(n) = as_i32(c) {
                return self.powi(a, n);
            }
            if c == 0.5 {
                return self.sqrt(a);
            }
        }
        self.intern(node)
    }

    /// Builds `sqrt(a)`.
    pub fn sqrt(&mut self, a: Id) -> Id {
        self.fold_or_intern(Math::Sqrt(a))
    }

    /// Builds `sin(a)`.
    pub fn sin(&mut self, a: Id) -> Id {
        self.fold_or_intern(Math::Sin(a))
    }

    /// Builds `cos(a)`.
    pub fn cos(&mut self, a: Id) -> Id {
        self.fold_or_intern(Math::Cos(a))
    }

    /// Builds `tan(a)`.
    pub fn tan(&mut self, a: Id) -> Id {
        self.fold_or_intern(Math::Tan(a))
    }

    /// Builds `exp(a)`.
    pub fn exp(&mut self, a: Id) -> Id {
        self.fold_or_intern(Math::Exp(a))
    }

    /// Builds `ln(a)`, the natural logarithm.
    pub fn ln(&mut self, a: Id) -> Id {
        self.fold_or_intern(Math::Ln(a))
    }

    /// Builds `asin(a)`, defined for `-1 ≤ a ≤ 1`.
    pub fn asin(&mut self, a: Id) -> Id {
        self.fold_or_intern(Math::Asin(a))
    }

    /// Builds `acos(a)`, defined for `-1 ≤ a ≤ 1`.
    pub fn acos(&mut self, a: Id) -> Id {
        self.fold_or_intern(Math::Acos(a))
    }

    /// Builds `atan(a)`.
    pub fn atan(&mut self, a: Id) -> Id {
        self.fold_or_intern(Math::Atan(a))
    }

    /// Builds `atan2(y, x)`, Rust's `y.atan2(x)`: the angle of the point `(x, y)`.
    ///
    /// See [`Math`] for its branch cut and its singularity at the origin.
    pub fn atan2(&mut self, y: Id, x: Id) -> Id {
        self.fold_or_intern(Math::Atan2([y, x]))
    }

    /// Builds `sinh(a)`.
    pub fn sinh(&mut self, a: Id) -> Id {
        self.fold_or_intern(Math::Sinh(a))
    }

    /// Builds `cosh(a)`.
    pub fn cosh(&mut self, a: Id) -> Id {
        self.fold_or_intern(Math::Cosh(a))
    }

    /// Builds `tanh(a)`.
    pub fn tanh(&mut self, a: Id) -> Id {
        self.fold_or_intern(Math::Tanh(a))
    }

    /// Builds `log_b(a) = ln(a) / ln(b)`, the logarithm of `a` to the base `b`, as
    /// [`f64::log`] computes it.
    ///
    /// It is defined for `a > 0` and `b > 0`, `b ≠ 1`; a base that is the constant `1` leaves
    /// a division by the constant `0` in the store (see [`Store::div`]).
    pub fn log(&mut self, a: Id, b: Id) -> Id {
        let ln_a = self.ln(a);
        let ln_b = self.ln(b);
        self.div(ln_a, ln_b)
    }

    /// Builds `|a|`.
    ///
    /// `abs(abs x)` and `abs(-x)` become `abs(x)`, and `abs(x - y)` is the same node as
    /// `abs(y - x)`.
    pub fn abs(&mut self, a: Id) -> Id {
        let node = Math::Abs(a);
        if let Some(id) = self.fold(&node) {
            return id;
        }
        match *self.node(a) {
            Math::Abs(_) => a,
            Math::Neg(x) => self.abs(x),
            Math::Sub([x, y]) if y < x => {
                let d = self.sub(y, x);
                self.abs(d)
            }
            _ => self.intern(node),
        }
    }

    /// Builds `signum(a)`: `1`, `-1` or `0` by the sign of `a` (see [`Math`] for NaN and `-0`).
    ///
    /// `signum(signum x)` becomes `signum(x)` and `signum(-x)` becomes `-signum(x)`.
    pub fn signum(&mut self, a: Id) -> Id {
        let node = Math::Signum(a);
        if let Some(id) = self.fold(&node) {
            return id;
        }
        match *self.node(a) {
            Math::Signum(_) => a,
            Math::Neg(x) => {
                let s = self.signum(x);
                self.neg(s)
            }
            _ => self.intern(node),
        }
    }

    /// Builds `min(a, b)`; `min(x, x)` is `x`, and `min(a, b)` is the same node as `min(b, a)`.
    pub fn min(&mut self, a: Id, b: Id) -> Id {
        if a == b {
            return a;
        }
        let node = Math::Min(self.ordered(a, b));
        match self.fold(&node) {
            Some(id) => id,
            None => self.intern(node),
        }
    }

    /// Builds `max(a, b)`; `max(x, x)` is `x`, and `max(a, b)` is the same node as `max(b, a)`.
    pub fn max(&mut self, a: Id, b: Id) -> Id {
        if a == b {
            return a;
        }
        let node = Math::Max(self.ordered(a, b));
        match self.fold(&node) {
            Some(id) => id,
            None => self.intern(node),
        }
    }

    /// Folds `node` when its operands are constants and the result is finite, else interns it.
    fn fold_or_intern(&mut self, node: Math) -> Id {
        match self.fold(&node) {
            Some(id) => id,
            None => self.intern(node),
        }
    }

    /// Builds the sum of `terms`, or `0` when there is none.
    pub fn sum(&mut self, terms: impl IntoIterator<Item = Id>) -> Id {
        let mut terms = terms.into_iter();
        match terms.next() {
            Some(first) => terms.fold(first, |acc, t| self.add(acc, t)),
            None => self.num(0.0),
        }
    }

    /// Inserts `node`, whose children must be ids of this store, through the smart constructors.
    ///
    /// A [`Math::Powi`] whose exponent is not an integer constant becomes a real power.
    pub fn insert(&mut self, node: Math) -> Id {
        match node {
            Math::Num(c) => self.intern(Math::Num(c)),
            Math::Symbol(s) => self.symbol(s),
            Math::Add([a, b]) => self.add(a, b),
            Math::Sub([a, b]) => self.sub(a, b),
            Math::Mul([a, b]) => self.mul(a, b),
            Math::Div([a, b]) => self.div(a, b),
            Math::Neg(a) => self.neg(a),
            Math::Powi([a, n]) => match self.constant(n).and_then(as_i32) {
                Some(n) => self.powi(a, n),
                None => self.pow(a, n),
            },
            Math::Pow([a, b]) => self.pow(a, b),
            Math::Sqrt(a) => self.sqrt(a),
            Math::Sin(a) => self.sin(a),
            Math::Cos(a) => self.cos(a),
            Math::Tan(a) => self.tan(a),
            Math::Exp(a) => self.exp(a),
            Math::Ln(a) => self.ln(a),
            Math::Asin(a) => self.asin(a),
            Math::Acos(a) => self.acos(a),
            Math::Atan(a) => self.atan(a),
            Math::Atan2([y, x]) => self.atan2(y, x),
            Math::Sinh(a) => self.sinh(a),
            Math::Cosh(a) => self.cosh(a),
            Math::Tanh(a) => self.tanh(a),
            Math::Abs(a) => self.abs(a),
            Math::Signum(a) => self.signum(a),
            Math::Min([a, b]) => self.min(a, b),
            Math::Max([a, b]) => self.max(a, b),
        }
    }

    /// Inserts a whole [`egg::RecExpr`] through the smart constructors and returns its root.
    pub fn add_rec_expr(&mut self, expr: &egg::RecExpr<Math>) -> Id {
        let mut ids: Vec<Id> = Vec::with_capacity(expr.len());
        for node in expr.as_ref() {
            // Children of a RecExpr node always precede it; a malformed child falls back to 0.
            let mapped = node
                .clone()
                .map_children(|c| match ids.get(usize::from(c)) {
                    Some(&id) => id,
                    None => self.num(0.0),
                });
            ids.push(self.insert(mapped));
        }
        match ids.last() {
            Some(&id) => id,
            None => self.num(0.0),
        }
    }

    /// Parses an s-expression such as `(+ x (sin y))` into the store.
    pub fn parse(&mut self, s: &str) -> Result<Id, egg::RecExprParseError<egg::FromOpError>> {
        let expr: egg::RecExpr<Math> = s.parse()?;
        Ok(self.add_rec_expr(&expr))
    }

    /// Returns the ids reachable from `roots` (roots included), in ascending order.
    pub fn reachable(&self, roots: &[Id]) -> Vec<Id> {
        let mut seen: HashSet<Id> = HashSet::new();
        let mut stack: Vec<Id> = Vec::new();
        for &r in roots {
            if usize::from(r) < self.nodes.len() && seen.insert(r) {
                stack.push(r);
            }
        }
        while let Some(id) = stack.pop() {
            for &c in self.node(id).children() {
                if seen.insert(c) {
                    stack.push(c);
                }
            }
        }
        let mut out: Vec<Id> = seen.into_iter().collect();
        out.sort_unstable();
        out
    }

    /// Returns the non-smooth nodes (`abs`, `signum`, `min`, `max`) reachable from `roots`, in
    /// ascending order.
    pub fn non_smooth_nodes(&self, roots: &[Id]) -> Vec<Id> {
        self.reachable(roots)
            .into_iter()
            .filter(|&id| self.node(id).non_smooth_name().is_some())
            .collect()
    }

    /// Returns every non-smooth node reachable from `root` whose operands depend on one of
    /// `vars`, with its function name (`"abs"`, `"signum"`, `"min"` or `"max"`), in ascending
    /// `Id` order.
    ///
    /// This is the test for "are the derivatives of `root` with respect to `vars` affected by
    /// a kink". Looking for non-smooth nodes in the derivatives themselves is not: the
    /// derivative of `abs(u)` is `signum(u) u'` and the derivative of `signum` is the zero
    /// node, so the Hessian of `abs(x)` is structurally `0`, free of any non-smooth node,
    /// although the true second derivative is a Dirac delta at `x = 0`. Likewise `signum(u)`
    /// has a zero derivative but jumps. Only the original expression shows where the kinks
    /// are; a non-smooth node whose operands do not depend on `vars` (a function of parameters
    /// only) is a constant for the differentiation and is not reported.
    pub fn non_smooth_dependencies(&self, root: Id, vars: &[Symbol]) -> Vec<(Id, &'static str)> {
        let mask = self.symbol_mask(vars);
        self.reachable(&[root])
            .into_iter()
            .filter_map(|id| {
                let name = self.node(id).non_smooth_name()?;
                // A node depends on exactly the symbols its operands depend on.
                self.deps_of(id).intersects(&mask).then_some((id, name))
            })
            .collect()
    }

    /// Replaces symbols by expressions, rebuilding through the smart constructors.
    ///
    /// Work is shared between all nodes of `id`, and the result is simplified as it is
    /// rebuilt, so substituting `0` for a symbol removes the terms it multiplied.
    pub fn substitute(&mut self, id: Id, map: &HashMap<Symbol, Id>) -> Id {
        let mut new: HashMap<Id, Id> = HashMap::new();
        for old in self.reachable(&[id]) {
            let node = self.node(old).clone();
            let rebuilt = match node {
                Math::Symbol(s) => map.get(&s).copied().unwrap_or(old),
                other => {
                    let mapped = other.map_children(|c| new.get(&c).copied().unwrap_or(c));
                    self.insert(mapped)
                }
            };
            new.insert(old, rebuilt);
        }
        new.get(&id).copied().unwrap_or(id)
    }

    /// Returns a readable infix rendering of `id` for messages and debugging.
    ///
    /// Shared subexpressions are printed at every use, so the text can be much larger than
    /// the DAG.
    pub fn display(&self, id: Id) -> impl fmt::Display + '_ {
        Infix { store: self, id }
    }

    /// Copies the DAG reachable from `roots` into a [`egg::RecExpr`], returning the roots' indices.
    pub fn to_rec_expr(&self, roots: &[Id]) -> (egg::RecExpr<Math>, Vec<Id>) {
        let mut index: HashMap<Id, Id> = HashMap::new();
        let mut expr = egg::RecExpr::default();
        for id in self.reachable(roots) {
            let node = self
                .node(id)
                .clone()
                .map_children(|c| index.get(&c).copied().unwrap_or(c));
            index.insert(id, expr.add(node));
        }
        let roots = roots
            .iter()
            .map(|r| index.get(r).copied().unwrap_or(Id::from(0)))
            .collect();
        (expr, roots)
    }
}

/// Infix printer behind [`Store::display`].
struct Infix<'a> {
    store: &'a Store,
    id: Id,
}

impl fmt::Display for Infix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Bottom-up over the DAG, keeping (text, precedence) per node: no recursion.
        let mut text: HashMap<Id, (String, u8)> = HashMap::new();
        for id in self.store.reachable(&[self.id]) {
            let get = |c: &Id, min: u8| -> String {
                match text.get(c) {
                    Some((s, p)) if *p >= min => s.clone(),
                    Some((s, _)) => format!("({s})"),
                    None => "?".to_string(),
                }
            };
            let entry = match self.store.node(id) {
                Math::Num(c) if c.value() < 0.0 => (c.to_string(), 3),
                Math::Num(c) => (c.to_string(), 5),
                Math::Symbol(s) => (s.to_string(), 5),
                Math::Add([a, b]) => (format!("{} + {}", get(a, 1), get(b, 2)), 1),
                Math::Sub([a, b]) => (format!("{} - {}", get(a, 1), get(b, 2)), 1),
                Math::Mul([a, b]) => (format!("{} * {}", get(a, 2), get(b, 3)), 2),
                Math::Div([a, b]) => (format!("{} / {}", get(a, 2), get(b, 3)), 2),
                Math::Neg(a) => (format!("-{}", get(a, 4)), 3),
                Math::Powi([a, n]) | Math::Pow([a, n]) => {
                    (format!("{}^{}", get(a, 5), get(n, 5)), 4)
                }
                Math::Sqrt(a) => (format!("sqrt({})", get(a, 0)), 5),
                Math::Sin(a) => (format!("sin({})", get(a, 0)), 5),
                Math::Cos(a) => (format!("cos({})", get(a, 0)), 5),
                Math::Tan(a) => (format!("tan({})", get(a, 0)), 5),
                Math::Exp(a) => (format!("exp({})", get(a, 0)), 5),
                Math::Ln(a) => (format!("ln({})", get(a, 0)), 5),
                Math::Asin(a) => (format!("asin({})", get(a, 0)), 5),
                Math::Acos(a) => (format!("acos({})", get(a, 0)), 5),
                Math::Atan(a) => (format!("atan({})", get(a, 0)), 5),
                Math::Atan2([y, x]) => (format!("atan2({}, {})", get(y, 0), get(x, 0)), 5),
                Math::Sinh(a) => (format!("sinh({})", get(a, 0)), 5),
                Math::Cosh(a) => (format!("cosh({})", get(a, 0)), 5),
                Math::Tanh(a) => (format!("tanh({})", get(a, 0)), 5),
                Math::Abs(a) => (format!("abs({})", get(a, 0)), 5),
                Math::Signum(a) => (format!("signum({})", get(a, 0)), 5),
                Math::Min([a, b]) => (format!("min({}, {})", get(a, 0), get(b, 0)), 5),
                Math::Max([a, b]) => (format!("max({}, {})", get(a, 0), get(b, 0)), 5),
            };
            text.insert(id, entry);
        }
        match text.get(&self.id) {
            Some((s, _)) => f.write_str(s),
            None => f.write_str("?"),
        }
    }
}
