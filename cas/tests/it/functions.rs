//! The inverse trigonometric and hyperbolic functions, `atan2` and `log` to a base: values
//! against Rust's `f64` methods, derivatives against closed forms and against finite
//! differences, each inside its domain.
//!
//! Every tolerance is an error bound, not an observed error: [`close_forms`] bounds the
//! rounding of two evaluations of one formula, [`fd_bound`] the truncation and rounding error of
//! the finite difference, from a bound on the fifth derivative over the sampled interval.

use mechanism_cas::{derivative, eval, gradient, hessian, Id, Store, Symbol};
use proptest::prelude::*;

const EPS: f64 = f64::EPSILON;

/// A function of one variable with its derivatives in closed form.
struct Unary {
    name: &'static str,
    build: fn(&mut Store, Id) -> Id,
    value: fn(f64) -> f64,
    first: fn(f64) -> f64,
    second: fn(f64) -> f64,
    /// Magnitude of the terms that cancel when the symbolic first (second) derivative is
    /// evaluated, or of the cancellation in the closed form, in units of its rounding errors:
    /// the allowed difference is `K ε (|closed form| + scale)`.
    first_scale: fn(f64) -> f64,
    second_scale: fn(f64) -> f64,
    /// Interval of the closed-form checks.
    domain: (f64, f64),
    /// Interval of the finite-difference check, with `sup |f⁽⁵⁾|` over it widened by `H`.
    fd_domain: (f64, f64),
    fifth: f64,
}

/// `1 − x²` for the closed forms of `asin` and `acos`, computed naively on purpose: its
/// relative error `ε / (2 (1 − x²))` is part of [`Unary::first_scale`].
fn w(x: f64) -> f64 {
    1.0 - x * x
}

/// The sup of `|f⁽⁵⁾|` below were computed with SymPy on a grid of 20 001 points over the
/// finite-difference interval widened by `H` and rounded up: `asin⁽⁵⁾` is
/// `(24x⁴ + 72x² + 9)/(1 − x²)^(9/2)` (1.53e5 at `|x| = 0.901`), `atan⁽⁵⁾(0) = 24`,
/// `tanh⁽⁵⁾(0) = 16`, `cosh(3.001) = 10.08`.
fn unaries() -> Vec<Unary> {
    vec![
        Unary {
            name: "asin",
            build: Store::asin,
            value: f64::asin,
            first: |x| 1.0 / w(x).sqrt(),
            second: |x| x / w(x).powf(1.5),
            first_scale: |x| (1.0 / w(x).sqrt()) / w(x),
            second_scale: |x| 1.0 / w(x).powf(1.5) + (x / w(x).powf(1.5)).abs() / w(x),
            domain: (-0.999_999, 0.999_999),
            fd_domain: (-0.9, 0.9),
            fifth: 1.6e5,
        },
        Unary {
            name: "acos",
            build: Store::acos,
            value: f64::acos,
            first: |x| -1.0 / w(x).sqrt(),
            second: |x| -x / w(x).powf(1.5),
            first_scale: |x| (1.0 / w(x).sqrt()) / w(x),
            second_scale: |x| 1.0 / w(x).powf(1.5) + (x / w(x).powf(1.5)).abs() / w(x),
            domain: (-0.999_999, 0.999_999),
            fd_domain: (-0.9, 0.9),
            fifth: 1.6e5,
        },
        Unary {
            name: "atan",
            build: Store::atan,
            value: f64::atan,
            first: |x| 1.0 / (1.0 + x * x),
            second: |x| -2.0 * x / (1.0 + x * x).powi(2),
            first_scale: |_| 0.0,
            second_scale: |_| 0.0,
            domain: (-50.0, 50.0),
            fd_domain: (-30.0, 30.0),
            fifth: 24.0,
        },
        Unary {
            name: "sinh",
            build: Store::sinh,
            value: f64::sinh,
            first: f64::cosh,
            second: f64::sinh,
            first_scale: |_| 0.0,
            second_scale: |_| 0.0,
            domain: (-20.0, 20.0),
            fd_domain: (-3.0, 3.0),
            fifth: 10.1,
        },
        Unary {
            name: "cosh",
            build: Store::cosh,
            value: f64::cosh,
            first: f64::sinh,
            second: f64::cosh,
            first_scale: |_| 0.0,
            second_scale: |_| 0.0,
            domain: (-20.0, 20.0),
            fd_domain: (-3.0, 3.0),
            fifth: 10.1,
        },
        Unary {
            name: "tanh",
            build: Store::tanh,
            value: f64::tanh,
            first: |x| x.cosh().powi(-2),
            second: |x| -2.0 * x.tanh() * x.cosh().powi(-2),
            // The symbolic forms are polynomials in `n = tanh x`, whose rounding (a few ε
            // absolute) does not shrink with sech² x.
            first_scale: |_| 1.0,
            second_scale: |_| 1.0,
            domain: (-20.0, 20.0),
            fd_domain: (-30.0, 30.0),
            fifth: 16.0,
        },
    ]
}

