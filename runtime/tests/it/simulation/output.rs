//! The output: the CSV contract, zero allocations per step on a sparse model, the hidden
//! progress bar and the CSV sink's flushing.

use super::*;

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
