//! Linear stability of Z&S and Z&Ss on a stiff harmonic oscillator written with `mechanism!`:
//! unconditionally stable for β ≥ ¼ (Tao–Owhadi 2014, Theorems 1.1 and 2.2), unstable below;
//! and the energy guard of every unconstrained and penalized method, which turns a run beyond a
//! method's stability limit into `StepError::EnergyDiverged` and never fires within it.

use mechanism::mechanism;
use mechanism::runtime::reference::double_pendulum::{initial_state, DoublePendulum};
use mechanism::runtime::{
    observers, EnergyGuard, Integrator, Newmark, NewmarkOneIteration, Penalized,
    PushForwardNewmark, Rk4, State, StepError, SymplecticEuler, Verlet, ZhangSkeel,
    ZhangSkeelSimplified, ZhangSkeelStiff,
};

mechanism! {
    /// A stiff spring: ω = sqrt(k / m) = 1000.
    pub struct StiffSpring {
        coordinates: [x],
        parameters: { m = 1.0, k = 1e6 },
        kinetic: 0.5 * m * dot(x).powi(2),
        potential: 0.5 * k * x.powi(2),
    }
}

const H_OMEGA: f64 = 100.0;

/// Returns max E / E0 over `steps` steps at h·ω = 100, or infinity once the state is not finite.
fn energy_growth<I: Integrator<StiffSpring, 1>>(mut integrator: I, steps: usize) -> f64 {
    let model = StiffSpring::default();
    let mut state = State::new(0.0, [1.0], [0.0]);
    let e0 = observers::energy(&model, &state);
    let mut growth = 1.0f64;
    for _ in 0..steps {
        if integrator.step(&model, &mut state).is_err() {
            return f64::INFINITY;
        }
        growth = growth.max(observers::energy(&model, &state) / e0);
    }
    growth
}

#[test]
fn bounded_for_beta_at_least_a_quarter_and_unbounded_below() {
    let h = H_OMEGA / (StiffSpring::default().k / StiffSpring::default().m).sqrt();
    for beta in [0.25, 0.4, 1.0] {
        let zs = energy_growth(
            ZhangSkeel::<1>::new(h).unwrap().with_beta(beta).unwrap(),
            10_000,
        );
        let zss = energy_growth(
            ZhangSkeelSimplified::<1>::new(h)
                .unwrap()
                .with_beta(beta)
                .unwrap(),
            10_000,
        );
        println!("β = {beta}: max E/E0 over 10⁴ steps: Z&S {zs:.3}, Z&Ss {zss:.3}");
        assert!(
            zs < 1.5 && zss < 1.5,
            "β = {beta} must be stable at hω = 100"
        );
    }
    for beta in [0.2, 0.24] {
        let zs = energy_growth(
            ZhangSkeel::<1>::new(h).unwrap().with_beta(beta).unwrap(),
            1_000,
        );
        let zss = energy_growth(
            ZhangSkeelSimplified::<1>::new(h)
                .unwrap()
                .with_beta(beta)
                .unwrap(),
            1_000,
        );
        println!("β = {beta}: max E/E0 over 10³ steps: Z&S {zs:.3e}, Z&Ss {zss:.3e}");
        assert!(
            zs > 1e10 && zss > 1e10,
            "β = {beta} < ¼ must blow up at hω = 100"
        );
    }
}

/// What a guarded run ended with: the error of the refused step (`None` if every step was
/// accepted), the accepted steps, and the largest `|H − H₀| / |H₀|` over the accepted states.
struct Guarded {
    refusal: Option<StepError>,
    steps: usize,
    growth: f64,
}

