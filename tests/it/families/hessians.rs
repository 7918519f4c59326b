//! `derivatives: [hessians]` in models with families: the rows' weighted Hessian
//! `Σ_k w_k Hess g_k` (`SparseHolonomicHessians`) and the potential's Hessian
//! (`SparsePotentialHessian`) against central differences of `Gᵀ w` and of `∇V`, within the
//! differences' own error bound; the chain of pendula with a mass and a length per link
//! (`models::VariedPendulumChain`) against Tao–Owhadi's hand-written chain; a vector row family
//! against its closed form; and a family of rotation matrices (six row families per member).
//!
//! The bound of a central difference of `f` with step `h` at `q`, entry by entry:
//! `h²/6 · |f‴| + 4ε (S + |q|_∞ |H|)/h`, the truncation (Taylor, with `f‴` bounded by hand for
//! each model; every row here is quadratic, so `f = Gᵀw` has `f‴ = 0`) and the rounding of the
//! two evaluations (`S` bounds the sum of the magnitudes of the terms of `f`'s entries, here
//! `|G|ᵀ|w|` or its analogue, with four roundings per term) and of `q ± h` (whose difference
//! is `2h` to within `2ε|q|`).

use mechanism::mechanism;
use mechanism::models::VariedPendulumChain;
use mechanism::runtime::model::{
    SparseHolonomic, SparseHolonomicHessians, SparseInertia, SparsePotential,
    SparsePotentialHessian,
};
use mechanism::runtime::reference::PendulumChain;

use super::noise;
use crate::rigid_clusters::CoupledTops;
use crate::support::{central_differences, dense_symmetric};

mechanism! {
    /// `N` beads, each on Viviani's curve — the sphere of radius `a` about the origin cut by
    /// the cylinder of radius `a/2` through it — written as one two-component row per bead,
    /// coupled by anharmonic springs; a plain row before them (so that the family's rows start
    /// at 1) ties bead 0 to a saddle.
    pub struct VivianiBeads {
        sizes: { N = 4 },
        coordinates: [x[N], y[N], z[N]],
        parameters: { a = 1.0, k = 1.5, b = 0.5, c = 2.0 },
        kinetic: sum(0..N, |i| 0.5 * (dot(x[i]).powi(2) + dot(y[i]).powi(2) + dot(z[i]).powi(2))),
        potential: sum(1..N, |i| 0.5 * k * ((x[i] - x[i - 1]).powi(2) + (y[i] - y[i - 1]).powi(2)
                + (z[i] - z[i - 1]).powi(2))
            + 0.25 * b * ((x[i] - x[i - 1]).powi(2) + (y[i] - y[i - 1]).powi(2)
                + (z[i] - z[i - 1]).powi(2)).powi(2)),
        holonomic: {
            saddle: x[0] * z[0] - c * y[0].powi(2),
            curve[i in 0..N]: [
                x[i].powi(2) + y[i].powi(2) + z[i].powi(2) - a.powi(2),
                (x[i] - 0.5 * a).powi(2) + y[i].powi(2) - 0.25 * a.powi(2),
            ],
        },
        integrators: [spook],
        derivatives: [hessians],
    }
}

/// The dense `Σ_k w_k Hess g_k(q)` of `model`, checking that its pattern lists each unordered
/// pair once.
fn weighted_hessian(model: &impl SparseHolonomicHessians, q: &[f64], w: &[f64]) -> Vec<f64> {
    let pattern = model.constraint_hessian_pattern();
    let mut values = vec![f64::NAN; pattern.len()];
    model.weighted_constraint_hessian(q, 0.0, w, &mut values);
    dense_symmetric(pattern, &values, q.len())
}

/// The dense `Hess V(q)` of `model`, checking its pattern as [`weighted_hessian`] does.
fn potential_hessian(model: &impl SparsePotentialHessian, q: &[f64]) -> Vec<f64> {
    let pattern = model.hessian_pattern();
    let mut values = vec![f64::NAN; pattern.len()];
    model.potential_hessian(q, &mut values);
    dense_symmetric(pattern, &values, q.len())
}

/// `Gᵀ w` at `q` and, with `|G|` and `|w|`, its terms' magnitudes `|G|ᵀ|w|`.
fn weighted_gradient(model: &impl SparseHolonomic, q: &[f64], w: &[f64]) -> [Vec<f64>; 2] {
    let mut g = vec![f64::NAN; model.constraint_count()];
    let mut jac = vec![f64::NAN; model.jacobian_pattern().len()];
    model.constraints_and_jacobian(q, 0.0, &mut g, &mut jac);
    let (mut value, mut magnitude) = (vec![0.0; q.len()], vec![0.0; q.len()]);
    for (&(row, column), x) in model.jacobian_pattern().iter().zip(jac) {
        value[column] += w[row] * x;
        magnitude[column] += (w[row] * x).abs();
    }
    [value, magnitude]
}

