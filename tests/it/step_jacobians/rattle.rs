//! RATTLE's and SHAKE's step Jacobians (`runtime/.../projection/jacobian.rs`), and the
//! Jacobians of Livens's energy-momentum step for a constant `M`
//! (`runtime/.../energy_momentum/livens/jacobian.rs`), against central differences on the
//! double pendulum. All three step only from states on the constraint manifold, so the
//! differences are taken along it: the step composed with the chain's angles and rates
//! (`super::chain_state`) is compared with `J·E`, `E` the angles' and rates' derivatives of the
//! state, written out below; in a parameter, the start moves with the rod lengths (at fixed
//! angles and rates), and the step composed with that start is compared with
//! `J_p + J·∂(start)/∂p`. A bead on an ellipse whose axes are parameters (`EllipseBead`)
//! checks the terms the double pendulum's rows cannot: a constraint Jacobian `G` that depends
//! on the parameters. The singular mass spring of Kinon–Betsch–Livens §6.1 (a singular constant
//! `M`, nonlinear springs, one row) checks Livens's terms the double pendulum's linear
//! potential cannot: the potential's discrete gradient differentiated in both of its points and
//! in the spring constants (`∂V/∂p` in its difference quotient), and a row whose parameters
//! move the start.

use mechanism::mechanism;
use mechanism::models::{DoublePendulum, SingularMassSpring};
use mechanism::runtime::{
    DifferentiableInParameters, DifferentiableStep, Integrator, Livens, ParameterJacobian,
    Parameters, Rattle, SMatrix, SVector, Shake, State, StepJacobian,
};
use proptest::prelude::*;

use super::{chain_state, compare};

mechanism! {
    /// A bead on the ellipse `x²/a² + y²/b² = 1` under gravity, pulled towards `x = 0.3` by a
    /// spring.
    pub struct EllipseBead {
        coordinates: [x, y],
        parameters: { a = 1.5, b = 0.8, m = 1.2, k = 0.7, grav = 9.81 },
        kinetic: 0.5 * m * (dot(x).powi(2) + dot(y).powi(2)),
        potential: m * grav * y + 0.5 * k * (x - 0.3).powi(2),
        holonomic: { ellipse: 0.5 * ((x / a).powi(2) + (y / b).powi(2) - 1.0) },
        integrators: [rattle, shake, livens],
        derivatives: [step_jacobians],
    }
}

/// The bead at the ellipse's parameter `s` moving at `ṡ = rate`, for axes `(a, b)`.
fn bead_state(a: f64, b: f64, s: f64, rate: f64) -> State<2> {
    let (sin, cos) = s.sin_cos();
    State::new(0.0, [a * cos, b * sin], [-a * sin * rate, b * cos * rate])
}

/// The state's derivatives in the chain's angles, rates and lengths (each `8 × 2`), from the
/// sums of `chain_state`: bob `k` has `x_k = Σ_{i≤k} l_i sin a_i`, `y_k = −Σ l_i cos a_i`,
/// `ẋ_k = Σ l_i cos a_i r_i`, `ẏ_k = Σ l_i sin a_i r_i`.
fn chain_tangents(
    lengths: &[f64; 2],
    angles: &[f64; 2],
    rates: &[f64; 2],
) -> [SMatrix<f64, 8, 2>; 3] {
    let mut tangents = [SMatrix::<f64, 8, 2>::zeros(); 3];
    for i in 0..2 {
        let (l, (sin, cos), r) = (lengths[i], angles[i].sin_cos(), rates[i]);
        for k in i..2 {
            let rows = [2 * k, 2 * k + 1, 4 + 2 * k, 4 + 2 * k + 1];
            let by = [
                [l * cos, l * sin, -l * sin * r, l * cos * r],
                [0.0, 0.0, l * cos, l * sin],
                [sin, -cos, cos * r, sin * r],
            ];
            for (tangent, values) in tangents.iter_mut().zip(by) {
                for (row, value) in rows.iter().zip(values) {
                    tangent[(*row, i)] = value;
                }
            }
        }
    }
    tangents
}

/// `(q, v)` stacked.
fn stacked(state: &State<4>) -> Vec<f64> {
    state.q.iter().chain(state.v.iter()).copied().collect()
}

