//! Symbolic derivatives against finite differences of the interpreter, and closed forms.

use crate::support::{
    agrees, at, away_from_kinks, build, close, no_extra, non_smooth, point, richardson, tree, vars,
};
use mechanism_cas::{
    derivative, directional_derivative, eval, gradient, hessian, jacobian, third_contraction,
    Store, Symbol,
};
use proptest::prelude::*;

/// The symbols `a0, a1, a2` of a direction, and their values `a` as extra symbols for `at`.
fn direction(a: [f64; 3]) -> ([Symbol; 3], impl Fn(Symbol) -> Option<f64>) {
    let dirs = [Symbol::from("a0"), Symbol::from("a1"), Symbol::from("a2")];
    (dirs, move |sym| {
        dirs.iter().position(|&d| d == sym).map(|i| a[i])
    })
}

fn with(p: [f64; 3], i: usize, t: f64) -> [f64; 3] {
    let mut q = p;
    q[i] = t;
    q
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn gradient_matches_finite_differences(t in tree(), p in point()) {
        let mut s = Store::new();
        let f = build(&mut s, &t);
        let g = gradient(&mut s, f, &vars());
        let fp = at(&s, f, p, &no_extra);
        for i in 0..3 {
            let sym = at(&s, g[i], p, &no_extra);
            let fd = richardson(&|x| at(&s, f, with(p, i, x), &no_extra), p[i]);
            prop_assume!(fd.converged(), "finite differences did not converge: {:?}", fd);
            prop_assert!(agrees(sym, fd, 1e-6, fp), "d/d{} of {}: {} vs {:?}", vars()[i], s.display(f), sym, fd);
        }
    }

    #[test]
    fn forward_derivative_equals_reverse_gradient(t in tree(), p in point()) {
        let mut s = Store::new();
        let f = build(&mut s, &t);
        let g = gradient(&mut s, f, &vars());
        for (i, &x) in vars().iter().enumerate() {
            let d = derivative(&mut s, f, x);
            let (a, b) = (at(&s, d, p, &no_extra), at(&s, g[i], p, &no_extra));
            prop_assert!(close(a, b, 1e-10, 1.0), "{} vs {}", a, b);
            if !s.depends_on(f, x) {
                prop_assert!(s.is_zero(d) && s.is_zero(g[i]));
            }
        }
    }

    #[test]
    fn directional_derivative_equals_the_gradient_along_the_direction(
        t in tree(),
        p in point(),
        a in [-1.0f64..1.0, -1.0f64..1.0, -1.0f64..1.0],
    ) {
        let mut s = Store::new();
        let f = build(&mut s, &t);
        let (dirs, dir) = direction(a);
        let d = directional_derivative(&mut s, f, &vars(), &dirs);
        let g = gradient(&mut s, f, &vars());
        let terms = (0..3).map(|i| a[i] * at(&s, g[i], p, &no_extra));
        let (expected, scale) = terms.fold((0.0, 0.0), |(sum, size), x| (sum + x, size + x.abs()));
        prop_assume!(scale.is_finite(), "the gradient is not finite at {:?}", p);
        let sym = at(&s, d, p, &dir);
        prop_assert!(close(sym, expected, 1e-10, scale), "{} vs {}", sym, expected);
    }

    #[test]
    fn hessian_matches_finite_differences_of_gradient(t in tree(), p in point()) {
        let mut s = Store::new();
        let f = build(&mut s, &t);
        let g = gradient(&mut s, f, &vars());
        let h = hessian(&mut s, f, &vars());
        for i in 0..3 {
            for j in 0..3 {
                let sym = at(&s, h[i][j], p, &no_extra);
                let fd = richardson(&|x| at(&s, g[i], with(p, j, x), &no_extra), p[j]);
                let scale = at(&s, g[i], p, &no_extra);
                prop_assume!(fd.converged(), "finite differences did not converge: {:?}", fd);
                prop_assert!(agrees(sym, fd, 1e-6, scale), "H[{i}][{j}]: {} vs {:?}", sym, fd);
            }
        }
    }

    #[test]
    fn hessian_is_symmetric_across_differentiation_orders(t in tree(), p in point()) {
        let mut s = Store::new();
        let f = build(&mut s, &t);
        let h = hessian(&mut s, f, &vars());
        let v = vars();
        for i in 0..3 {
            for j in 0..3 {
                prop_assert_eq!(h[i][j], h[j][i]);
                // Differentiating in the other order must agree numerically.
                let dj = derivative(&mut s, f, v[j]);
                let dji = derivative(&mut s, dj, v[i]);
                let (a, b) = (at(&s, h[i][j], p, &no_extra), at(&s, dji, p, &no_extra));
                prop_assert!(close(a, b, 1e-9, 1.0), "H[{i}][{j}]: {} vs {}", a, b);
            }
        }
    }

    #[test]
    fn third_contraction_matches_finite_differences(
        t in tree(),
        p in point(),
        a in [-1.0f64..1.0, -1.0f64..1.0, -1.0f64..1.0],
    ) {
        let mut s = Store::new();
        let f = build(&mut s, &t);
        let (dirs, dir) = direction(a);
        let c = third_contraction(&mut s, f, &vars(), &dirs);
        let h = hessian(&mut s, f, &vars());
        // aᵀ H(q) a, evaluated numerically from the symbolic Hessian.
        let quad = |s: &Store, q: [f64; 3]| -> f64 {
            let mut sum = 0.0;
            for i in 0..3 {
                for j in 0..3 {
                    sum += a[i] * a[j] * at(s, h[i][j], q, &no_extra);
                }
            }
            sum
        };
        let scale = quad(&s, p);
        for i in 0..3 {
            let sym = at(&s, c[i], p, &dir);
            let fd = richardson(&|x| quad(&s, with(p, i, x)), p[i]);
            prop_assume!(fd.converged(), "finite differences did not converge: {:?}", fd);
            prop_assert!(agrees(sym, fd, 1e-6, scale), "a.V'''.a [{i}]: {} vs {:?}", sym, fd);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn non_smooth_derivatives_match_finite_differences_away_from_kinks(
        t in [tree(), tree(), tree()],
        p in point(),
    ) {
        let mut s = Store::new();
        let (u, w, v) = (build(&mut s, &t[0]), build(&mut s, &t[1]), build(&mut s, &t[2]));
        let (f, kinks) = non_smooth(&mut s, u, w, v);
        prop_assume!(away_from_kinks(&s, &kinks, p));
        let g = gradient(&mut s, f, &vars());
        let h = hessian(&mut s, f, &vars());
        let fp = at(&s, f, p, &no_extra);
        for i in 0..3 {
            let sym = at(&s, g[i], p, &no_extra);
            let fd = richardson(&|x| at(&s, f, with(p, i, x), &no_extra), p[i]);
            prop_assume!(fd.converged(), "finite differences did not converge: {:?}", fd);
            prop_assert!(agrees(sym, fd, 1e-6, fp), "d/d{} of {}: {} vs {:?}", vars()[i], s.display(f), sym, fd);
            let d = derivative(&mut s, f, vars()[i]);
            let fwd = at(&s, d, p, &no_extra);
            prop_assert!(close(fwd, sym, 1e-10, 1.0), "forward {} vs reverse {}", fwd, sym);
            let scale = sym;
            for j in 0..3 {
                let hij = at(&s, h[i][j], p, &no_extra);
                let fd = richardson(&|x| at(&s, g[i], with(p, j, x), &no_extra), p[j]);
                // Products of three random trees can put a `pow(x, -0.25)`-like pole close to
                // the stencil; the difference's own error estimate then widens the check.
                prop_assume!(fd.converged(), "finite differences did not converge: {:?}", fd);
                prop_assert!(agrees(hij, fd, 1e-6, scale), "H[{i}][{j}]: {} vs {:?}", hij, fd);
            }
        }
    }
}

fn value(s: &Store, id: mechanism_cas::Id, x: f64) -> f64 {
    eval(s, id, &|_| Some(x)).unwrap()
}

#[test]
fn closed_forms() {
    let mut s = Store::new();
    let x = Symbol::from("x");
    let xv = s.symbol(x);

    // d/dx sin(x²) = 2x cos(x²)
    let x2 = s.powi(xv, 2);
    let f = s.sin(x2);
    let d = derivative(&mut s, f, x);
    for &t in &[-1.3, 0.0, 0.4, 2.0] {
        assert!((value(&s, d, t) - 2.0 * t * (t * t).cos()).abs() < 1e-12);
    }

    // d/dx ln(x) = 1/x, d/dx exp(3x) = 3 exp(3x), d/dx tan x = 1 + tan² x
    let ln = s.ln(xv);
    let d = derivative(&mut s, ln, x);
    assert!((value(&s, d, 0.7) - 1.0 / 0.7).abs() < 1e-12);
    let three = s.num(3.0);
    let tx = s.mul(three, xv);
    let e = s.exp(tx);
    let d = gradient(&mut s, e, &[x])[0];
    assert!((value(&s, d, 0.3) - 3.0 * 0.9f64.exp()).abs() < 1e-12);
    let tan = s.tan(xv);
    let d = derivative(&mut s, tan, x);
    assert!((value(&s, d, 0.5) - 1.0 / 0.5f64.cos().powi(2)).abs() < 1e-12);

    // d/dx x^2.5 = 2.5 x^1.5 and stays defined for a constant exponent at x = 0.
    let c = s.num(2.5);
    let p = s.pow(xv, c);
    let d = derivative(&mut s, p, x);
    assert!((value(&s, d, 1.7) - 2.5 * 1.7f64.powf(1.5)).abs() < 1e-12);
    assert_eq!(value(&s, d, 0.0), 0.0);

    // d/dx x^x = x^x (ln x + 1)
    let xx = s.pow(xv, xv);
    let d = gradient(&mut s, xx, &[x])[0];
    assert!((value(&s, d, 1.3) - 1.3f64.powf(1.3) * (1.3f64.ln() + 1.0)).abs() < 1e-12);

    // d/dx sqrt(x) = 1 / (2 sqrt x); d/dx 1/x = -1/x²
    let r = s.sqrt(xv);
    let d = derivative(&mut s, r, x);
    assert!((value(&s, d, 4.0) - 0.25).abs() < 1e-15);
    let one = s.num(1.0);
    let inv = s.div(one, xv);
    let d = gradient(&mut s, inv, &[x])[0];
    assert!((value(&s, d, 2.0) + 0.25).abs() < 1e-15);
}

#[test]
fn derivatives_of_independent_expressions_are_the_zero_node() {
    let mut s = Store::new();
    let (x, y) = (Symbol::from("x"), Symbol::from("y"));
    let yv = s.symbol(y);
    let f = s.sin(yv);
    let d = derivative(&mut s, f, x);
    assert!(s.is_zero(d));
    let g = gradient(&mut s, f, &[x, y]);
    assert!(s.is_zero(g[0]));
    assert!(!s.is_zero(g[1]));
}

#[test]
fn gradient_of_polynomial_is_exact() {
    // f = x² y + 3 y, ∇f = (2 x y, x² + 3)
    let mut s = Store::new();
    let f = s.parse("(+ (* (powi x 2) y) (* 3 y))").unwrap();
    let (x, y) = (Symbol::from("x"), Symbol::from("y"));
    let g = gradient(&mut s, f, &[x, y]);
    let env = |sym: Symbol| Some(if sym == x { 1.5 } else { -2.0 });
    assert_eq!(eval(&s, g[0], &env).unwrap(), 2.0 * 1.5 * -2.0);
    assert_eq!(eval(&s, g[1], &env).unwrap(), 1.5 * 1.5 + 3.0);
    let h = hessian(&mut s, f, &[x, y]);
    assert_eq!(eval(&s, h[0][0], &env).unwrap(), -4.0);
    assert_eq!(eval(&s, h[0][1], &env).unwrap(), 3.0);
    assert!(s.is_zero(h[1][1]));
}

#[test]
fn jacobian_rows_are_gradients() {
    let mut s = Store::new();
    let f1 = s.parse("(* x y)").unwrap();
    let f2 = s.parse("(sin z)").unwrap();
    let v = vars();
    let j = jacobian(&mut s, &[f1, f2], &v);
    assert_eq!(j.len(), 2);
    assert_eq!(j[0], gradient(&mut s, f1, &v));
    assert!(s.is_zero(j[1][0]) && s.is_zero(j[1][1]));
    assert_eq!(s.display(j[1][2]).to_string(), "cos(z)");
}

#[test]
fn third_contraction_of_quartic() {
    // V = x⁴: a V''' a = 24 x a², gradient of a² · 12 x² is 24 x a².
    let mut s = Store::new();
    let f = s.parse("(powi x 4)").unwrap();
    let x = Symbol::from("x");
    let a = Symbol::from("a");
    let c = third_contraction(&mut s, f, &[x], &[a]);
    let env = |sym: Symbol| Some(if sym == x { 0.5 } else { 2.0 });
    assert_eq!(eval(&s, c[0], &env).unwrap(), 24.0 * 0.5 * 4.0);
}

#[test]
fn non_smooth_closed_forms() {
    let mut s = Store::new();
    let (x, y) = (Symbol::from("x"), Symbol::from("y"));
    let (xv, yv) = (s.symbol(x), s.symbol(y));
    let env = |xs: f64, ys: f64| move |sym: Symbol| Some(if sym == x { xs } else { ys });

    // d|x| = signum(x): ±1 away from 0, and 0 (the average of ±1) at the kink.
    let a = s.abs(xv);
    let d = derivative(&mut s, a, x);
    assert_eq!(s.display(d).to_string(), "signum(x)");
    assert_eq!(gradient(&mut s, a, &[x])[0], d);
    assert_eq!(eval(&s, d, &env(-2.0, 0.0)).unwrap(), -1.0);
    assert_eq!(eval(&s, d, &env(0.0, 0.0)).unwrap(), 0.0);
    // The second derivative is structurally zero: the kink is invisible to the Hessian.
    let h = hessian(&mut s, a, &[x]);
    assert!(s.is_zero(h[0][0]));
    let sg = s.signum(xv);
    let (d, g) = (derivative(&mut s, sg, x), gradient(&mut s, sg, &[x]));
    assert!(s.is_zero(d) && s.is_zero(g[0]));

    // max(x, y) and min(x, y): the selected operand gets 1, both get ½ at a tie.
    for (f, is_max) in [(s.max(xv, yv), true), (s.min(xv, yv), false)] {
        let g = gradient(&mut s, f, &[x, y]);
        let dx = derivative(&mut s, f, x);
        let dy = derivative(&mut s, f, y);
        for (xs, ys) in [(1.0, -1.0), (-1.0, 1.0), (0.5, 0.5)] {
            let e = env(xs, ys);
            let picks_x = if xs == ys {
                0.5
            } else if (xs > ys) == is_max {
                1.0
            } else {
                0.0
            };
            assert_eq!(eval(&s, g[0], &e).unwrap(), picks_x);
            assert_eq!(eval(&s, g[1], &e).unwrap(), 1.0 - picks_x);
            assert_eq!(eval(&s, dx, &e).unwrap(), picks_x);
            assert_eq!(eval(&s, dy, &e).unwrap(), 1.0 - picks_x);
        }
    }

    // d max(x², 1) = 2x·½(1 + signum(x² − 1)): a constant operand receives no derivative.
    let x2 = s.powi(xv, 2);
    let one = s.num(1.0);
    let m = s.max(x2, one);
    let d = derivative(&mut s, m, x);
    assert_eq!(eval(&s, d, &env(2.0, 0.0)).unwrap(), 4.0);
    assert_eq!(eval(&s, d, &env(0.5, 0.0)).unwrap(), 0.0);
    assert_eq!(gradient(&mut s, m, &[x])[0], d);
}
