//! Random expressions over x, y, z that are defined and smooth everywhere, for property tests.
//!
//! Functions with a restricted domain get arguments inside it: `ln`, `sqrt` and `powf` see
//! `u² + 1`, `asin` and `acos` see `½ sin u` and `½ cos u`, `atan2` sees a positive abscissa.

#![allow(dead_code)]

use mechanism_cas::{eval, Id, Store, Symbol};
use proptest::prelude::*;

/// A random expression tree; every constructor is smooth for all real inputs.
#[derive(Clone, Debug)]
pub enum Tree {
    Var(usize),
    Const(f64),
    Add(Box<Tree>, Box<Tree>),
    Sub(Box<Tree>, Box<Tree>),
    Mul(Box<Tree>, Box<Tree>),
    /// u / (w² + 1)
    Div(Box<Tree>, Box<Tree>),
    Neg(Box<Tree>),
    Powi(Box<Tree>, i32),
    /// (u² + 1)^c
    Pow(Box<Tree>, f64),
    /// sqrt(u² + 1)
    Sqrt(Box<Tree>),
    Sin(Box<Tree>),
    Cos(Box<Tree>),
    /// tan(sin u)
    Tan(Box<Tree>),
    /// exp(sin u)
    Exp(Box<Tree>),
    /// ln(u² + 1)
    Ln(Box<Tree>),
    /// asin(½ sin u)
    Asin(Box<Tree>),
    /// acos(½ cos u)
    Acos(Box<Tree>),
    Atan(Box<Tree>),
    /// atan2(u, w² + 1): right of the origin, away from the branch cut
    Atan2(Box<Tree>, Box<Tree>),
    /// sinh(sin u)
    Sinh(Box<Tree>),
    /// cosh(sin u)
    Cosh(Box<Tree>),
    Tanh(Box<Tree>),
}

pub fn vars() -> [Symbol; 3] {
    [Symbol::from("x"), Symbol::from("y"), Symbol::from("z")]
}

pub fn tree() -> impl Strategy<Value = Tree> {
    let leaf = prop_oneof![
        (0usize..3).prop_map(Tree::Var),
        (-6i32..=6).prop_map(|k| Tree::Const(f64::from(k) * 0.5)),
    ];
    leaf.prop_recursive(4, 24, 2, |inner| {
        let b = |t| Box::new(t);
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(move |(u, w)| Tree::Add(b(u), b(w))),
            (inner.clone(), inner.clone()).prop_map(move |(u, w)| Tree::Sub(b(u), b(w))),
            (inner.clone(), inner.clone()).prop_map(move |(u, w)| Tree::Mul(b(u), b(w))),
            (inner.clone(), inner.clone()).prop_map(move |(u, w)| Tree::Div(b(u), b(w))),
            inner.clone().prop_map(move |u| Tree::Neg(b(u))),
            (inner.clone(), 0i32..4).prop_map(move |(u, n)| Tree::Powi(b(u), n)),
            (inner.clone(), -3i32..5)
                .prop_map(move |(u, c)| Tree::Pow(b(u), f64::from(c) * 0.5 + 0.25)),
            inner.clone().prop_map(move |u| Tree::Sqrt(b(u))),
            inner.clone().prop_map(move |u| Tree::Sin(b(u))),
            inner.clone().prop_map(move |u| Tree::Cos(b(u))),
            inner.clone().prop_map(move |u| Tree::Tan(b(u))),
            inner.clone().prop_map(move |u| Tree::Exp(b(u))),
            inner.clone().prop_map(move |u| Tree::Ln(b(u))),
            inner.clone().prop_map(move |u| Tree::Asin(b(u))),
            inner.clone().prop_map(move |u| Tree::Acos(b(u))),
            inner.clone().prop_map(move |u| Tree::Atan(b(u))),
            (inner.clone(), inner.clone()).prop_map(move |(u, w)| Tree::Atan2(b(u), b(w))),
            inner.clone().prop_map(move |u| Tree::Sinh(b(u))),
            inner.clone().prop_map(move |u| Tree::Cosh(b(u))),
            inner.prop_map(move |u| Tree::Tanh(b(u))),
        ]
    })
}

/// Builds `u² + 1`, positive everywhere.
fn positive(store: &mut Store, u: Id) -> Id {
    let sq = store.mul(u, u);
    let one = store.num(1.0);
    store.add(sq, one)
}

