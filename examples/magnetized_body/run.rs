//! One run of the magnetized body through the driver: the rows of the CSV contract for a
//! rotation (`q.R.*`, `v.R.*`, energy, orthogonality residuals, penalized energy, body rate),
//! kept as [`Sample`]s for the figures, streamed to the output file for the example's own run
//! with the deviation from the benchmark (Cayley at `h′ = 1e-4`).

use std::cell::Cell;
use std::error::Error;
use std::path::Path;
use std::time::Instant;

use mechanism::runtime::integrators::lie_group::{
    body_rate, linearized_trapezoidal, orthogonality_residual, rotation, rotation_state,
    LieGroupEuler, LinearizedSo3, PenalizedRotation, ROTATION_COORDINATES,
};
use mechanism::runtime::model::{Inertia, Potential, RigidBody};
use mechanism::runtime::reference::MagnetizedBody;
use mechanism::runtime::simulation::{Column, Schedule, Simulation, SimulationError, Sink, Table};
use mechanism::runtime::{Integrator, State, StepError};
use nalgebra::Matrix3;

use super::{Method, BENCHMARK_H};
use crate::common::{self, Thin};

/// One row of a run: time, rotation, energies, orthogonality.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub t: f64,
    pub r: Matrix3<f64>,
    pub energy: f64,
    pub penalized_energy: f64,
    pub orthogonality: f64,
}

/// A run through the driver: its rows (the initial state first) as [`Sample`]s, the error
/// that ended it early, if any, the seconds `run()` took, and its largest energy error and
/// orthogonality residual over every step.
pub struct Run {
    pub samples: Vec<Sample>,
    pub failure: Option<StepError>,
    pub seconds: f64,
    /// `max |E − E₀|` and `max ‖RᵀR − I‖_F` over every step, whatever the schedule.
    pub worst: (f64, f64),
}

/// The columns the driver writes after `t`, `q.R.*` and `v.R.*`, in order.
const COLUMNS: [&str; 7] = [
    "energy",
    "residual.position",
    "residual.velocity",
    "energy.penalized",
    "omega.x",
    "omega.y",
    "omega.z",
];

/// Returns the rows of `table` (written with [`COLUMNS`]) as samples.
fn samples(table: &Table) -> Vec<Sample> {
    table
        .rows()
        .map(|row| {
            let (q, extra) = (&row[1..10], &row[19..]);
            Sample {
                t: row[0],
                r: Matrix3::from_row_slice(q),
                energy: extra[0],
                penalized_energy: extra[3],
                orthogonality: extra[1],
            }
        })
        .collect()
}

