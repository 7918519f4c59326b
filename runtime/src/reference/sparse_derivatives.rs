//! Finite-difference checks of the sparse tier's derivative traits, shared by the unit tests of
//! the sparse reference models.

use crate::model::{SparseHolonomicHessians, SparsePenalizedThirdDerivative, SparsePenaltyHessian};

/// Returns the dense symmetric matrix of values on a pattern (each unordered pair once).
fn dense(n: usize, pattern: &[(usize, usize)], values: &[f64]) -> Vec<Vec<f64>> {
    let mut pairs: Vec<(usize, usize)> =
        pattern.iter().map(|&(i, j)| (i.min(j), i.max(j))).collect();
    pairs.sort_unstable();
    pairs.dedup();
    assert_eq!(pairs.len(), pattern.len(), "a pair is listed twice");
    let mut m = vec![vec![0.0; n]; n];
    for (&(i, j), v) in pattern.iter().zip(values) {
        m[i][j] = *v;
        m[j][i] = *v;
    }
    m
}

/// Returns the central difference of `f` along coordinate `j` at `q`.
fn central<T>(
    q: &[f64],
    j: usize,
    step: f64,
    mut f: impl FnMut(&[f64]) -> T,
    diff: impl Fn(T, T) -> Vec<f64>,
) -> Vec<f64> {
    let mut plus = q.to_vec();
    plus[j] += step;
    let mut minus = q.to_vec();
    minus[j] -= step;
    diff(f(&plus), f(&minus))
        .into_iter()
        .map(|d| d / (2.0 * step))
        .collect()
}

/// Asserts `|a − b| ≤ tol · max(1, scale)` entrywise.
fn assert_close(what: &str, a: &[f64], b: &[f64], scale: f64) {
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= 1e-6 * scale.max(1.0),
            "{what}[{k}]: {x} vs finite difference {y}"
        );
    }
}

/// Checks `∇W`, `Hess W`, `a·W‴·a`, `Σ λ_k Hess g_k` and the penalty Hessian
/// `ω² (GᵀG + Σ g_k Hess g_k)` of `model` at `q` against central differences of the level
/// below (and the penalty Hessian against its definition from `G` and the constraint Hessians).
pub(crate) fn check_sparse_derivatives<Model>(model: &Model, omega: f64, q: &[f64])
where
    Model: SparseHolonomicHessians + SparsePenalizedThirdDerivative + SparsePenaltyHessian,
{
    let n = q.len();
    let m = model.constraint_count();
    let step = 1e-5;
    let gradient = |x: &[f64]| {
        let mut g = vec![0.0; n];
        model.penalized_potential_gradient(omega, x, &mut g);
        g
    };
    let hessian = |x: &[f64]| {
        let pattern = model.penalized_hessian_pattern();
        let mut values = vec![0.0; pattern.len()];
        model.penalized_potential_hessian(omega, x, &mut values);
        dense(n, pattern, &values)
    };
    let grad = gradient(q);
    let scale = grad.iter().fold(0.0f64, |s, g| s.max(g.abs()));
    for j in 0..n {
        let fd = central(
            q,
            j,
            step,
            |x| model.penalized_potential(omega, x),
            |a, b| vec![a - b],
        );
        assert_close("∇W", &grad[j..=j], &fd, scale);
    }
    let hess = hessian(q);
    let hess_scale = hess.iter().flatten().fold(0.0f64, |s, h| s.max(h.abs()));
    for j in 0..n {
        let fd = central(q, j, step, gradient, |a, b| {
            a.iter().zip(&b).map(|(a, b)| a - b).collect()
        });
        let column: Vec<f64> = hess.iter().map(|row| row[j]).collect();
        assert_close("Hess W", &column, &fd, hess_scale);
    }
    // a·W‴·a = ∇(aᵀ Hess W a) with a fixed.
    let a: Vec<f64> = (0..n)
        .map(|i| 0.3 + 0.1 * ((i * 7) % 5) as f64 - 0.2 * (i % 2) as f64)
        .collect();
    let mut third = vec![0.0; n];
    model.penalized_potential_third_contraction(omega, q, &a, &mut third);
    let quadratic = |x: &[f64]| {
        let h = hessian(x);
        let value: f64 = (0..n)
            .map(|i| (0..n).map(|k| a[i] * h[i][k] * a[k]).sum::<f64>())
            .sum();
        value
    };
    let third_scale = third.iter().fold(0.0f64, |s, t| s.max(t.abs()));
    for j in 0..n {
        let fd = central(q, j, step, quadratic, |a, b| vec![a - b]);
        assert_close("a·W‴·a", &third[j..=j], &fd, third_scale);
    }
    // Σ λ_k Hess g_k = ∂(Gᵀλ)/∂q.
    let lambda: Vec<f64> = (0..m).map(|k| 0.5 - 0.3 * ((k * 3) % 4) as f64).collect();
    let constraints = |x: &[f64]| {
        let mut g = vec![0.0; m];
        let mut jac = vec![0.0; model.jacobian_pattern().len()];
        model.constraints_and_jacobian(x, 0.0, &mut g, &mut jac);
        (g, jac)
    };
    let jac_t_lambda = |x: &[f64]| {
        let (_, jac) = constraints(x);
        let mut out = vec![0.0; n];
        for (&(row, col), value) in model.jacobian_pattern().iter().zip(&jac) {
            out[col] += value * lambda[row];
        }
        out
    };
    let weighted = |weights: &[f64]| {
        let pattern = model.constraint_hessian_pattern();
        let mut values = vec![0.0; pattern.len()];
        model.weighted_constraint_hessian(q, 0.0, weights, &mut values);
        dense(n, pattern, &values)
    };
    let sum = weighted(&lambda);
    for j in 0..n {
        let fd = central(q, j, step, jac_t_lambda, |a, b| {
            a.iter().zip(&b).map(|(a, b)| a - b).collect()
        });
        let column: Vec<f64> = sum.iter().map(|row| row[j]).collect();
        assert_close("Σ λ Hess g", &column, &fd, 1.0);
    }
    // The penalty Hessian from its definition.
    let (g, jac) = constraints(q);
    let mut expected = weighted(&g);
    let mut dense_jac = vec![vec![0.0; n]; m];
    for (&(row, col), value) in model.jacobian_pattern().iter().zip(&jac) {
        dense_jac[row][col] += value;
    }
    for (i, row) in expected.iter_mut().enumerate() {
        for (j, e) in row.iter_mut().enumerate() {
            *e += (0..m)
                .map(|k| dense_jac[k][i] * dense_jac[k][j])
                .sum::<f64>();
            *e *= omega * omega;
        }
    }
    let pattern = model.penalty_hessian_pattern();
    let mut values = vec![0.0; pattern.len()];
    model.penalty_hessian(omega, q, &mut values);
    let penalty = dense(n, pattern, &values);
    for (row, expected_row) in penalty.iter().zip(&expected) {
        for (x, y) in row.iter().zip(expected_row) {
            assert!(
                (x - y).abs() <= 1e-12 * hess_scale,
                "penalty Hessian: {x} vs {y}"
            );
        }
    }
}
