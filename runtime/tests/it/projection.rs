//! SHAKE and RATTLE on the hand-written double pendulum, and the explicit baselines (symplectic
//! Euler, velocity Verlet) on the harmonic oscillator.

use crate::support::{report, run, steps_to};
use mechanism_runtime::integrators::explicit::{SymplecticEuler, Verlet};
use mechanism_runtime::integrators::projection::{Rattle, Shake};
use mechanism_runtime::observers::{energy, position_residual, velocity_residual};
use mechanism_runtime::reference::double_pendulum::{initial_state, DoublePendulum};
use mechanism_runtime::reference::{fit, HarmonicOscillator};
use mechanism_runtime::{
    ConstantMass, Holonomic, Inertia, Integrator, Potential, SMatrix, SVector, State, StepError,
};

/// The step sizes of the double-pendulum convergence studies.
const PENDULUM_STEPS: [f64; 4] = [1.0 / 50.0, 1.0 / 100.0, 1.0 / 200.0, 1.0 / 400.0];

/// The end time of the convergence studies.
const T_END: f64 = 1.0;

/// The constrained motion at `t_end` from the §4.1 initial state, integrated in angle
/// coordinates `θ = (θ1, θ2)` (where no constraint exists) by classical RK4 at `h = 1e-4`
/// ([`DoublePendulum::constrained_reference`]); returns Cartesian positions and velocities.
fn angle_reference(t_end: f64) -> (SVector<f64, 4>, SVector<f64, 4>) {
    let end = DoublePendulum::default().constrained_reference(
        &initial_state(),
        t_end,
        steps_to(t_end, 1e-4),
    );
    (end.q, end.v)
}

/// Returns the errors `(max |q − q_ref|, max |v − v_ref|)` at `T_END` for each step size.
fn pendulum_errors<I: Integrator<DoublePendulum, 4>>(
    integrator: impl Fn(f64) -> I,
    initial: impl Fn(&mut I, State<4>) -> State<4>,
) -> (Vec<f64>, Vec<f64>) {
    let model = DoublePendulum::default();
    let (q_ref, v_ref) = angle_reference(T_END);
    PENDULUM_STEPS
        .iter()
        .map(|&h| {
            let mut stepper = integrator(h);
            let start = initial(&mut stepper, initial_state());
            let steps = steps_to(T_END, h);
            let end = run(&mut stepper, &model, start, steps, |_| {}).unwrap();
            ((end.q - q_ref).amax(), (end.v - v_ref).amax())
        })
        .unzip()
}

/// Formats `xs` in scientific notation, for the printed tables.
fn sci(xs: &[f64]) -> String {
    let items: Vec<String> = xs.iter().map(|x| format!("{x:.3e}")).collect();
    items.join(" ")
}

/// Returns the largest value of `xs`.
fn max(xs: &[f64]) -> f64 {
    xs.iter().cloned().fold(0.0, f64::max)
}

/// Returns `s = max_i Σ_j |G_ij(q)| |q_j|`, the scale of SHAKE's and RATTLE's Newton tolerance.
fn tolerance_scale(model: &DoublePendulum, state: &State<4>) -> f64 {
    let mut jac = SMatrix::<f64, 2, 4>::zeros();
    model.constraint_jacobian(&state.q, state.t, &mut jac);
    (0..2)
        .map(|i| (0..4).map(|j| (jac[(i, j)] * state.q[j]).abs()).sum())
        .fold(0.0, f64::max)
}

#[test]
fn angle_reference_is_converged_and_consistent() {
    // The reference must be far more accurate than the smallest error it judges, and must lie
    // on the constraint manifold of the Cartesian model.
    let (q, v) = angle_reference(T_END);
    let model = DoublePendulum::default();
    let state = State { t: T_END, q, v };
    assert!(position_residual(&model, &state) < 1e-14);
    assert!(velocity_residual(&model, &state) < 1e-14);
    let e0 = energy(&model, &initial_state());
    assert!((energy(&model, &state) - e0).abs() < 1e-12);
}

