//! The run driver: schedules on fixed-step grids, the off-grid notice, DOPRI5's dense output
//! (accuracy against an angle-coordinate reference, order by a fitted slope, post-stabilized
//! residuals), stop reasons, an error mid-run, the CSV contract and zero allocations per step on
//! a sparse model.

use crate::support::allocations;
use crate::support::spring::{sine_start, Spring};
use mechanism_runtime::integrators::stabilized::{
    AdaptiveRk, Dopri5, EmbeddedTableau, PostStabilization, DOPRI5, HEUN,
};
use mechanism_runtime::reference::double_pendulum::{initial_state, DoublePendulum};
use mechanism_runtime::reference::fit::loglog_slope;
use mechanism_runtime::reference::harmonic::HarmonicOscillator;
use mechanism_runtime::reference::PendulumChain;
use mechanism_runtime::simulation::{
    family, Column, CsvSink, IntegratorColumn, Mechanics, Schedule, Simulation, SimulationError,
    Sink, SparseMechanics, StopReason, Table,
};
use mechanism_runtime::{
    Configuration, ConstantMass, Inertia, Potential, Rk4, SMatrix, SVector, SparseIntegrator,
    SparseSpook, State, StepError,
};

use std::io::BufWriter;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Returns the column `name` of `table`.
fn column(table: &Table, name: &str) -> Vec<f64> {
    table.column(name).expect("the column exists").collect()
}

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

/// `step` reports internal steps, then the end once and on every later call.
#[test]
fn stop_reasons() {
    let model = HarmonicOscillator::default();
    let mut run = Simulation::fixed(
        &model,
        Rk4::new(0.1).unwrap(),
        sine_start(),
        1.0,
        Schedule::EveryStep,
    )
    .unwrap();
    let mut reasons = Vec::new();
    for _ in 0..12 {
        reasons.push(run.step().unwrap());
    }
    assert_eq!(reasons[..9], [StopReason::InternalStep; 9]);
    assert_eq!(reasons[9..], [StopReason::EndReached; 3]);
    assert_eq!((run.steps(), run.rows()), (10, 11));
    assert!((run.state().t - 1.0).abs() < 1e-15);
}

/// A monitor sees every step while rows are written every 100th: its running maximum of the
/// energy error is the one over all rows of an every-step run, and it is bounded by RK4's
/// energy error on the oscillator.
#[test]
fn monitor_sees_every_step() {
    let model = HarmonicOscillator::default();
    let energy = |s: &State<1>| model.kinetic_energy(&s.q, &s.v) + model.potential(&s.q);
    let e0 = energy(&sine_start());
    let worst = std::cell::Cell::new(0.0f64);
    let calls = std::cell::Cell::new(0usize);
    let mut run = Simulation::fixed(
        &model,
        Rk4::new(0.05).unwrap(),
        sine_start(),
        20.0,
        Schedule::EveryNthStep(100),
    )
    .unwrap()
    .on_step(|_, s| {
        worst.set(worst.get().max((energy(s) - e0).abs()));
        calls.set(calls.get() + 1);
    });
    run.run().unwrap();
    assert_eq!((calls.get(), run.steps(), run.rows()), (400, 400, 5));
    let mut every = Simulation::fixed(
        &model,
        Rk4::new(0.05).unwrap(),
        sine_start(),
        20.0,
        Schedule::EveryStep,
    )
    .unwrap()
    .observe(Column::new("energy", energy));
    every.run().unwrap();
    let all = column(every.output(), "energy");
    let expected = all.iter().map(|e| (e - e0).abs()).fold(0.0, f64::max);
    assert_eq!(worst.get(), expected);
    // RK4 loses energy as (ωh)⁶/72 per step on the oscillator: 400 steps at h = 0.05.
    assert!(expected <= 400.0 * 0.05f64.powi(6) / 72.0 * e0 * 1.01);
    assert!(expected > 0.0);
}

