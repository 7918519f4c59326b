//! Structural differentiation: forward `d/dx`, reverse-mode gradients, Hessians and the
//! Zhang–Skeel contraction `a·V'''(q)·a`.
//!
//! Derivatives are computed by walking the DAG once, never by rewrite rules, so their cost is
//! linear in the size of the expression and every result is built through the [`Store`]'s
//! smart constructors (folded, hash-consed and shared with everything else in the model).
//!
//! # Smooth functions
//!
//! Each rule is exact wherever the function is differentiable, and builds on the node itself
//! where it can (`n` below), so a function and its derivative share work:
//!
//! | `f(u)` | `f'(u)` | not differentiable at |
//! | --- | --- | --- |
//! | `sqrt u` | `1 / (2 n)` | `u = 0` (infinite) |
//! | `sin u`, `cos u`, `tan u` | `cos u`, `−sin u`, `1 + n²` | poles of `tan` |
//! | `exp u`, `ln u` | `n`, `1 / u` | `u = 0` for `ln` |
//! | `asin u`, `acos u` | `±1 / sqrt((1 − u)(1 + u))` | `u = ±1` (infinite); NaN beyond |
//! | `atan u` | `1 / (1 + u²)` | nowhere |
//! | `sinh u`, `cosh u`, `tanh u` | `cosh u`, `sinh u`, `(1 − n)(1 + n)` | nowhere |
//! | `atan2(y, x)` | `(x dy − y dx) / (x² + y²)` | the origin (`0/0`) |
//!
//! `atan2` also jumps by `2π` across its branch cut `y = 0, x < 0`; the rule above is the
//! derivative on either side, since both branches differ by a constant. `log_b u` is built as
//! `ln u / ln b` ([`Store::log`]) and needs no rule of its own.
//!
//! # Non-smooth functions
//!
//! The derivatives of the non-smooth nodes are exact wherever the function is differentiable
//! and, at a kink, the average of the one-sided derivatives:
//!
//! * `d|u| = signum(u) du` (so `0` at `u = 0`);
//! * `d signum(u) = 0`, true everywhere except at `u = 0`, where `signum` jumps;
//! * `d max(a, b) = ½(1 + s) da + ½(1 − s) db` and `d min(a, b) = ½(1 − s) da + ½(1 + s) db`
//!   with `s = signum(a − b)`, i.e. `½(da + db) ± ½ s (da − db)`.
//!
//! Higher derivatives are therefore structurally blind to kinks (the Hessian of `|x|` is the
//! zero node); [`Store::non_smooth_dependencies`] tells which kinks an expression has.

use std::collections::HashMap;

use egg::{Id, Symbol};

use crate::expr::{Math, Store};

/// Returns `d f / d x`, structurally, or the zero node when `f` does not depend on `x`
/// (the forward pass of [`directional_derivative`] with the tangent 1 for `x`).
pub fn derivative(store: &mut Store, f: Id, x: Symbol) -> Id {
    let one = store.num(1.0);
    forward(store, f, &[(x, one)])
}

/// Returns the directional derivative `Σ_j dirs_j ∂f/∂vars_j`, structurally: one forward
/// pass whose tangents stay factored (`d(u²) = 2u du` with `du` one shared node), unlike the
/// sum of the partial derivatives. `dirs` are the symbols of the direction, which are
/// constants for the derivative; extra entries of the longer slice are ignored.
pub fn directional_derivative(store: &mut Store, f: Id, vars: &[Symbol], dirs: &[Symbol]) -> Id {
    let seeds: Vec<(Symbol, Id)> = vars
        .iter()
        .zip(dirs)
        .map(|(&x, &d)| (x, store.symbol(d)))
        .collect();
    forward(store, f, &seeds)
}

