//! Families of orientations in motion: clusters of rigid bodies declared as `r[N]: matrix`,
//! stepped on the sparse tier, against the torque-free symmetric top's closed form and
//! against the same cluster written as single orientations `r0, r1, r2` and stepped on the
//! fixed-size tier.
//!
//! The closed form (Landau–Lifshitz §33; Goldstein §5.6): with `L` the (constant) angular
//! momentum in space and `λ = (I₃ − I₁) Ω₃ / I₁`,
//!
//! ```text
//! R(t) = exp(t L̂ / I₁) R₀ exp(−λ t ê₃),   Ω(t) = (Ω⊥ rotated by λt about ê₃, Ω₃),
//! ```
//!
//! from `Ṙ = R Ω̂` with `Rᵀ L = I Ω`: the body's symmetry axis precesses about `L` at
//! `|L|/I₁`, and in the body frame `Ω₃` is constant while `Ω⊥` turns at `λ`.

use mechanism::mechanism;
use mechanism::models::{matrix_angular_velocity, matrix_state, rotation_matrix};
use mechanism::runtime::reference::fit::loglog_slope;
use mechanism::runtime::{
    DynState, Integrator, Rattle, SparseIntegrator, SparseRattle, SparseSpook, Spook, State,
};
use nalgebra::{Matrix3, Rotation3, Vector3};

mechanism! {
    /// Three free symmetric tops (`I₁ = I₂ = 1`, `I₃ = 0.4`), one rotation matrix each.
    pub struct FreeTops {
        sizes: { N = 3 },
        orientations: { r[N]: matrix },
        parameters: { i1 = 1.0, i3 = 0.4 },
        kinetic: sum(0..N, |i| rigid_kinetic(r[i], i1, i1, i3)),
        integrators: [rattle],
    }
}

mechanism! {
    /// Three asymmetric heavy tops coupled by springs between body points, as a family (with
    /// its Hessians, which `families::hessians` checks).
    pub struct CoupledTops {
        sizes: { N = 3 },
        orientations: { r[N]: matrix },
        parameters: { i1 = 1.0, i2 = 1.5, i3 = 2.0, k = 2.0, mgl = 1.0 },
        kinetic: sum(0..N, |i| rigid_kinetic(r[i], i1, i2, i3)),
        potential: sum(0..N, |i| mgl * rotate_z(r[i], 0.0, 0.0, 1.0))
            + sum(1..N, |i| 0.5 * k * (rotate_x(r[i], 1.0, 0.0, 0.0)
                - rotate_x(r[i - 1], 0.0, 1.0, 0.0)).powi(2)),
        integrators: [rattle, spook],
        derivatives: [hessians],
    }
}

mechanism! {
    /// [`CoupledTops`] written with three single orientations: the fixed-size tier.
    pub struct CoupledTopsByHand {
        orientations: { r0: matrix, r1: matrix, r2: matrix },
        parameters: { i1 = 1.0, i2 = 1.5, i3 = 2.0, k = 2.0, mgl = 1.0 },
        kinetic: rigid_kinetic(r0, i1, i2, i3) + rigid_kinetic(r1, i1, i2, i3)
            + rigid_kinetic(r2, i1, i2, i3),
        potential: mgl * (rotate_z(r0, 0.0, 0.0, 1.0) + rotate_z(r1, 0.0, 0.0, 1.0)
                + rotate_z(r2, 0.0, 0.0, 1.0))
            + 0.5 * k * (rotate_x(r1, 1.0, 0.0, 0.0) - rotate_x(r0, 0.0, 1.0, 0.0)).powi(2)
            + 0.5 * k * (rotate_x(r2, 1.0, 0.0, 0.0) - rotate_x(r1, 0.0, 1.0, 0.0)).powi(2),
        integrators: [rattle, spook],
    }
}

