//! The run of an example through the driver: [`simulate`] and [`simulate_adaptive`] with the
//! observed model's energy and residuals, method-specific [`Column`]s, the [`Summary`] of every
//! step, the stream of the rows to the output file and the checkpoints; and [`sample`], the
//! bare loop that returns states.

use std::cell::Cell;
use std::error::Error;

use mechanism::output::{create_parent, resume_sink, table_sink};
use mechanism::runtime::checkpoint::{Checkpoint, ModelIdentity};
use mechanism::runtime::integrators::stabilized::Dopri5;
use mechanism::runtime::simulation::{
    ForwardSensitivity, IntegratorColumn, Mechanics, Schedule, Sensitive, SensitivityColumns,
    Simulation, SimulationError, Sink, Stepper, Summary, Table, Trajectory,
};
use mechanism::runtime::{
    AppliedForces, Configuration, DifferentiableInParameters, Holonomic, HolonomicKinematics,
    Inertia, InertiaGradient, Integrator, Potential, SVector, State,
};

use crate::{interrupt_flag, Plan, Thin};

/// How a [`Column`] computes its value from the integrator and the state.
type ColumnFn<'a, I, const N: usize> = Box<dyn Fn(&I, &State<N>) -> f64 + 'a>;

/// A method-specific output column: its name and how to compute it from the integrator (for
/// quantities it carries, such as multipliers or a momentum) and the state. It is the driver's
/// [`IntegratorColumn`] with the closure boxed, so that an example can list columns of
/// different closures in one array.
pub struct Column<'a, I, const N: usize> {
    name: String,
    value: ColumnFn<'a, I, N>,
}

impl<'a, I, const N: usize> Column<'a, I, N> {
    /// Creates a column named `name` whose value is `value(integrator, state)`.
    pub fn new(name: impl Into<String>, value: impl Fn(&I, &State<N>) -> f64 + 'a) -> Self {
        Column {
            name: name.into(),
            value: Box::new(value),
        }
    }

    /// Returns the driver's observer of this column.
    fn observer(self) -> IntegratorColumn<ColumnFn<'a, I, N>> {
        IntegratorColumn::new(self.name, self.value)
    }
}

/// Runs `integrator` on the `stepped` model from `initial` for `plan.steps` steps of `plan.h`
/// through the driver ([`Simulation::fixed`]), writing rows at the times of `plan.schedule` with
/// the energy and constraint residuals of the `observed` model ([`Mechanics`]) and the `columns`,
/// and keeping the [`Summary`] of every step.
///
/// `stepped` and `observed` differ when the integrator runs a modified model, e.g. the
/// penalized `V + ½ω²|g|²`, while the residuals must measure the hard constraints. A failed
/// step ends the run early and is kept in [`Trajectory::failure`]; so is a requested time off
/// the step grid ([`SimulationError::OffGrid`]).
pub fn simulate<'a, I, Stepped, Observed, const N: usize, const M: usize>(
    integrator: I,
    stepped: &'a Stepped,
    observed: &'a Observed,
    initial: State<N>,
    plan: &Plan,
    columns: impl IntoIterator<Item = Column<'a, I, N>>,
) -> Result<Trajectory, Box<dyn Error>>
where
    I: Integrator<Stepped, N> + 'a,
    Stepped: ModelIdentity,
    Observed: Configuration<N> + Inertia<N> + Potential<N> + Holonomic<N, M>,
{
    // The driver stops at the first step that reaches its end time: ask for `steps · h`.
    let t_end = initial.t + plan.steps as f64 * plan.h;
    let run = Simulation::fixed(stepped, integrator, initial, t_end, plan.schedule.clone())?;
    finish(run, observed, columns, |run| run, plan, |_| {})
}

