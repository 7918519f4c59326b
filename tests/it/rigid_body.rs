//! Rigid bodies as unit quaternions written with `mechanism!` (`models::FreeBody`,
//! `models::HeavyTop`): the torque-free body's `Ω(t)` against its closed form in Jacobi elliptic
//! functions (Landau–Lifshitz §37), fourth order for RK4 with S-both², 1e-9 reached by DOPRI5,
//! second order and exact energy for Livens; the heavy top's invariants (energy, the angular
//! momentum about the vertical, the spin `Ω₃` of a symmetric top) and `|q| = 1`; the heavy top
//! with its rotation matrix as coordinates (`models::HeavyTopMatrix`) under RATTLE, SHAKE and
//! SPOOK against the quaternion form at a tight tolerance; the models written with
//! `orientations` against the same top written out by hand, through the generated code.

use mechanism::models::{
    body_angular_velocity, matrix_angular_velocity, rotation_matrix, FreeBody, HeavyTop,
    HeavyTopMatrix,
};
use mechanism::runtime::integrators::stabilized::{DOPRI5, RK4};
use mechanism::runtime::reference::elliptic::jacobi;
use mechanism::runtime::reference::fit::loglog_slope;
use mechanism::runtime::simulation::{Schedule, Simulation};
use mechanism::runtime::{
    observers, Dopri5, Integrator, Livens, PostStabilization, Rattle, Shake, Spook, StabilizedRk,
    State,
};

/// The torque-free body's `Ω(t)` for `I = (1, 2, 3)`, `Ω(0) = (1, 0, 1)`: Landau–Lifshitz
/// §37 for `M² > 2E I₂` (here `2E = 4`, `M² = 10`), with `k² = 1/3` and `τ = t`.
fn free_body_omega(t: f64) -> [f64; 3] {
    let (i1, i2, i3) = (1.0f64, 2.0, 3.0);
    let (two_e, m2) = (4.0f64, 10.0);
    let k2 = (i2 - i1) * (two_e * i3 - m2) / ((i3 - i2) * (m2 - two_e * i1));
    let rate = ((i3 - i2) * (m2 - two_e * i1) / (i1 * i2 * i3)).sqrt();
    let (sn, cn, dn) = jacobi(rate * t, k2);
    [
        ((two_e * i3 - m2) / (i1 * (i3 - i1))).sqrt() * cn,
        ((two_e * i3 - m2) / (i2 * (i3 - i2))).sqrt() * sn,
        ((m2 - two_e * i1) / (i3 * (i3 - i1))).sqrt() * dn,
    ]
}

/// Returns `max_k |Ω(t_k) − Ω_exact(t_k)|` over `steps` steps of `integrator` from the free
/// body's start, and the largest `||q| − 1|`.
fn free_body_error<I: Integrator<FreeBody, 4>>(mut integrator: I, steps: usize) -> (f64, f64) {
    let model = FreeBody::default();
    let mut state = FreeBody::initial_state();
    let (mut error, mut unit) = (0.0f64, 0.0f64);
    for _ in 0..steps {
        integrator.step(&model, &mut state).unwrap();
        let omega = body_angular_velocity(state.q.as_slice(), state.v.as_slice());
        let exact = free_body_omega(state.t);
        for k in 0..3 {
            error = error.max((omega[k] - exact[k]).abs());
        }
        unit = unit.max((state.q.norm() - 1.0).abs());
    }
    (error, unit)
}

/// The closed form (with `reference::elliptic::jacobi`, checked there against published
/// values) solves Euler's equations.
#[test]
fn the_closed_form_solves_eulers_equations() {
    // The closed form solves Euler's equations I Ω̇ = IΩ × Ω (centred differences).
    for t in [0.3, 2.0, 7.5] {
        let d = 1e-5;
        let (w, a, b) = (
            free_body_omega(t),
            free_body_omega(t + d),
            free_body_omega(t - d),
        );
        let rate = [0, 1, 2].map(|k| (a[k] - b[k]) / (2.0 * d));
        let euler = [
            (2.0 - 3.0) * w[1] * w[2] / 1.0,
            (3.0 - 1.0) * w[2] * w[0] / 2.0,
            (1.0 - 2.0) * w[0] * w[1] / 3.0,
        ];
        for k in 0..3 {
            assert!((rate[k] - euler[k]).abs() < 1e-8, "t = {t}, component {k}");
        }
    }
}