/// A potential whose gradient is NaN beyond `q = 0.9`: RK4 fails the first step whose stages
/// go there.
struct Cliff;

impl ConstantMass<1> for Cliff {}

impl Inertia<1> for Cliff {
    const CONSTANT_MASS: bool = true;
    fn mass_matrix(&self, _q: &SVector<f64, 1>, m: &mut SMatrix<f64, 1, 1>) {
        m[0] = 1.0;
    }
}

impl Potential<1> for Cliff {
    fn potential(&self, q: &SVector<f64, 1>) -> f64 {
        0.5 * q[0] * q[0]
    }
    fn potential_gradient(&self, q: &SVector<f64, 1>, grad: &mut SVector<f64, 1>) {
        grad[0] = if q[0] > 0.9 { f64::NAN } else { q[0] };
    }
}

/// An error mid-run is the failed step's number, start time and typed error; the rows up to it
/// are kept and the state is the one before it.
#[test]
fn error_mid_run_keeps_rows_and_context() {
    let h = 0.01;
    let mut run = Simulation::fixed(
        &Cliff,
        Rk4::new(h).unwrap(),
        sine_start(),
        10.0,
        Schedule::EveryStep,
    )
    .unwrap()
    .observe(Column::new("q²", |s: &State<1>| s.q[0] * s.q[0]));
    let error = run.run().unwrap_err();
    let SimulationError::Step { step, t, source } = error else {
        panic!("expected a step error, got {error:?}");
    };
    assert!(matches!(source, StepError::NonFinite { .. }), "{source:?}");
    // q = sin t reaches 0.9 at asin 0.9; the failing step's stages reach it first.
    let crossing = 0.9f64.asin();
    assert!(t <= crossing && t >= crossing - h, "failed from t = {t}");
    assert_eq!(step, run.steps() + 1);
    assert_eq!(run.state().t, t);
    let table = run.output();
    assert_eq!(
        table.len(),
        step,
        "the initial row and one per successful step"
    );
    assert_eq!(table.row(table.len() - 1).unwrap()[0], t);
    assert_eq!(table.columns(), ["t", "q.x[0]", "v.x[0]", "q²"]);
}

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

/// The CSV contract of the examples: `t`, `q.*`, `v.*`, `energy`, `residual.position`,
/// `residual.velocity`, then extras; numbers read back to the same `f64`; a family's columns as
/// `q.x[i]`.
#[test]
fn csv_contract() {
    let model = DoublePendulum::default();
    let mut run = Simulation::fixed(
        &model,
        Rk4::new(0.01).unwrap(),
        initial_state(),
        0.5,
        Schedule::Every(0.1),
    )
    .unwrap()
    .coordinates(DoublePendulum::COORDINATES)
    .unwrap()
    .observe(Mechanics::new(&model))
    .observe(Column::new("energy.kinetic", |s: &State<4>| {
        model.kinetic_energy(&s.q, &s.v)
    }))
    .observe(Column::new("say \"a,b\"", |_: &State<4>| 0.0))
    .write_to(CsvSink::new(Vec::new()));
    run.run().unwrap();
    let text = String::from_utf8(run.into_output().into_inner()).unwrap();
    let mut lines = text.lines();
    let names = DoublePendulum::COORDINATES;
    let mut header = vec!["t".to_string()];
    header.extend(names.iter().map(|c| format!("q.{c}")));
    header.extend(names.iter().map(|c| format!("v.{c}")));
    header.extend(
        [
            "energy",
            "residual.position",
            "residual.velocity",
            "energy.kinetic",
            "\"say \"\"a,b\"\"\"",
        ]
        .map(String::from),
    );
    assert_eq!(lines.next().unwrap(), header.join(","));
    let rows: Vec<Vec<f64>> = lines
        .map(|line| line.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 6);
    let reference: Vec<State<4>> = {
        let mut rk4 = Rk4::new(0.01).unwrap();
        let mut state = initial_state();
        let mut states = vec![state];
        for step in 1..=50 {
            mechanism_runtime::Integrator::step(&mut rk4, &model, &mut state).unwrap();
            if step % 10 == 0 {
                states.push(state);
            }
        }
        states
    };
    for (row, state) in rows.iter().zip(&reference) {
        assert_eq!(row.len(), header.len(), "the quoted name is one column");
        assert_eq!(&row[1..5], state.q.as_slice(), "q reads back bit for bit");
        assert_eq!(&row[5..9], state.v.as_slice());
        let energy = model.kinetic_energy(&state.q, &state.v) + model.potential(&state.q);
        assert_eq!(row[9], energy);
    }

    let chain = PendulumChain::tao_owhadi(3);
    // An integrator chosen at run time, as the examples' `--method` does.
    let boxed: Box<dyn SparseIntegrator<PendulumChain>> =
        Box::new(SparseSpook::new(&chain, 0.01).unwrap());
    let run = Simulation::sparse(
        &chain,
        boxed,
        chain.tao_owhadi_state(),
        0.1,
        Schedule::EveryStep,
    )
    .unwrap()
    .coordinates(family(&["x", "y"], 3))
    .unwrap()
    .observe(SparseMechanics::new(&chain));
    assert_eq!(
        run.columns()[..8],
        ["t", "q.x[0]", "q.y[0]", "q.x[1]", "q.y[1]", "q.x[2]", "q.y[2]", "v.x[0]"]
    );
    assert_eq!(
        run.columns()[13..],
        ["energy", "residual.position", "residual.velocity"]
    );
}