/// Builds `u / 2`, in `[-½, ½]` for `u` in `[-1, 1]`.
fn half(store: &mut Store, u: Id) -> Id {
    let h = store.num(0.5);
    store.mul(h, u)
}

pub fn build(store: &mut Store, t: &Tree) -> Id {
    match t {
        Tree::Var(i) => store.symbol(vars()[*i]),
        Tree::Const(c) => store.num(*c),
        Tree::Add(u, w) => {
            let (u, w) = (build(store, u), build(store, w));
            store.add(u, w)
        }
        Tree::Sub(u, w) => {
            let (u, w) = (build(store, u), build(store, w));
            store.sub(u, w)
        }
        Tree::Mul(u, w) => {
            let (u, w) = (build(store, u), build(store, w));
            store.mul(u, w)
        }
        Tree::Div(u, w) => {
            let (u, w) = (build(store, u), build(store, w));
            let d = positive(store, w);
            store.div(u, d)
        }
        Tree::Neg(u) => {
            let u = build(store, u);
            store.neg(u)
        }
        Tree::Powi(u, n) => {
            let u = build(store, u);
            store.powi(u, *n)
        }
        Tree::Pow(u, c) => {
            let u = build(store, u);
            let p = positive(store, u);
            let c = store.num(*c);
            store.pow(p, c)
        }
        Tree::Sqrt(u) => {
            let u = build(store, u);
            let p = positive(store, u);
            store.sqrt(p)
        }
        Tree::Sin(u) => {
            let u = build(store, u);
            store.sin(u)
        }
        Tree::Cos(u) => {
            let u = build(store, u);
            store.cos(u)
        }
        Tree::Tan(u) => {
            let u = build(store, u);
            let s = store.sin(u);
            store.tan(s)
        }
        Tree::Exp(u) => {
            let u = build(store, u);
            let s = store.sin(u);
            store.exp(s)
        }
        Tree::Ln(u) => {
            let u = build(store, u);
            let p = positive(store, u);
            store.ln(p)
        }
        Tree::Asin(u) => {
            let u = build(store, u);
            let s = store.sin(u);
            let h = half(store, s);
            store.asin(h)
        }
        Tree::Acos(u) => {
            let u = build(store, u);
            let c = store.cos(u);
            let h = half(store, c);
            store.acos(h)
        }
        Tree::Atan(u) => {
            let u = build(store, u);
            store.atan(u)
        }
        Tree::Atan2(u, w) => {
            let (u, w) = (build(store, u), build(store, w));
            let p = positive(store, w);
            store.atan2(u, p)
        }
        Tree::Sinh(u) => {
            let u = build(store, u);
            let s = store.sin(u);
            store.sinh(s)
        }
        Tree::Cosh(u) => {
            let u = build(store, u);
            let s = store.sin(u);
            store.cosh(s)
        }
        Tree::Tanh(u) => {
            let u = build(store, u);
            store.tanh(u)
        }
    }
}

pub fn point() -> impl Strategy<Value = [f64; 3]> {
    [-1.5f64..1.5, -1.5f64..1.5, -1.5f64..1.5]
}

/// Evaluates `id` with x, y, z bound to `p` and any other symbol to `extra`.
pub fn at(store: &Store, id: Id, p: [f64; 3], extra: &dyn Fn(Symbol) -> Option<f64>) -> f64 {
    let v = vars();
    eval(store, id, &|s| {
        v.iter()
            .position(|&w| w == s)
            .map(|i| p[i])
            .or_else(|| extra(s))
    })
    .expect("all symbols bound")
}

pub fn no_extra(_: Symbol) -> Option<f64> {
    None
}

/// A finite-difference derivative and an estimate of its absolute error.
#[derive(Clone, Copy, Debug)]
pub struct Difference {
    /// The derivative.
    pub value: f64,
    /// A bound on `|value − f'(x)|`, from the convergence of the estimates and round-off.
    pub error: f64,
}

