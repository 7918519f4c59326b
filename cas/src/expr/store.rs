//! The hash-consed DAG of [`Math`] nodes: interning, the symbols each node depends on, and the
//! traversals (reachability, non-smooth nodes, substitution, conversion to and from egg).

use std::collections::{HashMap, HashSet};
use std::fmt;

use egg::{Id, Language, Symbol};

use super::{Constant, Math};

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
        const ZERO: Math = Math::Num(Constant::ZERO);
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
    pub(super) fn intern(&mut self, node: Math) -> Id {
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
}

impl Store {
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
