//! Hash-consing, folding and dependency tracking of the `Store` constructors.

use std::collections::HashMap;

use mechanism_cas::{eval, Constant, Math, Store, Symbol};

#[test]
fn commutative_operands_hash_cons_to_one_node() {
    let mut s = Store::new();
    let (a, b) = (s.var("a"), s.var("b"));
    assert_eq!(s.add(a, b), s.add(b, a));
    assert_eq!(s.mul(a, b), s.mul(b, a));
    assert_ne!(s.sub(a, b), s.sub(b, a));
    let len = s.len();
    let _ = s.add(b, a);
    assert_eq!(
        s.len(),
        len,
        "rebuilding an existing node must not grow the store"
    );
    // Constants come first.
    let two = s.num(2.0);
    let m = s.mul(a, two);
    assert_eq!(s.node(m), &Math::Mul([two, a]));
}

#[test]
fn constants_fold_when_finite() {
    let mut s = Store::new();
    let (two, three) = (s.num(2.0), s.num(3.0));
    let five = s.add(two, three);
    assert_eq!(s.constant(five), Some(5.0));
    let six = s.mul(two, three);
    assert_eq!(s.constant(six), Some(6.0));
    let tmp = s.powi(two, 10);
    assert_eq!(s.constant(tmp), Some(1024.0));
    let r = s.sqrt(two);
    assert_eq!(s.constant(r), Some(2f64.sqrt()));
    // 1 / 0 would be infinite: the node stays unfolded.
    let zero = s.num(0.0);
    let one = s.num(1.0);
    let inf = s.div(one, zero);
    assert_eq!(s.constant(inf), None);
    assert_eq!(eval(&s, inf, &|_| None).unwrap(), f64::INFINITY);
    // ln of a negative constant would be NaN: unfolded.
    let m = s.num(-1.0);
    let l = s.ln(m);
    assert!(matches!(s.node(l), Math::Ln(_)));
}

#[test]
fn non_finite_numbers_are_stored_unfolded() {
    let mut s = Store::new();
    let nan = s.num(f64::NAN);
    let inf = s.num(f64::INFINITY);
    let minf = s.num(f64::NEG_INFINITY);
    assert!(eval(&s, nan, &|_| None).unwrap().is_nan());
    assert_eq!(eval(&s, inf, &|_| None).unwrap(), f64::INFINITY);
    assert_eq!(eval(&s, minf, &|_| None).unwrap(), f64::NEG_INFINITY);
    assert_eq!(s.try_num(f64::NAN), None);
    assert_eq!(Constant::new(f64::INFINITY), None);
    // Negative zero is the same node as zero.
    assert_eq!(s.num(-0.0), s.num(0.0));
}

#[test]
fn neutral_elements_disappear() {
    let mut s = Store::new();
    let x = s.var("x");
    let (zero, one) = (s.num(0.0), s.num(1.0));
    assert_eq!(s.add(x, zero), x);
    assert_eq!(s.add(zero, x), x);
    assert_eq!(s.sub(x, zero), x);
    assert_eq!(s.mul(x, one), x);
    assert_eq!(s.mul(one, x), x);
    let tmp = s.mul(x, zero);
    assert!(s.is_zero(tmp));
    assert_eq!(s.div(x, one), x);
    let tmp = s.sub(x, x);
    assert!(s.is_zero(tmp));
    let nx = s.neg(x);
    assert_eq!(s.sub(zero, x), nx);
    assert_eq!(s.neg(nx), x);
    assert_eq!(s.powi(x, 1), x);
    let tmp = s.powi(x, 0);
    assert!(s.is_one(tmp));
    let two = s.num(2.0);
    let neg_two = s.neg(two);
    assert_eq!(s.constant(neg_two), Some(-2.0));
    // pow with an integer constant exponent is powi; 0.5 is sqrt.
    let p = s.pow(x, two);
    assert_eq!(p, s.powi(x, 2));
    let half = s.num(0.5);
    let p = s.pow(x, half);
    assert_eq!(p, s.sqrt(x));
    // The sum of nothing is zero.
    let tmp = s.sum([]);
    assert!(s.is_zero(tmp));
}