/// The step Jacobian as one `8 × 8` matrix.
fn whole(jacobian: &StepJacobian<4>) -> SMatrix<f64, 8, 8> {
    let mut whole = SMatrix::<f64, 8, 8>::zeros();
    whole.fixed_view_mut::<4, 4>(0, 0).copy_from(&jacobian.q_q);
    whole.fixed_view_mut::<4, 4>(0, 4).copy_from(&jacobian.q_v);
    whole.fixed_view_mut::<4, 4>(4, 0).copy_from(&jacobian.v_q);
    whole.fixed_view_mut::<4, 4>(4, 4).copy_from(&jacobian.v_v);
    whole
}

const H: f64 = 0.01;

/// The difference step and `κ`: RATTLE solves with `G M⁻¹ Gᵀ` (`κ ≈ 10`), and its Newton
/// tolerance (`10⁻¹³` relative) is below the rounding term for `κ = 10³`.
const BOUND: (f64, f64) = (1e-5, 1e3);

/// Checks `make()`'s state Jacobian on the double pendulum along the manifold at
/// `(angles, rates)`.
fn state_along_the_manifold<I>(
    label: &str,
    make: impl Fn() -> I,
    angles: [f64; 2],
    rates: [f64; 2],
) -> Result<(), TestCaseError>
where
    I: DifferentiableStep<DoublePendulum, 4>,
{
    let model = DoublePendulum::default();
    let lengths = [model.l1, model.l2];
    let start = chain_state::<4>(&lengths, &angles, &rates);
    let mut jacobian = StepJacobian::<4>::default();
    let mut end = start;
    make()
        .step_with_jacobian(&model, &mut end, &mut jacobian)
        .unwrap();
    let step = |state: State<4>| {
        let mut state = state;
        make()
            .step(&model, &mut state)
            .expect("a step on the manifold");
        stacked(&state)
    };
    prop_assert_eq!(stacked(&end), step(start));
    let j = whole(&jacobian);
    let [by_angle, by_rate, _] = chain_tangents(&lengths, &angles, &rates);
    let map = |x: &[f64]| step(chain_state::<4>(&lengths, &x[..2], &x[2..]));
    let tangent = |row: usize, column: usize| {
        let e = if column < 2 {
            by_angle.column(column)
        } else {
            by_rate.column(column - 2)
        };
        (j.row(row) * e)[0]
    };
    let x = [angles[0], angles[1], rates[0], rates[1]];
    let (largest, _) = compare(
        &format!("{label}, state"),
        (&map, "(a, r)"),
        &x,
        tangent,
        BOUND,
    );
    prop_assert!(largest > 0.1);
    Ok(())
}

