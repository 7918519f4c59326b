//! DOPRI5's dense output (accuracy against an angle-coordinate reference, post-stabilized
//! step ends, order by a fitted slope) and an adaptive pair without one.

use super::*;

/// DOPRI5's rows at requested times (dense output, post-stabilized) are as accurate as its
/// accepted steps, against the double pendulum in angle coordinates by RK4 with a tiny step,
/// and as close to the constraint manifold as the stabilized step ends.
#[test]
fn dense_output_matches_reference_to_the_step_error() {
    let model = DoublePendulum::default();
    let start = initial_state();
    let t_end = 10.0;
    let dopri = || {
        Dopri5::<4, 2>::new(DOPRI5, 1e-6, 1e-7)
            .unwrap()
            .with_post_stabilization(PostStabilization::BothTwice)
    };
    let table = |schedule| {
        let mut run = Simulation::adaptive(&model, dopri(), start, t_end, schedule)
            .unwrap()
            .observe(Mechanics::new(&model))
            .observe(IntegratorColumn::new(
                "steps.accepted",
                |i: &Dopri5<4, 2>, _: &State<4>| i.statistics().accepted as f64,
            ));
        run.run().unwrap();
        (run.stepper().0.statistics(), run.into_output())
    };
    let error = |row: &[f64]| {
        let reference = model.constrained_reference(&start, row[0], 20_000);
        (0..4)
            .map(|i| {
                (row[1 + i] - reference.q[i])
                    .abs()
                    .max((row[5 + i] - reference.v[i]).abs())
            })
            .fold(0.0, f64::max)
    };
    let (stepped, steps) = table(Schedule::EveryStep);
    let requested: Vec<f64> = (1..=40).map(|i| 0.25 * i as f64 - 0.01).collect();
    let (dense_stats, dense) = table(Schedule::At(requested.clone()));
    assert_eq!(
        column(&dense, "t"),
        requested,
        "rows at exactly the requested times"
    );
    assert_eq!(
        dense_stats.accepted, stepped.accepted,
        "dense output does not shorten steps"
    );
    // The integrator's column: at step ends the count of the row, at requested times that of
    // the step containing them.
    let accepted = column(&steps, "steps.accepted");
    assert!(accepted.iter().enumerate().all(|(i, &n)| n == i as f64));
    let accepted = column(&dense, "steps.accepted");
    assert!(accepted.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(accepted.last(), Some(&(stepped.accepted as f64)));
    let step_error = steps.rows().map(error).fold(0.0, f64::max);
    let dense_error = dense.rows().map(error).fold(0.0, f64::max);
    let residual = |t: &Table, name| column(t, name).into_iter().fold(0.0, f64::max);
    println!(
        "DOPRI5 rtol 1e-6, S-both²: {} steps; max error at step ends {step_error:.2e}, at 40 \
         requested times {dense_error:.2e}; max |g| {:.1e} / {:.1e}, max |Gv| {:.1e} / {:.1e}",
        stepped.accepted,
        residual(&steps, "residual.position"),
        residual(&dense, "residual.position"),
        residual(&steps, "residual.velocity"),
        residual(&dense, "residual.velocity"),
    );
    assert!(
        dense_error <= 3.0 * step_error,
        "{dense_error:e} vs {step_error:e}"
    );
    // Projected with two S-both steps, the interpolated states are on the manifold to
    // round-off, like the stabilized step ends.
    for name in ["residual.position", "residual.velocity"] {
        assert!(residual(&dense, name) <= 1e-12, "{name}");
    }
}

/// At the end of a step the projected continuous extension is the stabilized step end (the
/// same correction of the same state, up to rounding), and outside the step it is refused.
#[test]
fn dense_output_ends_on_the_stabilized_step() {
    let model = DoublePendulum::default();
    let mut dopri = Dopri5::<4, 2>::new(DOPRI5, 1e-6, 1e-7)
        .unwrap()
        .with_post_stabilization(PostStabilization::BothTwice);
    let mut state = initial_state();
    let mut out = state;
    assert!(matches!(
        dopri.dense_output(&model, 0.0, &mut out),
        Err(StepError::BadParameter { .. })
    ));
    for _ in 0..5 {
        dopri.step_toward(&model, &mut state, 10.0).unwrap();
    }
    let (t0, t1) = dopri.dense_interval().unwrap();
    assert_eq!(t1, state.t);
    dopri.dense_output(&model, t1, &mut out).unwrap();
    let scale = state.q.amax().max(state.v.amax());
    assert!((out.q - state.q).amax() <= 64.0 * f64::EPSILON * scale);
    assert!((out.v - state.v).amax() <= 64.0 * f64::EPSILON * scale);
    let before = out;
    for t in [t0 - 1e-3, t1 + 1e-3, f64::NAN] {
        assert!(matches!(
            dopri.dense_output(&model, t, &mut out),
            Err(StepError::BadParameter { name: "t", .. })
        ));
    }
    assert_eq!(out, before, "unchanged on error");
}

/// An adaptive pair without dense output (Heun–Euler 2(1)) is handed each requested time as its
/// stop time and lands on it: rows at exactly those times, within the tolerance of the closed
/// form's error (a few times rtol over the run).
#[test]
fn adaptive_without_dense_output_lands_on_requested_times() {
    let heun_euler = EmbeddedTableau {
        method: HEUN,
        b_hat: [1.0, 0.0],
        embedded_order: 1,
    };
    let model = Spring(HarmonicOscillator::default());
    let adaptive = AdaptiveRk::<1, 0, 2>::new(heun_euler, 1e-6, 1e-6).unwrap();
    assert!(!adaptive.has_dense_output());
    let mut run =
        Simulation::adaptive(&model, adaptive, sine_start(), 5.0, Schedule::Every(0.5)).unwrap();
    run.run().unwrap();
    let table = run.output();
    let times = column(table, "t");
    assert_eq!(times, (0..=10).map(|i| 0.5 * i as f64).collect::<Vec<_>>());
    let error = times
        .iter()
        .zip(column(table, "q.x[0]"))
        .map(|(t, q)| (q - t.sin()).abs())
        .fold(0.0, f64::max);
    println!(
        "Heun–Euler, rtol = atol = 1e-6: {} steps, max error {error:.1e}",
        run.steps()
    );
    // 10× the error measured at these tolerances (2.3e-6); a row written at the nearest step
    // end instead of the requested time would be off by about |v| h ~ 1e-3.
    assert!(error < 2e-5, "max error {error:e}");
}

/// The continuous extension's local error at mid-step is O(h⁵) (order 4): one step of size h
/// from the closed form's initial value, output at h/2, against `sin(h/2)`.
#[test]
fn dense_output_has_order_four() {
    let model = Spring(HarmonicOscillator::default());
    let hs = [0.4, 0.2, 0.1, 0.05];
    let errors: Vec<f64> = hs
        .iter()
        .map(|&h| {
            // Loose tolerances and h_max = h: one accepted step of exactly h.
            let dopri = Dopri5::<1, 0>::new(DOPRI5, 1.0, 1.0)
                .unwrap()
                .with_initial_step(h)
                .unwrap()
                .with_max_step(h)
                .unwrap();
            let mut run =
                Simulation::adaptive(&model, dopri, sine_start(), h, Schedule::At(vec![h / 2.0]))
                    .unwrap();
            run.run().unwrap();
            assert_eq!(run.steps(), 1);
            let row = run.output().row(0).unwrap().to_vec();
            let exact = model.0.exact(&sine_start(), h / 2.0);
            (row[1] - exact.q[0]).abs().max((row[2] - exact.v[0]).abs())
        })
        .collect();
    let slope = loglog_slope(&hs, &errors).unwrap();
    println!("dense output at mid-step: errors {errors:?}, slope {slope:.2}");
    assert!((4.6..5.4).contains(&slope), "local slope {slope}");
}
