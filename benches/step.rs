//! Generated vs hand-written steppers for the double pendulum, measured in one run.
//!
//! "generated" is the runtime's generic integrator monomorphized over the `mechanism!` model;
//! "hand-written" is the same algorithm coded by hand for this one model in straightforward
//! nalgebra (`hand_written/mod.rs`). Each pair runs from the same initial state; report the ratio
//! generated / hand-written of the two times.
//!
//! `spook_step_jacobian`, `rattle_step_jacobian`, `shake_step_jacobian`, `rk4_step_jacobian`,
//! `dopri5_step_jacobian`, `gla_spook_step_jacobian`, `zss_step_jacobian`,
//! `pf_newmark_step_jacobian` and `newmark_step_jacobian` (the last three on the penalized
//! double pendulum; RK4 also on the robot arm, whose mass matrix varies) time a step with its
//! exact Jacobian (`DifferentiableStep::step_with_jacobian`), and with the parameter Jacobian
//! beside it (`DifferentiableInParameters::step_with_jacobians`, double pendulum and robot arm),
//! against the step alone, on the double pendulum and (SPOOK) the 10-link chain: the Jacobian's
//! cost in steps is the ratio of the two minus one.

mod hand_written;

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use mechanism::models::{Chain10, DoublePendulum, RobotArmParabola};
use mechanism::runtime::integrators::stabilized::{
    Dopri5, PostStabilization, StabilizedRk, DOPRI5, RK4,
};
use mechanism::runtime::{
    DifferentiableInParameters, DifferentiableStep, EnergyGuard, Integrator, Langevin, Newmark,
    ParameterJacobian, Penalized, PushForwardNewmark, Rattle, Shake, Spook, State, StepJacobian,
    ZhangSkeel, ZhangSkeelSimplified,
};

const SPOOK_H: f64 = 1.0 / 60.0;
const ZS_H: f64 = 0.1;
const OMEGA: f64 = 20.0;
const BETA: f64 = 0.4;

fn spook(c: &mut Criterion) {
    let mut group = c.benchmark_group("spook_step");
    let model = DoublePendulum::default();
    let mut integrator = Spook::<4, 2>::new(SPOOK_H).expect("valid step size");
    let mut state = DoublePendulum::initial_state();
    group.bench_function("generated", |b| {
        b.iter(|| {
            integrator
                .step(black_box(&model), &mut state)
                .expect("step")
        })
    });
    let pendulum = hand_written::Pendulum::default();
    let start = DoublePendulum::initial_state();
    let (mut q, mut v) = (start.q, start.v);
    group.bench_function("hand_written", |b| {
        b.iter(|| {
            hand_written::spook_step(
                black_box(&pendulum),
                SPOOK_H,
                1e-8,
                2.0 * SPOOK_H,
                &mut q,
                &mut v,
            )
            .expect("step")
        })
    });
    group.finish();
}

/// One model's pair: the step alone, and the step with its Jacobian, from the same state, for
/// the integrator `make` builds (`group` names the method).
fn step_and_jacobian<'c, I, Model, const N: usize>(
    c: &'c mut Criterion,
    group: &str,
    name: &str,
    model: &Model,
    start: State<N>,
    make: impl Fn() -> I,
) -> criterion::BenchmarkGroup<'c, criterion::measurement::WallTime>
where
    I: DifferentiableStep<Model, N>,
{
    let mut group = c.benchmark_group(format!("{group}/{name}"));
    let (mut integrator, mut state) = (make(), start);
    group.bench_function("step", |b| {
        b.iter(|| integrator.step(black_box(model), &mut state).expect("step"))
    });
    let (mut integrator, mut state, mut jacobian) = (make(), start, StepJacobian::default());
    group.bench_function("step_with_jacobian", |b| {
        b.iter(|| {
            integrator
                .step_with_jacobian(black_box(model), &mut state, &mut jacobian)
                .expect("step")
        })
    });
    group
}