#[test]
fn rattle_is_second_order_in_positions_and_velocities() {
    let (q_errors, v_errors) = pendulum_errors(|h| Rattle::<4, 2>::new(h).unwrap(), |_, s| s);
    let q_slope = report(
        "RATTLE: position error at t = 1",
        &PENDULUM_STEPS,
        &q_errors,
    );
    let v_slope = report(
        "RATTLE: velocity error at t = 1",
        &PENDULUM_STEPS,
        &v_errors,
    );
    assert!(q_slope >= 1.8, "position slope {q_slope}");
    assert!(v_slope >= 1.8, "velocity slope {v_slope}");
}

#[test]
fn rattle_keeps_positions_and_velocities_on_the_constraints() {
    let model = DoublePendulum::default();
    let h = 1.0 / 60.0;
    let steps = 10_000;
    let mut rattle = Rattle::<4, 2>::new(h).unwrap();
    let (mut worst_g, mut worst_gv, mut iterations) = (0.0f64, 0.0f64, 0u32);
    let mut state = initial_state();
    for _ in 0..steps {
        iterations += rattle.step(&model, &mut state).unwrap().newton_iterations;
        worst_g = worst_g.max(position_residual(&model, &state));
        worst_gv = worst_gv.max(velocity_residual(&model, &state));
    }
    println!(
        "RATTLE h = 1/60, {steps} steps: max |g| = {worst_g:.3e}, max |G v| = {worst_gv:.3e}, \
         {:.2} Newton iterations per step",
        iterations as f64 / steps as f64
    );
    assert!(worst_g <= 1e-10, "max |g| = {worst_g}");
    assert!(worst_gv <= 1e-10, "max |G v| = {worst_gv}");
}

#[test]
fn rattle_energy_error_is_bounded_without_drift() {
    let model = DoublePendulum::default();
    let h = 1.0 / 60.0;
    let (blocks, per_block) = (10, 10_000);
    let mut rattle = Rattle::<4, 2>::new(h).unwrap();
    let e0 = energy(&model, &initial_state());
    let mut block_max = vec![0.0f64; blocks];
    let mut state = initial_state();
    for block in block_max.iter_mut() {
        for _ in 0..per_block {
            rattle.step(&model, &mut state).unwrap();
            *block = block.max((energy(&model, &state) - e0).abs());
        }
    }
    let times: Vec<f64> = (1..=blocks).map(|b| (b * per_block) as f64 * h).collect();
    let drift = fit::slope(&times, &block_max).unwrap() * times[blocks - 1];
    println!(
        "RATTLE h = 1/60, {} steps: max |E − E0| per block = {}",
        blocks * per_block,
        sci(&block_max)
    );
    println!("  fitted drift over the run = {drift:.3e}, E0 = {e0}");
    let overall = max(&block_max);
    assert!(overall < 2e-4, "max |E − E0| = {overall}");
    assert!(
        block_max[blocks - 1] <= 2.0 * block_max[0],
        "energy error grows: {block_max:?}"
    );
    assert!(drift.abs() <= 0.1 * overall, "drift {drift}");
}

#[test]
fn shake_is_second_order_in_positions_from_a_staggered_start() {
    let model = DoublePendulum::default();
    let (errors, _) = pendulum_errors(
        |h| Shake::<4, 2>::new(h).unwrap(),
        |shake, mut s| {
            shake.stagger_velocity(&model, &mut s).unwrap();
            s
        },
    );
    let slope = report("SHAKE: position error at t = 1", &PENDULUM_STEPS, &errors);
    assert!(slope >= 1.8, "slope {slope}");
}

#[test]
fn shake_without_a_staggered_start_is_only_first_order() {
    // Starting from v(t_0) instead of v_{−½} is an O(h) error of the initial data: this is
    // what `stagger_velocity` exists for.
    let (errors, _) = pendulum_errors(|h| Shake::<4, 2>::new(h).unwrap(), |_, s| s);
    let slope = report(
        "SHAKE without stagger_velocity: position error at t = 1",
        &PENDULUM_STEPS,
        &errors,
    );
    assert!(slope < 1.3, "slope {slope}");
}