/// Forward-mode differentiation of `f`: the tangent of each node from its children's, with
/// `seeds` the tangents of the symbols (every other symbol a constant).
///
/// Nodes of `f` are visited once in topological order, so shared subexpressions are
/// differentiated once.
fn forward(store: &mut Store, f: Id, seeds: &[(Symbol, Id)]) -> Id {
    let zero = store.num(0.0);
    let vars: Vec<Symbol> = seeds.iter().map(|&(x, _)| x).collect();
    let mask = store.symbol_mask(&vars);
    if !store.deps_of(f).intersects(&mask) {
        return zero;
    }
    let mut d: HashMap<Id, Id> = HashMap::new();
    for n in store.reachable(&[f]) {
        if !store.deps_of(n).intersects(&mask) {
            continue;
        }
        let dv = |c: Id| d.get(&c).copied().unwrap_or(zero);
        let node = store.node(n).clone();
        let dn = match node {
            // Only reachable when the symbol is one of the seeded ones, since n depends on it.
            Math::Symbol(x) => seeds
                .iter()
                .find(|&&(seeded, _)| seeded == x)
                .map_or(zero, |&(_, tangent)| tangent),
            Math::Num(_) => zero,
            Math::Add([a, b]) => store.add(dv(a), dv(b)),
            Math::Sub([a, b]) => store.sub(dv(a), dv(b)),
            Math::Mul([a, b]) => {
                let l = store.mul(dv(a), b);
                let r = store.mul(a, dv(b));
                store.add(l, r)
            }
            Math::Div([a, b]) => {
                // (a/b)' = (a' - (a/b) b') / b, reusing the quotient node.
                let t = store.mul(n, dv(b));
                let num = store.sub(dv(a), t);
                store.div(num, b)
            }
            Math::Neg(a) => store.neg(dv(a)),
            Math::Powi([u, e]) => {
                let k = store.constant(e).unwrap_or(0.0) as i64;
                let p = power_factor(store, u, k);
                store.mul(p, dv(u))
            }
            Math::Pow([u, v]) => {
                let (du, dvv) = (dv(u), dv(v));
                let base_part = real_power_factor(store, u, v);
                let l = store.mul(base_part, du);
                let r = if store.is_zero(dvv) {
                    zero
                } else {
                    let ln_u = store.ln(u);
                    let t = store.mul(n, ln_u);
                    store.mul(t, dvv)
                };
                store.add(l, r)
            }
            Math::Sqrt(u) => {
                let two_n = two_times(store, n);
                store.div(dv(u), two_n)
            }
            Math::Sin(u) => {
                let c = store.cos(u);
                store.mul(c, dv(u))
            }
            Math::Cos(u) => {
                let s = store.sin(u);
                let t = store.mul(s, dv(u));
                store.neg(t)
            }
            Math::Tan(u) => {
                let sec2 = one_plus_square(store, n);
                store.mul(sec2, dv(u))
            }
            Math::Exp(u) => store.mul(n, dv(u)),
            Math::Ln(u) => store.div(dv(u), u),
            Math::Asin(u) | Math::Acos(u) => {
                let root = unit_root(store, u);
                let d = store.div(dv(u), root);
                if matches!(node, Math::Acos(_)) {
                    store.neg(d)
                } else {
                    d
                }
            }
            Math::Atan(u) => {
                let den = one_plus_square(store, u);
                store.div(dv(u), den)
            }
            Math::Atan2([y, x]) => {
                // (x dy - y dx) / (x² + y²)
                let r2 = squared_norm(store, x, y);
                let l = store.mul(x, dv(y));
                let r = store.mul(y, dv(x));
                let num = store.sub(l, r);
                store.div(num, r2)
            }
            Math::Sinh(u) => {
                let c = store.cosh(u);
                store.mul(c, dv(u))
            }
            Math::Cosh(u) => {
                let s = store.sinh(u);
                store.mul(s, dv(u))
            }
            Math::Tanh(u) => {
                let sech2 = one_minus_square(store, n);
                store.mul(sech2, dv(u))
            }
            Math::Abs(u) => {
                let s = store.signum(u);
                store.mul(s, dv(u))
            }
            // Zero almost everywhere: signum is piecewise constant.
            Math::Signum(_) => zero,
            Math::Min([a, b]) | Math::Max([a, b]) => {
                let is_max = matches!(node, Math::Max(_));
                let (wa, wb) = kink_weights(store, a, b, is_max);
                let l = store.mul(wa, dv(a));
                let r = store.mul(wb, dv(b));
                store.add(l, r)
            }
        };
        d.insert(n, dn);
    }
    d.get(&f).copied().unwrap_or(zero)
}