/// The largest error of the dense `hessian` against central differences (step `h`) of the
/// vector function `f` (which returns its value and its terms' magnitudes) at `q`, and the
/// largest bound of the module's docs with `third` bounding `|f‴|`; panics where an entry's
/// error exceeds its bound.
fn against_differences(
    f: &dyn Fn(&[f64]) -> [Vec<f64>; 2],
    hessian: &[f64],
    q: &[f64],
    h: f64,
    third: f64,
    what: &str,
) -> (f64, f64) {
    let n = q.len();
    let differences = central_differences(&|q| f(q)[0].clone(), q, h);
    let magnitude = f(q)[1].iter().fold(0.0f64, |m, x| m.max(*x));
    let largest = hessian.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let q_norm = q.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let bound = h * h / 6.0 * third + 4.0 * f64::EPSILON * (magnitude + q_norm * largest) / h;
    let mut worst = 0.0f64;
    for (j, column) in differences.iter().enumerate() {
        for (i, &fd) in column.iter().enumerate() {
            let error = (hessian[i * n + j] - fd).abs();
            assert!(
                error <= bound,
                "{what}: H[{i}][{j}] = {} vs {fd}: {error:e} > {bound:e}",
                hessian[i * n + j]
            );
            worst = worst.max(error);
        }
    }
    (worst, bound)
}

/// Whether `a` and `b` agree entry by entry to `1e-13` relative to the larger entry.
fn agree(a: &[f64], b: &[f64]) -> bool {
    let scale = a.iter().chain(b).fold(1.0f64, |m, x| m.max(x.abs()));
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-13 * scale)
}

/// The per-link chain's `Σ_k w_k Hess g_k` with random masses, lengths, positions and weights
/// against central differences of `Gᵀw` (rows quadratic: rounding only), and with equal masses
/// and lengths against the hand-written `runtime::reference::PendulumChain` (the same
/// coordinates, bob `i` at `q[2i], q[2i + 1]`, and rows, rod `i` as row `i`); its potential is
/// linear, so its Hessian is zero.
#[test]
fn the_chain_rods_hessians_match_differences_and_the_hand_written_chain() {
    let (mut worst, mut by_hand_gap) = ((0.0f64, 0.0f64), 0.0f64);
    for n in [1, 2, 5, 12] {
        let mut chain = VariedPendulumChain::new(n).unwrap();
        let mut draw = noise(900 + n as u64);
        for i in 0..n {
            chain.m[i] = 1.25 + 0.75 * draw();
            chain.l[i] = 2.0 + draw();
        }
        let q: Vec<f64> = (0..2 * n).map(|_| 3.0 * draw()).collect();
        let w: Vec<f64> = (0..n).map(|_| draw()).collect();
        let hessian = weighted_hessian(&chain, &q, &w);
        let f = |q: &[f64]| weighted_gradient(&chain, q, &w);
        let (error, bound) = against_differences(&f, &hessian, &q, 1e-4, 0.0, "chain");
        worst = (worst.0.max(error), worst.1.max(bound));
        assert!(potential_hessian(&chain, &q).iter().all(|&x| x == 0.0));

        let (m, l, g) = (0.5 + 0.1 * n as f64, 1.5, 9.81);
        chain.m.fill(m);
        chain.l.fill(l);
        chain.g = g;
        let reference = PendulumChain::new(n, m, l, g);
        assert_eq!(chain.constraint_count(), reference.constraint_count());
        let generated = weighted_hessian(&chain, &q, &w);
        let by_hand = weighted_hessian(&reference, &q, &w);
        assert!(
            agree(&generated, &by_hand),
            "N = {n}: {generated:?} vs {by_hand:?}"
        );
        let gap = generated
            .iter()
            .zip(&by_hand)
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        by_hand_gap = by_hand_gap.max(gap);
    }
    eprintln!(
        "chain: Σ w Hess g against differences: largest error {:.1e}, bound {:.1e}; against \
         the hand-written chain: {by_hand_gap:.1e}",
        worst.0, worst.1
    );
}