#[test]
fn shake_meets_its_position_tolerance_at_every_step() {
    let model = DoublePendulum::default();
    let h = 1.0 / 60.0;
    let steps = 10_000;
    let mut shake = Shake::<4, 2>::new(h).unwrap();
    let tolerance = shake.tolerance();
    let mut state = initial_state();
    shake.stagger_velocity(&model, &mut state).unwrap();
    let (mut worst, mut worst_ratio) = (0.0f64, 0.0f64);
    for _ in 0..steps {
        shake.step(&model, &mut state).unwrap();
        let residual = position_residual(&model, &state);
        worst = worst.max(residual);
        worst_ratio =
            worst_ratio.max(residual / (tolerance * (1.0 + tolerance_scale(&model, &state))));
    }
    println!(
        "SHAKE h = 1/60, {steps} steps: max |g| = {worst:.3e} \
         (at most {worst_ratio:.3} of the Newton tolerance)"
    );
    assert!(worst_ratio <= 1.0, "ratio {worst_ratio}");
}

#[test]
fn step_reports_count_newton_iterations_and_factorizations() {
    let model = DoublePendulum::default();
    let mut rattle = Rattle::<4, 2>::new(0.01).unwrap();
    let mut state = initial_state();
    let first = rattle.step(&model, &mut state).unwrap();
    let second = rattle.step(&model, &mut state).unwrap();
    println!("RATTLE reports: {first:?}, {second:?}");
    assert!(first.newton_iterations >= 1 && second.newton_iterations >= 1);
    // Mass matrix once, one LU per Newton iteration, one Cholesky of G M⁻¹ Gᵀ.
    assert_eq!(first.factorizations, 1 + first.newton_iterations + 1);
    assert_eq!(second.factorizations, second.newton_iterations + 1);
    // A state that is not the carried one is re-evaluated, bit for bit like a fresh stepper.
    // (Another time: a shifted q would be off the constraint manifold, which is refused.)
    let mut other = initial_state();
    other.t += 1e-3;
    let (mut a, mut b) = (other, other);
    rattle.step(&model, &mut a).unwrap();
    Rattle::<4, 2>::new(0.01)
        .unwrap()
        .step(&model, &mut b)
        .unwrap();
    assert_eq!(a, b);
}

/// Returns `q(t) = exact` errors at `t = 2` of `integrator(h)` on the unit oscillator.
fn oscillator_errors<I: Integrator<HarmonicOscillator, 1>>(
    integrator: impl Fn(f64) -> I,
    hs: &[f64],
) -> Vec<f64> {
    let model = HarmonicOscillator::default();
    let initial = State::new(0.0, [1.0], [0.5]);
    let exact = model.exact(&initial, 2.0);
    hs.iter()
        .map(|&h| {
            let end = run(
                &mut integrator(h),
                &model,
                initial,
                steps_to(2.0, h),
                |_| {},
            )
            .unwrap();
            (end.q[0] - exact.q[0])
                .abs()
                .max((end.v[0] - exact.v[0]).abs())
        })
        .collect()
}

#[test]
fn symplectic_euler_is_first_order_and_verlet_second_order() {
    let hs = [0.1, 0.05, 0.025, 0.0125];
    let euler = oscillator_errors(|h| SymplecticEuler::<1>::new(h).unwrap(), &hs);
    let verlet = oscillator_errors(|h| Verlet::<1>::new(h).unwrap(), &hs);
    let euler_slope = report("symplectic Euler: error at t = 2", &hs, &euler);
    let verlet_slope = report("velocity Verlet: error at t = 2", &hs, &verlet);
    assert!((0.9..1.3).contains(&euler_slope), "slope {euler_slope}");
    assert!((1.8..2.3).contains(&verlet_slope), "slope {verlet_slope}");
}

