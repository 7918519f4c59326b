//! The tableaus: order conditions (Hairer–Nørsett–Wanner I, Table II.2.2) and their checks.

use mechanism_runtime::integrators::stabilized::{Tableau, DOPRI5, HEUN, MIDPOINT, RK4};
use mechanism_runtime::StepError;

/// Returns `A x` for the tableau's `A`.
fn a_times<const S: usize>(t: &Tableau<S>, x: &[f64; S]) -> [f64; S] {
    std::array::from_fn(|i| (0..S).map(|j| t.a[i][j] * x[j]).sum())
}

/// Returns `Σ_i w_i x_i`.
fn dot<const S: usize>(w: &[f64; S], x: &[f64; S]) -> f64 {
    w.iter().zip(x).map(|(a, b)| a * b).sum()
}

/// Returns the component-wise product.
fn mul<const S: usize>(x: &[f64; S], y: &[f64; S]) -> [f64; S] {
    std::array::from_fn(|i| x[i] * y[i])
}

/// Returns the residuals `Φ(τ) − 1/γ(τ)` of the order conditions for the rooted trees of
/// order 1 … `order` (Hairer–Nørsett–Wanner I, Table II.2.2), with weights `w`.
fn order_residuals<const S: usize>(t: &Tableau<S>, w: &[f64; S], order: u32) -> Vec<f64> {
    let c = t.c;
    let one = [1.0; S];
    let c2 = mul(&c, &c);
    let c3 = mul(&c2, &c);
    let ac = a_times(t, &c);
    let ac2 = a_times(t, &c2);
    let aac = a_times(t, &ac);
    let mut r = vec![dot(w, &one) - 1.0];
    if order >= 2 {
        r.push(dot(w, &c) - 1.0 / 2.0);
    }
    if order >= 3 {
        r.push(dot(w, &c2) - 1.0 / 3.0);
        r.push(dot(w, &ac) - 1.0 / 6.0);
    }
    if order >= 4 {
        r.push(dot(w, &c3) - 1.0 / 4.0);
        r.push(dot(w, &mul(&c, &ac)) - 1.0 / 8.0);
        r.push(dot(w, &ac2) - 1.0 / 12.0);
        r.push(dot(w, &aac) - 1.0 / 24.0);
    }
    if order >= 5 {
        r.push(dot(w, &mul(&c3, &c)) - 1.0 / 5.0);
        r.push(dot(w, &mul(&c2, &ac)) - 1.0 / 10.0);
        r.push(dot(w, &mul(&c, &ac2)) - 1.0 / 15.0);
        r.push(dot(w, &mul(&c, &aac)) - 1.0 / 30.0);
        r.push(dot(w, &mul(&ac, &ac)) - 1.0 / 20.0);
        r.push(dot(w, &a_times(t, &c3)) - 1.0 / 20.0);
        r.push(dot(w, &a_times(t, &mul(&c, &ac))) - 1.0 / 40.0);
        r.push(dot(w, &a_times(t, &ac2)) - 1.0 / 60.0);
        r.push(dot(w, &a_times(t, &aac)) - 1.0 / 120.0);
    }
    r
}

fn max_abs(r: &[f64]) -> f64 {
    r.iter().fold(0.0, |m, x| m.max(x.abs()))
}

#[test]
fn every_tableau_satisfies_its_order_conditions_and_not_the_next() {
    let cases: [(&str, f64, f64); 4] = [
        (
            "midpoint",
            max_abs(&order_residuals(&MIDPOINT, &MIDPOINT.b, 2)),
            max_abs(&order_residuals(&MIDPOINT, &MIDPOINT.b, 3)),
        ),
        (
            "heun",
            max_abs(&order_residuals(&HEUN, &HEUN.b, 2)),
            max_abs(&order_residuals(&HEUN, &HEUN.b, 3)),
        ),
        (
            "rk4",
            max_abs(&order_residuals(&RK4, &RK4.b, 4)),
            max_abs(&order_residuals(&RK4, &RK4.b, 5)),
        ),
        (
            "dopri5",
            max_abs(&order_residuals(&DOPRI5.method, &DOPRI5.method.b, 5)),
            // Order 6 is not checked here; the order-5 set of b̂ must fail instead.
            max_abs(&order_residuals(&DOPRI5.method, &DOPRI5.b_hat, 5)),
        ),
    ];
    for (name, satisfied, violated) in cases {
        assert!(satisfied < 1e-15, "{name}: {satisfied:e}");
        assert!(violated > 1e-4, "{name}: {violated:e}");
    }
    let embedded = max_abs(&order_residuals(&DOPRI5.method, &DOPRI5.b_hat, 4));
    assert!(embedded < 1e-15, "{embedded:e}");
    // First same as last: the last stage is the propagated solution.
    assert_eq!(DOPRI5.method.a[6], DOPRI5.method.b);
}

#[test]
fn check_accepts_the_library_and_rejects_implicit_or_inconsistent_tableaus() {
    MIDPOINT.check().unwrap();
    HEUN.check().unwrap();
    RK4.check().unwrap();
    DOPRI5.check().unwrap();
    let mut implicit = HEUN;
    implicit.a[0][0] = 0.5;
    implicit.c[0] = 0.5;
    assert!(matches!(
        implicit.check(),
        Err(StepError::BadParameter { name: "a_ij", .. })
    ));
    let mut wrong_c = RK4;
    wrong_c.c[2] = 0.4;
    assert!(matches!(
        wrong_c.check(),
        Err(StepError::BadParameter { name: "c_i", .. })
    ));
    let mut wrong_b = RK4;
    wrong_b.b[0] = 0.2;
    assert!(matches!(
        wrong_b.check(),
        Err(StepError::BadParameter { name: "Σ b_i", .. })
    ));
    let mut wrong_hat = DOPRI5;
    wrong_hat.b_hat[6] = f64::NAN;
    assert!(matches!(
        wrong_hat.check(),
        Err(StepError::BadParameter { name: "b̂_i", .. })
    ));
}
