//! The water cluster's optional smooth cutoff (`cutoff(r = r_OO, on = r_on, off = r_off)` on
//! its pair sum) against references nobody here generated: central finite differences of the
//! switched potential and gradient with pairs inside, across and beyond the switching region,
//! the switch's C² joins, exact zeros beyond `r_off`, Newton's third law and momentum
//! conservation, the h² energy error of RATTLE along a run through the switching region, a
//! hand-written switched all-pairs loop, bad parameters, and no allocation.

use crate::support::water_clusters::{max_abs, perturbed_cluster, BETA_T};
use mechanism::models::WaterCluster;
use mechanism::runtime::model::{
    SparseInertia, SparsePenalizedHessian, SparsePenaltyHessian, SparsePotential,
};
use mechanism::runtime::reference::water_pairs::{hand_written_switched, KC};
use mechanism::runtime::switch::quintic;
use mechanism::runtime::{
    DynState, Penalized, SparseIntegrator, SparseRattle, SparseZhangSkeelStiff, StepError,
};

/// The O–O distances, sorted.
fn sorted_distances(model: &WaterCluster, q: &[f64]) -> Vec<f64> {
    let n = model.molecules();
    let mut d = vec![0.0; n * (n - 1) / 2];
    model.oxygen_distances(q, &mut d);
    d.sort_by(f64::total_cmp);
    d
}

/// The switch joins its constant pieces C²: `S = 1, S' = S'' = 0` at `r_on` and `S = S' =
/// S'' = 0` at `r_off` exactly, and from inside the region `1 − S`, `S'`, `S''` vanish like
/// `x³`, `x²`, `x` (`x` the distance to the end over the width `w`): bounds `10x³`, `30x²/w`,
/// `60x/w²`, each the leading term of the polynomial (so a C¹ switch such as the cubic fails
/// the last one), `1 − S` up to the rounding `ε` of a value next to 1.
#[test]
fn the_switch_is_c2_at_both_ends() {
    let (on, off) = (2.5, 4.0);
    let w = off - on;
    assert_eq!(quintic(on, on, off), (1.0, 0.0, 0.0));
    assert_eq!(quintic(off, on, off), (0.0, 0.0, 0.0));
    for k in 1..=8 {
        let x = 10f64.powi(-k);
        let (s, ds, dds) = quintic(on + x * w, on, off);
        assert!(
            (1.0 - s).abs() <= 10.0 * x.powi(3) * (1.0 + 1e-9) + f64::EPSILON,
            "1 − S at on + {x}w"
        );
        assert!(
            ds.abs() <= 30.0 * x * x / w * (1.0 + 1e-9),
            "S' at on + {x}w"
        );
        assert!(
            dds.abs() <= 60.0 * x / (w * w) * (1.0 + 1e-9),
            "S'' at on + {x}w"
        );
        let (s, ds, dds) = quintic(off - x * w, on, off);
        assert!(
            s.abs() <= 10.0 * x.powi(3) * (1.0 + 1e-9),
            "S at off − {x}w"
        );
        assert!(
            ds.abs() <= 30.0 * x * x / w * (1.0 + 1e-9),
            "S' at off − {x}w"
        );
        assert!(
            dds.abs() <= 60.0 * x / (w * w) * (1.0 + 1e-9),
            "S'' at off − {x}w"
        );
    }
}