/// The driver allocates nothing per step on a sparse model (the chain of 200 pendula with
/// SPOOK, observed for energy and residuals), streaming CSV or filling a table.
#[test]
fn no_allocation_per_step_on_a_sparse_model() {
    // Read once per step by the CSV run below, and never set.
    static NEVER: AtomicBool = AtomicBool::new(false);
    let chain = PendulumChain::tao_owhadi(200);
    let spook = || SparseSpook::new(&chain, 0.01).unwrap();
    let mut table = Simulation::sparse(
        &chain,
        spook(),
        chain.tao_owhadi_state(),
        2.0,
        Schedule::Every(0.1),
    )
    .unwrap()
    .observe(SparseMechanics::new(&chain));
    let mut csv = Simulation::sparse(
        &chain,
        spook(),
        chain.tao_owhadi_state(),
        2.0,
        Schedule::EveryNthStep(3),
    )
    .unwrap()
    .observe(SparseMechanics::new(&chain))
    .observe(Column::new("x0", |s: &mechanism_runtime::DynState| s.q[0]))
    .interrupt_on(&NEVER)
    .write_to(CsvSink::new(std::io::BufWriter::with_capacity(
        1 << 16,
        std::io::sink(),
    )));
    // The first step sends the columns and sizes the buffers.
    table.step().unwrap();
    csv.step().unwrap();
    let before = allocations();
    while table.step().unwrap() == StopReason::InternalStep {}
    let in_table = allocations() - before;
    let before = allocations();
    while csv.step().unwrap() == StopReason::InternalStep {}
    let in_csv = allocations() - before;
    assert_eq!(
        (in_table, in_csv),
        (0, 0),
        "allocations in {} + {} steps",
        table.steps(),
        csv.steps()
    );
    assert_eq!((table.steps(), table.rows()), (200, 21));
    assert_eq!(csv.rows(), 1 + 66 + 1);
    let energy = column(table.output(), "energy");
    let drift = energy
        .iter()
        .map(|e| (e - energy[0]).abs())
        .fold(0.0, f64::max);
    assert!(drift.is_finite());
}