/// Adds the step with both Jacobians (state and the model's `P` parameters) to `group`.
fn with_parameters<I, Model, const N: usize, const P: usize>(
    mut group: criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    model: &Model,
    start: State<N>,
    make: impl Fn() -> I,
) where
    I: DifferentiableInParameters<Model, N, P>,
{
    let (mut integrator, mut state) = (make(), start);
    let (mut jacobian, mut parameters) = (StepJacobian::default(), ParameterJacobian::default());
    group.bench_function("step_with_jacobians", |b| {
        b.iter(|| {
            integrator
                .step_with_jacobians(black_box(model), &mut state, &mut jacobian, &mut parameters)
                .expect("step")
        })
    });
    group.finish();
}

fn step_jacobians(c: &mut Criterion) {
    let pendulum = DoublePendulum::default();
    let start = DoublePendulum::initial_state();
    let spook = || Spook::<4, 2>::new(SPOOK_H).expect("valid step size");
    let group = step_and_jacobian(
        c,
        "spook_step_jacobian",
        "double_pendulum",
        &pendulum,
        start,
        spook,
    );
    with_parameters::<_, _, 4, 5>(group, &pendulum, start, spook);
    // GLA around the same SPOOK (γ = 1, kT = 0.1): the Ornstein–Uhlenbeck flow's factor
    // `e^{−γhM⁻¹}` and its slopes in the masses on top of SPOOK's Jacobians.
    let gla = || Langevin::new(spook(), SPOOK_H, 1.0, 0.1, 7).expect("valid settings");
    let group = step_and_jacobian(
        c,
        "gla_spook_step_jacobian",
        "double_pendulum",
        &pendulum,
        start,
        gla,
    );
    with_parameters::<_, _, 4, 5>(group, &pendulum, start, gla);
    let rattle = || Rattle::<4, 2>::new(SPOOK_H).expect("valid step size");
    let group = step_and_jacobian(
        c,
        "rattle_step_jacobian",
        "double_pendulum",
        &pendulum,
        start,
        rattle,
    );
    with_parameters::<_, _, 4, 5>(group, &pendulum, start, rattle);
    let shake = || Shake::<4, 2>::new(SPOOK_H).expect("valid step size");
    let group = step_and_jacobian(
        c,
        "shake_step_jacobian",
        "double_pendulum",
        &pendulum,
        start,
        shake,
    );
    with_parameters::<_, _, 4, 5>(group, &pendulum, start, shake);
    let rk4 = || {
        StabilizedRk::<4, 2, 4>::new(RK4, SPOOK_H)
            .expect("valid step size")
            .with_post_stabilization(PostStabilization::BothTwice)
    };
    let group = step_and_jacobian(
        c,
        "rk4_step_jacobian",
        "double_pendulum",
        &pendulum,
        start,
        rk4,
    );
    with_parameters::<_, _, 4, 5>(group, &pendulum, start, rk4);
    // The same on the robot arm (Ascher et al. 1995 §6, Case I), whose `M(θ)` varies: the
    // variational equations add `∂(M a)/∂q` and the velocity terms' Jacobians per stage.
    let arm = RobotArmParabola::default();
    let rk4_arm = || {
        StabilizedRk::<2, 1, 4>::new(RK4, SPOOK_H)
            .expect("valid step size")
            .with_post_stabilization(PostStabilization::BothTwice)
    };
    let group = step_and_jacobian(
        c,
        "rk4_step_jacobian",
        "robot_arm",
        &arm,
        RobotArmParabola::initial_state(),
        rk4_arm,
    );
    with_parameters::<_, _, 2, 6>(group, &arm, RobotArmParabola::initial_state(), rk4_arm);
    // DOPRI5 at rtol 1e-8 with S-both², each timed run stepping on from where it was: the
    // controller's steps differ between the runs, their cost per step does not.
    let dopri5 = || {
        Dopri5::<4, 2>::new(DOPRI5, 1e-8, 1e-9)
            .expect("valid tolerances")
            .with_post_stabilization(PostStabilization::BothTwice)
    };
    let group = step_and_jacobian(
        c,
        "dopri5_step_jacobian",
        "double_pendulum",
        &pendulum,
        start,
        dopri5,
    );
    with_parameters::<_, _, 4, 5>(group, &pendulum, start, dopri5);
    // Z&Ss on the penalized double pendulum (Tao–Owhadi §4.1's ω, β and step size).
    let penalized = Penalized::new(pendulum, OMEGA);
    let zss = || {
        ZhangSkeelSimplified::<4>::new(ZS_H)
            .and_then(|zss| zss.with_beta(BETA))
            .expect("valid step size and β")
    };
    step_and_jacobian(
        c,
        "zss_step_jacobian",
        "penalized_double_pendulum",
        &penalized,
        start,
        zss,
    )
    .finish();
    let newmark = || {
        PushForwardNewmark::<4>::new(ZS_H)
            .and_then(|newmark| newmark.with_beta(BETA))
            .expect("valid step size and β")
    };
    step_and_jacobian(
        c,
        "pf_newmark_step_jacobian",
        "penalized_double_pendulum",
        &penalized,
        start,
        newmark,
    )
    .finish();
    let newmark = || {
        Newmark::<4>::new(ZS_H)
            .and_then(|newmark| newmark.with_beta(BETA))
            .expect("valid step size and β")
    };
    step_and_jacobian(
        c,
        "newmark_step_jacobian",
        "penalized_double_pendulum",
        &penalized,
        start,
        newmark,
    )
    .finish();
    // The chain hanging at 30° from the vertical, at rest (bob i at i·√5 (sin, −cos) 30°).
    let (s, co) = (0.5 * 5.0f64.sqrt(), 0.75f64.sqrt() * 5.0f64.sqrt());
    let q: [f64; 20] = std::array::from_fn(|i| {
        let bob = (i / 2 + 1) as f64;
        if i % 2 == 0 {
            bob * s
        } else {
            -bob * co
        }
    });
    step_and_jacobian(
        c,
        "spook_step_jacobian",
        "chain10",
        &Chain10::default(),
        State::new(0.0, q, [0.0; 20]),
        || Spook::<20, 10>::new(SPOOK_H).expect("valid step size"),
    )
    .finish();
}