/// `∇V` against central differences of `V`, and the Hessian (the penalized Hessian at `ω = 0`,
/// i.e. `Hess V` on its pattern) against central differences of `∇V`, at a perturbed
/// 3-molecule cluster (O–O distances ≈ 3.1, 3.1, 4.4 Å) with switching regions that put the
/// pairs inside, across (some in, some inside), in, and beyond. Step `1e-5` Å: truncation
/// `d²|V‴|/6` (resp. `|V⁗|`), with the switch's derivatives at most `~360 E/w⁴` for a width
/// `w ≥ 0.5` Å, stays below `1e-7`, rounding `ε|V|/d ~ 1e-9`; the bound `1e-6` of the largest
/// entry leaves two orders of margin.
#[test]
fn switched_gradient_and_hessian_match_central_differences() {
    let mut model = WaterCluster::new(3).expect("3 molecules");
    let q = perturbed_cluster(&model, 0.05, 7);
    let n = q.len();
    let d = sorted_distances(&model, &q);
    let regions = [
        (d[0] - 0.6, d[2] + 0.6, "every pair switched"),
        (d[1] + 0.3, d[2] + 0.6, "two inside, one switched"),
        (d[0] - 0.6, 0.5 * (d[1] + d[2]), "two switched, one beyond"),
        (d[1] + 0.2, d[2] - 0.3, "two inside, one beyond"),
    ];
    for (on, off, what) in regions {
        assert!(off - on >= 0.5, "{what}: width {}", off - on);
        model.r_on = on;
        model.r_off = off;
        let mut grad = vec![0.0; n];
        model.potential_gradient(&q, &mut grad);
        let fd = crate::support::central_differences(&|x| vec![model.potential(x)], &q, 1e-5);
        let scale = max_abs(&grad);
        assert!(scale > 1.0, "{what}: forces are not trivial: {scale}");
        for (j, column) in fd.iter().enumerate() {
            assert!(
                (grad[j] - column[0]).abs() < 1e-6 * scale,
                "{what}: ∂V/∂q{j}: {} vs {}",
                grad[j],
                column[0]
            );
        }
        let pattern = model.penalized_hessian_pattern();
        let mut values = vec![0.0; pattern.len()];
        model.penalized_potential_hessian(0.0, &q, &mut values);
        let hess = crate::support::dense_symmetric(pattern, &values, n);
        let gradient = |x: &[f64]| {
            let mut g = vec![0.0; n];
            model.potential_gradient(x, &mut g);
            g
        };
        let fd = crate::support::central_differences(&gradient, &q, 1e-5);
        let scale = max_abs(&hess);
        for (j, column) in fd.iter().enumerate() {
            for (i, value) in column.iter().enumerate() {
                assert!(
                    (hess[i * n + j] - value).abs() < 1e-6 * scale,
                    "{what}: H[{i}, {j}]: {} vs {value}",
                    hess[i * n + j]
                );
            }
        }
    }
}

/// A molecule beyond `r_off` of every other contributes exactly nothing: the energy is bit for
/// bit that of the others alone (the far pairs add an exact `0.0`), its forces are exactly
/// zero, and a lone far pair has `V = 0` and `∇V = 0` exactly.
#[test]
fn pairs_beyond_the_cutoff_contribute_exactly_zero() {
    let mut three = WaterCluster::new(3).expect("3 molecules");
    let mut two = WaterCluster::new(2).expect("2 molecules");
    let mut q = perturbed_cluster(&three, 0.05, 5);
    // Molecule 2 moved 20 Å away along z.
    for k in 0..9 {
        if k % 3 == 2 {
            q[18 + k] += 20.0;
        }
    }
    for model in [&mut three, &mut two] {
        model.r_on = 6.0;
        model.r_off = 8.0;
    }
    let (mut g3, mut g2) = (vec![0.0; 27], vec![0.0; 18]);
    three.potential_gradient(&q, &mut g3);
    two.potential_gradient(&q[..18], &mut g2);
    assert_eq!(three.potential(&q), two.potential(&q[..18]));
    assert_eq!(&g3[..18], &g2[..]);
    assert!(g3[18..].iter().all(|&g| g == 0.0), "{:?}", &g3[18..]);
    let far: Vec<f64> = q[..9].iter().chain(&q[18..]).copied().collect();
    assert_eq!(two.potential(&far), 0.0);
    two.potential_gradient(&far, &mut g2);
    assert!(g2.iter().all(|&g| g == 0.0));
}

/// Newton's third law with the cutoff: the switched forces of a perturbed 7-molecule cluster,
/// with the switching region across the middle of its O–O distances, sum to zero and so do
/// their torques, to round-off (`63 · 8ε` of the largest term, as without a cutoff).
#[test]
fn switched_pair_forces_obey_newtons_third_law() {
    let mut model = WaterCluster::new(7).expect("7 molecules");
    let q = perturbed_cluster(&model, 0.05, 3);
    let d = sorted_distances(&model, &q);
    model.r_on = d[5];
    model.r_off = d[15];
    let mut grad = vec![0.0; q.len()];
    model.potential_gradient(&q, &mut grad);
    let (mut force, mut torque, mut torque_scale) = ([0.0; 3], [0.0; 3], 0.0f64);
    for (x, f) in q.chunks_exact(3).zip(grad.chunks_exact(3)) {
        let t = [
            x[1] * f[2] - x[2] * f[1],
            x[2] * f[0] - x[0] * f[2],
            x[0] * f[1] - x[1] * f[0],
        ];
        for c in 0..3 {
            force[c] += f[c];
            torque[c] += t[c];
            torque_scale = torque_scale.max(t[c].abs());
        }
    }
    let bound = 63.0 * 8.0 * f64::EPSILON;
    assert!(max_abs(&force) < bound * max_abs(&grad), "{force:?}");
    assert!(max_abs(&torque) < bound * torque_scale, "{torque:?}");
}