#[test]
fn depends_on_and_symbols() {
    let mut s = Store::new();
    let (x, y) = (Symbol::from("x"), Symbol::from("y"));
    let f = s.parse("(+ (sin b) (* a b))").unwrap();
    assert_eq!(s.symbols(f), vec![Symbol::from("a"), Symbol::from("b")]);
    assert!(s.depends_on(f, Symbol::from("a")));
    assert!(!s.depends_on(f, x));
    let xv = s.symbol(x);
    let g = s.mul(f, xv);
    assert!(s.depends_on(g, x) && !s.depends_on(g, y));
    let zero = s.num(0.0);
    assert!(!s.depends_on(zero, x));
    // Many symbols span several bitset words.
    let vars: Vec<_> = (0..200).map(|i| s.var(&format!("v{i}"))).collect();
    let total = s.sum(vars.iter().copied());
    assert!(s.depends_on(total, Symbol::from("v199")));
    assert!(s.depends_on(total, Symbol::from("v0")));
    assert_eq!(s.symbols(total).len(), 200);
}

#[test]
fn dependency_mask_is_the_union_over_roots() {
    let mut s = Store::new();
    let vars = [
        Symbol::from("r"),
        Symbol::from("theta"),
        Symbol::from("phi"),
    ];
    // T's q-dependence of the spherical pendulum, V of its spring: neither reads phi.
    let mass = s.parse("(* m (* (pow r 2) (pow (sin theta) 2)))").unwrap();
    let potential = s.parse("(* ea (pow (- (pow r 2) 1) 2))").unwrap();
    assert_eq!(s.dependency_mask(&[mass], &vars), vec![true, true, false]);
    assert_eq!(
        s.dependency_mask(&[potential], &vars),
        vec![true, false, false]
    );
    assert_eq!(s.dependency_mask(&[], &vars), vec![false; 3]);
    let phi = s.symbol(vars[2]);
    assert_eq!(
        s.dependency_mask(&[potential, phi], &vars),
        vec![true, false, true]
    );
    // A symbol multiplied by zero is folded away, and no longer a dependency.
    let zero = s.num(0.0);
    let gone = s.mul(phi, zero);
    assert_eq!(s.dependency_mask(&[gone], &vars), vec![false; 3]);
}

#[test]
fn substitute_simplifies_while_rebuilding() {
    let mut s = Store::new();
    let f = s.parse("(+ (* x y) (sin x))").unwrap();
    let zero = s.num(0.0);
    let map = HashMap::from([(Symbol::from("x"), zero)]);
    let g = s.substitute(f, &map);
    assert!(s.is_zero(g));
    let two = s.num(2.0);
    let map = HashMap::from([(Symbol::from("y"), two)]);
    let g = s.substitute(f, &map);
    let v = eval(&s, g, &|_| Some(0.3)).unwrap();
    assert_eq!(v, 0.3 * 2.0 + 0.3f64.sin());
}

#[test]
fn children_precede_parents() {
    let mut s = Store::new();
    let f = s.parse("(/ (pow (+ x 1) (cos y)) (exp (tan x)))").unwrap();
    for id in s.reachable(&[f]) {
        for c in egg::Language::children(s.node(id)) {
            assert!(*c < id);
        }
    }
    let (rec, roots) = s.to_rec_expr(&[f]);
    assert_eq!(roots.len(), 1);
    let mut t = Store::new();
    let g = t.add_rec_expr(&rec);
    assert_eq!(s.display(f).to_string(), t.display(g).to_string());
    assert_eq!(s.display(f).to_string(), "(1 + x)^cos(y) / exp(tan(x))");
}

#[test]
fn foreign_ids_do_not_panic() {
    let s = Store::new();
    let id = mechanism_cas::Id::from(1000);
    assert!(s.is_zero(id));
    assert!(s.symbols(id).is_empty());
    assert!(!s.depends_on(id, Symbol::from("x")));
}

