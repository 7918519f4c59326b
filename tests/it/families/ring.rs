//! A ring of anharmonic springs with pair terms that wrap around: its generated derivatives
//! against central differences.

use mechanism::mechanism;
use mechanism::runtime::model::{
    SparseHolonomicHessians, SparsePotential, SparsePotentialHessian,
    SparsePotentialThirdDerivative,
};

use super::noise;

mechanism! {
    /// A periodic ring of anharmonic springs (Fermi–Pasta–Ulam–Tsingou) with an on-site
    /// potential and a coupling `c x_i x_{i+1}`: nonlinear in every slot, and with `N = 1` both
    /// slots of a pair term name the same coordinate. Without rows, `derivatives: [hessians]`
    /// gives it an empty `Σ λ_k Hess g_k`.
    pub struct Ring {
        sizes: { N = 8 },
        coordinates: [x[N]],
        parameters: { k = 1.0, b = 0.5, c = 0.3 },
        kinetic: sum(0..N, |i| 0.5 * dot(x[i]).powi(2)),
        potential: sum(0..N, |i| 0.5 * k * (x[(i + 1) % N] - x[i]).powi(2)
                + 0.25 * b * (x[(i + 1) % N] - x[i]).powi(4))
            + sum(0..N, |i| c * x[i] * x[(i + 1) % N] + (1.0 - x[i].cos())),
        integrators: [zs, zss, verlet],
        derivatives: [hessians],
    }
}

/// The ring's gradient, Hessian and `a·V‴·a` against central differences of the next lower
/// derivative (step `1e-5`: truncation `~1e-10 |V⁽ᵏ⁺²⁾|`, rounding `~1e-11 |V⁽ᵏ⁾|`), for ring
/// sizes where pair terms wrap around (`N = 2`) and collapse onto one coordinate (`N = 1`).
#[test]
fn the_generated_ring_derivatives_match_finite_differences() {
    let tolerance = 1e-7;
    for n in [1, 2, 3, 8] {
        let ring = Ring::new(n).unwrap();
        assert!(ring.constraint_hessian_pattern().is_empty());
        ring.weighted_constraint_hessian(&[0.0; 8][..n], 0.0, &[], &mut []);
        let mut draw = noise(300 + n as u64);
        let q: Vec<f64> = (0..n).map(|_| draw()).collect();
        let a: Vec<f64> = (0..n).map(|_| draw()).collect();
        let energy = |q: &[f64]| vec![ring.potential(q)];
        let gradient = |q: &[f64]| {
            let mut g = vec![f64::NAN; n];
            ring.potential_gradient(q, &mut g);
            g
        };
        let hessian = |q: &[f64]| {
            let mut values = vec![f64::NAN; ring.hessian_pattern().len()];
            ring.potential_hessian(q, &mut values);
            crate::support::dense_symmetric(ring.hessian_pattern(), &values, n)
        };
        let quadratic = |q: &[f64]| {
            let h = hessian(q);
            let mut s = 0.0;
            for i in 0..n {
                for j in 0..n {
                    s += a[i] * h[i * n + j] * a[j];
                }
            }
            vec![s]
        };
        let d = 1e-5;
        let fd_gradient: Vec<f64> = crate::support::central_differences(&energy, &q, d)
            .into_iter()
            .map(|column| column[0])
            .collect();
        let fd_hessian = crate::support::central_differences(&gradient, &q, d);
        let fd_third: Vec<f64> = crate::support::central_differences(&quadratic, &q, d)
            .into_iter()
            .map(|column| column[0])
            .collect();
        let mut third = vec![f64::NAN; n];
        ring.potential_third_contraction(&q, &a, &mut third);
        let near = |x: f64, y: f64| (x - y).abs() <= tolerance * (1.0 + x.abs().max(y.abs()));
        let (g, h) = (gradient(&q), hessian(&q));
        for i in 0..n {
            assert!(near(g[i], fd_gradient[i]), "N = {n}: ∂V/∂x{i}");
            assert!(near(third[i], fd_third[i]), "N = {n}: (a·V‴·a)_{i}");
        }
        for (j, column) in fd_hessian.iter().enumerate() {
            for (i, &fd) in column.iter().enumerate() {
                let value = h[i * n + j];
                assert!(near(value, fd), "N = {n}: H[{i}][{j}] = {value} vs {fd}");
            }
        }
    }
}