#[test]
fn verlet_energy_error_is_bounded_over_a_long_run() {
    let model = HarmonicOscillator::default();
    let h = 0.1;
    let (blocks, per_block) = (10, 10_000);
    let mut verlet = Verlet::<1>::new(h).unwrap();
    let mut state = State::new(0.0, [1.0], [0.5]);
    let e0 = energy(&model, &state);
    let mut block_max = vec![0.0f64; blocks];
    for block in block_max.iter_mut() {
        for _ in 0..per_block {
            verlet.step(&model, &mut state).unwrap();
            *block = block.max((energy(&model, &state) - e0).abs());
        }
    }
    println!(
        "Verlet h = 0.1, {} steps: max |E − E0| per block = {}, E0 = {e0}",
        blocks * per_block,
        sci(&block_max)
    );
    // The modified energy of Verlet differs from E by (h²/8) ω² q² for the oscillator.
    assert!(max(&block_max) <= h * h / 8.0 * 2.0 * e0, "{block_max:?}");
    assert!(
        block_max[blocks - 1] <= 1.01 * block_max[0],
        "{block_max:?}"
    );
    // A state that is not the carried one is re-evaluated, bit for bit like a fresh stepper.
    let other = State::new(state.t, [0.3], [-0.2]);
    let (mut a, mut b) = (other, other);
    verlet.step(&model, &mut a).unwrap();
    Verlet::<1>::new(h).unwrap().step(&model, &mut b).unwrap();
    assert_eq!(a, b);
}

/// Steps once from `state` and checks that the error is `expected` and the state unchanged.
fn assert_fails<I: Integrator<Model, N>, Model, const N: usize>(
    integrator: &mut I,
    model: &Model,
    state: State<N>,
    expected: impl Fn(&StepError) -> bool,
) -> StepError {
    let mut stepped = state;
    let err = integrator.step(model, &mut stepped).unwrap_err();
    assert!(expected(&err), "unexpected {err}");
    let bits = |s: &State<N>| {
        std::iter::once(s.t)
            .chain(s.q.iter().cloned())
            .chain(s.v.iter().cloned())
            .map(f64::to_bits)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        bits(&stepped),
        bits(&state),
        "state changed by a failed step"
    );
    err
}

#[test]
fn huge_step_fails_newton_and_leaves_the_state_unchanged() {
    let model = DoublePendulum::default();
    let diverged = |e: &StepError| matches!(e, StepError::NewtonDiverged { t, .. } if *t == 0.0);
    for err in [
        assert_fails(
            &mut Rattle::<4, 2>::new(10.0).unwrap(),
            &model,
            initial_state(),
            diverged,
        ),
        assert_fails(
            &mut Shake::<4, 2>::new(10.0).unwrap(),
            &model,
            initial_state(),
            diverged,
        ),
    ] {
        println!("h = 10: {err}");
    }
    // With the iteration cap at 1, a step that needs more fails after exactly 1 iteration.
    let mut rattle = Rattle::<4, 2>::new(0.5)
        .unwrap()
        .with_max_iterations(1)
        .unwrap();
    let err = assert_fails(&mut rattle, &model, initial_state(), |e| {
        matches!(e, StepError::NewtonDiverged { iterations: 1, .. })
    });
    println!("h = 0.5, one iteration: {err}");
}

#[test]
fn bad_step_sizes_and_parameters_are_rejected() {
    for h in [0.0, -0.1, f64::NAN, f64::INFINITY] {
        let is_bad = |e: StepError| matches!(e, StepError::BadStepSize { h: x } if x.to_bits() == h.to_bits());
        assert!(is_bad(Shake::<4, 2>::new(h).unwrap_err()));
        assert!(is_bad(Rattle::<4, 2>::new(h).unwrap_err()));
        assert!(is_bad(SymplecticEuler::<4>::new(h).unwrap_err()));
        assert!(is_bad(Verlet::<4>::new(h).unwrap_err()));
    }
    for tolerance in [0.0, -1e-12, f64::NAN, f64::INFINITY] {
        let err = Rattle::<4, 2>::new(0.1)
            .unwrap()
            .with_tolerance(tolerance)
            .unwrap_err();
        assert!(matches!(
            err,
            StepError::BadParameter {
                name: "tolerance",
                ..
            }
        ));
    }
    let err = Shake::<4, 2>::new(0.1)
        .unwrap()
        .with_max_iterations(0)
        .unwrap_err();
    assert!(matches!(
        err,
        StepError::BadParameter {
            name: "max_iterations",
            ..
        }
    ));
}