/// The members' starts: a rotation (from a unit quaternion) and a body angular velocity each.
fn starts() -> [([[f64; 3]; 3], [f64; 3]); 3] {
    let unit = |q: [f64; 4]| {
        let n = q.iter().map(|x| x * x).sum::<f64>().sqrt();
        rotation_matrix(&q.map(|x| x / n))
    };
    [
        (unit([1.0, 0.2, -0.1, 0.3]), [0.7, -0.4, 2.0]),
        (unit([0.3, -0.8, 0.4, 0.1]), [-1.1, 0.5, -1.5]),
        (unit([0.9, 0.1, 0.5, -0.6]), [0.2, 1.3, 0.8]),
    ]
}

/// The state of a cluster of matrix orientations: member `i`'s nine coordinates (its `R` row by
/// row) are body `i`.
fn cluster_state() -> DynState {
    let (mut q, mut v) = (Vec::new(), Vec::new());
    for (r, omega) in starts() {
        let member = matrix_state(r, omega);
        q.extend(member.q.iter());
        v.extend(member.v.iter());
    }
    DynState::new(0.0, q, v)
}

fn matrix(r: [[f64; 3]; 3]) -> Matrix3<f64> {
    Matrix3::from_fn(|i, j| r[i][j])
}

/// The closed form at `t` of the free symmetric top (`I₁ = I₂ = i1`, `I₃ = i3`) that starts at
/// `(r0, omega0)`: its rotation and body angular velocity.
fn free_symmetric_top(
    i1: f64,
    i3: f64,
    r0: [[f64; 3]; 3],
    omega0: [f64; 3],
    t: f64,
) -> (Matrix3<f64>, Vector3<f64>) {
    let r0 = matrix(r0);
    let omega0 = Vector3::from(omega0);
    let momentum = r0 * Vector3::new(i1 * omega0.x, i1 * omega0.y, i3 * omega0.z);
    let lambda = (i3 - i1) * omega0.z / i1;
    let precession = Rotation3::from_scaled_axis(momentum * (t / i1));
    let spin = Rotation3::from_scaled_axis(Vector3::z() * (-lambda * t));
    let r = precession.matrix() * r0 * spin.matrix();
    let turned = Rotation3::from_scaled_axis(Vector3::z() * (lambda * t)) * omega0;
    (r, turned)
}

/// The largest error of the cluster's members against the closed form at the state's time:
/// `max_i (|R_i − R_i(t)|, |Ω_i − Ω_i(t)|)`, and the largest `|R_iᵀR_i − I|`.
fn cluster_errors(state: &DynState) -> (f64, f64) {
    let (mut error, mut orthogonality) = (0.0f64, 0.0f64);
    for (i, (r0, omega0)) in starts().into_iter().enumerate() {
        let (q, v) = (&state.q[9 * i..9 * i + 9], &state.v[9 * i..9 * i + 9]);
        let r = Matrix3::from_row_slice(q);
        let omega = Vector3::from(matrix_angular_velocity(q, v));
        let (r_exact, omega_exact) = free_symmetric_top(1.0, 0.4, r0, omega0, state.t);
        error = error
            .max((r - r_exact).abs().max())
            .max((omega - omega_exact).abs().max());
        orthogonality = orthogonality.max((r.transpose() * r - Matrix3::identity()).abs().max());
    }
    (error, orthogonality)
}

/// The closed form itself, before it judges an integrator: `R(t)` stays a rotation, and its
/// difference quotient gives the body rate `Ω(t)` of the formula (central differences, error
/// `O(δ²)`), at a few times for each start.
#[test]
fn the_closed_form_solves_the_free_top() {
    let delta = 1e-5;
    for (r0, omega0) in starts() {
        for t in [0.0, 0.7, 2.3] {
            let (r, omega) = free_symmetric_top(1.0, 0.4, r0, omega0, t);
            let (plus, _) = free_symmetric_top(1.0, 0.4, r0, omega0, t + delta);
            let (minus, _) = free_symmetric_top(1.0, 0.4, r0, omega0, t - delta);
            let rdot = (plus - minus) / (2.0 * delta);
            let q: Vec<f64> = r.transpose().iter().copied().collect();
            let v: Vec<f64> = rdot.transpose().iter().copied().collect();
            let from_motion = Vector3::from(matrix_angular_velocity(&q, &v));
            assert!((r.transpose() * r - Matrix3::identity()).abs().max() < 1e-14);
            assert!(
                (from_motion - omega).abs().max() < 1e-8,
                "t = {t}: Ṙ gives {from_motion}, the formula {omega}"
            );
            assert!((omega.z - omega0[2]).abs() < 1e-15, "Ω₃ is constant");
        }
    }
}

