//! Straight-line `f64` Rust code for many outputs sharing one [`Store`].
//!
//! Every node used more than once, counting uses across all outputs, is computed once into a
//! `let`; single-use nodes are inlined into their parent. Outputs that are the constant zero
//! are not written, so the caller zero-fills once and knows the sparsity from
//! [`Store::is_zero`].

use std::collections::HashMap;

use egg::{Id, Language, Symbol};
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote};

use crate::expr::{as_i32, Math, Store};

/// One value to write: `target = value;`.
#[derive(Clone, Debug)]
pub struct Output {
    /// Place expression receiving the value, e.g. `out[(0, 1)]`.
    pub target: TokenStream,
    /// Expression to compute.
    pub value: Id,
}

/// Options of [`emit()`].
#[derive(Clone, Debug, Default)]
pub struct EmitOptions {
    /// Path of an inline `fn(a: f64, b: f64, c: f64) -> f64` computing `a * b + c`.
    ///
    /// The runtime defines it as `a.mul_add(b, c)` only where the target has FMA, since the
    /// software fallback of `mul_add` is far slower than a multiply and an add. With `None`,
    /// `a * b + c` is written out.
    pub fma: Option<TokenStream>,
}

/// Binding strength of an emitted expression, to parenthesize only where needed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Prec {
    /// `if … { … } else { … }`: parenthesized as any operand, bare as a whole statement value
    /// or call argument.
    Control,
    /// `a + b`, `a - b`.
    Sum,
    /// `a * b`, `a / b`.
    Product,
    /// `-a`.
    Unary,
    /// Identifiers, literals, calls, method calls, parenthesized expressions.
    Atom,
}

/// An emitted expression with its binding strength.
#[derive(Clone, Debug)]
struct Code {
    tokens: TokenStream,
    prec: Prec,
}

impl Code {
    fn atom(tokens: TokenStream) -> Code {
        Code {
            tokens,
            prec: Prec::Atom,
        }
    }

