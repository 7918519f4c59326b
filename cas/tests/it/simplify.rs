//! Bounded e-graph clean-up: one-line `start => goal` rows and a soundness property.

use std::collections::HashMap;

use crate::support::{build, point, tree, vars};
use mechanism_cas::{dag_cost, simplify, Evaluator, Id, SimplifyLimits, Store, Symbol};
use proptest::prelude::*;

/// Evaluates `id` at a pseudo-random point derived from `seed`, binding every symbol.
fn sample(store: &Store, id: Id, seed: u32) -> f64 {
    let env = |s: Symbol| {
        let h = s
            .as_str()
            .bytes()
            .fold(seed.wrapping_mul(2654435761), |h, b| {
                h.rotate_left(5) ^ u32::from(b).wrapping_mul(40503)
            });
        Some(f64::from(h % 2000) / 1000.0 - 1.0 + 0.013)
    };
    Evaluator::new(store).eval_many(&[id], &env).unwrap()[0]
}

/// Simplifies `start` and checks it is no costlier than `goal` and numerically equal to it.
fn check(start: &str, goal: &str) {
    let mut s = Store::new();
    let start_id = s.parse(start).unwrap();
    let goal_id = s.parse(goal).unwrap();
    let (out, report) = simplify(&mut s, &[start_id], &SimplifyLimits::default());
    let got = out[0];
    assert_eq!(report.cost_after, dag_cost(&s, &out));
    assert!(
        dag_cost(&s, &[got]) <= dag_cost(&s, &[goal_id]),
        "{start} simplified to {} (cost {}), goal {goal} costs {}",
        s.display(got),
        dag_cost(&s, &[got]),
        dag_cost(&s, &[goal_id]),
    );
    for seed in 0..8 {
        let (a, b) = (sample(&s, got, seed), sample(&s, goal_id, seed));
        assert!(
            (a - b).abs() <= 1e-12 * a.abs().max(1.0),
            "{start}: {a} != {b} at seed {seed}"
        );
    }
}

/// Checks that simplification does not remove an operation that is undefined somewhere.
fn keeps(start: &str) {
    let mut s = Store::new();
    let id = s.parse(start).unwrap();
    let before = dag_cost(&s, &[id]);
    let (out, report) = simplify(&mut s, &[id], &SimplifyLimits::default());
    assert!(
        !report.kept && out == vec![id],
        "{start} became {}",
        s.display(out[0])
    );
    assert_eq!(report.cost_after, before);
}