/// Steps `integrator` (of step `h`) `steps` times on `stepped` from the paper's initial state
/// through the driver ([`Simulation::fixed`]), writing rows at the times of `schedule` with the
/// [`COLUMNS`] of the penalized body `observed`: the energy `¼ tr(ṘᵀṘ) + V(R)`, the
/// orthogonality residuals `‖RᵀR − I‖_F` and `‖ṘᵀR + RᵀṘ‖_F` (its time derivative), the
/// penalized energy and the body rate. With `timed` it writes no columns and only the first
/// and last rows, so that the seconds are the stepping's. With a `stream` the rows also go to
/// its file while the run goes (every `--every`-th), with its reference's deviation.
pub fn simulate<I: Integrator<M, 9>, M>(
    integrator: I,
    stepped: &M,
    observed: &PenalizedRotation<MagnetizedBody>,
    (h, steps): (f64, usize),
    (schedule, timed): (Schedule, bool),
    stream: Option<&Stream>,
) -> Result<Run, Box<dyn Error>> {
    let initial = rotation_state(
        0.0,
        &Matrix3::identity(),
        &MagnetizedBody::initial_body_rate(),
    );
    // The driver stops at the first step that reaches its end time: ask for `steps · h`.
    let t_end = steps as f64 * h;
    let schedule = if timed {
        Schedule::EveryNthStep(steps.max(1))
    } else {
        schedule
    };
    let kinetic = |s: &State<9>| observed.kinetic_energy(&s.q, &s.v);
    let energy = move |s: &State<9>| kinetic(s) + observed.body.potential(&rotation(&s.q));
    let e0 = energy(&initial);
    let worst = Cell::new((0.0f64, orthogonality_residual(&rotation(&initial.q))));
    let mut run = Simulation::fixed(stepped, integrator, initial, t_end, schedule)?
        .coordinates(ROTATION_COORDINATES)?;
    if !timed {
        let rate = |s: &State<9>, i: usize| body_rate(s)[i];
        let worst = &worst;
        run = run
            .observe(Column::new(COLUMNS[0], energy))
            .observe(Column::new(COLUMNS[1], |s: &State<9>| {
                orthogonality_residual(&rotation(&s.q))
            }))
            .observe(Column::new(COLUMNS[2], |s: &State<9>| {
                let (r, dr) = (rotation(&s.q), rotation(&s.v));
                (dr.transpose() * r + r.transpose() * dr).norm()
            }))
            .observe(Column::new(COLUMNS[3], move |s: &State<9>| {
                kinetic(s) + observed.potential(&s.q)
            }))
            .observe(Column::new(COLUMNS[4], move |s: &State<9>| rate(s, 0)))
            .observe(Column::new(COLUMNS[5], move |s: &State<9>| rate(s, 1)))
            .observe(Column::new(COLUMNS[6], move |s: &State<9>| rate(s, 2)));
        if let Some(reference) = stream.map(|stream| stream.reference) {
            // The reference's row at the same time (its rows are at the times of the run's).
            let at = move |s: &State<9>| {
                let k = reference.partition_point(|b| b.t < s.t - 0.5 * h);
                deviation(&rotation(&s.q), &reference[k.min(reference.len() - 1)].r)
            };
            run = run
                .observe(Column::new("deviation.max", move |s: &State<9>| at(s).0))
                .observe(Column::new("deviation.frobenius", move |s: &State<9>| {
                    at(s).1
                }));
        }
        run = run.on_step(move |_, s| {
            let (e, o) = worst.get();
            let r = rotation(&s.q);
            worst.set((
                e.max((energy(s) - e0).abs()),
                o.max(orthogonality_residual(&r)),
            ));
        });
    }
    let file = stream
        .map(|stream| common::table_sink(stream.file))
        .transpose()?;
    let every = stream.map_or(1, |stream| stream.every);
    let mut run = run
        .interrupt_on(common::interrupt_flag())
        .write_to(Thin::new((Table::default(), file), every));
    let start = Instant::now();
    let outcome = run.run();
    let seconds = start.elapsed().as_secs_f64();
    let mut thin = run.into_output();
    thin.finish()?; // also after a failed step: the rows up to it stay readable
    let failure = match outcome.map_err(|error| common::thinned(error, thin.written())) {
        Ok(_) => None,
        Err(SimulationError::Step { source, .. }) => Some(source),
        Err(other) => match stream {
            Some(stream) => return Err(common::interrupted(&other, stream.file).into()),
            None => return Err(other.into()),
        },
    };
    let (table, _) = thin.into_inner();
    Ok(Run {
        samples: if timed { Vec::new() } else { samples(&table) },
        failure,
        seconds,
        worst: worst.get(),
    })
}

/// Where [`simulate`] streams the rows of the example's own run: the file of `--out`, the
/// stride of `--every`, and the benchmark whose deviation the last two columns are.
pub struct Stream<'a> {
    pub file: &'a Path,
    pub every: usize,
    pub reference: &'a [Sample],
}

/// Runs `method` with step `h` for `steps` steps, writing rows at the times of `schedule`
/// (see [`simulate`] for `timed` and `stream`).
pub fn run_method(
    method: Method,
    model: &PenalizedRotation<MagnetizedBody>,
    (h, beta): (f64, f64),
    steps: usize,
    (schedule, timed): (Schedule, bool),
    stream: Option<&Stream>,
) -> Result<Run, Box<dyn Error>> {
    let span = (h, steps);
    let schedule = (schedule, timed);
    match method {
        Method::Linearized => {
            let integrator = LinearizedSo3::new(h, beta)?;
            simulate(integrator, model, model, span, schedule, stream)
        }
        Method::Trapezoidal => {
            let integrator = linearized_trapezoidal(&model.body, h, beta)?;
            simulate(integrator, model, model, span, schedule, stream)
        }
        Method::Cayley => {
            let integrator = LieGroupEuler::new(h)?;
            simulate(integrator, &model.body, model, span, schedule, stream)
        }
    }
}

/// Returns the benchmark (Cayley at about `h′ = 1e-4`) of a run of `steps` steps of `h`, with
/// rows at the times of `schedule` ([`Schedule::EveryStep`]: every `h`).
pub fn benchmark(
    model: &PenalizedRotation<MagnetizedBody>,
    h: f64,
    steps: usize,
    schedule: Schedule,
) -> Result<Run, Box<dyn Error>> {
    let every = (h / BENCHMARK_H).ceil().max(1.0) as usize;
    let fine = h / every as f64;
    let schedule = match schedule {
        Schedule::EveryStep => Schedule::EveryNthStep(every),
        other => other,
    };
    let run = simulate(
        LieGroupEuler::new(fine)?,
        &model.body,
        model,
        (fine, steps * every),
        (schedule, false),
        None,
    )?;
    if let Some(error) = &run.failure {
        return Err(format!("the benchmark failed: {error}").into());
    }
    Ok(run)
}

/// Returns `(max_ij |R − R′|, ‖R − R′‖_F)`.
pub fn deviation(r: &Matrix3<f64>, reference: &Matrix3<f64>) -> (f64, f64) {
    let d = r - reference;
    (d.abs().max(), d.norm())
}