#[test]
fn rk4_with_s_both_squared_is_fourth_order_on_the_free_body() {
    let t_end = 10.0;
    let hs = [0.02, 0.01];
    let run = |h: f64| {
        let rk4 = StabilizedRk::<4, 1, 4>::new(RK4, h)
            .unwrap()
            .with_post_stabilization(PostStabilization::BothTwice);
        free_body_error(rk4, (t_end / h).round() as usize)
    };
    let (coarse, fine) = (run(hs[0]), run(hs[1]));
    let order = loglog_slope(&hs, &[coarse.0, fine.0]).unwrap();
    println!(
        "RK4 + S-both²: max |ΔΩ| {:.2e} → {:.2e}, order {order:.2}",
        coarse.0, fine.0
    );
    assert!(order > 3.7 && order < 4.5, "order {order}");
    assert!(fine.1 < 1e-12, "|q| drifted by {:e}", fine.1);
}

#[test]
fn dopri5_reaches_the_closed_form_to_1e_9() {
    let dopri = Dopri5::<4, 1>::new(DOPRI5, 1e-12, 1e-12)
        .unwrap()
        .with_post_stabilization(PostStabilization::BothTwice);
    let model = FreeBody::default();
    let mut state = FreeBody::initial_state();
    let mut dopri = dopri;
    let mut error = 0.0f64;
    while state.t < 10.0 {
        dopri.step(&model, &mut state).unwrap();
        let omega = body_angular_velocity(state.q.as_slice(), state.v.as_slice());
        let exact = free_body_omega(state.t);
        for k in 0..3 {
            error = error.max((omega[k] - exact[k]).abs());
        }
    }
    println!("DOPRI5 (tol 1e-12): max |ΔΩ| = {error:.2e}");
    assert!(error < 1e-9, "max |ΔΩ| = {error:e}");
}

#[test]
fn livens_is_second_order_and_conserves_its_generalized_energy() {
    let hs = [0.02, 0.01];
    let run = |h: f64| {
        let mut livens = Livens::<4, 1>::new(h).unwrap();
        livens = livens.with_tolerance(1e-13).unwrap();
        free_body_error(livens, (10.0 / h).round() as usize)
    };
    let (coarse, fine) = (run(hs[0]), run(hs[1]));
    let order = loglog_slope(&hs, &[coarse.0, fine.0]).unwrap();
    println!(
        "Livens: max |ΔΩ| {:.2e} → {:.2e}, order {order:.2}",
        coarse.0, fine.0
    );
    assert!(order > 1.8 && order < 2.3, "order {order}");
    // The discrete generalized energy p·v − ½v·Mv + V (Kinon–Betsch eq. 31, Prop. 5.4) stays
    // at ½ΩᵀIΩ = 2 to the Newton tolerance at every step; T + V itself (with the completion,
    // as Livens does not hold q·v = 0 exactly) stays within the scheme's O(h²).
    let model = FreeBody::default();
    let mut livens = Livens::<4, 1>::new(0.05).unwrap();
    let mut state = FreeBody::initial_state();
    let e0 = observers::energy(&model, &state);
    assert!((e0 - 2.0).abs() < 1e-14, "E(0) = {e0}");
    let mut drift = 0.0f64;
    for _ in 0..2000 {
        livens.step(&model, &mut state).unwrap();
        let e = livens.generalized_energy(&model, &state);
        assert!(
            (e - e0).abs() < 1e-10,
            "t = {}: E − E0 = {:e}",
            state.t,
            e - e0
        );
        drift = drift.max((observers::energy(&model, &state) - e0).abs());
    }
    println!("Livens h = 0.05: max |T + V − E0| = {drift:.2e}");
    assert!(drift < 1e-2, "T + V drifted by {drift:e}");
}

/// The heavy top's invariants: energy, the world-vertical angular momentum `(R I Ω)_z` and,
/// for the symmetric top, the spin `Ω₃`.
fn top_invariants(model: &HeavyTop, state: &State<4>) -> [f64; 3] {
    let omega = body_angular_velocity(state.q.as_slice(), state.v.as_slice());
    let r = rotation_matrix(state.q.as_slice());
    let l_body = [
        model.i1 * omega[0],
        model.i2 * omega[1],
        model.i3 * omega[2],
    ];
    let l_z = (0..3).map(|k| r[2][k] * l_body[k]).sum();
    [observers::energy(model, state), l_z, omega[2]]
}

