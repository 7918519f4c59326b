//! One run of the water example: GLA around stiff Z&Ss, SHAKE (RATTLE) or partially solved
//! Newmark through the driver, with the O–O radial distribution and the kinetic temperature
//! sampled at every step after burn-in, and its rows streamed to a file while it goes.

use std::cell::RefCell;
use std::error::Error;
use std::path::Path;
use std::time::Instant;

use mechanism::models::WaterCluster;
use mechanism::runtime::model::{SparseInertia, SparsePotential};
use mechanism::runtime::simulation::{
    family, BatchMeans, Column, Estimate, Schedule, Simulation, SimulationError, Sink,
    SparseMechanics, Table,
};
use mechanism::runtime::{
    DynState, Penalized, SparseLangevin, SparseNewmarkOneIterationStiff, SparseRattle,
    SparseZhangSkeelStiff,
};

use super::{Args, Method};
use crate::common::{self, Thin};

/// Bins of the O–O radial distribution: 0.05 Å on [2, 12] Å (EXPERIMENTS-M2 D7).
pub const BINS: usize = 200;
pub const R_MIN: f64 = 2.0;
pub const WIDTH: f64 = 0.05;
/// Batches of the batch-means errors.
pub const BATCHES: usize = 20;

/// The O–O distances histogrammed at every step after burn-in, one histogram per batch.
struct Rdf {
    pairs: usize,
    burn_in: usize,
    batch_len: usize,
    step: usize,
    counts: Vec<Vec<f64>>,
    distances: Vec<f64>,
}

impl Rdf {
    fn new(molecules: usize, steps: usize) -> Self {
        let pairs = molecules * (molecules - 1) / 2;
        let burn_in = steps / 10;
        Rdf {
            pairs,
            burn_in,
            batch_len: ((steps - burn_in) / BATCHES).max(1),
            step: 0,
            counts: vec![vec![0.0; BINS]; BATCHES],
            distances: vec![0.0; pairs],
        }
    }

    fn sample(&mut self, model: &WaterCluster, q: &[f64]) {
        self.step += 1;
        if self.step <= self.burn_in {
            return;
        }
        let batch = (self.step - self.burn_in - 1) / self.batch_len;
        if batch >= BATCHES {
            return;
        }
        model.oxygen_distances(q, &mut self.distances);
        for &r in &self.distances {
            let bin = ((r - R_MIN) / WIDTH).floor();
            if bin >= 0.0 && (bin as usize) < BINS {
                self.counts[batch][bin as usize] += 1.0;
            }
        }
    }

    /// Returns per bin the density (per Å, over all pairs) and its batch-means error.
    fn density(&self) -> Vec<(f64, f64)> {
        let norm = (self.pairs * self.batch_len) as f64 * WIDTH;
        (0..BINS)
            .map(|k| {
                let values: Vec<f64> = self.counts.iter().map(|c| c[k] / norm).collect();
                let b = values.len() as f64;
                let mean = values.iter().sum::<f64>() / b;
                let var = values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (b - 1.0);
                (mean, (var / b).sqrt())
            })
            .collect()
    }
}

/// What one run returns: its rows, RDF, wall time and the drifts of the invariants, and the
/// error that ended it early if it did (the rows up to it are kept and written).
pub struct Outcome {
    pub table: Table,
    pub rdf: Vec<(f64, f64)>,
    pub seconds: f64,
    pub last: DynState,
    /// The kinetic temperature `2⟨T⟩/(f kT)` after burn-in with its batch-means error (`f`
    /// the degrees of freedom: `9n` penalized, `6n` rigid).
    pub temperature: Estimate,
    /// The failed step (a breakdown) or the interrupt that ended the run before `t_end`.
    pub failure: Option<SimulationError>,
}

impl Outcome {
    /// Returns `Err` with the failure, naming `csv` for an interrupt, if the run ended early.
    pub fn completed(&self, csv: &Path) -> Result<(), String> {
        match &self.failure {
            None => Ok(()),
            Some(error) => Err(common::interrupted(error, csv)),
        }
    }
}