/// The beads' weighted Hessian — a plain row, then a family of two-component rows, each
/// weighted by its own multiplier — against its closed form (`saddle`: `w₀ (e_x e_zᵀ + e_z e_xᵀ
/// − 2c e_y e_yᵀ)` on bead 0; bead `i`'s curve rows `2 w_{1+2i} I₃ + w_{2+2i} diag(2, 2, 0)`)
/// and against differences of `Gᵀw`; the anharmonic springs' `Hess V` against differences of
/// `∇V` (`|∇V‴| ≤ 12b`: `¼ b |d|⁴` has fourth derivatives at most `6b`, and each coordinate is
/// in two springs).
#[test]
fn a_vector_row_family_has_its_weighted_hessian() {
    let mut worst_rows = (0.0f64, 0.0f64);
    let mut worst_potential = (0.0f64, 0.0f64);
    for n in [1, 2, 4, 9] {
        let beads = VivianiBeads::new(n).unwrap();
        assert_eq!(beads.constraint_count(), 1 + 2 * n);
        let mut draw = noise(950 + n as u64);
        let q: Vec<f64> = (0..3 * n).map(|_| draw()).collect();
        let w: Vec<f64> = (0..1 + 2 * n).map(|_| draw()).collect();
        let hessian = weighted_hessian(&beads, &q, &w);
        let size = 3 * n;
        let mut closed = vec![0.0; size * size];
        closed[2] = w[0];
        closed[2 * size] = w[0];
        closed[size + 1] = -2.0 * beads.c * w[0];
        for i in 0..n {
            let (sphere, cylinder) = (w[1 + 2 * i], w[2 + 2 * i]);
            for (axis, value) in [
                2.0 * (sphere + cylinder),
                2.0 * (sphere + cylinder),
                2.0 * sphere,
            ]
            .into_iter()
            .enumerate()
            {
                let at = 3 * i + axis;
                closed[at * size + at] += value;
            }
        }
        assert!(
            agree(&hessian, &closed),
            "N = {n}: {hessian:?} vs {closed:?}"
        );
        let f = |q: &[f64]| weighted_gradient(&beads, q, &w);
        let (error, bound) = against_differences(&f, &hessian, &q, 1e-4, 0.0, "beads' rows");
        worst_rows = (worst_rows.0.max(error), worst_rows.1.max(bound));

        let gradient = |q: &[f64]| {
            let mut value = vec![f64::NAN; q.len()];
            beads.potential_gradient(q, &mut value);
            // Each entry sums at most two springs' terms, each below k|d| + b|d|³ (|d|_∞ ≤ 2).
            let magnitude = vec![2.0 * (beads.k * 4.0 + beads.b * 64.0); q.len()];
            [value, magnitude]
        };
        let (error, bound) = against_differences(
            &gradient,
            &potential_hessian(&beads, &q),
            &q,
            1e-4,
            12.0 * beads.b,
            "beads' springs",
        );
        worst_potential = (worst_potential.0.max(error), worst_potential.1.max(bound));
    }
    eprintln!(
        "beads: Σ w Hess g: largest error {:.1e}, bound {:.1e}; Hess V: largest error {:.1e}, bound {:.1e}",
        worst_rows.0, worst_rows.1, worst_potential.0, worst_potential.1
    );
}

/// A family of rotation matrices: its orthonormality rows (six row families per member) and
/// its springs between body points, both quadratic in the nine entries, against differences
/// of `Gᵀw` and of `∇V` at random matrices (off the rows: the Hessians hold everywhere).
#[test]
fn a_family_of_orientations_has_its_hessians() {
    let tops = CoupledTops::new(3).unwrap();
    let n = tops.coordinate_count();
    assert_eq!((n, tops.constraint_count()), (27, 18));
    let mut draw = noise(990);
    let q: Vec<f64> = (0..n).map(|_| draw()).collect();
    let w: Vec<f64> = (0..tops.constraint_count()).map(|_| draw()).collect();
    let f = |q: &[f64]| weighted_gradient(&tops, q, &w);
    let (rows, rows_bound) = against_differences(
        &f,
        &weighted_hessian(&tops, &q, &w),
        &q,
        1e-4,
        0.0,
        "tops' rows",
    );
    let gradient = |q: &[f64]| {
        let mut value = vec![f64::NAN; q.len()];
        tops.potential_gradient(q, &mut value);
        // Each entry sums at most two springs' terms `k |R e||e|` and the weight's `mgl`.
        let magnitude = vec![2.0 * tops.k * 3.0 + tops.mgl; q.len()];
        [value, magnitude]
    };
    let (potential, potential_bound) = against_differences(
        &gradient,
        &potential_hessian(&tops, &q),
        &q,
        1e-4,
        0.0,
        "tops' springs",
    );
    eprintln!(
        "tops: Σ w Hess g: largest error {rows:.1e}, bound {rows_bound:.1e}; Hess V: largest error {potential:.1e}, bound {potential_bound:.1e}"
    );
}
