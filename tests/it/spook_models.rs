//! SPOOK with everything of Lacoursière (2007) eq. 24–29 on models written with `mechanism!`:
//! the constraint residual of the generated double pendulum (second order, bounded over 10⁴
//! steps), nonholonomic rows (with `γ` and a driving term `w(t)`), dissipation and generalized
//! forces, each against a closed-form solution, and the solved linear system checked row by row.
//! SPOOK's order of convergence on the pendulum is in `tests/it/harness.rs`.

use crate::support::{report, run, steps_to};
use mechanism::mechanism;
use mechanism::models::DoublePendulum;
use mechanism::runtime::{
    observers, Holonomic, Integrator, Nonholonomic, Regularization, SMatrix, SVector, Spook, State,
};

/// Max |g_i| over t ∈ [0, 5] for SPOOK with step `h`.
fn spook_max_residual(h: f64) -> f64 {
    let model = DoublePendulum::default();
    let mut spook = Spook::<4, 2>::new(h).unwrap();
    let mut max = 0.0f64;
    run(
        &mut spook,
        &model,
        DoublePendulum::initial_state(),
        steps_to(5.0, h),
        |s| {
            max = max.max(observers::position_residual(&model, s));
        },
    )
    .unwrap();
    max
}

#[test]
fn spook_constraint_residual_is_second_order() {
    let hs = [1.0 / 30.0, 1.0 / 60.0, 1.0 / 120.0, 1.0 / 240.0];
    let residuals: Vec<f64> = hs.iter().map(|&h| spook_max_residual(h)).collect();
    let slope = report("SPOOK max |g| over [0, 5]", &hs, &residuals);
    assert!(slope >= 1.8, "residual should be O(h²); slope {slope}");
}

#[test]
fn spook_residual_and_energy_stay_bounded_over_ten_thousand_steps() {
    let model = DoublePendulum::default();
    let h = 1.0 / 60.0;
    let mut spook = Spook::<4, 2>::new(h).unwrap();
    let e0 = observers::energy(&model, &DoublePendulum::initial_state());
    let mut residuals = Vec::with_capacity(10_000);
    let mut energy_errors = Vec::with_capacity(10_000);
    run(
        &mut spook,
        &model,
        DoublePendulum::initial_state(),
        10_000,
        |s| {
            residuals.push(observers::position_residual(&model, s));
            energy_errors.push((observers::energy(&model, s) - e0).abs());
        },
    )
    .unwrap();
    let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    let (first, last) = (max(&residuals[..1000]), max(&residuals[9000..]));
    println!("SPOOK h = 1/60, 10⁴ steps: max |g| {:.3e} (first 1000: {first:.3e}, last 1000: {last:.3e}); max |ΔE| {:.3e}",
        max(&residuals), max(&energy_errors));
    assert!(max(&residuals) < 2e-3);
    assert!(last <= 2.0 * first, "the residual must not grow");
    assert!(max(&energy_errors[9000..]) <= 3.0 * max(&energy_errors[..1000]) + 1e-3);
}

mechanism! {
    /// A knife edge on an inclined plane (Bloch, *Nonholonomic Mechanics*, §1.6): it may only
    /// slide along its blade, gravity pulls along `x` with acceleration `a = g sin α`, and it
    /// spins freely.
    pub struct InclinedKnifeEdge {
        coordinates: [x, y, theta],
        parameters: { m = 1.0, inertia = 0.5, a = 1.0 },
        kinetic: 0.5 * m * (dot(x).powi(2) + dot(y).powi(2)) + 0.5 * inertia * dot(theta).powi(2),
        potential: -m * a * x,
        nonholonomic: { blade: dot(x) * theta.sin() - dot(y) * theta.cos() },
        integrators: [spook],
    }
}

/// The closed form from rest at the origin with `θ = ωt`: the speed along the blade is
/// `u = (a/ω) sin ωt`, so `x = (a/2ω²) sin² ωt`, `y = (a/2ω²)(ωt − ½ sin 2ωt)`.
fn knife_edge_exact(a: f64, omega: f64, t: f64) -> [f64; 3] {
    let c = a / (2.0 * omega * omega);
    let wt = omega * t;
    [c * wt.sin().powi(2), c * (wt - 0.5 * (2.0 * wt).sin()), wt]
}

