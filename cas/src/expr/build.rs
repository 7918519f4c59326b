//! The smart constructors of the [`Store`]: each builds one node, folding constant operands
//! when the result is finite, dropping neutral elements and ordering commutative operands.

use egg::{Id, Symbol};

use super::{as_i32, fold_node, Constant, Math, Store};

impl Store {
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
}