/// Rounding errors allowed per unit of scale: each side is a handful of correctly rounded
/// operations and libm calls (≤ 2 ulp each), and `K = 32` covers both sides with margin.
const K: f64 = 32.0;

/// Whether two evaluations of one derivative agree within their rounding errors.
fn close_forms(symbolic: f64, closed: f64, scale: f64) -> bool {
    symbolic == closed || (symbolic - closed).abs() <= K * EPS * (closed.abs() + scale)
}

/// Step of the finite differences.
const H: f64 = 1e-3;

/// Central difference with one Richardson step: `f'(x) − f⁽⁵⁾(ξ) H⁴ / 480`.
fn fd(f: &dyn Fn(f64) -> f64, x: f64) -> f64 {
    let d = |h: f64| (f(x + h) - f(x - h)) / (2.0 * h);
    (4.0 * d(H / 2.0) - d(H)) / 3.0
}

/// Bound on `|fd(f, x) − f'(x)|` given `sup |f⁽⁵⁾|` on `[x − H, x + H]`.
///
/// Truncation is `H⁴ / 480 · sup |f⁽⁵⁾|`. Each value `f(x ± h)` carries an error `e` of at most
/// `2ε |f|` (libm and the few operations of the expression) plus `ε (|x| + H) / 2 · |f'|` from
/// rounding `x ± h`; the combination `(4 D(H/2) − D(H)) / 3` multiplies it by at most `3 / H`.
/// The final operations add a few `ε |f'|`. The sum is doubled to cover the neglected
/// higher-order terms.
fn fd_bound(f: &dyn Fn(f64) -> f64, x: f64, fifth: f64, slope: f64) -> f64 {
    let size = [x - H, x - H / 2.0, x + H / 2.0, x + H]
        .iter()
        .fold(0.0f64, |m, &t| m.max(f(t).abs()));
    let e = 2.0 * EPS * size + EPS * (x.abs() + H) / 2.0 * slope.abs();
    2.0 * (H.powi(4) / 480.0 * fifth + 3.0 * e / H + 4.0 * EPS * slope.abs())
}

/// A function of one real variable, for finite differences.
type Line<'a> = &'a dyn Fn(f64) -> f64;

fn at(store: &Store, id: Id, values: &[(Symbol, f64)]) -> f64 {
    eval(store, id, &|s| {
        values.iter().find(|(v, _)| *v == s).map(|&(_, x)| x)
    })
    .expect("all symbols bound")
}