#[test]
fn the_heavy_top_keeps_its_invariants() {
    let model = HeavyTop::default();
    let start = HeavyTop::initial_state();
    let initial = top_invariants(&model, &start);
    // Ω(0) = (0, 0, 20): E = ½·0.4·400 + m g l cos 0.3, L_z = 0.4·20·cos 0.3, Ω₃ = 20.
    let expected = [80.0 + 4.905 * 0.3f64.cos(), 8.0 * 0.3f64.cos(), 20.0];
    for k in 0..3 {
        assert!((initial[k] - expected[k]).abs() < 1e-12, "invariant {k}");
    }

    // DOPRI5 at a tight tolerance: all three to 1e-8 relative over 5 s (≈ 16 spins).
    let mut dopri = Dopri5::<4, 1>::new(DOPRI5, 1e-11, 1e-11)
        .unwrap()
        .with_post_stabilization(PostStabilization::BothTwice);
    let mut state = start;
    let mut drift = [0.0f64; 3];
    while state.t < 5.0 {
        dopri.step(&model, &mut state).unwrap();
        let now = top_invariants(&model, &state);
        for k in 0..3 {
            drift[k] = drift[k].max(((now[k] - initial[k]) / initial[k]).abs());
        }
        assert!((state.q.norm() - 1.0).abs() < 1e-12);
    }
    println!(
        "DOPRI5: relative drift of E, L_z, Ω₃ = {:.1e}, {:.1e}, {:.1e}",
        drift[0], drift[1], drift[2]
    );
    assert!(drift.iter().all(|&d| d < 1e-8), "{drift:?}");

    // Livens: its generalized energy to the Newton tolerance, whatever h; L_z and Ω₃ bounded.
    let mut livens = Livens::<4, 1>::new(0.005).unwrap();
    let mut state = start;
    let mut drift = [0.0f64; 3];
    for _ in 0..1000 {
        livens.step(&model, &mut state).unwrap();
        let mut now = top_invariants(&model, &state);
        now[0] = livens.generalized_energy(&model, &state);
        for k in 0..3 {
            drift[k] = drift[k].max(((now[k] - initial[k]) / initial[k]).abs());
        }
    }
    println!(
        "Livens h = 0.005: relative drift of E (generalized), L_z, Ω₃ = {:.1e}, {:.1e}, {:.1e}",
        drift[0], drift[1], drift[2]
    );
    assert!(drift[0] < 1e-12, "energy drift {:e}", drift[0]);
    assert!(drift[1] < 1e-2 && drift[2] < 1e-2, "{drift:?}");
}

/// The heavy top's rotation matrix and body angular velocity at `t_end` from the quaternion
/// form under DOPRI5 at tolerance 1e-12: the reference of the matrix form.
fn top_reference(t_end: f64) -> ([[f64; 3]; 3], [f64; 3]) {
    let model = HeavyTop::default();
    let dopri = Dopri5::<4, 1>::new(DOPRI5, 1e-12, 1e-12)
        .unwrap()
        .with_post_stabilization(PostStabilization::BothTwice);
    // The driver reports t_end exactly, from DOPRI5's dense output.
    let schedule = Schedule::At(vec![t_end]);
    let mut run =
        Simulation::adaptive(&model, dopri, HeavyTop::initial_state(), t_end, schedule).unwrap();
    run.run().unwrap();
    let table = run.into_output();
    let row = table.row(table.len() - 1).unwrap();
    assert_eq!(row[0], t_end);
    let (q, v) = (&row[1..5], &row[5..9]);
    (rotation_matrix(q), body_angular_velocity(q, v))
}

/// Steps the matrix-form top with `integrator` for `steps` steps and returns the final state,
/// the largest `max |RᵀR − I|` and the largest energy error on the way.
fn run_matrix_top<I: Integrator<HeavyTopMatrix, 9>>(
    mut integrator: I,
    steps: usize,
) -> (State<9>, f64, f64) {
    let model = HeavyTopMatrix::default();
    let mut state = HeavyTopMatrix::initial_state();
    let e0 = observers::energy(&model, &state);
    let (mut orthogonality, mut energy) = (0.0f64, 0.0f64);
    for _ in 0..steps {
        integrator.step(&model, &mut state).unwrap();
        let r = &state.q;
        for j in 0..3 {
            for k in 0..3 {
                let dot: f64 = (0..3).map(|i| r[3 * i + j] * r[3 * i + k]).sum();
                let delta = if j == k { 1.0 } else { 0.0 };
                orthogonality = orthogonality.max((dot - delta).abs());
            }
        }
        energy = energy.max((observers::energy(&model, &state) - e0).abs());
    }
    (state, orthogonality, energy)
}