/// Steps `model` from `start` at most `steps` times, stopping at the first refused step, which
/// must leave the state as it was.
fn guarded_run<Model, const N: usize>(
    model: &Model,
    integrator: &mut dyn Integrator<Model, N>,
    start: State<N>,
    steps: usize,
) -> Guarded
where
    Model: mechanism::runtime::Inertia<N> + mechanism::runtime::Potential<N>,
{
    let mut state = start;
    let e0 = observers::energy(model, &state);
    let mut growth = 0.0f64;
    for step in 0..steps {
        let before = state;
        if let Err(error) = integrator.step(model, &mut state) {
            assert_eq!(state, before, "a refused step changed the state");
            return Guarded {
                refusal: Some(error),
                steps: step,
                growth,
            };
        }
        growth = growth.max((observers::energy(model, &state) - e0).abs() / e0.abs());
    }
    Guarded {
        refusal: None,
        steps,
        growth,
    }
}

/// Asserts that the guard refused a step with `EnergyDiverged` before `|H − H₀|` reached
/// `1e3·|H₀|`, and that it refused the right one: the rejected energy lies beyond the band.
fn assert_caught(name: &str, run: &Guarded) {
    let Some(StepError::EnergyDiverged {
        energy,
        initial,
        scale,
        limit,
        ..
    }) = run.refusal
    else {
        panic!(
            "{name}: expected EnergyDiverged, got {:?}",
            run.refusal.as_ref()
        );
    };
    println!(
        "{name}: refused step {} with H = {energy:.3e} (H₀ = {initial:.3e}, scale {scale:.3e}); \
         accepted states reached |H − H₀| = {:.1} |H₀|",
        run.steps + 1,
        run.growth
    );
    assert!((energy - initial).abs() > limit * scale);
    assert!(
        run.growth < 1e3,
        "{name}: the guard let the energy grow to {:.3e} |H₀|",
        run.growth
    );
}

#[test]
fn the_energy_guard_stops_every_unconstrained_method_beyond_its_stability_limit() {
    let spring = StiffSpring::default();
    let omega = (spring.k / spring.m).sqrt();
    let start = State::new(0.0, [1.0], [0.0]);
    let run = |integrator: &mut dyn Integrator<StiffSpring, 1>| {
        guarded_run(&spring, integrator, start, 10_000)
    };
    // The explicit methods past their limits: Verlet and symplectic Euler at hω = 2.5 > 2,
    // RK4 at hω = 3 > 2√2.
    let h = 2.5 / omega;
    assert_caught("Verlet, hω = 2.5", &run(&mut Verlet::<1>::new(h).unwrap()));
    assert_caught(
        "symplectic Euler, hω = 2.5",
        &run(&mut SymplecticEuler::<1>::new(h).unwrap()),
    );
    assert_caught(
        "RK4, hω = 3",
        &run(&mut Rk4::<1>::new(3.0 / omega).unwrap()),
    );
    // The linearly implicit and Newmark methods with β < ¼ at hω = 100, where they are
    // unstable (the test above).
    let h = H_OMEGA / omega;
    let beta = 0.2;
    assert_caught(
        "Z&S, β = 0.2",
        &run(&mut ZhangSkeel::<1>::new(h).unwrap().with_beta(beta).unwrap()),
    );
    assert_caught(
        "Z&Ss, β = 0.2",
        &run(&mut ZhangSkeelSimplified::<1>::new(h)
            .unwrap()
            .with_beta(beta)
            .unwrap()),
    );
    assert_caught(
        "Newmark, β = 0.2",
        &run(&mut Newmark::<1>::new(h).unwrap().with_beta(beta).unwrap()),
    );
    assert_caught(
        "one-iteration Newmark, β = 0.2",
        &run(&mut NewmarkOneIteration::<1>::new(h)
            .unwrap()
            .with_beta(beta)
            .unwrap()),
    );
    assert_caught(
        "push-forward Newmark, β = 0.2",
        &run(&mut PushForwardNewmark::<1>::new(h)
            .unwrap()
            .with_beta(beta)
            .unwrap()),
    );
}