/// Returns `∇f` with respect to `vars` by reverse-mode accumulation.
///
/// Adjoints flow from `f` down the DAG in descending `Id` order (a node's parents all have
/// larger ids), so each node is visited once whatever the number of variables. Children that
/// depend on none of `vars` receive no adjoint.
pub fn gradient(store: &mut Store, f: Id, vars: &[Symbol]) -> Vec<Id> {
    let zero = store.num(0.0);
    let mask = store.symbol_mask(vars);
    let mut adjoint_terms: HashMap<Id, Vec<Id>> = HashMap::new();
    let mut by_symbol: HashMap<Symbol, Id> = HashMap::new();
    if store.deps_of(f).intersects(&mask) {
        let one = store.num(1.0);
        adjoint_terms.insert(f, vec![one]);
    }
    let nodes = store.reachable(&[f]);
    for &n in nodes.iter().rev() {
        let Some(terms) = adjoint_terms.remove(&n) else {
            continue;
        };
        let a = store.sum(terms);
        if store.is_zero(a) {
            continue;
        }
        let node = store.node(n).clone();
        let mut push = |store: &mut Store, child: Id, contribution: &dyn Fn(&mut Store) -> Id| {
            if store.deps_of(child).intersects(&mask) {
                let c = contribution(store);
                adjoint_terms.entry(child).or_default().push(c);
            }
        };
        match node {
            Math::Symbol(s) => {
                by_symbol.insert(s, a);
            }
            Math::Num(_) => {}
            Math::Add([x, y]) => {
                push(store, x, &|_| a);
                push(store, y, &|_| a);
            }
            Math::Sub([x, y]) => {
                push(store, x, &|_| a);
                push(store, y, &|s| s.neg(a));
            }
            Math::Mul([x, y]) => {
                push(store, x, &|s| s.mul(a, y));
                push(store, y, &|s| s.mul(a, x));
            }
            Math::Div([x, y]) => {
                // ∂/∂x = a / y, ∂/∂y = -(a / y) (x / y): share a / y and the quotient node n.
                let q = store.div(a, y);
                push(store, x, &|_| q);
                push(store, y, &|s| {
                    let t = s.mul(q, n);
                    s.neg(t)
                });
            }
            Math::Neg(x) => push(store, x, &|s| s.neg(a)),
            Math::Powi([u, e]) => {
                let k = store.constant(e).unwrap_or(0.0) as i64;
                push(store, u, &|s| {
                    let p = power_factor(s, u, k);
                    s.mul(a, p)
                });
            }
            Math::Pow([u, v]) => {
                push(store, u, &|s| {
                    let p = real_power_factor(s, u, v);
                    s.mul(a, p)
                });
                push(store, v, &|s| {
                    let ln_u = s.ln(u);
                    let t = s.mul(n, ln_u);
                    s.mul(a, t)
                });
            }
            Math::Sqrt(u) => push(store, u, &|s| {
                let two_n = two_times(s, n);
                s.div(a, two_n)
            }),
            Math::Sin(u) => push(store, u, &|s| {
                let c = s.cos(u);
                s.mul(a, c)
            }),
            Math::Cos(u) => push(store, u, &|s| {
                let sn = s.sin(u);
                let t = s.mul(a, sn);
                s.neg(t)
            }),
            Math::Tan(u) => push(store, u, &|s| {
                let sec2 = one_plus_square(s, n);
                s.mul(a, sec2)
            }),
            Math::Exp(u) => push(store, u, &|s| s.mul(a, n)),
            Math::Ln(u) => push(store, u, &|s| s.div(a, u)),
            Math::Asin(u) => push(store, u, &|s| {
                let root = unit_root(s, u);
                s.div(a, root)
            }),
            Math::Acos(u) => push(store, u, &|s| {
                let root = unit_root(s, u);
                let q = s.div(a, root);
                s.neg(q)
            }),
            Math::Atan(u) => push(store, u, &|s| {
                let den = one_plus_square(s, u);
                s.div(a, den)
            }),
            Math::Atan2([y, x]) => {
                // ∂/∂y = x / (x² + y²), ∂/∂x = -y / (x² + y²): share a / (x² + y²).
                let r2 = squared_norm(store, x, y);
                let q = store.div(a, r2);
                push(store, y, &|s| s.mul(q, x));
                push(store, x, &|s| {
                    let t = s.mul(q, y);
                    s.neg(t)
                });
            }
            Math::Sinh(u) => push(store, u, &|s| {
                let c = s.cosh(u);
                s.mul(a, c)
            }),
            Math::Cosh(u) => push(store, u, &|s| {
                let sn = s.sinh(u);
                s.mul(a, sn)
            }),
            Math::Tanh(u) => push(store, u, &|s| {
                let sech2 = one_minus_square(s, n);
                s.mul(a, sech2)
            }),
            Math::Abs(u) => push(store, u, &|s| {
                let sg = s.signum(u);
                s.mul(a, sg)
            }),
            Math::Signum(_) => {}
            Math::Min([x, y]) | Math::Max([x, y]) => {
                let is_max = matches!(node, Math::Max(_));
                let (wx, wy) = kink_weights(store, x, y, is_max);
                push(store, x, &|s| s.mul(a, wx));
                push(store, y, &|s| s.mul(a, wy));
            }
        }
    }
    vars.iter()
        .map(|v| by_symbol.get(v).copied().unwrap_or(zero))
        .collect()
}