/// Returns `max |R − R_ref|` and `max |Ω − Ω_ref|` of a matrix-form state.
fn matrix_error(state: &State<9>, reference: &([[f64; 3]; 3], [f64; 3])) -> (f64, f64) {
    let mut r_error = 0.0f64;
    for i in 0..3 {
        for j in 0..3 {
            r_error = r_error.max((state.q[3 * i + j] - reference.0[i][j]).abs());
        }
    }
    let omega = matrix_angular_velocity(state.q.as_slice(), state.v.as_slice());
    let omega_error = (0..3).fold(0.0f64, |m, k| m.max((omega[k] - reference.1[k]).abs()));
    (r_error, omega_error)
}

#[test]
fn the_matrix_form_matches_the_quaternion_form_at_the_start() {
    let (matrix, quaternion) = (HeavyTopMatrix::initial_state(), HeavyTop::initial_state());
    let r = rotation_matrix(quaternion.q.as_slice());
    for (entry, expected) in matrix.q.iter().zip(r.iter().flatten()) {
        assert!((entry - expected).abs() < 1e-15);
    }
    let omega = matrix_angular_velocity(matrix.q.as_slice(), matrix.v.as_slice());
    assert_eq!(omega, [0.0, 0.0, 20.0]);
    let e_matrix = observers::energy(&HeavyTopMatrix::default(), &matrix);
    let e_quaternion = observers::energy(&HeavyTop::default(), &quaternion);
    assert!(
        (e_matrix - e_quaternion).abs() < 1e-12,
        "{e_matrix} vs {e_quaternion}"
    );
}

#[test]
fn rattle_steps_the_matrix_top_at_second_order_on_so3() {
    let t_end = 1.0;
    let reference = top_reference(t_end);
    let hs = [0.002, 0.001];
    let mut errors = [0.0; 2];
    for (k, &h) in hs.iter().enumerate() {
        let steps = (t_end / h).round() as usize;
        let rattle = Rattle::<9, 6>::new(h)
            .unwrap()
            .with_tolerance(1e-13)
            .unwrap();
        let (state, orthogonality, energy) = run_matrix_top(rattle, steps);
        let (r_error, omega_error) = matrix_error(&state, &reference);
        println!(
            "RATTLE h = {h}: max |R − R_ref| {r_error:.2e}, |Ω − Ω_ref| {omega_error:.2e}, \
             max |RᵀR − I| {orthogonality:.1e}, max |E − E0| {energy:.2e}"
        );
        assert!(orthogonality < 1e-12, "RᵀR − I = {orthogonality:e}");
        errors[k] = omega_error.max(r_error);
    }
    let order = loglog_slope(&hs, &errors).unwrap();
    assert!(order > 1.8 && order < 2.3, "order {order}");
}

