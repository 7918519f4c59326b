//! Jacobi's elliptic functions and the complete elliptic integral of the first kind, by the
//! arithmetic–geometric mean (Abramowitz & Stegun 16.4 and 17.6): the closed forms of the
//! simple pendulum ([`ReleasedPendulum`](super::ReleasedPendulum)) and of the torque-free
//! rigid body are written with them.

use std::f64::consts::FRAC_PI_2;

/// The most AGM iterations: convergence is quadratic, so 6–8 reach round-off for `m < 1 − 1e-12`.
const MAX_ITERATIONS: usize = 32;

/// Returns `(sn, cn, dn)(u | m)` by the descending Landen transformation (the arithmetic–
/// geometric mean; Abramowitz & Stegun 16.4.2), for `0 ≤ m < 1`.
pub fn jacobi(u: f64, m: f64) -> (f64, f64, f64) {
    let (mut a, mut b) = (1.0f64, (1.0 - m).sqrt());
    let mut ratios = [0.0f64; MAX_ITERATIONS]; // c_n / a_n
    let mut count = 0;
    let mut c = m.sqrt();
    // Stop at round-off, where a − b stalls.
    while c.abs() > 1e-15 * a && count < MAX_ITERATIONS {
        let next = 0.5 * (a + b);
        c = 0.5 * (a - b);
        b = (a * b).sqrt();
        a = next;
        ratios[count] = c / a;
        count += 1;
    }
    let mut phi = 2f64.powi(count as i32) * a * u;
    let mut previous = phi;
    for r in ratios[..count].iter().rev() {
        previous = phi;
        phi = 0.5 * (phi + (r * phi.sin()).asin());
    }
    (phi.sin(), phi.cos(), phi.cos() / (previous - phi).cos())
}

/// Returns the complete elliptic integral of the first kind `K(m) = π / (2 AGM(1, √(1 − m)))`
/// (Abramowitz & Stegun 17.6), for `0 ≤ m < 1`.
pub fn complete_first_kind(m: f64) -> f64 {
    let (mut a, mut b) = (1.0f64, (1.0 - m).sqrt());
    for _ in 0..MAX_ITERATIONS {
        if (a - b).abs() <= 1e-16 * a {
            break;
        }
        (a, b) = (0.5 * (a + b), (a * b).sqrt());
    }
    FRAC_PI_2 / a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_functions_match_published_values() {
        // mpmath 1.3 `ellipfun(·, u, m=1/3)`, an independent implementation.
        let expected = [
            (
                1.3,
                [0.9366289834309615, 0.35032291874366966, 0.8411750010941211],
            ),
            (
                5.0,
                [
                    -0.9864020155271234,
                    -0.16435042976526945,
                    0.8219916998291464,
                ],
            ),
            (
                10.0,
                [0.38939704411533194, -0.9210699984443322, 0.9744006605830824],
            ),
        ];
        for (u, [sn, cn, dn]) in expected {
            let (s, c, d) = jacobi(u, 1.0 / 3.0);
            assert!((s - sn).abs() < 1e-14 && (c - cn).abs() < 1e-14 && (d - dn).abs() < 1e-14);
        }
        // K(0) = π/2; K(1/2) = Γ(1/4)² / (4√π).
        assert!((complete_first_kind(0.0) - FRAC_PI_2).abs() < 1e-15);
        assert!((complete_first_kind(0.5) - 1.854_074_677_301_372).abs() < 1e-14);
        // sn(K | m) = 1, cn(K | m) = 0: the quarter period.
        for m in [0.1, 0.5, 0.9, 0.99] {
            let (s, c, _) = jacobi(complete_first_kind(m), m);
            assert!(
                (s - 1.0).abs() < 1e-14 && c.abs() < 1e-12,
                "m = {m}: sn {s}, cn {c}"
            );
        }
    }
}