/// The generated switched potential and forces equal the hand-written switched loop
/// (`mechanism::runtime::reference::water_pairs`) to `1e-12` of their scales (the potential's:
/// its largest Coulomb term), for 12 molecules with pairs inside, in and beyond the region.
#[test]
fn the_switched_potential_equals_a_hand_written_switched_loop() {
    let mut model = WaterCluster::new(12).expect("12 molecules");
    let q = perturbed_cluster(&model, 0.05, 3);
    let d = sorted_distances(&model, &q);
    let (on, off) = (d[10], d[50]);
    assert!(d[0] < on && off < d[65], "the region splits the pairs");
    model.r_on = on;
    model.r_off = off;
    let (mut generated, mut reference) = (vec![0.0; q.len()], vec![0.0; q.len()]);
    model.potential_gradient(&q, &mut generated);
    let energy = hand_written_switched(&q, &mut reference, on, off);
    let v = model.potential(&q);
    let energy_scale = energy.abs().max(KC * 0.834 * 0.834 / 2.0);
    assert!(
        (v - energy).abs() < 1e-12 * energy_scale,
        "V {v} vs {energy}"
    );
    let scale = max_abs(&reference);
    for (k, (g, r)) in generated.iter().zip(&reference).enumerate() {
        assert!((g - r).abs() < 1e-12 * scale, "∂V/∂q{k}: {g} vs {r}");
    }
}

/// RATTLE (symplectic, second order) on 3 rigid molecules whose O–O distances start inside
/// the switching region `[2.9, 3.5]` Å and move through it: the largest energy error over
/// `T = 10` shrinks as `h²` (observed orders between 1.7 and 2.3 for `h = 0.04, 0.02, 0.01`),
/// which a force inconsistent with the energy in the region (a missing `E S' ∇r`) would
/// break; and the total linear momentum is conserved to round-off.
#[test]
fn rattle_energy_error_with_the_cutoff_is_second_order() {
    let mut model = WaterCluster::new(3).expect("3 molecules");
    model.r_on = 2.9;
    model.r_off = 3.5;
    let (q, mut v) = model.initial_cluster(BETA_T, 4);
    model.project_rigid(&q, &mut v);
    let energy = |s: &DynState| model.kinetic_energy(&s.q, &s.v) + model.potential(&s.q);
    let mut errors = Vec::new();
    let mut visited = false;
    for h in [0.04, 0.02, 0.01] {
        let mut rattle = SparseRattle::new(&model, h)
            .and_then(|r| r.with_tolerance(1e-13))
            .expect("a step size");
        let mut state = DynState::new(0.0, q.clone(), v.clone());
        let (e0, p0) = (energy(&state), model.linear_momentum(&state.v));
        let mut worst = 0.0f64;
        let steps = (10.0 / h).round() as usize;
        let mut distances = [0.0; 3];
        for _ in 0..steps {
            rattle.step(&model, &mut state).expect("a step");
            worst = worst.max((energy(&state) - e0).abs());
            model.oxygen_distances(&state.q, &mut distances);
            visited |= distances.iter().any(|&r| r > 2.9 && r < 3.5);
        }
        let p = model.linear_momentum(&state.v);
        let momentum = (0..3).map(|c| (p[c] - p0[c]).abs()).fold(0.0, f64::max);
        let budget: f64 = model
            .masses()
            .iter()
            .zip(&state.v)
            .map(|(m, v)| m * v.abs())
            .sum();
        assert!(
            momentum < 16.0 * f64::EPSILON * budget * steps as f64,
            "h = {h}: momentum drift {momentum:e}"
        );
        errors.push(worst);
    }
    assert!(visited, "the run passes through the switching region");
    for pair in errors.windows(2) {
        let order = (pair[0] / pair[1]).log2();
        assert!(
            (1.7..=2.3).contains(&order),
            "energy errors {errors:?}: order {order}"
        );
    }
}

