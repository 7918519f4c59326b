//! `f64` interpreter of [`Store`] expressions: the oracle for tests and finite differences.
//!
//! It follows the emitted code operation by operation (`f64::powi` for integer powers,
//! `f64::powf` for real ones), so generated code can be checked against it to rounding.
//! Non-smooth nodes follow the semantics documented on [`Math`]: `signum` is `0` at zero and
//! NaN for NaN, and `min`/`max` are [`f64::min`]/[`f64::max`], which ignore a NaN operand.

use std::collections::HashMap;
use std::fmt;

use egg::{Id, Symbol};

use crate::expr::{as_i32, signum, Math, Store};

/// Error of [`eval()`]: the expression mentions a symbol the environment does not bind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvalError {
    /// A symbol had no value in the environment.
    UnboundSymbol(Symbol),
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::UnboundSymbol(s) => write!(f, "symbol `{s}` has no value"),
        }
    }
}

impl std::error::Error for EvalError {}

/// Evaluates `id` with symbol values from `env`.
pub fn eval(store: &Store, id: Id, env: &dyn Fn(Symbol) -> Option<f64>) -> Result<f64, EvalError> {
    let values = Evaluator::new(store).eval_many(&[id], env)?;
    Ok(values.first().copied().unwrap_or(0.0))
}

/// Evaluates several roots of one store, computing each shared node once.
#[derive(Clone, Copy, Debug)]
pub struct Evaluator<'a> {
    store: &'a Store,
}

impl<'a> Evaluator<'a> {
    /// Creates an evaluator over `store`.
    pub fn new(store: &'a Store) -> Evaluator<'a> {
        Evaluator { store }
    }

    /// Evaluates every root, returning their values in order.
    pub fn eval_many(
        &self,
        roots: &[Id],
        env: &dyn Fn(Symbol) -> Option<f64>,
    ) -> Result<Vec<f64>, EvalError> {
        let values = self.eval_all(roots, env)?;
        Ok(roots
            .iter()
            .map(|r| values.get(r).copied().unwrap_or(0.0))
            .collect())
    }

    /// Evaluates every node reachable from `roots`, returning the value of each.
    pub fn eval_all(
        &self,
        roots: &[Id],
        env: &dyn Fn(Symbol) -> Option<f64>,
    ) -> Result<HashMap<Id, f64>, EvalError> {
        let mut values: HashMap<Id, f64> = HashMap::new();
        for id in self.store.reachable(roots) {
            let v = |c: &Id| values.get(c).copied().unwrap_or(f64::NAN);
            let value = match self.store.node(id) {
                Math::Num(c) => c.value(),
                Math::Symbol(s) => env(*s).ok_or(EvalError::UnboundSymbol(*s))?,
                Math::Add([a, b]) => v(a) + v(b),
                Math::Sub([a, b]) => v(a) - v(b),
                Math::Mul([a, b]) => v(a) * v(b),
                Math::Div([a, b]) => v(a) / v(b),
                Math::Neg(a) => -v(a),
                Math::Powi([a, n]) => match as_i32(v(n)) {
                    Some(n) => v(a).powi(n),
                    None => v(a).powf(v(n)),
                },
                Math::Pow([a, b]) => v(a).powf(v(b)),
                Math::Sqrt(a) => v(a).sqrt(),
                Math::Sin(a) => v(a).sin(),
                Math::Cos(a) => v(a).cos(),
                Math::Tan(a) => v(a).tan(),
                Math::Exp(a) => v(a).exp(),
                Math::Ln(a) => v(a).ln(),
                Math::Asin(a) => v(a).asin(),
                Math::Acos(a) => v(a).acos(),
                Math::Atan(a) => v(a).atan(),
                Math::Atan2([y, x]) => v(y).atan2(v(x)),
                Math::Sinh(a) => v(a).sinh(),
                Math::Cosh(a) => v(a).cosh(),
                Math::Tanh(a) => v(a).tanh(),
                Math::Abs(a) => v(a).abs(),
                Math::Signum(a) => signum(v(a)),
                Math::Min([a, b]) => v(a).min(v(b)),
                Math::Max([a, b]) => v(a).max(v(b)),
            };
            values.insert(id, value);
        }
        Ok(values)
    }
}