#[test]
fn the_energy_guard_never_fires_within_the_stability_limits() {
    let spring = StiffSpring::default();
    let omega = (spring.k / spring.m).sqrt();
    let start = State::new(0.0, [1.0], [0.0]);
    let run = |integrator: &mut dyn Integrator<StiffSpring, 1>| {
        let run = guarded_run(&spring, integrator, start, 20_000);
        assert!(run.refusal.is_none(), "{:?}", run.refusal);
        run.growth
    };
    let h = 1.9 / omega;
    // Near the limit the energy error is large (Verlet's modified energy at hω = 1.9 differs
    // from H by a factor 1/(1 − (hω/2)²) ≈ 10) but bounded, and the guard lets it be.
    assert!(run(&mut Verlet::<1>::new(h).unwrap()) < 20.0);
    assert!(run(&mut SymplecticEuler::<1>::new(h).unwrap()) < 20.0);
    assert!(run(&mut Rk4::<1>::new(2.7 / omega).unwrap()) <= 1.0);
    let h = H_OMEGA / omega;
    assert!(run(&mut ZhangSkeel::<1>::new(h).unwrap()) < 1.0);
    assert!(run(&mut ZhangSkeelSimplified::<1>::new(h).unwrap()) < 1.0);
    assert!(run(&mut PushForwardNewmark::<1>::new(h).unwrap()) < 1.0);
    // Newmark with β > ¼ conserves ½v² + ½ω²(1 + (β − ¼)(hω)²) q², not H: its H swings by the
    // factor 1 + (β − ¼)(hω)², 16 at hω = 10 and β = 0.4 (see `EnergyGuard`).
    let h = 10.0 / omega;
    assert!(run(&mut Newmark::<1>::new(h).unwrap()) < 16.0);
    assert!(run(&mut NewmarkOneIteration::<1>::new(h).unwrap()) < 16.0);
}

#[test]
fn the_energy_guard_stops_penalized_methods_past_the_penalty_limit_and_can_be_switched_off() {
    // The penalized double pendulum of Tao–Owhadi §4.1 at ω = 20: the penalty's fastest mode
    // has the frequency 2ωl√(2/m) ≈ 57 here, so Verlet is stable for h ≲ 0.035 and unstable at
    // h = 0.1 (hω = 2, the example's default step for the implicit methods).
    let model = Penalized::new(DoublePendulum::default(), 20.0);
    assert_caught(
        "Verlet on the penalized double pendulum, h = 0.1",
        &guarded_run(
            &model,
            &mut Verlet::<4>::new(0.1).unwrap(),
            initial_state(),
            10_000,
        ),
    );
    assert_caught(
        "stiff Z&Ss with β = 0 on the penalized double pendulum, h = 0.1",
        &guarded_run(
            &model,
            &mut ZhangSkeelStiff::<4>::new(0.1)
                .unwrap()
                .with_beta(0.0)
                .unwrap(),
            initial_state(),
            10_000,
        ),
    );
    // Within the limit, and for the implicit methods at their default β, 10⁴ steps are
    // accepted with an energy error far inside the band.
    let fine = guarded_run(
        &model,
        &mut Verlet::<4>::new(0.01).unwrap(),
        initial_state(),
        10_000,
    );
    assert!(
        fine.refusal.is_none() && fine.growth < 0.1,
        "{:?}",
        fine.refusal
    );
    for integrator in [
        &mut ZhangSkeel::<4>::new(0.1).unwrap()
            as &mut dyn Integrator<Penalized<DoublePendulum>, 4>,
        &mut ZhangSkeelSimplified::<4>::new(0.1).unwrap(),
        &mut ZhangSkeelStiff::<4>::new(0.1).unwrap(),
    ] {
        let run = guarded_run(&model, integrator, initial_state(), 10_000);
        assert!(
            run.refusal.is_none() && run.growth < 1.0,
            "{:?}",
            run.refusal
        );
    }
    // Switched off, the unstable run returns `Ok` on states whose energy is meaningless.
    let off = guarded_run(
        &model,
        &mut Verlet::<4>::new(0.1)
            .unwrap()
            .with_energy_guard(EnergyGuard::disabled()),
        initial_state(),
        300,
    );
    assert!(off.refusal.is_none() || matches!(off.refusal, Some(StepError::NonFinite { .. })));
    assert!(off.growth > 1e3);
}