/// Central difference with one Richardson step (error O(h⁴)), at the step size where it has
/// converged: the estimates at `h = 1e-3 · 2⁻ᵏ`, `k = 0..6`, are compared pairwise and the
/// later one of the closest successive pair is returned. A fixed `h` is not enough for the
/// steep random expressions of these tests (`tan(sin(u^2.25))` has fifth derivatives of order
/// 1e5, which leaves a fixed-step truncation error of ~1e-6 relative), while shrinking `h`
/// further only adds round-off `~ε |f| / h`.
///
/// The error bound is the gap between the two chosen estimates (the truncation error of the
/// coarser one, which bounds the finer one's once an O(h⁴) sequence has started to converge)
/// plus the round-off of the finer one, `2⁶ ε max|f| / h` (each value of a deep random tree may
/// carry tens of ulps). A test that compares a symbolic derivative with this difference allows
/// for that error, so a steep sample that finite differences cannot resolve is not mistaken
/// for a wrong derivative, while a wrong derivative still differs by far more than the bound.
pub fn richardson(f: &dyn Fn(f64) -> f64, x: f64) -> Difference {
    let d = |h: f64| (f(x + h) - f(x - h)) / (2.0 * h);
    let estimate = |h: f64| (4.0 * d(h / 2.0) - d(h)) / 3.0;
    let steps: Vec<f64> = (0..6).map(|k| 1e-3 / f64::powi(2.0, k)).collect();
    let estimates: Vec<f64> = steps.iter().map(|&h| estimate(h)).collect();
    let mut best = (f64::INFINITY, 1);
    for k in 1..estimates.len() {
        let gap = (estimates[k] - estimates[k - 1]).abs();
        if gap < best.0 {
            best = (gap, k);
        }
    }
    let (gap, k) = best;
    let h = steps[k] / 2.0;
    let size = [x - 2.0 * h, x - h, x + h, x + 2.0 * h]
        .iter()
        .fold(f(x).abs(), |m, &y| m.max(f(y).abs()));
    Difference {
        value: estimates[k],
        error: gap + 64.0 * f64::EPSILON * size / h,
    }
}

impl Difference {
    /// Returns whether the estimates converged, to a thousandth of the derivative's size: a
    /// sample whose function varies too fast for the stencil (`cos(u^20)` with `u ~ 2`) gives
    /// estimates that never settle, and then finite differences say nothing about the
    /// symbolic derivative.
    pub fn converged(&self) -> bool {
        self.error <= 1e-3 * self.value.abs().max(1.0)
    }
}

/// Returns whether the symbolic `sym` agrees with the finite difference `fd` to the relative
/// tolerance `tol` (of the largest of `scale`, `sym`, `fd` and 1) plus four times `fd`'s error
/// bound.
pub fn agrees(sym: f64, fd: Difference, tol: f64, scale: f64) -> bool {
    (sym - fd.value).abs()
        <= tol * scale.abs().max(1.0).max(sym.abs()).max(fd.value.abs()) + 4.0 * fd.error
}

pub fn close(a: f64, b: f64, tol: f64, scale: f64) -> bool {
    (a - b).abs() <= tol * scale.max(1.0).max(a.abs()).max(b.abs())
}

/// Builds `|u| + max(u, w) · min(w, v) + signum(v) · w` from three smooth expressions and
/// returns it with the arguments of its kinks (`u`, `u − w`, `w − v`, `v`).
pub fn non_smooth(store: &mut Store, u: Id, w: Id, v: Id) -> (Id, Vec<Id>) {
    let abs = store.abs(u);
    let max = store.max(u, w);
    let min = store.min(w, v);
    let prod = store.mul(max, min);
    let sg = store.signum(v);
    let sw = store.mul(sg, w);
    let f = store.sum([abs, prod, sw]);
    let kinks = vec![u, store.sub(u, w), store.sub(w, v), v];
    (f, kinks)
}

/// Returns whether no kink argument changes sign, or comes within `1e-9` of zero, on the
/// finite-difference stencil of [`richardson`] around `p` in any coordinate direction, so that
/// finite differences only ever see one smooth branch.
pub fn away_from_kinks(store: &Store, kinks: &[Id], p: [f64; 3]) -> bool {
    let h = 1e-3;
    kinks.iter().all(|&k| {
        let centre = at(store, k, p, &no_extra);
        (0..3).all(|i| {
            [-h, -h / 2.0, 0.0, h / 2.0, h].iter().all(|&dt| {
                let mut q = p;
                q[i] += dt;
                let v = at(store, k, q, &no_extra);
                v.abs() > 1e-9 && (v > 0.0) == (centre > 0.0)
            })
        })
    })
}
