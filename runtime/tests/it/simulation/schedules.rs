//! Schedules on fixed-step grids: requested times hit, the off-grid notice, bad schedules
//! refused, and long runs within the rounding bound of the grid.

use super::*;

/// Every Δt, a list of times and every k-th step are written at exactly the requested times
/// on RK4's grid, with the state the integrator reached there (the closed form to RK4's error).
#[test]
fn schedules_hit_requested_times_on_the_grid() {
    let model = HarmonicOscillator::default();
    let (h, t_end) = (0.01f64, 10.0);
    let bound = t_end * h.powi(4) / 100.0; // RK4's global error on sin t: ≈ t h⁴/120
    let every = |schedule| {
        let mut run =
            Simulation::fixed(&model, Rk4::new(h).unwrap(), sine_start(), t_end, schedule)
                .unwrap()
                .coordinates(HarmonicOscillator::COORDINATES)
                .unwrap();
        run.run().unwrap();
        (run.steps(), run.into_output())
    };
    let (steps, table) = every(Schedule::Every(0.5));
    assert_eq!(steps, 1000);
    let times = column(&table, "t");
    let expected: Vec<f64> = (0..=20).map(|i| i as f64 * 0.5).collect();
    assert_eq!(times, expected, "rows at exactly t = 0, 0.5, …, 10");
    for (t, q) in times.iter().zip(column(&table, "q.q")) {
        assert!(
            (q - t.sin()).abs() <= bound,
            "q({t}) = {q}, sin t = {}",
            t.sin()
        );
    }

    let requested = vec![0.25, 1.0, 3.33, 7.5, 10.0];
    let (_, table) = every(Schedule::At(requested.clone()));
    assert_eq!(column(&table, "t"), requested);
    for (t, q) in requested.iter().zip(column(&table, "q.q")) {
        assert!((q - t.sin()).abs() <= bound);
    }

    let (_, table) = every(Schedule::EveryNthStep(70));
    let times = column(&table, "t");
    // Steps 0, 70, …, 980 and the last, 1000.
    assert_eq!(times.len(), 1 + 14 + 1);
    for (i, t) in times.iter().take(15).enumerate() {
        assert!((t - 0.7 * i as f64).abs() < 1e-12, "row {i} at t = {t}");
    }
    assert!((times[15] - t_end).abs() < 1e-12);

    let (_, table) = every(Schedule::EveryStep);
    assert_eq!(table.len(), 1001);
}

/// A requested time between two grid points is reported with the step that passed it, and
/// the rows before it are kept.
#[test]
fn off_grid_request_is_reported() {
    let model = HarmonicOscillator::default();
    let mut run = Simulation::fixed(
        &model,
        Rk4::new(0.03).unwrap(),
        sine_start(),
        1.0,
        Schedule::At(vec![0.0, 0.09, 0.1]),
    )
    .unwrap();
    match run.run() {
        Err(SimulationError::OffGrid {
            requested,
            from,
            to,
        }) => {
            assert_eq!(requested, 0.1);
            assert!((from - 0.09).abs() < 1e-15 && (to - 0.12).abs() < 1e-15);
        }
        other => panic!("expected OffGrid, got {other:?}"),
    }
    assert_eq!(column(run.output(), "t"), [0.0, 0.09]);

    // Every(Δt) with a step that does not divide Δt.
    let mut run = Simulation::fixed(
        &model,
        Rk4::new(0.03).unwrap(),
        sine_start(),
        1.0,
        Schedule::Every(0.05),
    )
    .unwrap();
    assert!(
        matches!(run.run(), Err(SimulationError::OffGrid { requested, .. }) if requested == 0.05)
    );
}

/// Bad schedules and end times are refused before any step.
#[test]
fn bad_schedules_are_refused() {
    let model = HarmonicOscillator::default();
    let new = |t_end, schedule| {
        Simulation::fixed(
            &model,
            Rk4::new(0.1).unwrap(),
            sine_start(),
            t_end,
            schedule,
        )
        .err()
    };
    for (t_end, schedule) in [
        (f64::NAN, Schedule::EveryStep),
        (0.0, Schedule::EveryStep),
        (1.0, Schedule::EveryNthStep(0)),
        (1.0, Schedule::Every(0.0)),
        (1.0, Schedule::Every(f64::INFINITY)),
        (1.0, Schedule::At(vec![0.5, 0.5])),
        (1.0, Schedule::At(vec![0.5, 2.0])),
        (1.0, Schedule::At(vec![f64::NAN])),
    ] {
        assert!(
            matches!(
                new(t_end, schedule.clone()),
                Some(SimulationError::BadSchedule { .. })
            ),
            "{t_end} {schedule:?}"
        );
    }
}

/// Long fixed-step runs still land on the requested times: `t` summed over 10⁴ steps of an `h`
/// that is not a binary fraction drifts from `k h` by hundreds of ulps (715 ε|t| measured for
/// h = 0.1), within the tolerance's rounding bound `(k + 4) ε |t|` and far below `h`.
#[test]
fn long_runs_land_on_the_grid_within_the_rounding_bound() {
    let model = HarmonicOscillator::default();
    for (h, t_end, dt) in [(0.1, 1000.0, 1.0), (0.01, 100.0, 0.5), (0.3, 3000.0, 0.6)] {
        let mut run = Simulation::fixed(
            &model,
            Rk4::new(h).unwrap(),
            sine_start(),
            t_end,
            Schedule::Every(dt),
        )
        .unwrap();
        // The drift of the summed time from i·Δt at the rows, in ulps of t.
        let drift = std::cell::Cell::new(0.0f64);
        let mut steps = 0usize;
        while run.step().unwrap() == StopReason::InternalStep {
            steps += 1;
            let t = run.state().t;
            let nearest = (t / dt).round() * dt;
            if (t - nearest).abs() < h / 2.0 {
                drift.set(drift.get().max((t - nearest).abs() / (f64::EPSILON * t)));
            }
        }
        let rows = ((t_end / dt).round() as usize) + 1;
        assert_eq!(run.rows(), rows, "h = {h}: every Δt written");
        let times = column(run.output(), "t");
        assert!(times
            .iter()
            .enumerate()
            .all(|(i, &t)| t == (i as f64 * dt).min(t_end)));
        println!(
            "h = {h}, {} steps: summed t is up to {:.1} ε|t| from the grid",
            steps + 1,
            drift.get()
        );
    }
}