#[test]
fn knife_edge_converges_with_order_one_to_the_closed_form() {
    let model = InclinedKnifeEdge::new();
    let (omega, t_end) = (2.0, 3.0);
    let exact = knife_edge_exact(model.a, omega, t_end);
    let hs = [0.01, 0.005, 0.0025, 0.00125];
    let mut errors = Vec::new();
    for h in hs {
        let mut spook = Spook::<3, 0, 1>::new(h).unwrap();
        let mut state = State::new(0.0, [0.0; 3], [0.0, 0.0, omega]);
        let mut worst_row = 0.0f64;
        for _ in 0..steps_to(t_end, h) {
            let mut a = SMatrix::<f64, 1, 3>::zeros();
            model.nonholonomic_matrix(&state.q, &mut a);
            spook.step(&model, &mut state).unwrap();
            // Eq. 29's second row: A(q_k) v_{k+1} = −Γα, with Γ = γ/h and γ = 1e-8.
            worst_row = worst_row.max((a * state.v)[0].abs());
        }
        assert!(worst_row < 1e-6, "A(q_k) v_(k+1) = {worst_row:e}");
        let error = (0..3)
            .map(|i| (state.q[i] - exact[i]).abs())
            .fold(0.0, f64::max);
        errors.push(error);
    }
    let slope = report(
        "SPOOK, knife edge on an incline, |q − exact| at t = 3",
        &hs,
        &errors,
    );
    assert!((0.9..1.15).contains(&slope), "order {slope}");
    assert!(errors[3] < 2e-3, "{errors:?}");
}

mechanism! {
    /// A particle whose velocity along `x` is prescribed, `ẋ = cos t` (a driven nonholonomic
    /// row, `w(t) = cos t`), on a spring along `y`.
    pub struct DrivenParticle {
        coordinates: [x, y],
        parameters: { k = 4.0 },
        kinetic: 0.5 * (dot(x).powi(2) + dot(y).powi(2)),
        potential: 0.5 * k * y.powi(2),
        nonholonomic: {
            #[spook(gamma = 1e-3)]
            drive: dot(x) - t.cos(),
        },
        integrators: [spook],
    }
}

#[test]
fn driving_term_and_compliance_enter_as_in_eq_29() {
    // With γ = 1e-3 the row is relaxed: eq. 29 reads A v_{k+1} + (γ/h) α = w(t_k), which must
    // hold to round-off; the multiplier is the impulse h·ẍ of the prescribed motion, and with
    // γ → 0 the motion converges to x = sin t.
    let model = DrivenParticle::new();
    let h = 1e-3;
    let steps = steps_to(2.0, h);
    let mut worst_row = 0.0f64;
    let mut worst_impulse = 0.0f64;
    let mut spook = Spook::<2, 0, 1>::new(h).unwrap();
    let mut state = State::new(0.0, [0.0, 1.0], [1.0, 0.0]);
    for _ in 0..steps {
        let t = state.t;
        spook.step(&model, &mut state).unwrap();
        let alpha = spook.nonholonomic_multipliers()[0];
        worst_row = worst_row.max((state.v[0] + 1e-3 / h * alpha - t.cos()).abs());
        // α/h is the constraint force, ≈ ẍ = −sin t once the transient of γ has settled.
        if t > 0.1 {
            worst_impulse = worst_impulse.max((alpha / h + t.sin()).abs());
        }
    }
    println!("driven row: eq. 29 residual {worst_row:.1e}, |α/h − ẍ| ≤ {worst_impulse:.1e}");
    assert!(worst_row < 1e-13, "{worst_row:e}");
    assert!(worst_impulse < 0.05, "{worst_impulse:e}");

    // The nearly ideal row: x(t) = sin t, y(t) = cos 2t (k = 4), first order in h.
    let mut errors = Vec::new();
    let hs = [0.01, 0.005, 0.0025];
    for h in hs {
        let mut spook = Spook::<2, 0, 1>::new(h)
            .unwrap()
            .with_nonholonomic_compliance(0, 0.0)
            .unwrap();
        let mut state = State::new(0.0, [0.0, 1.0], [1.0, 0.0]);
        for _ in 0..steps_to(2.0, h) {
            spook.step(&model, &mut state).unwrap();
        }
        errors.push(
            (state.q[0] - 2f64.sin())
                .abs()
                .max((state.q[1] - 4f64.cos()).abs()),
        );
    }
    let slope = report("SPOOK, driven row (γ = 0), error at t = 2", &hs, &errors);
    assert!((0.9..1.15).contains(&slope), "order {slope}");
}

