//! Driving a run: stop reasons, a monitor on every step, an error mid-run and an interrupt.

use super::*;

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
