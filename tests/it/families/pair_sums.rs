//! Pair sums (`sum(0..N, |i, j| …)`) run over every pair `i < j` once: a cloud of particles
//! against its closed form.

use mechanism::mechanism;
use mechanism::runtime::model::{SparsePotential, SparsePotentialHessian};

use super::{assert_close_all, close, noise};

mechanism! {
    /// `N` particles in the plane with a smooth repulsion between every pair (a pair sum over
    /// `i < j`) and no external field: translation invariant, so the pair forces cancel.
    pub struct Cloud {
        sizes: { N = 6 },
        coordinates: [x[N], y[N]],
        parameters: { m = 1.0, k = 2.0 },
        kinetic: sum(0..N, |i| 0.5 * m * (dot(x[i]).powi(2) + dot(y[i]).powi(2))),
        potential: sum(0..N, |i, j| k / ((x[i] - x[j]).powi(2) + (y[i] - y[j]).powi(2) + 1.0)),
        integrators: [zs, verlet],
    }
}

/// The cloud's potential and gradient against a double loop written here from the closed form
/// `V = Σ_{i<j} k / (r_ij² + 1)`, `∂V/∂p_i = −Σ_{j≠i} 2k (p_i − p_j) / (r_ij² + 1)²`; the
/// gradient sums to zero (Newton's third law); its Hessian against central differences of the
/// gradient. `N = 1` has no pair at all.
#[test]
fn pair_sums_run_over_every_pair_once() {
    for n in [1, 2, 3, 6, 25] {
        let cloud = Cloud::new(n).unwrap();
        let mut draw = noise(400 + n as u64);
        let q: Vec<f64> = (0..2 * n).map(|_| 2.0 * draw()).collect();
        let (mut energy, mut force) = (0.0, vec![0.0; 2 * n]);
        for i in 0..n {
            for j in 0..n {
                if i == j {
                    continue;
                }
                let (dx, dy) = (q[2 * i] - q[2 * j], q[2 * i + 1] - q[2 * j + 1]);
                let s = dx * dx + dy * dy + 1.0;
                if i < j {
                    energy += 2.0 / s;
                }
                force[2 * i] -= 2.0 * 2.0 * dx / (s * s);
                force[2 * i + 1] -= 2.0 * 2.0 * dy / (s * s);
            }
        }
        assert!(close(cloud.potential(&q), energy), "N = {n}: V");
        let mut gradient = vec![f64::NAN; 2 * n];
        cloud.potential_gradient(&q, &mut gradient);
        assert_close_all(&gradient, &force, "∇V");
        let (sx, sy) = gradient
            .chunks_exact(2)
            .fold((0.0, 0.0), |(a, b), g| (a + g[0], b + g[1]));
        let scale = gradient.iter().fold(1.0f64, |m, g| m.max(g.abs()));
        assert!(
            sx.abs().max(sy.abs()) <= 1e-14 * scale * n as f64,
            "Σ forces ≠ 0"
        );
        let values = {
            let mut h = vec![f64::NAN; cloud.hessian_pattern().len()];
            cloud.potential_hessian(&q, &mut h);
            crate::support::dense_symmetric(cloud.hessian_pattern(), &h, 2 * n)
        };
        let fd = crate::support::central_differences(
            &|q: &[f64]| {
                let mut g = vec![0.0; 2 * n];
                cloud.potential_gradient(q, &mut g);
                g
            },
            &q,
            1e-5,
        );
        for (j, column) in fd.iter().enumerate() {
            for (i, &b) in column.iter().enumerate() {
                let a = values[i * 2 * n + j];
                assert!(
                    (a - b).abs() <= 1e-7 * (1.0 + a.abs()),
                    "N = {n}: H[{i}][{j}] = {a} vs {b}"
                );
            }
        }
        // Every pair of particles couples: the pattern is the whole upper triangle.
        assert_eq!(
            cloud.hessian_pattern().len(),
            2 * n * (2 * n + 1) / 2 - if n == 1 { 3 } else { 0 }
        );
    }
}