/// Stiff Z&Ss on the penalized cluster with a cutoff conserves total linear momentum to
/// round-off over 2 000 steps (the argument and bound of `tests/it/water.rs`: the switched pair
/// terms still depend on differences of positions only).
#[test]
fn stiff_zss_with_the_cutoff_conserves_linear_momentum() {
    let mut model = WaterCluster::new(7).expect("7 molecules");
    model.r_on = 3.0;
    model.r_off = 4.5;
    let (q, v) = model.initial_cluster(BETA_T, 2014);
    let masses = model.masses();
    let penalized = Penalized::new(model, 20.0);
    let mut zss = SparseZhangSkeelStiff::new(&penalized, 0.05)
        .and_then(|z| z.with_beta(0.4))
        .expect("a valid step size and β");
    let mut state = DynState::new(0.0, q, v);
    let p0 = penalized.model.linear_momentum(&state.v);
    let (mut budget, mut previous) = (0.0, state.v.clone());
    for _ in 0..2000 {
        zss.step(&penalized, &mut state).expect("a step");
        for ((m, v), u) in masses.iter().zip(&state.v).zip(&previous) {
            budget += m * (v - u).abs() + m * v.abs();
        }
        previous.copy_from_slice(&state.v);
    }
    let p = penalized.model.linear_momentum(&state.v);
    let drift = (0..3).map(|d| (p[d] - p0[d]).abs()).fold(0.0, f64::max);
    assert!(drift < 16.0 * f64::EPSILON * budget, "drift {drift:e}");
}

/// Bad cutoff parameters are a `BadParameter` naming the culprit, and the state is unchanged:
/// `r_on ≥ r_off` names `r_off`, a negative `r_on` names `r_on`, a NaN `r_off` names `r_off`.
#[test]
fn bad_cutoff_parameters_are_named() {
    let cases: [(f64, f64, &str); 3] = [
        (5.0, 4.0, "r_off"),
        (-1.0, 4.0, "r_on"),
        (3.0, f64::NAN, "r_off"),
    ];
    for (on, off, culprit) in cases {
        let mut model = WaterCluster::new(3).expect("3 molecules");
        model.r_on = on;
        model.r_off = off;
        let (q, mut v) = model.initial_cluster(BETA_T, 1);
        model.project_rigid(&q, &mut v);
        let mut rattle = SparseRattle::new(&model, 0.05).expect("a step size");
        let mut state = DynState::new(0.0, q.clone(), v.clone());
        match rattle.step(&model, &mut state) {
            Err(StepError::BadParameter { name, .. }) => assert_eq!(name, culprit),
            other => panic!("r_on = {on}, r_off = {off}: {other:?}"),
        }
        assert_eq!(state.q, q);
        assert_eq!(state.v, v);
    }
}

/// At `N = 100` with a cutoff (8, 10 Å), the switched forces, the penalized Hessian and a step
/// of stiff Z&Ss allocate nothing.
#[test]
fn switched_forces_and_hessians_allocate_nothing() {
    let mut model = WaterCluster::new(100).expect("100 molecules");
    model.r_on = 8.0;
    model.r_off = 10.0;
    let (q, v) = model.initial_cluster(BETA_T, 9);
    let mut grad = vec![0.0; q.len()];
    let mut hess = vec![0.0; model.penalized_hessian_pattern().len()];
    let mut stiff = vec![0.0; model.penalty_hessian_pattern().len()];
    let penalized = Penalized::new(model.clone(), 20.0);
    let mut zss = SparseZhangSkeelStiff::new(&penalized, 0.05).expect("a step size");
    let mut state = DynState::new(0.0, q, v);
    zss.step(&penalized, &mut state).expect("a step");
    let before = crate::support::allocations();
    for _ in 0..2 {
        model.potential_gradient(&state.q, &mut grad);
        model.penalized_potential_hessian(20.0, &state.q, &mut hess);
        model.penalty_hessian(20.0, &state.q, &mut stiff);
        zss.step(&penalized, &mut state).expect("a step");
    }
    assert_eq!(crate::support::allocations() - before, 0, "allocated");
}