fn zhang_skeel(c: &mut Criterion) {
    let mut group = c.benchmark_group("zss_step");
    let model = Penalized::new(DoublePendulum::default(), OMEGA);
    let mut integrator = ZhangSkeelSimplified::<4>::new(ZS_H)
        .and_then(|z| z.with_beta(BETA))
        .expect("valid parameters");
    let mut state = DoublePendulum::initial_state();
    group.bench_function("generated", |b| {
        b.iter(|| {
            integrator
                .step(black_box(&model), &mut state)
                .expect("step")
        })
    });
    let pendulum = hand_written::Pendulum::default();
    let start = DoublePendulum::initial_state();
    let (mut q, mut v) = (start.q, start.v);
    let mut a = hand_written::zss_acceleration(&pendulum, OMEGA, BETA, ZS_H, &q).expect("solve");
    group.bench_function("hand_written", |b| {
        b.iter(|| {
            hand_written::zss_step(
                black_box(&pendulum),
                OMEGA,
                BETA,
                ZS_H,
                &mut q,
                &mut v,
                &mut a,
            )
            .expect("step")
        })
    });
    group.finish();

    let mut group = c.benchmark_group("zs_step");
    let mut integrator = ZhangSkeel::<4>::new(ZS_H)
        .and_then(|z| z.with_beta(BETA))
        .expect("valid parameters");
    let mut state = DoublePendulum::initial_state();
    group.bench_function("generated", |b| {
        b.iter(|| {
            integrator
                .step(black_box(&model), &mut state)
                .expect("step")
        })
    });
    group.finish();
}

/// The cost of the energy guard: the penalized double pendulum's Z&Ss step with the guard (the
/// default: `T + V` after every step) and without it, in one run.
fn energy_guard(c: &mut Criterion) {
    let model = Penalized::new(DoublePendulum::default(), OMEGA);
    let mut group = c.benchmark_group("zss_step_energy_guard");
    for (name, guard) in [
        ("on", EnergyGuard::default()),
        ("off", EnergyGuard::disabled()),
    ] {
        let mut integrator = ZhangSkeelSimplified::<4>::new(ZS_H)
            .and_then(|z| z.with_beta(BETA))
            .expect("valid parameters")
            .with_energy_guard(guard);
        let mut state = DoublePendulum::initial_state();
        group.bench_function(name, |b| {
            b.iter(|| {
                integrator
                    .step(black_box(&model), &mut state)
                    .expect("step")
            })
        });
    }
    group.finish();
}

criterion_group!(benches, spook, step_jacobians, zhang_skeel, energy_guard);
criterion_main!(benches);