/// Checks `make()`'s Jacobians on the double pendulum along the manifold at `(angles, rates)`:
/// the state Jacobian ([`state_along_the_manifold`]), and the parameter Jacobian.
fn along_the_manifold<I>(
    label: &str,
    make: impl Fn() -> I,
    angles: [f64; 2],
    rates: [f64; 2],
) -> Result<(), TestCaseError>
where
    I: DifferentiableInParameters<DoublePendulum, 4, 5>,
{
    state_along_the_manifold(label, &make, angles, rates)?;
    {
        let model = DoublePendulum::default();
        let lengths = [model.l1, model.l2];
        let start = chain_state::<4>(&lengths, &angles, &rates);
        let (mut jacobian, mut by_parameter) = (
            StepJacobian::<4>::default(),
            ParameterJacobian::<4, 5>::default(),
        );
        let mut end = start;
        make()
            .step_with_jacobians(&model, &mut end, &mut jacobian, &mut by_parameter)
            .unwrap();
        let step = |model: &DoublePendulum, state: State<4>| {
            let mut state = state;
            make()
                .step(model, &mut state)
                .expect("a step on the manifold");
            stacked(&state)
        };
        let j = whole(&jacobian);
        let [_, _, by_length] = chain_tangents(&lengths, &angles, &rates);
        // The parameter Jacobian, the start moving with l1 and l2 (parameters 2 and 3).
        let p: Vec<f64> = model.parameter_values().iter().copied().collect();
        let map = |p: &[f64]| {
            let mut changed = model;
            changed.set_parameter_values(&SVector::<f64, 5>::from_column_slice(p));
            step(
                &changed,
                chain_state::<4>(&[changed.l1, changed.l2], &angles, &rates),
            )
        };
        let exact = |row: usize, column: usize| {
            let direct = if row < 4 {
                by_parameter.q_p[(row, column)]
            } else {
                by_parameter.v_p[(row - 4, column)]
            };
            let moved = match column {
                2 | 3 => (j.row(row) * by_length.column(column - 2))[0],
                _ => 0.0,
            };
            direct + moved
        };
        let (largest, _) = compare(
            &format!("{label}, parameters"),
            (&map, "p"),
            &p,
            exact,
            BOUND,
        );
        prop_assert!(largest > 1e-3);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn rattles_shakes_and_livenss_jacobians_match_central_differences_along_the_manifold(
        angles in prop::array::uniform2(-2.5..2.5f64),
        rates in prop::array::uniform2(-2.0..2.0f64),
    ) {
        along_the_manifold("RATTLE", || Rattle::<4, 2>::new(H).unwrap(), angles, rates)?;
        along_the_manifold("SHAKE", || Shake::<4, 2>::new(H).unwrap(), angles, rates)?;
        along_the_manifold("Livens", || Livens::<4, 2>::new(H).unwrap(), angles, rates)?;
    }
}

/// Checks `make()`'s Jacobians on the ellipse at the parameter `s` moving at `rate`.
fn on_the_ellipse<I>(
    label: &str,
    make: impl Fn() -> I,
    s: f64,
    rate: f64,
) -> Result<(), TestCaseError>
where
    I: DifferentiableInParameters<EllipseBead, 2, 5>,
{
    {
        let model = EllipseBead::default();
        let (a, b) = (model.a, model.b);
        let start = bead_state(a, b, s, rate);
        let (mut jacobian, mut by_parameter) = (
            StepJacobian::<2>::default(),
            ParameterJacobian::<2, 5>::default(),
        );
        let mut end = start;
        make()
            .step_with_jacobians(&model, &mut end, &mut jacobian, &mut by_parameter)
            .unwrap();
        let step = |model: &EllipseBead, state: State<2>| {
            let mut state = state;
            make()
                .step(model, &mut state)
                .expect("a step on the ellipse");
            state
                .q
                .iter()
                .chain(state.v.iter())
                .copied()
                .collect::<Vec<f64>>()
        };
        let j = |row: usize, e: [f64; 4]| {
            let (block_q, block_v) = if row < 2 {
                (jacobian.q_q.row(row), jacobian.q_v.row(row))
            } else {
                (jacobian.v_q.row(row - 2), jacobian.v_v.row(row - 2))
            };
            block_q[0] * e[0] + block_q[1] * e[1] + block_v[0] * e[2] + block_v[1] * e[3]
        };
        let (sin, cos) = s.sin_cos();
        // ∂(x, y, ẋ, ẏ)/∂(s, ṡ, a, b).
        let by = [
            [-a * sin, b * cos, -a * cos * rate, -b * sin * rate],
            [0.0, 0.0, -a * sin, b * cos],
            [cos, 0.0, -sin * rate, 0.0],
            [0.0, sin, 0.0, cos * rate],
        ];
        let map = |x: &[f64]| step(&model, bead_state(a, b, x[0], x[1]));
        let (largest, _) = compare(
            &format!("{label} ellipse, state"),
            (&map, "(s, ṡ)"),
            &[s, rate],
            |row, column| j(row, by[column]),
            BOUND,
        );
        prop_assert!(largest > 0.1);

        let p: Vec<f64> = model.parameter_values().iter().copied().collect();
        let map = |p: &[f64]| {
            let mut changed = model;
            changed.set_parameter_values(&SVector::<f64, 5>::from_column_slice(p));
            step(&changed, bead_state(changed.a, changed.b, s, rate))
        };
        let exact = |row: usize, column: usize| {
            let direct = if row < 2 {
                by_parameter.q_p[(row, column)]
            } else {
                by_parameter.v_p[(row - 2, column)]
            };
            let moved = if column < 2 {
                j(row, by[2 + column])
            } else {
                0.0
            };
            direct + moved
        };
        let (largest, _) = compare(
            &format!("{label} ellipse, parameters"),
            (&map, "p"),
            &p,
            exact,
            BOUND,
        );
        prop_assert!(largest > 1e-3);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn rattles_shakes_and_livenss_jacobians_match_central_differences_on_the_ellipse(
        s in -3.0..3.0f64,
        rate in -2.0..2.0f64,
    ) {
        on_the_ellipse("RATTLE", || Rattle::<2, 1>::new(H).unwrap(), s, rate)?;
        on_the_ellipse("SHAKE", || Shake::<2, 1>::new(H).unwrap(), s, rate)?;
        on_the_ellipse("Livens", || Livens::<2, 1>::new(H).unwrap(), s, rate)?;
    }
}

/// A long step for Livens on the singular mass spring (its Table 1 uses `h = 0.1`).
const LONG: f64 = 0.3;

/// Checks Livens's Jacobians (step size `h`) on the singular mass spring along its manifold: the state
/// `q = (x1, x1 + l, x2)`, `v = (ẋ1, ẋ1, ẋ2)` (`l = l10 + w`, on `g = 0` with `G v = 0`) as a
/// function of `z = (x1, x2, ẋ1, ẋ2)`, whose derivative `E` is constant.
fn livens_on_the_singular_mass_spring(z: [f64; 4], h: f64) -> Result<(), TestCaseError> {
    let model = SingularMassSpring::default();
    let l = model.l10 + model.w;
    let state = |z: &[f64]| State::new(0.0, [z[0], z[0] + l, z[1]], [z[2], z[2], z[3]]);
    let step = |z: &[f64]| {
        let mut state = state(z);
        Livens::<3, 1>::new(h)
            .unwrap()
            .step(&model, &mut state)
            .expect("a step on the manifold");
        state
            .q
            .iter()
            .chain(state.v.iter())
            .copied()
            .collect::<Vec<f64>>()
    };
    let mut jacobian = StepJacobian::<3>::default();
    let mut end = state(&z);
    Livens::<3, 1>::new(h)
        .unwrap()
        .step_with_jacobian(&model, &mut end, &mut jacobian)
        .unwrap();
    // E: the columns of ∂(q, v)/∂z.
    let e: [[f64; 6]; 4] = [
        [1.0, 1.0, 0.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 1.0, 1.0, 0.0],
        [0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
    ];
    let tangent = |row: usize, column: usize| {
        let (dq, dv) = (
            SVector::<f64, 3>::from_column_slice(&e[column][..3]),
            SVector::<f64, 3>::from_column_slice(&e[column][3..]),
        );
        let (q, v) = jacobian.apply(&dq, &dv);
        if row < 3 {
            q[row]
        } else {
            v[row - 3]
        }
    };
    let label = format!("Livens, singular mass spring, h = {h}, state");
    let (largest, _) = compare(&label, (&step, "z"), &z, tangent, BOUND);
    prop_assert!(largest > 0.1);

    // The parameters (m1, m2, k1, k2, l10, w); the start moves with l = l10 + w in q2.
    let (mut alone, mut by_parameter) = (
        StepJacobian::<3>::default(),
        ParameterJacobian::<3, 6>::default(),
    );
    let mut end = state(&z);
    Livens::<3, 1>::new(h)
        .unwrap()
        .step_with_jacobians(&model, &mut end, &mut alone, &mut by_parameter)
        .unwrap();
    prop_assert_eq!(alone, jacobian);
    let p: Vec<f64> = model.parameter_values().iter().copied().collect();
    let map = |p: &[f64]| {
        let mut changed = model;
        changed.set_parameter_values(&SVector::<f64, 6>::from_column_slice(p));
        let l = changed.l10 + changed.w;
        let mut state = State::new(0.0, [z[0], z[0] + l, z[1]], [z[2], z[2], z[3]]);
        Livens::<3, 1>::new(h)
            .unwrap()
            .step(&changed, &mut state)
            .expect("a step on the manifold");
        state
            .q
            .iter()
            .chain(state.v.iter())
            .copied()
            .collect::<Vec<f64>>()
    };
    let moved = jacobian.apply(&SVector::from([0.0, 1.0, 0.0]), &SVector::zeros());
    let exact = |row: usize, column: usize| {
        let direct = if row < 3 {
            by_parameter.q_p[(row, column)]
        } else {
            by_parameter.v_p[(row - 3, column)]
        };
        let start = match (column, row < 3) {
            (4 | 5, true) => moved.0[row],
            (4 | 5, false) => moved.1[row - 3],
            _ => 0.0,
        };
        direct + start
    };
    let label = format!("Livens, singular mass spring, h = {h}, parameters");
    let (largest, _) = compare(&label, (&map, "p"), &p, exact, BOUND);
    prop_assert!(largest > 1e-3);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn livenss_jacobian_matches_central_differences_on_the_singular_mass_spring(
        x in prop::array::uniform2(-1.0..1.0f64),
        rates in prop::array::uniform2(-1.5..1.5f64),
    ) {
        livens_on_the_singular_mass_spring([x[0], x[1], rates[0], rates[1]], H)?;
        // A long step, where the discrete gradient's difference quotient (and so `∂V/∂p` in
        // it) moves the step by more than the differences' error.
        livens_on_the_singular_mass_spring([x[0], x[1], rates[0], rates[1]], LONG)?;
    }
}