fn uniform(lo: f64, hi: f64, u: f64) -> f64 {
    lo + (hi - lo) * u
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The interpreter computes exactly what the `f64` methods compute, NaN outside the
    /// domain included, and constant folding agrees or leaves the node alone.
    #[test]
    fn unary_values_are_the_f64_methods(x in -3.0f64..3.0) {
        let sym = Symbol::from("x");
        for f in unaries() {
            let mut s = Store::new();
            let xv = s.symbol(sym);
            let node = (f.build)(&mut s, xv);
            let got = at(&s, node, &[(sym, x)]);
            let want = (f.value)(x);
            prop_assert!(got.to_bits() == want.to_bits(), "{}({x}): {got} vs {want}", f.name);
            let c = s.num(x);
            let folded = (f.build)(&mut s, c);
            match s.constant(folded) {
                Some(v) => prop_assert_eq!(v, want + 0.0),
                None => prop_assert!(!want.is_finite(), "{}({}) was not folded", f.name, x),
            }
        }
    }

    #[test]
    fn unary_derivatives_match_closed_forms(u in 0.0f64..1.0) {
        let sym = Symbol::from("x");
        for f in unaries() {
            let x = uniform(f.domain.0, f.domain.1, u);
            let mut s = Store::new();
            let xv = s.symbol(sym);
            let node = (f.build)(&mut s, xv);
            let d = derivative(&mut s, node, sym);
            let g = gradient(&mut s, node, &[sym])[0];
            let h = hessian(&mut s, node, &[sym])[0][0];
            let d2 = derivative(&mut s, d, sym);
            let env = [(sym, x)];
            let (first, second) = ((f.first)(x), (f.second)(x));
            for (what, id) in [("forward", d), ("reverse", g)] {
                let got = at(&s, id, &env);
                prop_assert!(close_forms(got, first, (f.first_scale)(x)),
                    "{} {what} derivative at {x}: {got} vs {first}", f.name);
            }
            for (what, id) in [("hessian", h), ("forward²", d2)] {
                let got = at(&s, id, &env);
                prop_assert!(close_forms(got, second, (f.second_scale)(x)),
                    "{} {what} second derivative at {x}: {got} vs {second}", f.name);
            }
        }
    }

    #[test]
    fn unary_derivatives_match_finite_differences(u in 0.0f64..1.0) {
        let sym = Symbol::from("x");
        for f in unaries() {
            let x = uniform(f.fd_domain.0, f.fd_domain.1, u);
            let mut s = Store::new();
            let xv = s.symbol(sym);
            let node = (f.build)(&mut s, xv);
            let d = gradient(&mut s, node, &[sym])[0];
            let slope = at(&s, d, &[(sym, x)]);
            let value = |t: f64| at(&s, node, &[(sym, t)]);
            let estimate = fd(&value, x);
            let bound = fd_bound(&value, x, f.fifth, slope);
            prop_assert!((slope - estimate).abs() <= bound,
                "{}'({x}): {slope} vs finite differences {estimate} (bound {bound:e})", f.name);
        }
    }

    /// `atan2(y, x)` over every quadrant and scale, the branch cut included: the value is
    /// `y.atan2(x)` and the derivatives are `(x, −y) / r²` and `(−2xy, 2xy, y² − x²) / r⁴`.
    #[test]
    fn atan2_values_and_derivatives(
        log_r in -3.0f64..3.0,
        angle in -std::f64::consts::PI..std::f64::consts::PI,
    ) {
        let r = 10f64.powf(log_r);
        let (x, y) = (r * angle.cos(), r * angle.sin());
        let (sx, sy) = (Symbol::from("x"), Symbol::from("y"));
        let mut s = Store::new();
        let (xv, yv) = (s.symbol(sx), s.symbol(sy));
        let theta = s.atan2(yv, xv);
        let env = [(sx, x), (sy, y)];
        prop_assert_eq!(at(&s, theta, &env).to_bits(), y.atan2(x).to_bits());

        let vars = [sy, sx];
        let g = gradient(&mut s, theta, &vars);
        let h = hessian(&mut s, theta, &vars);
        let r2 = x * x + y * y;
        let r4 = r2 * r2;
        let first = [x / r2, -y / r2];
        // The Hessian's quotient rule adds terms of size up to 2 / r².
        let second = [[-2.0 * x * y / r4, (y * y - x * x) / r4], [(y * y - x * x) / r4, 2.0 * x * y / r4]];
        for i in 0..2 {
            let got = at(&s, g[i], &env);
            prop_assert!(close_forms(got, first[i], 0.0), "∂[{i}] at ({x}, {y}): {got} vs {}", first[i]);
            let fwd = derivative(&mut s, theta, vars[i]);
            let got = at(&s, fwd, &env);
            prop_assert!(close_forms(got, first[i], 0.0), "forward ∂[{i}] at ({x}, {y}): {got} vs {}", first[i]);
            for j in 0..2 {
                let got = at(&s, h[i][j], &env);
                prop_assert!(close_forms(got, second[i][j], 3.0 / r2),
                    "H[{i}][{j}] at ({x}, {y}): {got} vs {}", second[i][j]);
            }
        }
    }

    /// Finite differences of `atan2` along each axis, off the cut: `r ∈ [½, 2]` and the angle
    /// at least 0.01 from `±π`, so the stencil stays ≥ ½ sin 0.01 − H > 0.003 from the cut. Along
    /// a line at distance `d` from the origin `atan2` is `atan(s / d)` plus a constant, whose
    /// fifth derivative is at most `120 / r⁵` (`24 |5t⁴ − 10t² + 1| / (1 + t²)⁵ · d⁻⁵` with
    /// `t = s / d`), so `120 / (½ − H)⁵ < 3 900`.
    #[test]
    fn atan2_derivatives_match_finite_differences(
        r in 0.5f64..2.0,
        angle in (-std::f64::consts::PI + 0.01)..(std::f64::consts::PI - 0.01),
    ) {
        let (x, y) = (r * angle.cos(), r * angle.sin());
        let (sx, sy) = (Symbol::from("x"), Symbol::from("y"));
        let mut s = Store::new();
        let (xv, yv) = (s.symbol(sx), s.symbol(sy));
        let theta = s.atan2(yv, xv);
        let g = gradient(&mut s, theta, &[sx, sy]);
        let along_x = |t: f64| at(&s, theta, &[(sx, t), (sy, y)]);
        let along_y = |t: f64| at(&s, theta, &[(sx, x), (sy, t)]);
        let lines: [(Line, f64); 2] = [(&along_x, x), (&along_y, y)];
        for (i, (line, centre)) in lines.into_iter().enumerate() {
            let slope = at(&s, g[i], &[(sx, x), (sy, y)]);
            let estimate = fd(line, centre);
            let bound = fd_bound(line, centre, 3_900.0, slope);
            prop_assert!((slope - estimate).abs() <= bound,
                "∂[{i}] at ({x}, {y}): {slope} vs {estimate} (bound {bound:e})");
        }
    }

    /// `log(x, b) = ln x / ln b` is `x.log(b)` to the bit, for bases on both sides of 1, and
    /// its derivatives are `1 / (x ln b)` and `−ln x / (b ln² b)`.
    #[test]
    fn log_values_and_derivatives(
        x in 0.01f64..100.0,
        b in prop_oneof![0.05f64..0.95, 1.05f64..50.0],
    ) {
        let (sx, sb) = (Symbol::from("x"), Symbol::from("b"));
        let mut s = Store::new();
        let (xv, bv) = (s.symbol(sx), s.symbol(sb));
        let f = s.log(xv, bv);
        let env = [(sx, x), (sb, b)];
        prop_assert_eq!(at(&s, f, &env).to_bits(), x.log(b).to_bits());
        let (lx, lb) = (x.ln(), b.ln());
        let g = gradient(&mut s, f, &[sx, sb]);
        let h = hessian(&mut s, f, &[sx, sb]);
        let first = [1.0 / (x * lb), -lx / (b * lb * lb)];
        let second = [
            [-1.0 / (x * x * lb), -1.0 / (x * b * lb * lb)],
            [-1.0 / (x * b * lb * lb), lx * (lb + 2.0) / (b * b * lb.powi(3))],
        ];
        for i in 0..2 {
            let got = at(&s, g[i], &env);
            prop_assert!(close_forms(got, first[i], 0.0), "∂[{i}] at ({x}, {b}): {got} vs {}", first[i]);
            for j in 0..2 {
                let got = at(&s, h[i][j], &env);
                // ∂²/∂b² sums lx / (b² lb²) and 2 lx / (b² lb³), which differ in sign for b < 1.
                let scale = (lx / (b * b * lb * lb)).abs() * (1.0 + 2.0 / lb.abs());
                prop_assert!(close_forms(got, second[i][j], scale),
                    "H[{i}][{j}] at ({x}, {b}): {got} vs {}", second[i][j]);
            }
        }
    }

    /// Finite differences of `log(x, b)` in `x ∈ [½, 4]` and `b ∈ [2, 10]`:
    /// `|∂⁵/∂x⁵| = 24 / (x⁵ |ln b|) < 1 200` and `|∂⁵/∂b⁵| ≤ |ln x| · sup |(1/ln b)⁽⁵⁾| < 1.39 · 121`
    /// (SymPy, on the intervals widened by `H`).
    #[test]
    fn log_derivatives_match_finite_differences(x in 0.5f64..4.0, b in 2.0f64..10.0) {
        let (sx, sb) = (Symbol::from("x"), Symbol::from("b"));
        let mut s = Store::new();
        let (xv, bv) = (s.symbol(sx), s.symbol(sb));
        let f = s.log(xv, bv);
        let g = gradient(&mut s, f, &[sx, sb]);
        let env = [(sx, x), (sb, b)];
        let in_x = |t: f64| at(&s, f, &[(sx, t), (sb, b)]);
        let in_b = |t: f64| at(&s, f, &[(sx, x), (sb, t)]);
        let lines: [(Line, f64, f64); 2] = [(&in_x, x, 1_200.0), (&in_b, b, 170.0)];
        for (i, (line, centre, fifth)) in lines.into_iter().enumerate() {
            let slope = at(&s, g[i], &env);
            let estimate = fd(line, centre);
            let bound = fd_bound(line, centre, fifth, slope);
            prop_assert!((slope - estimate).abs() <= bound,
                "∂[{i}] at ({x}, {b}): {slope} vs {estimate} (bound {bound:e})");
        }
    }
}