/// Runs the error-controlled `integrator` (DOPRI5) on `model` from `initial` to `t_end` through the
/// driver ([`Simulation::adaptive`]): requested times of `plan.schedule` come from its dense output
/// (its `h` and `steps` are not used;
/// [`RunOptions::adaptive_plan`](crate::RunOptions::adaptive_plan)); the columns are `columns`,
/// then `h`, the step that reached the row.
pub fn simulate_adaptive<'a, Model, const N: usize, const M: usize>(
    integrator: Dopri5<N, M>,
    model: &'a Model,
    initial: State<N>,
    t_end: f64,
    columns: Vec<Column<'a, Dopri5<N, M>, N>>,
    plan: &Plan,
) -> Result<Trajectory, Box<dyn Error>>
where
    Model: ModelIdentity
        + InertiaGradient<N>
        + Potential<N>
        + HolonomicKinematics<N, M>
        + AppliedForces<N>
        + Configuration<N>
        + Holonomic<N, M>
        + Inertia<N>,
{
    let run = Simulation::adaptive(model, integrator, initial, t_end, plan.schedule.clone())?;
    let step = Column::new("h", |dopri: &Dopri5<N, M>, _: &State<N>| {
        dopri.dense_interval().map_or(0.0, |(from, to)| to - from)
    });
    finish(
        run,
        model,
        columns.into_iter().chain([step]),
        |run| run,
        plan,
        |dopri| {
            let stats = dopri.statistics();
            println!(
                "DOPRI5: {} accepted, {} rejected steps (NSTEP = {}), {} evaluations",
                stats.accepted,
                stats.rejected,
                stats.steps(),
                stats.evaluations
            );
        },
    )
}

/// Runs `integrator` on `model` from `initial` to `t_end` as [`simulate`] does, carrying the
/// forward sensitivities `sensitivity` along ([`Sensitive`]), whose columns (named after
/// `seeds`, [`SensitivityColumns`]) follow the energy and the residuals. An adaptive
/// `integrator` lands on the plan's row times (the sensitivities have no dense output).
pub fn simulate_sensitive<
    'a,
    I,
    Model,
    const N: usize,
    const M: usize,
    const P: usize,
    const S: usize,
>(
    integrator: I,
    sensitivity: ForwardSensitivity<N, P, S>,
    seeds: [&str; S],
    model: &'a Model,
    initial: State<N>,
    t_end: f64,
    plan: &Plan,
) -> Result<Trajectory, Box<dyn Error>>
where
    I: DifferentiableInParameters<Model, N, P> + 'a,
    Model: ModelIdentity + Configuration<N> + Inertia<N> + Potential<N> + Holonomic<N, M>,
{
    let stepper = Sensitive {
        integrator,
        sensitivity,
    };
    let run = Simulation::new(model, stepper, initial, t_end, plan.schedule.clone())?;
    let columns = SensitivityColumns::new(Model::COORDINATES, seeds);
    finish::<_, _, _, N, M>(run, model, [], |run| run.observe(columns), plan, |_| {})
}

/// Adds the observers (the energy and residuals of `observed`, the `columns`, then what
/// `observers` adds) and the summary to `run`, runs it until its end or the
/// [`interrupt_flag`], hands the integrator to `report` and collects the [`Trajectory`]; the
/// rows (every `plan.every`-th and the last, [`Thin`]) also go to `plan.out` while the run
/// goes, if it is set. With `plan.progress`, runs longer than one time unit show the progress
/// bar (the plan's step and schedule are the run's already).
fn finish<'a, Model, St, Observed, const N: usize, const M: usize>(
    run: Simulation<'a, Model, St>,
    observed: &'a Observed,
    columns: impl IntoIterator<Item = Column<'a, St::Integrator, N>>,
    observers: impl FnOnce(Simulation<'a, Model, St>) -> Simulation<'a, Model, St>,
    plan: &Plan,
    report: impl FnOnce(&St::Integrator),
) -> Result<Trajectory, Box<dyn Error>>
where
    Model: ModelIdentity + ?Sized,
    St: Stepper<Model, State = State<N>>,
    St::Integrator: Sized + 'a,
    Observed: Configuration<N> + Inertia<N> + Potential<N> + Holonomic<N, M>,
{
    let summary = Cell::new(Summary::start::<Observed, N, M>(observed, run.state()));
    let mut run = run
        .coordinates(Observed::COORDINATES)?
        .observe(Mechanics::<Observed, N, M>::new(observed));
    for column in columns {
        run = run.observe(column.observer());
    }
    let (run, stream) = checkpointed(observers(run), plan)?;
    let summary_ref = &summary;
    let mut run = run
        .on_step(move |_, state| {
            let mut s = summary_ref.get();
            s.push::<Observed, N, M>(observed, state);
            summary_ref.set(s);
        })
        .interrupt_on(interrupt_flag())
        .write_to(Thin::new((Table::default(), stream), plan.every));
    if plan.progress && run.t_end() - run.state().t > 1.0 {
        run = run.with_progress("simulating");
    }
    let failure = run.run().err();
    report(run.stepper().integrator());
    let mut thin = run.into_output();
    // The driver finishes the sink at the end and on an interrupt, not after a failed step:
    // the rows up to the failure must stay readable (the Parquet part needs its footer), and
    // the last row that `--every` held back is written.
    thin.finish()?;
    let failure = failure.map(|error| thinned(error, thin.written()));
    let (table, _) = thin.into_inner();
    Ok(Trajectory {
        table,
        summary: summary.get(),
        failure,
        file: plan.out.clone(),
    })
}