/// Returns the Jacobian of `fs` with respect to `vars`: row `i` is the gradient of `fs[i]`.
pub fn jacobian(store: &mut Store, fs: &[Id], vars: &[Symbol]) -> Vec<Vec<Id>> {
    fs.iter().map(|&f| gradient(store, f, vars)).collect()
}

/// Returns the Hessian of `f` with respect to `vars`, as a full symmetric matrix.
///
/// Each gradient entry `g_i` is differentiated by one reverse pass with respect to the
/// variables `vars[..=i]` it actually depends on; entries whose `g_i` cannot depend on
/// `vars[j]` are the zero node without any work. The upper triangle mirrors the lower one, so
/// `H[i][j]` and `H[j][i]` are the same node.
pub fn hessian(store: &mut Store, f: Id, vars: &[Symbol]) -> Vec<Vec<Id>> {
    let zero = store.num(0.0);
    let g = gradient(store, f, vars);
    let n = vars.len();
    let mut h = vec![vec![zero; n]; n];
    for (i, &gi) in g.iter().enumerate() {
        let live: Vec<Symbol> = vars[..=i]
            .iter()
            .copied()
            .filter(|&v| store.depends_on(gi, v))
            .collect();
        if live.is_empty() {
            continue;
        }
        let row = gradient(store, gi, &live);
        for (j, &vj) in vars[..=i].iter().enumerate() {
            if let Some(pos) = live.iter().position(|&v| v == vj) {
                h[i][j] = row[pos];
                h[j][i] = row[pos];
            }
        }
    }
    h
}