#[test]
fn non_finite_states_are_rejected() {
    let pendulum = DoublePendulum::default();
    let oscillator = HarmonicOscillator::default();
    let mut state = initial_state();
    state.t = 0.5;
    state.q[2] = f64::NAN;
    let non_finite_q = |e: &StepError| {
        *e == StepError::NonFinite {
            quantity: "q",
            index: 2,
            t: 0.5,
        }
    };
    assert_fails(
        &mut Rattle::<4, 2>::new(0.1).unwrap(),
        &pendulum,
        state,
        non_finite_q,
    );
    assert_fails(
        &mut Shake::<4, 2>::new(0.1).unwrap(),
        &pendulum,
        state,
        non_finite_q,
    );
    let mut state = State::new(0.0, [1.0], [f64::INFINITY]);
    let non_finite_v = |e: &StepError| {
        *e == StepError::NonFinite {
            quantity: "v",
            index: 0,
            t: 0.0,
        }
    };
    assert_fails(
        &mut Verlet::<1>::new(0.1).unwrap(),
        &oscillator,
        state,
        non_finite_v,
    );
    assert_fails(
        &mut SymplecticEuler::<1>::new(0.1).unwrap(),
        &oscillator,
        state,
        non_finite_v,
    );
    state.v[0] = 0.0;
    state.t = f64::NAN;
    assert_fails(
        &mut Verlet::<1>::new(0.1).unwrap(),
        &oscillator,
        state,
        |e| matches!(e, StepError::NonFinite { quantity: "t", .. }),
    );
}

/// The double pendulum with its first rod listed twice, so `G` has rank 2 < 3 rows.
#[derive(Clone, Copy, Debug, Default)]
struct RedundantPendulum(DoublePendulum);

impl ConstantMass<4> for RedundantPendulum {}

impl Inertia<4> for RedundantPendulum {
    const CONSTANT_MASS: bool = true;

    fn mass_matrix(&self, q: &SVector<f64, 4>, m: &mut SMatrix<f64, 4, 4>) {
        self.0.mass_matrix(q, m);
    }
}

impl Potential<4> for RedundantPendulum {
    fn potential(&self, q: &SVector<f64, 4>) -> f64 {
        self.0.potential(q)
    }

    fn potential_gradient(&self, q: &SVector<f64, 4>, grad: &mut SVector<f64, 4>) {
        self.0.potential_gradient(q, grad);
    }
}

impl Holonomic<4, 3> for RedundantPendulum {
    const CONSTRAINTS: [&'static str; 3] = ["rod1", "rod2", "rod1 again"];

    fn constraints(&self, q: &SVector<f64, 4>, t: f64, g: &mut SVector<f64, 3>) {
        let mut two = SVector::<f64, 2>::zeros();
        self.0.constraints(q, t, &mut two);
        *g = SVector::<f64, 3>::new(two[0], two[1], two[0]);
    }

    fn constraint_jacobian(&self, q: &SVector<f64, 4>, t: f64, jac: &mut SMatrix<f64, 3, 4>) {
        let mut two = SMatrix::<f64, 2, 4>::zeros();
        self.0.constraint_jacobian(q, t, &mut two);
        jac.set_row(0, &two.row(0));
        jac.set_row(1, &two.row(1));
        jac.set_row(2, &two.row(0));
    }
}

#[test]
fn redundant_constraints_are_singular() {
    let model = RedundantPendulum::default();
    let singular = |e: &StepError| matches!(e, StepError::Singular { t, .. } if *t == 0.0);
    let err = assert_fails(
        &mut Rattle::<4, 3>::new(0.01).unwrap(),
        &model,
        initial_state(),
        singular,
    );
    println!("redundant rows: {err}");
    assert_fails(
        &mut Shake::<4, 3>::new(0.01).unwrap(),
        &model,
        initial_state(),
        singular,
    );
}