/// Returns `error` with the rows that reached the file after `--every` ([`Thin`]) if it is an
/// interrupt (the driver counts the rows of its schedule).
pub fn thinned(error: SimulationError, rows: usize) -> SimulationError {
    match error {
        SimulationError::Interrupted { t, .. } => SimulationError::Interrupted { t, rows },
        other => other,
    }
}

/// The stream of a run's rows to its file, if it has one ([`plan_sink`]).
pub type Stream = Option<Box<dyn Sink>>;

/// Sets up the checkpoints of `plan` on `run` ([`Simulation::checkpoint_every`]) and resumes
/// it from `plan.resume` ([`Simulation::resume_from`]), and returns it with the stream of
/// `plan.out` ([`plan_sink`]). Call it after the observers are added (a resume checks the
/// columns).
pub fn checkpointed<'m, Model, St>(
    run: Simulation<'m, Model, St>,
    plan: &Plan,
) -> Result<(Simulation<'m, Model, St>, Stream), Box<dyn Error>>
where
    Model: ModelIdentity + ?Sized,
    St: Stepper<Model>,
{
    let run = with_checkpoints(run, plan)?;
    Ok((run, plan_sink(plan)?))
}

/// Sets up the checkpoints of `plan` on `run` and resumes it from `plan.resume`, for an
/// example with a loop of its own (the sink is [`plan_sink`]'s).
pub fn with_checkpoints<'m, Model, St, K>(
    run: Simulation<'m, Model, St, K>,
    plan: &Plan,
) -> Result<Simulation<'m, Model, St, K>, Box<dyn Error>>
where
    Model: ModelIdentity + ?Sized,
    St: Stepper<Model>,
    K: Sink,
{
    let mut run = run;
    if let Some((file, every)) = &plan.checkpoint {
        create_parent(file)?;
        run = run.checkpoint_every(*every, file.clone())?;
    }
    match &plan.resume {
        Some(from) => Ok(run.resume_from(from)?),
        None => Ok(run),
    }
}

/// Returns the stream of `plan.out`: a new file ([`table_sink`]), or on a resume the file
/// continued from the checkpoint's position ([`resume_sink`]); `None` without `plan.out`.
pub fn plan_sink(plan: &Plan) -> Result<Stream, Box<dyn Error>> {
    let Some(out) = plan.out.as_deref() else {
        return Ok(None);
    };
    match &plan.resume {
        None => Ok(Some(table_sink(out)?)),
        Some(from) => Ok(Some(resume_sink(out, &Checkpoint::read(from)?.output)?)),
    }
}

/// Steps `integrator` (of step `h`) on `model` from `initial` for `steps` steps through the driver and
/// returns the initial state and every `every`-th state after it, without observing anything:
/// the loop to time, or to compare with a reference tabulated at fixed times.
pub fn sample<I, Model, const N: usize>(
    integrator: I,
    model: &Model,
    initial: State<N>,
    h: f64,
    steps: usize,
    every: usize,
) -> Result<Vec<State<N>>, SimulationError>
where
    I: Integrator<Model, N>,
{
    let every = every.max(1);
    let t_end = initial.t + steps as f64 * h;
    let mut run = Simulation::fixed(
        model,
        integrator,
        initial,
        t_end,
        Schedule::EveryNthStep(every),
    )?;
    run.run()?;
    // The driver also writes the last step; the tabulated references stop at the last k-th.
    Ok(run
        .into_output()
        .rows()
        .take(steps / every + 1)
        .map(|row| State {
            t: row[0],
            q: SVector::from_column_slice(&row[1..=N]),
            v: SVector::from_column_slice(&row[N + 1..=2 * N]),
        })
        .collect())
}