/// Returns `∇_q (aᵀ Hess f(q) a)`, the contraction `a·f'''(q)·a` of Zhang–Skeel integrators.
///
/// `vars` are the coordinates `q` and `dirs` the symbols of the direction `a` (one per
/// coordinate, distinct from `vars`), which stay fixed while differentiating. Extra entries of
/// the longer slice are ignored.
pub fn third_contraction(store: &mut Store, f: Id, vars: &[Symbol], dirs: &[Symbol]) -> Vec<Id> {
    let n = vars.len().min(dirs.len());
    let vars = &vars[..n];
    // aᵀ Hess f a as the second directional derivative d²/dε² f(q + εa), which keeps the
    // structure of f: for f = ½ Σ gᵢ², Σ ((Gᵢ a)² + gᵢ aᵀ Hess gᵢ a) rather than the
    // expanded Hessian's entries.
    let once = directional_derivative(store, f, vars, dirs);
    let twice = directional_derivative(store, once, vars, dirs);
    gradient(store, twice, vars)
}

/// Builds `k * u^(k-1)`, the derivative factor of `u^k`.
fn power_factor(store: &mut Store, u: Id, k: i64) -> Id {
    let c = store.num(k as f64);
    let p = store.powi_i64(u, k - 1);
    store.mul(c, p)
}

/// Builds `v * u^(v-1)`, the derivative of `u^v` with respect to `u`.
///
/// Preferred to `v * u^v / u`, which is NaN at `u = 0`, and to the `ln u` form, which is NaN
/// for negative `u` even when the exponent is a constant.
fn real_power_factor(store: &mut Store, u: Id, v: Id) -> Id {
    let one = store.num(1.0);
    let v1 = store.sub(v, one);
    let p = store.pow(u, v1);
    store.mul(v, p)
}

/// Builds the partial derivatives `(∂/∂a, ∂/∂b)` of `max(a, b)` (or of `min(a, b)`).
///
/// With `s = signum(a − b)` they are `(½(1 + s), ½(1 − s))` for `max` and the swapped pair for
/// `min`: `1` for the selected operand and `0` for the other, and `½` each where `a = b`.
fn kink_weights(store: &mut Store, a: Id, b: Id, is_max: bool) -> (Id, Id) {
    let diff = store.sub(a, b);
    let s = store.signum(diff);
    let (half, one) = (store.num(0.5), store.num(1.0));
    let plus = store.add(one, s);
    let minus = store.sub(one, s);
    let plus = store.mul(half, plus);
    let minus = store.mul(half, minus);
    if is_max {
        (plus, minus)
    } else {
        (minus, plus)
    }
}

/// Builds `2 * n`.
fn two_times(store: &mut Store, n: Id) -> Id {
    let two = store.num(2.0);
    store.mul(two, n)
}

/// Builds `1 + n²` (`sec²` when `n = tan u`, and the denominator of `atan' u`).
fn one_plus_square(store: &mut Store, n: Id) -> Id {
    let one = store.num(1.0);
    let sq = store.powi(n, 2);
    store.add(one, sq)
}

/// Builds `(1 − n)(1 + n) = 1 − n²` (`sech²` when `n = tanh u`).
///
/// The factored form keeps its relative accuracy as `|n| → 1`, where `1 − n·n` cancels: for
/// `|n| ≥ ½` the factor `1 − n` is exact (Sterbenz), so the result is within a few rounding
/// errors of `1 − n²` for the stored `n`.
fn one_minus_square(store: &mut Store, n: Id) -> Id {
    let one = store.num(1.0);
    let minus = store.sub(one, n);
    let plus = store.add(one, n);
    store.mul(minus, plus)
}

/// Builds `sqrt((1 − u)(1 + u))`, the derivative denominator of `asin u` and `acos u`.
///
/// It is `0` at `u = ±1`, where the derivatives are infinite, and NaN for `|u| > 1`, where
/// `asin` and `acos` are themselves NaN.
fn unit_root(store: &mut Store, u: Id) -> Id {
    let w = one_minus_square(store, u);
    store.sqrt(w)
}

/// Builds `x² + y²`, the derivative denominator of `atan2(y, x)`, which is `0` only at the
/// origin, where `atan2` is not differentiable.
fn squared_norm(store: &mut Store, x: Id, y: Id) -> Id {
    let x2 = store.powi(x, 2);
    let y2 = store.powi(y, 2);
    store.add(x2, y2)
}