    /// Returns the tokens, parenthesized unless the expression binds at least as tightly as `min`.
    fn at(&self, min: Prec) -> TokenStream {
        let t = &self.tokens;
        if self.prec >= min {
            t.clone()
        } else {
            quote!((#t))
        }
    }
}

/// Emits statements computing every nonzero output.
///
/// The result is a sequence of `let tN: f64 = …;` statements for shared nodes followed by
/// `target = …;` for each output whose value is not the constant zero. `symbol` turns a leaf
/// symbol into an expression such as `q[0]` or `self.m1`; it is treated as an atom, so it must
/// return a path, field, index or call expression (or a parenthesized one). The names `t0`,
/// `t1`, … must not be used by the symbol expressions.
///
/// Non-smooth nodes become `a.abs()`, `a.min(b)` and `a.max(b)`, and `signum(a)` becomes
/// `if a > 0.0 { 1.0 } else if a < 0.0 { -1.0 } else { a }`, which has the semantics of
/// [`Math::Signum`] (`0` at zero, NaN for NaN; **not** [`f64::signum`]). Since that form reads
/// its operand three times, a non-leaf operand of `signum` is always bound to a `let`, and a
/// symbol operand is repeated, so symbol expressions should be cheap and free of side effects.
pub fn emit(
    store: &Store,
    outputs: &[Output],
    symbol: &dyn Fn(Symbol) -> TokenStream,
    options: &EmitOptions,
) -> TokenStream {
    let live: Vec<&Output> = outputs.iter().filter(|o| !store.is_zero(o.value)).collect();
    let roots: Vec<Id> = live.iter().map(|o| o.value).collect();
    let nodes = store.reachable(&roots);

    // Uses of each node: one per parent edge and one per output reading it.
    let mut uses: HashMap<Id, usize> = HashMap::new();
    for &id in &nodes {
        let node = store.node(id);
        let children: &[Id] = match node {
            // The exponent of powi is written as an integer literal, not read from a node.
            Math::Powi([a, e]) if store.constant(*e).and_then(as_i32).is_some() => {
                std::slice::from_ref(a)
            }
            other => other.children(),
        };
        for &c in children {
            *uses.entry(c).or_default() += 1;
        }
        if let Math::Signum(a) = node {
            // The inline signum reads its operand three times: force a `let`.
            *uses.entry(*a).or_default() += 2;
        }
    }
    for &r in &roots {
        *uses.entry(r).or_default() += 1;
    }

    let mut code: HashMap<Id, Code> = HashMap::new();
    let mut statements = TokenStream::new();
    let mut next_temp = 0usize;
    for &id in &nodes {
        let c = node_code(store, id, &code, symbol, options);
        let is_leaf = matches!(store.node(id), Math::Num(_) | Math::Symbol(_));
        if !is_leaf && uses.get(&id).copied().unwrap_or(0) > 1 {
            let name: Ident = format_ident!("t{}", next_temp);
            next_temp += 1;
            let tokens = c.tokens;
            statements.extend(quote! { let #name: f64 = #tokens; });
            code.insert(id, Code::atom(quote!(#name)));
        } else {
            code.insert(id, c);
        }
    }
    for o in live {
        let target = &o.target;
        let value = code
            .get(&o.value)
            .map(|c| c.tokens.clone())
            .unwrap_or_else(|| quote!(0.0_f64));
        statements.extend(quote! { #target = #value; });
    }
    statements
}

/// Builds the expression of one node from the already emitted code of its children.
fn node_code(
    store: &Store,
    id: Id,
    code: &HashMap<Id, Code>,
    symbol: &dyn Fn(Symbol) -> TokenStream,
    options: &EmitOptions,
) -> Code {
    let nan = || Code::atom(quote!(f64::NAN));
    let child = |c: &Id| code.get(c).cloned().unwrap_or_else(nan);
    let binary = |a: &Id, op: TokenStream, b: &Id, left: Prec, right: Prec, prec: Prec| {
        let (a, b) = (child(a).at(left), child(b).at(right));
        Code {
            tokens: quote!(#a #op #b),
            prec,
        }
    };
    let method = |a: &Id, name: &str, args: TokenStream| {
        let a = child(a).at(Prec::Atom);
        let name = Ident::new(name, Span::call_site());
        Code::atom(quote!(#a.#name(#args)))
    };
    match store.node(id) {
        Math::Num(c) => float_literal(c.value()),
        Math::Symbol(s) => Code::atom(symbol(*s)),
        Math::Add([a, b]) => {
            if let Some(fma) = &options.fma {
                if let Some(fused) = fused(store, code, fma, *a, *b) {
                    return fused;
                }
            }
            binary(a, quote!(+), b, Prec::Sum, Prec::Product, Prec::Sum)
        }
        Math::Sub([a, b]) => {
            // `a - -b` would read as a double negation: parenthesize a negated right operand.
            let right = if child(b).prec == Prec::Unary {
                Prec::Atom
            } else {
                Prec::Product
            };
            binary(a, quote!(-), b, Prec::Sum, right, Prec::Sum)
        }
        Math::Mul([a, b]) => binary(a, quote!(*), b, Prec::Product, Prec::Atom, Prec::Product),
        Math::Div([a, b]) => binary(a, quote!(/), b, Prec::Product, Prec::Atom, Prec::Product),
        Math::Neg(a) => {
            // An atom operand avoids `- -x`, which rustc flags as a double negation.
            let a = child(a).at(Prec::Atom);
            Code {
                tokens: quote!(-#a),
                prec: Prec::Unary,
            }
        }
        Math::Powi([a, e]) => match store.constant(*e).and_then(as_i32) {
            Some(n) => {
                let n = int_literal(n);
                method(a, "powi", n)
            }
            None => {
                let e = child(e).tokens;
                method(a, "powf", e)
            }
        },
        Math::Pow([a, b]) => {
            let b = child(b).tokens;
            method(a, "powf", b)
        }
        Math::Sqrt(a) => method(a, "sqrt", TokenStream::new()),
        Math::Sin(a) => method(a, "sin", TokenStream::new()),
        Math::Cos(a) => method(a, "cos", TokenStream::new()),
        Math::Tan(a) => method(a, "tan", TokenStream::new()),
        Math::Exp(a) => method(a, "exp", TokenStream::new()),
        Math::Ln(a) => method(a, "ln", TokenStream::new()),
        Math::Asin(a) => method(a, "asin", TokenStream::new()),
        Math::Acos(a) => method(a, "acos", TokenStream::new()),
        Math::Atan(a) => method(a, "atan", TokenStream::new()),
        Math::Atan2([y, x]) => {
            let x = child(x).tokens;
            method(y, "atan2", x)
        }
        Math::Sinh(a) => method(a, "sinh", TokenStream::new()),
        Math::Cosh(a) => method(a, "cosh", TokenStream::new()),
        Math::Tanh(a) => method(a, "tanh", TokenStream::new()),
        Math::Abs(a) => method(a, "abs", TokenStream::new()),
        Math::Min([a, b]) => {
            let b = child(b).tokens;
            method(a, "min", b)
        }
        Math::Max([a, b]) => {
            let b = child(b).tokens;
            method(a, "max", b)
        }
        Math::Signum(a) => {
            // The operand is a `let` or a leaf (see the use count in `emit`), so it is cheap to
            // read three times. The last branch returns ±0 for ±0 and NaN for NaN.
            let a = child(a).at(Prec::Atom);
            Code {
                tokens: quote!(if #a > 0.0 { 1.0 } else if #a < 0.0 { -1.0 } else { #a }),
                prec: Prec::Control,
            }
        }
    }
}

/// Emits `fma(x, y, c)` for `x * y + c` when one operand is a product inlined into this sum.
///
/// A product that is shared (bound to a `let`) is left alone: it is computed anyway, and
/// fusing it would only change the rounding of this one use.
fn fused(store: &Store, code: &HashMap<Id, Code>, fma: &TokenStream, a: Id, b: Id) -> Option<Code> {
    let inlined_product = |p: Id| match store.node(p) {
        Math::Mul([x, y]) if code.get(&p).is_some_and(|c| c.prec == Prec::Product) => {
            Some((*x, *y))
        }
        _ => None,
    };
    let ((x, y), rest) = match (inlined_product(a), inlined_product(b)) {
        (Some(xy), _) => (xy, b),
        (None, Some(xy)) => (xy, a),
        (None, None) => return None,
    };
    let arg = |c: Id| code.get(&c).map(|c| c.tokens.clone());
    let (x, y, rest) = (arg(x)?, arg(y)?, arg(rest)?);
    Some(Code::atom(quote!(#fma(#x, #y, #rest))))
}

/// Emits a finite `f64` literal; negative values become a negation of a positive literal.
fn float_literal(v: f64) -> Code {
    if !v.is_finite() {
        // Unreachable for `Constant`s, handled so that a literal can never panic.
        return Code::atom(quote!(f64::NAN));
    }
    let lit = Literal::f64_suffixed(v.abs());
    if v.is_sign_negative() && v != 0.0 {
        Code {
            tokens: quote!(-#lit),
            prec: Prec::Unary,
        }
    } else {
        Code::atom(quote!(#lit))
    }
}

/// Emits an `i32` literal for `powi`, with a separate minus sign for negative exponents.
fn int_literal(n: i32) -> TokenStream {
    let lit = Literal::i64_unsuffixed(i64::from(n).abs());
    if n < 0 {
        quote!(-#lit)
    } else {
        quote!(#lit)
    }
}