/// Runs `method` under GLA (`gamma = 0`, `temperature = 0`: deterministic) through the
/// driver, streaming the rows (every `--every`-th of `schedule`) to `csv` while it goes and
/// stopping at the [`interrupt_flag`](common::interrupt_flag). A failed step ends the run
/// early: the rows up to it are kept and written, and the error is [`Outcome::failure`]. With
/// a `plan` the run writes its checkpoints and resumes from `--resume`; a resumed run's
/// statistics (radial distribution, kinetic temperature) cover the resumed part only.
#[allow(clippy::too_many_arguments)]
pub fn simulate(
    cluster: &WaterCluster,
    start: &DynState,
    args: &Args,
    method: Method,
    (h, steps): (f64, usize),
    schedule: Schedule,
    (gamma, temperature): (f64, f64),
    csv: &Path,
    plan: Option<&common::Plan>,
) -> Result<Outcome, Box<dyn Error>> {
    let t_end = steps as f64 * h;
    let start = start.clone();
    let penalized = Penalized::new(cluster.clone(), args.omega);
    let names = family(
        &["ox", "oy", "oz", "h1x", "h1y", "h1z", "h2x", "h2y", "h2z"],
        args.n,
    );
    let rdf = RefCell::new(Rdf::new(args.n, steps));
    let dof = if method == Method::Shake { 6 } else { 9 } * args.n;
    let burn_in = steps / 10;
    let kinetic = RefCell::new((
        0usize,
        BatchMeans::new(((steps - burn_in) / BATCHES).max(1)),
    ));
    let sink = match plan {
        Some(plan) => common::plan_sink(plan)?,
        None => Some(common::table_sink(csv)?),
    };
    let every = args.run.every_or(1);
    let started = Instant::now();
    macro_rules! drive {
        ($model:expr, $inner:expr) => {{
            let model = $model;
            let gla = SparseLangevin::new(model, $inner, h, gamma, temperature, args.seed)?;
            let mut run = Simulation::sparse(model, gla, start, t_end, schedule)?
                .coordinates(names)?
                .observe(SparseMechanics::new(cluster));
            for (d, axis) in ["x", "y", "z"].into_iter().enumerate() {
                run = run.observe(Column::new(
                    format!("momentum.{axis}"),
                    move |s: &DynState| cluster.linear_momentum(&s.v)[d],
                ));
            }
            for (d, axis) in ["x", "y", "z"].into_iter().enumerate() {
                run = run.observe(Column::new(
                    format!("angular.{axis}"),
                    move |s: &DynState| cluster.angular_momentum(&s.q, &s.v)[d],
                ));
            }
            if method != Method::Shake {
                run = run.observe(Column::new("energy.penalized", |s: &DynState| {
                    penalized.kinetic_energy(&s.q, &s.v) + penalized.potential(&s.q)
                }));
            }
            let mut run = run
                .on_step(|_, s: &DynState| rdf.borrow_mut().sample(cluster, &s.q))
                .on_step(|_, s: &DynState| {
                    let (count, means) = &mut *kinetic.borrow_mut();
                    *count += 1;
                    if *count > burn_in {
                        means.push(2.0 * cluster.kinetic_energy(&s.q, &s.v) / dof as f64);
                    }
                })
                .interrupt_on(common::interrupt_flag())
                .write_to(Thin::new((Table::default(), sink), every))
                .with_progress(method.label());
            if let Some(plan) = plan {
                run = common::with_checkpoints(run, plan)?;
            }
            let failure = run.run().err();
            let last = run.state().clone();
            let mut thin = run.into_output();
            // Also after a failed step: the rows up to it stay readable.
            thin.finish()?;
            let failure = failure.map(|error| common::thinned(error, thin.written()));
            (thin.into_inner().0, last, failure)
        }};
    }
    let (table, last, failure) = match method {
        Method::ZssStiff => drive!(
            &penalized,
            SparseZhangSkeelStiff::new(&penalized, h)?.with_beta(args.beta)?
        ),
        Method::Newmark1 => drive!(
            &penalized,
            SparseNewmarkOneIterationStiff::new(&penalized, h)?.with_beta(args.beta)?
        ),
        _ => drive!(
            cluster,
            SparseRattle::new(cluster, h)?.with_tolerance(1e-10)?
        ),
    };
    let seconds = started.elapsed().as_secs_f64();
    let rdf = rdf.into_inner().density();
    let mut temperature = kinetic.into_inner().1.estimate();
    if temperature_target(gamma, temperature_kt(args)) {
        temperature.mean /= temperature_kt(args);
        temperature.error /= temperature_kt(args);
    }
    Ok(Outcome {
        table,
        rdf,
        seconds,
        last,
        temperature,
        failure,
    })
}

/// Returns the target `kT`.
pub fn temperature_kt(args: &Args) -> f64 {
    1.0 / args.inverse_temperature
}

/// Returns whether the run samples a temperature (GLA with friction).
pub fn temperature_target(gamma: f64, kt: f64) -> bool {
    gamma > 0.0 && kt > 0.0
}