/// RATTLE on the sparse tier steps each member of a cluster of free symmetric tops to the
/// closed form at second order, every member on SO(3) to the Newton tolerance.
#[test]
fn sparse_rattle_steps_a_cluster_of_free_tops_at_second_order() {
    let tops = FreeTops::new(3).unwrap();
    let t_end = 2.0;
    let hs = [0.01, 0.005];
    let mut errors = [0.0; 2];
    for (k, &h) in hs.iter().enumerate() {
        let mut rattle = SparseRattle::new(&tops, h).unwrap();
        let mut state = cluster_state();
        let steps = (t_end / h).round() as usize;
        let mut orthogonality = 0.0f64;
        for _ in 0..steps {
            rattle.step(&tops, &mut state).unwrap();
            orthogonality = orthogonality.max(cluster_errors(&state).1);
        }
        assert!((state.t - t_end).abs() < 1e-12);
        let (error, _) = cluster_errors(&state);
        println!("sparse RATTLE h = {h}: error {error:.2e}, max |RᵀR − I| {orthogonality:.1e}");
        assert!(orthogonality < 1e-11, "RᵀR − I = {orthogonality:e}");
        errors[k] = error;
    }
    let order = loglog_slope(&hs, &errors).unwrap();
    assert!(order > 1.8 && order < 2.3, "order {order}");
}

/// The family cluster on the sparse tier and the cluster of single orientations on the
/// fixed-size tier are the same mechanics: RATTLE and SPOOK step them alike, up to the
/// rounding of two different linear solvers and summation orders (and RATTLE's Newton
/// tolerance, `1e-13` relative), over 400 steps of a coupled, nonlinear motion.
#[test]
fn a_family_cluster_steps_as_its_single_orientations() {
    let family = CoupledTops::new(3).unwrap();
    let by_hand = CoupledTopsByHand::default();
    let h = 0.005;
    let start = cluster_state();
    let fixed_start = State::<27>::new(
        0.0,
        start.q.clone().try_into().unwrap(),
        start.v.clone().try_into().unwrap(),
    );
    let gap = |a: &DynState, b: &State<27>| {
        a.q.iter()
            .chain(&a.v)
            .zip(b.q.iter().chain(b.v.iter()))
            .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
    };
    let (mut sparse, mut fixed) = (start.clone(), fixed_start);
    let mut rattle = SparseRattle::new(&family, h).unwrap();
    let mut dense = Rattle::<27, 18>::new(h).unwrap();
    for _ in 0..400 {
        rattle.step(&family, &mut sparse).unwrap();
        dense.step(&by_hand, &mut fixed).unwrap();
    }
    let moved = gap(&start, &fixed);
    assert!(moved > 0.1, "the cluster moved by {moved}");
    println!(
        "RATTLE: sparse family and fixed-size singles differ by {:.1e}",
        gap(&sparse, &fixed)
    );
    assert!(
        gap(&sparse, &fixed) < 1e-9,
        "RATTLE: {:e}",
        gap(&sparse, &fixed)
    );

    let (mut sparse, mut fixed) = (start.clone(), fixed_start);
    let mut spook = SparseSpook::new(&family, h).unwrap();
    let mut dense = Spook::<27, 18>::new(h).unwrap();
    for _ in 0..400 {
        spook.step(&family, &mut sparse).unwrap();
        dense.step(&by_hand, &mut fixed).unwrap();
    }
    println!(
        "SPOOK: sparse family and fixed-size singles differ by {:.1e}",
        gap(&sparse, &fixed)
    );
    assert!(
        gap(&sparse, &fixed) < 1e-9,
        "SPOOK: {:e}",
        gap(&sparse, &fixed)
    );
}