/// The progress bar is hidden when stderr is not a terminal (as under the test harness), and
/// then costs no allocation per step.
#[cfg(feature = "indicatif")]
#[test]
fn progress_bar_is_hidden_without_a_terminal() {
    use std::io::IsTerminal;
    let model = HarmonicOscillator::default();
    let mut run = Simulation::fixed(
        &model,
        Rk4::new(0.1).unwrap(),
        sine_start(),
        1.0,
        Schedule::EveryStep,
    )
    .unwrap()
    .with_progress("oscillator");
    run.step().unwrap();
    let before = allocations();
    run.run().unwrap();
    if !std::io::stderr().is_terminal() {
        assert_eq!(
            allocations() - before,
            0,
            "a hidden bar allocates nothing per step"
        );
    }
    assert_eq!(run.progress_visible(), std::io::stderr().is_terminal());
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

/// A set interrupt flag stops the run at the next step boundary with `Interrupted` (the time
/// and the rows written), and the sink is finished: the CSV writer holds nothing unflushed and
/// every line is a complete row.
#[test]
fn an_interrupt_stops_at_a_step_boundary_and_finishes_the_sink() {
    let stop = AtomicBool::new(false);
    let model = HarmonicOscillator::default();
    let out = BufWriter::with_capacity(1 << 20, Vec::new());
    let mut run = Simulation::fixed(
        &model,
        Rk4::new(0.01).unwrap(),
        sine_start(),
        100.0,
        Schedule::EveryStep,
    )
    .unwrap()
    .on_step(|_, s: &State<1>| {
        if s.t > 0.255 {
            stop.store(true, Ordering::Relaxed);
        }
    })
    .interrupt_on(&stop)
    .write_to(CsvSink::new(out).flush_every(Duration::MAX));
    let error = run.run().unwrap_err();
    let SimulationError::Interrupted { t, rows } = error else {
        panic!("expected Interrupted, got {error:?}");
    };
    assert_eq!(
        run.steps(),
        26,
        "the step that set the flag is the last one"
    );
    assert_eq!(rows, 27);
    assert_eq!(t, run.state().t);
    assert!((t - 0.26).abs() < 1e-12);
    assert!(error.to_string().starts_with("interrupted at t = 0.26"));
    let out = run.into_output().into_inner();
    assert!(out.buffer().is_empty(), "the sink was not finished");
    let csv = String::from_utf8(out.into_inner().unwrap()).unwrap();
    assert_eq!(csv.lines().count(), 1 + rows);
    assert!(csv.ends_with('\n'));
}

/// The CSV sink flushes its writer after the header and then after the first row written a
/// second or more after the last flush (or after every row with `Duration::ZERO`), so that a
/// killed run leaves its rows on disk.
#[test]
fn the_csv_sink_flushes_at_least_every_second() {
    let columns = ["t".to_string(), "q.x".to_string()];
    let mut sink = CsvSink::new(BufWriter::with_capacity(1 << 20, Vec::new()));
    sink.begin(&columns, None).unwrap();
    assert_eq!(
        sink.get_ref().get_ref(),
        b"t,q.x\n",
        "the header is flushed at once"
    );
    sink.row(&[0.0, 1.0]).unwrap();
    assert_eq!(
        sink.get_ref().buffer(),
        b"0,1\n",
        "a row within the second is buffered"
    );
    std::thread::sleep(Duration::from_millis(1100));
    sink.row(&[0.5, 2.0]).unwrap();
    assert!(
        sink.get_ref().buffer().is_empty(),
        "a row after a second is flushed"
    );
    assert_eq!(sink.get_ref().get_ref(), b"t,q.x\n0,1\n0.5,2\n");

    let mut every =
        CsvSink::new(BufWriter::with_capacity(1 << 20, Vec::new())).flush_every(Duration::ZERO);
    every.begin(&columns, None).unwrap();
    every.row(&[0.0, 1.0]).unwrap();
    assert!(every.get_ref().buffer().is_empty());
    assert_eq!(every.into_inner().into_inner().unwrap(), b"t,q.x\n0,1\n");
}