mechanism! {
    /// A damped oscillator: `ẍ = −k x − c ẋ`.
    pub struct Damped {
        coordinates: [x],
        parameters: { k = 1.0, c = 0.4 },
        kinetic: 0.5 * dot(x).powi(2),
        potential: 0.5 * k * x.powi(2),
        dissipation: 0.5 * c * dot(x).powi(2),
        integrators: [spook],
    }
}

mechanism! {
    /// A driven oscillator on a rod: the bob `(x, y)` on a circle of radius 1 about the origin
    /// has no gravity, and a tangential force `f0 cos(w t)` drives the angle `φ`:
    /// `φ̈ = f0 cos(w t)`, so `φ = (f0/w²)(1 − cos w t)` from rest.
    pub struct DrivenRotor {
        coordinates: [x, y],
        parameters: { f0 = 0.5, w = 3.0 },
        kinetic: 0.5 * (dot(x).powi(2) + dot(y).powi(2)),
        potential: 0.0,
        holonomic: { rod: x.powi(2) + y.powi(2) - 1.0 },
        forces: {
            x: -f0 * (w * t).cos() * y,
            y: f0 * (w * t).cos() * x,
        },
        integrators: [spook],
    }
}

#[test]
fn dissipation_and_forces_converge_with_order_one() {
    // Underdamped, from x = 1 at rest: x = e^{−ζt}(cos ω_d t + (ζ/ω_d) sin ω_d t).
    let model = Damped::new();
    let zeta = model.c / 2.0;
    let omega_d = (model.k - zeta * zeta).sqrt();
    let t_end = 5.0;
    let exact = (-zeta * t_end).exp()
        * ((omega_d * t_end).cos() + zeta / omega_d * (omega_d * t_end).sin());
    let hs = [0.01, 0.005, 0.0025, 0.00125];
    let mut errors = Vec::new();
    for h in hs {
        let mut spook = Spook::<1, 0>::new(h).unwrap();
        let mut state = State::new(0.0, [1.0], [0.0]);
        for _ in 0..steps_to(t_end, h) {
            spook.step(&model, &mut state).unwrap();
        }
        errors.push((state.q[0] - exact).abs());
    }
    let slope = report("SPOOK, damped oscillator, error at t = 5", &hs, &errors);
    assert!((0.9..1.15).contains(&slope), "order {slope}");

    // The driven rotor: the generalized force reaches the constrained motion.
    let model = DrivenRotor::new();
    let t_end = 2.0;
    let phi = model.f0 / model.w.powi(2) * (1.0 - (model.w * t_end).cos());
    let mut errors = Vec::new();
    for h in hs {
        let mut spook = Spook::<2, 1>::new(h)
            .unwrap()
            .with_regularization(
                0,
                Regularization {
                    epsilon: 0.0,
                    ..Regularization::default()
                },
            )
            .unwrap();
        let mut state = State::new(0.0, [1.0, 0.0], [0.0, 0.0]);
        for _ in 0..steps_to(t_end, h) {
            spook.step(&model, &mut state).unwrap();
        }
        let mut g = SVector::<f64, 1>::zeros();
        model.constraints(&state.q, state.t, &mut g);
        assert!(g[0].abs() < 10.0 * h * h, "|g| = {:e}", g[0]);
        errors.push((state.q[1].atan2(state.q[0]) - phi).abs());
    }
    let slope = report(
        "SPOOK, rotor driven by a force, |φ − exact| at t = 2",
        &hs,
        &errors,
    );
    assert!((0.9..1.15).contains(&slope), "order {slope}");
}