#[test]
fn shake_has_rattles_positions_and_spook_stays_near_so3() {
    let (h, steps) = (0.001, 2000);
    let rattle = Rattle::<9, 6>::new(h)
        .unwrap()
        .with_tolerance(1e-13)
        .unwrap();
    let (rattle_state, _, rattle_energy) = run_matrix_top(rattle, steps);
    let model = HeavyTopMatrix::default();
    let mut shake = Shake::<9, 6>::new(h)
        .unwrap()
        .with_tolerance(1e-13)
        .unwrap();
    let mut start = HeavyTopMatrix::initial_state();
    shake.stagger_velocity(&model, &mut start).unwrap();
    let mut state = start;
    for _ in 0..steps {
        shake.step(&model, &mut state).unwrap();
    }
    let gap = (0..9).fold(0.0f64, |m, i| m.max((state.q[i] - rattle_state.q[i]).abs()));
    println!("SHAKE vs RATTLE positions after {steps} steps: {gap:.1e}");
    assert!(gap < 1e-9, "SHAKE and RATTLE positions differ by {gap:e}");
    // RATTLE's energy error is bounded by its O(h²) over two seconds (≈ 6 spins).
    assert!(
        rattle_energy < 1e-3 * 85.0,
        "RATTLE energy error {rattle_energy:e}"
    );

    // SPOOK (ε = 1e-8, τ = 2h): its violation of RᵀR = I is of order h² (the spin's
    // centripetal acceleration, ω² ≈ 400, is what it lags behind by), and the motion converges
    // at least at first order, the method's guarantee (second order is measured here).
    let reference = top_reference(1.0);
    let hs = [0.001, 0.0005];
    let (mut violations, mut errors) = ([0.0; 2], [0.0; 2]);
    for (k, &h) in hs.iter().enumerate() {
        let spook = Spook::<9, 6>::new(h).unwrap();
        let (state, orthogonality, _) = run_matrix_top(spook, (1.0 / h).round() as usize);
        let (r_error, omega_error) = matrix_error(&state, &reference);
        println!(
            "SPOOK h = {h}: max |RᵀR − I| {orthogonality:.2e}, |R − R_ref| {r_error:.2e}, \
             |Ω − Ω_ref| {omega_error:.2e}"
        );
        violations[k] = orthogonality;
        errors[k] = r_error.max(omega_error);
    }
    let (violation_order, order) = (
        loglog_slope(&hs, &violations).unwrap(),
        loglog_slope(&hs, &errors).unwrap(),
    );
    println!("SPOOK: violation order {violation_order:.2}, error order {order:.2}");
    assert!(violation_order > 1.8, "violation order {violation_order}");
    assert!(order > 0.8, "order {order}");
}

mechanism::mechanism! {
    /// `models::HeavyTop` as written before `orientations` existed: `Ω` spelled out, the
    /// completion `½ c (q·q̇)²` with `c = 4 (i1 + i2 + i3)/3` by hand, `R_zz` homogeneous.
    pub struct HandWrittenTop {
        coordinates: [w, x, y, z],
        parameters: { i1 = 1.0, i2 = 1.0, i3 = 0.4, mgl = 4.905, c = 3.2 },
        kinetic: 0.5 * i1 * (2.0 * (w * dot(x) - x * dot(w) + z * dot(y) - y * dot(z))).powi(2)
            + 0.5 * i2 * (2.0 * (w * dot(y) - y * dot(w) + x * dot(z) - z * dot(x))).powi(2)
            + 0.5 * i3 * (2.0 * (w * dot(z) - z * dot(w) + y * dot(x) - x * dot(y))).powi(2)
            + 0.5 * c * (w * dot(w) + x * dot(x) + y * dot(y) + z * dot(z)).powi(2),
        potential: mgl * (w.powi(2) - x.powi(2) - y.powi(2) + z.powi(2)),
        holonomic: { unit: w.powi(2) + x.powi(2) + y.powi(2) + z.powi(2) - 1.0 },
        integrators: [livens, rk],
    }
}

#[test]
fn orientations_generate_the_hand_written_top() {
    use mechanism::runtime::{Holonomic, Inertia, Potential, SMatrix, SVector};
    use proptest::prelude::*;
    let (sugared, plain) = (HeavyTop::default(), HandWrittenTop::default());
    let unit = -1.0f64..1.0;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    runner
        .run(
            &(
                proptest::array::uniform4(unit.clone()),
                proptest::array::uniform4(unit),
            ),
            |(q, v)| {
                let (q, v) = (SVector::<f64, 4>::from(q), SVector::<f64, 4>::from(v));
                let (mut a, mut b) = (SMatrix::<f64, 4, 4>::zeros(), SMatrix::<f64, 4, 4>::zeros());
                sugared.mass_matrix(&q, &mut a);
                plain.mass_matrix(&q, &mut b);
                prop_assert!((a - b).norm() <= 1e-12 * (1.0 + b.norm()), "M: {a} != {b}");
                let (ta, tb) = (sugared.kinetic_energy(&q, &v), plain.kinetic_energy(&q, &v));
                prop_assert!((ta - tb).abs() <= 1e-12 * (1.0 + tb.abs()));
                let (va, vb) = (sugared.potential(&q), plain.potential(&q));
                prop_assert!((va - vb).abs() <= 1e-12 * (1.0 + vb.abs()));
                let (mut ga, mut gb) = (SVector::<f64, 1>::zeros(), SVector::<f64, 1>::zeros());
                sugared.constraints(&q, 0.0, &mut ga);
                plain.constraints(&q, 0.0, &mut gb);
                prop_assert!((ga - gb).norm() <= 1e-12);
                Ok(())
            },
        )
        .unwrap();
}