#[test]
fn non_smooth_constructors_fold_and_normalize() {
    let mut s = Store::new();
    let (x, y) = (s.var("x"), s.var("y"));
    let (m2, three, zero) = (s.num(-2.0), s.num(3.0), s.num(0.0));
    let folded = [
        (s.abs(m2), 2.0),
        (s.signum(m2), -1.0),
        (s.signum(three), 1.0),
        (s.signum(zero), 0.0),
        (s.min(m2, three), -2.0),
        (s.max(m2, three), 3.0),
    ];
    for (id, v) in folded {
        assert_eq!(s.constant(id), Some(v));
    }
    // abs(abs x) = abs(-x) = abs(x); |x - y| = |y - x|.
    let ax = s.abs(x);
    assert_eq!(s.abs(ax), ax);
    let nx = s.neg(x);
    assert_eq!(s.abs(nx), ax);
    let (xy, yx) = (s.sub(x, y), s.sub(y, x));
    assert_eq!(s.abs(xy), s.abs(yx));
    // signum(signum x) = signum x, signum(-x) = -signum(x).
    let sx = s.signum(x);
    assert_eq!(s.signum(sx), sx);
    assert_eq!(s.signum(nx), s.neg(sx));
    // min(x, x) = x; min and max are commutative, constants first.
    assert_eq!(s.min(x, x), x);
    assert_eq!(s.max(y, y), y);
    assert_eq!(s.min(x, y), s.min(y, x));
    assert_eq!(s.max(x, y), s.max(y, x));
    let m = s.max(x, three);
    assert_eq!(s.node(m), &Math::Max([three, x]));
    assert_ne!(s.min(x, y), s.max(x, y));
    // Parsing and display.
    let f = s
        .parse("(+ (abs x) (* (max x y) (min (signum y) 2)))")
        .unwrap();
    assert_eq!(
        s.display(f).to_string(),
        "abs(x) + max(x, y) * min(2, signum(y))"
    );
    let (rec, roots) = s.to_rec_expr(&[f]);
    let mut t = Store::new();
    let g = t.add_rec_expr(&rec);
    assert_eq!(roots.len(), 1);
    assert_eq!(t.display(g).to_string(), s.display(f).to_string());
    assert_eq!(s.symbols(f), vec![Symbol::from("x"), Symbol::from("y")]);
    // Substitution folds through the new constructors.
    let map = HashMap::from([(Symbol::from("x"), m2), (Symbol::from("y"), three)]);
    let v = s.substitute(f, &map);
    assert_eq!(s.constant(v), Some(2.0 + 3.0 * 1.0));
}

#[test]
fn non_smooth_evaluation_semantics() {
    let mut s = Store::new();
    let (x, y) = (Symbol::from("x"), Symbol::from("y"));
    let (xv, yv) = (s.symbol(x), s.symbol(y));
    let sg = s.signum(xv);
    let ab = s.abs(xv);
    let (mn, mx) = (s.min(xv, yv), s.max(xv, yv));
    let at = |id, xs: f64, ys: f64| eval(&s, id, &|v| Some(if v == x { xs } else { ys })).unwrap();
    assert_eq!(at(sg, 0.0, 0.0), 0.0);
    assert_eq!(at(sg, -0.0, 0.0), 0.0);
    assert_eq!(at(sg, 1e-300, 0.0), 1.0);
    assert_eq!(at(sg, -7.0, 0.0), -1.0);
    assert!(at(sg, f64::NAN, 0.0).is_nan());
    assert_eq!(at(ab, -1.5, 0.0), 1.5);
    assert_eq!(at(mn, 1.0, -2.0), -2.0);
    assert_eq!(at(mx, 1.0, -2.0), 1.0);
    // f64::min / f64::max: a NaN operand is ignored.
    assert_eq!(at(mn, f64::NAN, 4.0), 4.0);
    assert_eq!(at(mx, 4.0, f64::NAN), 4.0);
}

#[test]
fn non_smooth_dependencies_look_at_the_original_expression() {
    let mut s = Store::new();
    let (x, y, k) = (Symbol::from("x"), Symbol::from("y"), Symbol::from("k"));
    // V = |x| + max(k, 1) sin(y) + signum(y) k: kinks in x (abs), y (signum), k (max).
    let f = s
        .parse("(+ (+ (abs x) (* (max k 1) (sin y))) (* (signum y) k))")
        .unwrap();
    let names = |s: &Store, vars: &[Symbol]| -> Vec<&'static str> {
        s.non_smooth_dependencies(f, vars)
            .into_iter()
            .map(|(id, name)| {
                assert_eq!(s.node(id).non_smooth_name(), Some(name));
                name
            })
            .collect()
    };
    assert_eq!(names(&s, &[x]), vec!["abs"]);
    assert_eq!(names(&s, &[y]), vec!["signum"]);
    assert_eq!(names(&s, &[k]), vec!["max"]);
    assert_eq!(names(&s, &[x, y]), vec!["abs", "signum"]);
    assert!(names(&s, &[Symbol::from("unknown")]).is_empty());
    assert_eq!(s.non_smooth_nodes(&[f]).len(), 3);
    let smooth = s.parse("(* (sin x) k)").unwrap();
    assert!(s.non_smooth_nodes(&[smooth]).is_empty());
    assert!(s.non_smooth_dependencies(smooth, &[x, k]).is_empty());

    // The Hessian of |x| is the zero node, free of non-smooth nodes: only the original
    // expression reveals the kink.
    let a = s.parse("(abs x)").unwrap();
    let h = mechanism_cas::hessian(&mut s, a, &[x]);
    assert!(s.is_zero(h[0][0]) && s.non_smooth_nodes(&[h[0][0]]).is_empty());
    assert_eq!(s.non_smooth_dependencies(a, &[x]), vec![(a, "abs")]);
}