/// The edges of the domains: what the derivatives are where the functions stop being
/// differentiable, and that nothing panics.
#[test]
fn domain_edges() {
    let (sx, sy) = (Symbol::from("x"), Symbol::from("y"));
    let mut s = Store::new();
    let (xv, yv) = (s.symbol(sx), s.symbol(sy));
    let one = |x: f64| [(sx, x)];

    // asin and acos: infinite slopes at ±1, NaN outside [-1, 1], like the functions.
    for (f, sign) in [(s.asin(xv), 1.0), (s.acos(xv), -1.0)] {
        let d = derivative(&mut s, f, sx);
        assert_eq!(at(&s, d, &one(1.0)), sign * f64::INFINITY);
        assert_eq!(at(&s, d, &one(-1.0)), sign * f64::INFINITY);
        assert!(at(&s, f, &one(1.5)).is_nan() && at(&s, d, &one(1.5)).is_nan());
        assert_eq!(at(&s, d, &one(0.0)), sign);
    }
    // Out-of-domain constants are left unfolded rather than turned into NaN constants.
    let two = s.num(2.0);
    let a = s.asin(two);
    assert_eq!(s.constant(a), None);
    assert_eq!(s.display(a).to_string(), "asin(2)");

    // atan2: the cut is a jump of 2π with the same derivatives on both sides; the origin is a
    // 0/0.
    let theta = s.atan2(yv, xv);
    let g = gradient(&mut s, theta, &[sy, sx]);
    let on = |y: f64, x: f64| [(sy, y), (sx, x)];
    assert_eq!(at(&s, theta, &on(0.0, -2.0)), std::f64::consts::PI);
    assert_eq!(at(&s, theta, &on(-0.0, -2.0)), -std::f64::consts::PI);
    for y in [0.0, -0.0, 1e-300, -1e-300] {
        assert_eq!(at(&s, g[0], &on(y, -2.0)), -0.5);
        assert_eq!(at(&s, g[1], &on(y, -2.0)).abs(), (y / 4.0).abs());
    }
    assert!(at(&s, g[0], &on(0.0, 0.0)).is_nan() && at(&s, g[1], &on(0.0, 0.0)).is_nan());
    assert_eq!(s.display(theta).to_string(), "atan2(y, x)");
    // Constants fold with the same conventions as f64::atan2, the origin included.
    let (zero, minus_one) = (s.num(0.0), s.num(-1.0));
    let at_origin = s.atan2(zero, zero);
    assert_eq!(s.constant(at_origin), Some(0.0));
    let pi = s.atan2(zero, minus_one);
    assert_eq!(s.constant(pi), Some(std::f64::consts::PI));

    // tanh saturates: its slope (1 − n)(1 + n) is 0 where n rounds to ±1, never negative.
    let t = s.tanh(xv);
    let d = derivative(&mut s, t, sx);
    assert_eq!(at(&s, d, &one(30.0)), 0.0);
    assert_eq!(at(&s, d, &one(0.0)), 1.0);
    // sinh and cosh overflow to infinities like the f64 methods.
    let sh = s.sinh(xv);
    assert_eq!(at(&s, sh, &one(1e3)), f64::INFINITY);

    // log: base 1 divides by the constant 0, and non-positive arguments are NaN.
    let ten = s.num(10.0);
    let lg = s.log(xv, ten);
    assert_eq!(at(&s, lg, &one(1000.0)), 1000f64.log(10.0));
    assert!(at(&s, lg, &one(-1.0)).is_nan());
    let unit = s.num(1.0);
    let bad = s.log(xv, unit);
    assert_eq!(at(&s, bad, &one(2.0)), f64::INFINITY);
    assert_eq!(s.display(bad).to_string(), "ln(x) / 0");
    let eight = s.num(8.0);
    let two = s.num(2.0);
    let three = s.log(eight, two);
    assert_eq!(s.constant(three), Some(8f64.log(2.0)));
}

/// The new nodes read back from s-expressions and print as calls.
#[test]
fn parse_and_display() {
    let mut s = Store::new();
    let f = s
        .parse("(+ (asin x) (+ (acos x) (+ (atan x) (+ (atan2 y x) (+ (sinh x) (* (cosh x) (tanh y)))))))")
        .unwrap();
    assert_eq!(
        s.display(f).to_string(),
        "asin(x) + (acos(x) + (atan(x) + (atan2(y, x) + (sinh(x) + cosh(x) * tanh(y)))))"
    );
}