macro_rules! simplify_tests {
    ($($name:ident: $start:literal => $goal:literal,)*) => {
        $(#[test] fn $name() { check($start, $goal) })*
    };
}

macro_rules! unsound_tests {
    ($($name:ident: $start:literal,)*) => {
        $(#[test] fn $name() { keeps($start) })*
    };
}

#[rustfmt::skip]
simplify_tests! {
    factor_common_term:   "(+ (* a b) (* a c))"                        => "(* a (+ b c))",
    factor_function:      "(+ (* x (sin y)) (* (sin y) z))"            => "(* (sin y) (+ x z))",
    collect_constants:    "(+ (* 2 x) (* 3 x))"                        => "(* 5 x)",
    cancel_sum:           "(- (+ a b) b)"                              => "a",
    cancel_nested:        "(- (+ a (+ b c)) (+ b c))"                  => "a",
    pythagoras:           "(+ (pow (sin x) 2) (pow (cos x) 2))"        => "1",
    one_minus_sin2:       "(- 1 (* (sin x) (sin x)))"                  => "(powi (cos x) 2)",
    fourth_power:         "(* (* (* x x) x) x)"                        => "(powi x 4)",
    merge_powers:         "(* (powi x 2) (powi x 3))"                  => "(powi x 5)",
    merge_negative_powers:"(* (powi x -2) (powi x -1))"                => "(powi x -3)",
    product_commutes:     "(- (* a b) (* b a))"                        => "0",
    double:               "(+ (sin x) (sin x))"                        => "(* 2 (sin x))",
    neg_neg:              "(neg (neg (sin x)))"                        => "(sin x)",
    sub_of_neg:           "(- (* (neg a) b) (neg (* a b)))"            => "0",
    common_denominator:   "(+ (/ a c) (/ b c))"                        => "(/ (+ a b) c)",
    already_minimal:      "(+ x (sin y))"                              => "(+ x (sin y))",
    max_of_equal_forms:   "(max (* a (+ b c)) (+ (* a b) (* a c)))"    => "(* a (+ b c))",
    min_of_equal_forms:   "(min (+ (* a b) (* a c)) (* (+ c b) a))"    => "(* a (+ b c))",
    abs_of_negated_sum:   "(abs (- (neg (* a b)) (* a c)))"            => "(abs (* a (+ b c)))",
    abs_of_reversed_diff: "(- (abs (- (sin a) b)) (abs (- b (sin a))))" => "0",
    double_signum:        "(+ (signum x) (signum x))"                  => "(* 2 (signum x))",
}

#[rustfmt::skip]
unsound_tests! {
    keeps_x_over_x:        "(/ x x)",
    keeps_mixed_powers:    "(* (powi x -1) (powi x 3))",
    keeps_exp_ln:          "(exp (ln x))",
    keeps_sqrt_squared:    "(powi (sqrt x) 2)",
    keeps_quotient_times:  "(* (/ x y) y)",
}

#[test]
fn roots_share_one_egraph() {
    // Two outputs that are equal after simplification end up as one node.
    let mut s = Store::new();
    let f = s.parse("(+ (* a b) (* a c))").unwrap();
    let g = s.parse("(* (+ c b) a)").unwrap();
    let (out, report) = simplify(&mut s, &[f, g], &SimplifyLimits::default());
    assert!(report.kept);
    assert_eq!(out[0], out[1]);
    assert!(report.cost_after < report.cost_before);
}

#[test]
fn all_limits_are_honoured() {
    let mut s = Store::new();
    let f = s
        .parse("(* (+ a (+ b (+ c d))) (+ e (+ f (+ g (+ h (+ i j))))))")
        .unwrap();
    let limits = SimplifyLimits {
        iter_limit: 100,
        node_limit: 200,
        time_limit: std::time::Duration::from_secs(5),
    };
    let (_, report) = simplify(&mut s, &[f], &limits);
    assert_eq!(report.stop_reason, mechanism_cas::StopReason::NodeLimit);
    let limits = SimplifyLimits {
        iter_limit: 1,
        ..SimplifyLimits::default()
    };
    let (_, report) = simplify(&mut s, &[f], &limits);
    assert_eq!(
        report.stop_reason,
        mechanism_cas::StopReason::IterationLimit
    );
}

#[test]
fn rejected_results_leave_the_store_unchanged() {
    let mut s = Store::new();
    let f = s.parse("(+ x (sin y))").unwrap();
    let len = s.len();
    let (out, report) = simplify(&mut s, &[f], &SimplifyLimits::default());
    assert!(!report.kept);
    assert_eq!(out, vec![f]);
    assert_eq!(s.len(), len);
    let (out, report) = simplify(&mut s, &[], &SimplifyLimits::default());
    assert!(out.is_empty() && !report.kept);
}

#[test]
fn dag_cost_counts_shared_nodes_once() {
    let mut s = Store::new();
    let f = s.parse("(+ (sin x) (* 2 (sin x)))").unwrap();
    // sin: 20, *: 1, +: 1
    assert_eq!(dag_cost(&s, &[f]), 22.0);
    let g = s.parse("(sin x)").unwrap();
    assert_eq!(dag_cost(&s, &[f, g]), 22.0);
    let p = s.parse("(powi x 5)").unwrap();
    assert_eq!(dag_cost(&s, &[p]), 3.0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn simplification_preserves_non_smooth_values(
        t in [tree(), tree(), tree()],
        p in point(),
    ) {
        let mut s = Store::new();
        let (u, w, v) = (build(&mut s, &t[0]), build(&mut s, &t[1]), build(&mut s, &t[2]));
        let (f, kinks) = crate::support::non_smooth(&mut s, u, w, v);
        // Rounding differences may flip `signum` where its argument is (nearly) zero.
        prop_assume!(kinks.iter().all(|&k| crate::support::at(&s, k, p, &crate::support::no_extra).abs() > 1e-6));
        let limits = SimplifyLimits {
            iter_limit: 6,
            node_limit: 5_000,
            time_limit: std::time::Duration::from_millis(200),
        };
        let (out, report) = simplify(&mut s, &[f], &limits);
        prop_assert!(report.cost_after <= report.cost_before);
        let v = vars();
        let env = |sym: Symbol| v.iter().position(|&w| w == sym).map(|i| p[i]);
        let ev = Evaluator::new(&s);
        let before: HashMap<Id, f64> = ev.eval_all(&[f], &env).unwrap();
        let scale = before.values().fold(1.0f64, |m, x| if x.is_finite() { m.max(x.abs()) } else { m });
        let (a, b) = (ev.eval_many(&out, &env).unwrap()[0], before[&f]);
        if a.is_finite() && b.is_finite() {
            prop_assert!((a - b).abs() <= 1e-9 * scale, "{} vs {}: {} vs {}", s.display(f), s.display(out[0]), b, a);
        }
    }

    #[test]
    fn simplification_preserves_values(t1 in tree(), t2 in tree(), p in point()) {
        let mut s = Store::new();
        let roots = [build(&mut s, &t1), build(&mut s, &t2)];
        let limits = SimplifyLimits {
            iter_limit: 6,
            node_limit: 5_000,
            time_limit: std::time::Duration::from_millis(200),
        };
        let (out, report) = simplify(&mut s, &roots, &limits);
        prop_assert!(report.cost_after <= report.cost_before);
        let v = vars();
        let env = |sym: Symbol| v.iter().position(|&w| w == sym).map(|i| p[i]);
        let ev = Evaluator::new(&s);
        let before: HashMap<Id, f64> = ev.eval_all(&roots, &env).unwrap();
        // Rounding differences scale with the largest intermediate value.
        let scale = before.values().fold(1.0f64, |m, x| if x.is_finite() { m.max(x.abs()) } else { m });
        let after = ev.eval_many(&out, &env).unwrap();
        for (r, a) in roots.iter().zip(&after) {
            let b = before[r];
            if a.is_finite() && b.is_finite() {
                prop_assert!((a - b).abs() <= 1e-11 * scale, "{} vs {}: {} vs {}", s.display(*r), s.display(out[0]), b, a);
            }
        }
    }
}
