//! The harness shared by the examples: command-line options, a simulation loop over any
//! [`Integrator`], a CSV writer and a plot of the energy error and the constraint residuals.
//!
//! An example includes it with `mod common;` and then
//!
//! 1. declares its own `--method` (a `clap::ValueEnum`, since the methods depend on what its
//!    model can feed) next to `#[command(flatten)] run: common::RunOptions`;
//! 2. builds an integrator and calls [`simulate`] with the model it steps (e.g. a
//!    [`Penalized`](mechanism::runtime::Penalized) model) and the model it observes (the hard
//!    constraints), plus method-specific [`Column`]s;
//! 3. writes the [`Trajectory`] with [`write_csv`] and [`plot`], prints [`print_summary`], and
//!    exits through [`exit_code`] so that an error is one readable line, not a panic or a
//!    `Debug` dump.
//!
//! A step that fails (a Newton iteration that diverges, a blow-up to NaN) ends the trajectory
//! early: the samples up to the failure are kept, and [`Trajectory::failure`] says why, so the
//! partial run can still be written and plotted before the example reports the error.

// Each example uses a different subset of the harness.
#![allow(dead_code)]

pub mod stabilization;

use std::error::Error;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use mechanism::runtime::{
    observers, Configuration, Holonomic, Inertia, Integrator, Potential, State, StepError,
};
use plotters::prelude::*;

/// The options every example takes besides `--method`: step size, end time and output files.
///
/// The defaults depend on the example (and on the method, for `h`), so they are `Option`s
/// resolved with [`RunOptions::h_or`], [`RunOptions::t_end_or`], [`RunOptions::csv_or`] and
/// [`RunOptions::png_or`].
#[derive(Clone, Debug, clap::Args)]
pub struct RunOptions {
    /// Step size h [default: depends on the example and the method].
    #[arg(long, allow_negative_numbers = true)]
    pub h: Option<f64>,
    /// End time [default: depends on the example].
    #[arg(long, allow_negative_numbers = true)]
    pub t_end: Option<f64>,
    /// Output CSV file, one row per step [default: out/<example>.csv].
    #[arg(long, value_name = "FILE.csv")]
    pub out: Option<PathBuf>,
    /// Output plot of energy error and constraint residuals [default: out/<example>.png].
    #[arg(long, value_name = "FILE.png")]
    pub plot: Option<PathBuf>,
}

impl RunOptions {
    /// Returns `--h`, or `default` if it was not given.
    pub fn h_or(&self, default: f64) -> f64 {
        self.h.unwrap_or(default)
    }

    /// Returns `--t-end`, or `default` if it was not given.
    pub fn t_end_or(&self, default: f64) -> f64 {
        self.t_end.unwrap_or(default)
    }

    /// Returns `--out`, or `out/<example>.csv`.
    pub fn csv_or(&self, example: &str) -> PathBuf {
        self.out
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("out/{example}.csv")))
    }

    /// Returns `--plot`, or `out/<example>.png`.
    pub fn png_or(&self, example: &str) -> PathBuf {
        self.plot
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("out/{example}.png")))
    }
}

/// Returns the least-squares slope of `ln y` against `ln x`: an observed order of convergence or
/// a scaling exponent.
pub fn loglog_slope(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len() as f64;
    let lx: Vec<f64> = x.iter().map(|v| v.ln()).collect();
    let ly: Vec<f64> = y.iter().map(|v| v.ln()).collect();
    let (mx, my) = (lx.iter().sum::<f64>() / n, ly.iter().sum::<f64>() / n);
    let sxy: f64 = lx.iter().zip(&ly).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = lx.iter().map(|a| (a - mx) * (a - mx)).sum();
    sxy / sxx
}

/// Returns the number of steps of size `h` that reach `t_end` (rounded to the nearest
/// integer), or an error if `h` or `t_end` is not usable.
pub fn step_count(h: f64, t_end: f64) -> Result<usize, Box<dyn Error>> {
    if !(h.is_finite() && h > 0.0) {
        return Err(format!("--h must be a positive number, got {h}").into());
    }
    if !(t_end.is_finite() && t_end >= 0.0) {
        return Err(format!("--t-end must be a non-negative number, got {t_end}").into());
    }
    let steps = (t_end / h).round();
    if steps > 1e9 {
        return Err(format!("t_end / h = {steps:e} steps is too many to record").into());
    }
    Ok(steps as usize)
}

/// How a [`Column`] computes its value from the integrator and the state after a step.
type ColumnFn<'a, I, const N: usize> = Box<dyn Fn(&I, &State<N>) -> f64 + 'a>;

/// A method-specific output column: its name and how to compute it from the integrator (for
/// quantities it carries, such as multipliers or a momentum) and the state after a step.
pub struct Column<'a, I, const N: usize> {
    name: String,
    value: ColumnFn<'a, I, N>,
}

impl<'a, I, const N: usize> Column<'a, I, N> {
    /// Creates a column named `name` whose value after each step is `value(integrator, state)`.
    pub fn new(name: impl Into<String>, value: impl Fn(&I, &State<N>) -> f64 + 'a) -> Self {
        Column {
            name: name.into(),
            value: Box::new(value),
        }
    }

    /// Returns the column's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// One recorded state with what is observed of it.
#[derive(Clone, Debug)]
pub struct Sample<const N: usize> {
    /// The state after the step (or the initial state).
    pub state: State<N>,
    /// The total energy `T + V` of the observed model.
    pub energy: f64,
    /// `max_i |g_i(q)|` of the observed model's holonomic constraints.
    pub position_residual: f64,
    /// `max_i |(G(q) v)_i|` of the observed model's holonomic constraints.
    pub velocity_residual: f64,
    /// The values of the method-specific columns, in the order of [`Trajectory::extra`].
    pub extra: Vec<f64>,
}

/// Why a simulation stopped before its end time.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    /// The index of the step that failed (0 for the first step).
    pub step: usize,
    /// The time the failed step started from.
    pub t: f64,
    /// The integrator's error.
    pub error: StepError,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "step {} (from t = {:.6}) failed: {}",
            self.step + 1,
            self.t,
            self.error
        )
    }
}

impl Error for Failure {}

/// A recorded run: one [`Sample`] per step, the names of the columns, and why it stopped early
/// if it did.
#[derive(Clone, Debug)]
pub struct Trajectory<const N: usize> {
    /// The coordinate names, from the model's [`Configuration::COORDINATES`].
    pub coordinates: [&'static str; N],
    /// The names of the method-specific columns.
    pub extra: Vec<String>,
    /// The initial state and the state after every successful step.
    pub samples: Vec<Sample<N>>,
    /// The failed step, if the run did not reach its end time.
    pub failure: Option<Failure>,
}

impl<const N: usize> Trajectory<N> {
    /// Returns the values of the method-specific column `name`, one per sample.
    pub fn column(&self, name: &str) -> Option<Vec<f64>> {
        let i = self.extra.iter().position(|c| c == name)?;
        Some(self.samples.iter().map(|s| s.extra[i]).collect())
    }

    /// Returns the total energy, one value per sample.
    pub fn energy(&self) -> Vec<f64> {
        self.samples.iter().map(|s| s.energy).collect()
    }

    /// Returns the time of the last sample.
    pub fn t_last(&self) -> f64 {
        self.samples.last().map_or(0.0, |s| s.state.t)
    }

    /// Returns `Err` with the failure if the run stopped early, else `Ok(())`.
    pub fn completed(&self) -> Result<(), Failure> {
        self.failure.clone().map_or(Ok(()), Err)
    }

    /// Returns the trajectory with every `every`-th sample and the last one, for writing long
    /// runs (the summaries are computed before, from every step). `every = 0` is taken as 1.
    pub fn thinned(&self, every: usize) -> Trajectory<N> {
        let every = every.max(1);
        let last = self.samples.len().saturating_sub(1);
        Trajectory {
            samples: self
                .samples
                .iter()
                .enumerate()
                .filter(|(i, _)| i % every == 0 || *i == last)
                .map(|(_, s)| s.clone())
                .collect(),
            ..self.clone()
        }
    }
}

/// Returns `max_k |x_k − x_0|`: the drift of a quantity that should be conserved.
pub fn max_deviation(values: &[f64]) -> f64 {
    let first = values.first().copied().unwrap_or(0.0);
    values.iter().fold(0.0, |m, x| m.max((x - first).abs()))
}

/// Returns `max_k |x_{k+1} − x_k|`: the largest change of a quantity over one step.
pub fn max_increment(values: &[f64]) -> f64 {
    values
        .windows(2)
        .fold(0.0, |m, w| m.max((w[1] - w[0]).abs()))
}

/// Steps `integrator` on the `stepped` model from `initial` for `steps` steps, observing the
/// `observed` model (energy, constraint residuals) and the `columns` after every step.
///
/// `stepped` and `observed` differ when the integrator runs a modified model, e.g. the
/// penalized `V + ½ω²|g|²`, while the residuals must measure the hard constraints. A failed
/// step ends the trajectory early and is recorded in [`Trajectory::failure`]; this function
/// does not panic.
pub fn simulate<I, Stepped, Observed, const N: usize, const M: usize>(
    integrator: &mut I,
    stepped: &Stepped,
    observed: &Observed,
    initial: State<N>,
    steps: usize,
    columns: &[Column<'_, I, N>],
) -> Trajectory<N>
where
    I: Integrator<Stepped, N>,
    Observed: Configuration<N> + Inertia<N> + Potential<N> + Holonomic<N, M>,
{
    let observe = |integrator: &I, state: &State<N>| Sample {
        state: *state,
        energy: observers::energy(observed, state),
        position_residual: observers::position_residual(observed, state),
        velocity_residual: observers::velocity_residual(observed, state),
        extra: columns
            .iter()
            .map(|c| (c.value)(integrator, state))
            .collect(),
    };
    let mut trajectory = Trajectory {
        coordinates: Observed::COORDINATES,
        extra: columns.iter().map(|c| c.name.clone()).collect(),
        samples: Vec::with_capacity(steps + 1),
        failure: None,
    };
    let mut state = initial;
    trajectory.samples.push(observe(integrator, &state));
    for step in 0..steps {
        if let Err(error) = integrator.step(stepped, &mut state) {
            trajectory.failure = Some(Failure {
                step,
                t: state.t,
                error,
            });
            break;
        }
        trajectory.samples.push(observe(integrator, &state));
    }
    trajectory
}

/// Steps `integrator` on `model` from `initial` for `steps` steps and returns the initial state
/// and every `every`-th state after it, without observing anything: the loop to time, or to
/// compare with a reference tabulated at fixed times.
pub fn sample<I, Model, const N: usize>(
    integrator: &mut I,
    model: &Model,
    initial: State<N>,
    steps: usize,
    every: usize,
) -> Result<Vec<State<N>>, Failure>
where
    I: Integrator<Model, N>,
{
    let every = every.max(1);
    let mut states = Vec::with_capacity(steps / every + 1);
    let mut state = initial;
    states.push(state);
    for step in 0..steps {
        integrator
            .step(model, &mut state)
            .map_err(|error| Failure {
                step,
                t: state.t,
                error,
            })?;
        if (step + 1) % every == 0 {
            states.push(state);
        }
    }
    Ok(states)
}

/// Creates the parent directory of `path` if it has one and it does not exist.
pub fn create_parent(path: &Path) -> Result<(), Box<dyn Error>> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create directory {}: {e}", dir.display()))?;
    }
    Ok(())
}

/// Writes `trajectory` to `path` as CSV, creating the directory if needed.
///
/// The header is `t`, `q.<coordinate>` for each coordinate, `v.<coordinate>` for each, then
/// `energy`, `residual.position`, `residual.velocity`, then the method-specific columns. Numbers
/// are written so that they read back to the same `f64`.
pub fn write_csv<const N: usize>(
    path: &Path,
    trajectory: &Trajectory<N>,
) -> Result<(), Box<dyn Error>> {
    create_parent(path)?;
    let mut writer = csv::Writer::from_path(path)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let mut header = vec!["t".to_string()];
    header.extend(trajectory.coordinates.iter().map(|c| format!("q.{c}")));
    header.extend(trajectory.coordinates.iter().map(|c| format!("v.{c}")));
    header.extend(["energy", "residual.position", "residual.velocity"].map(String::from));
    header.extend(trajectory.extra.iter().cloned());
    writer.write_record(&header)?;
    for sample in &trajectory.samples {
        let s = &sample.state;
        let mut record = vec![s.t];
        record.extend(s.q.iter());
        record.extend(s.v.iter());
        record.extend([
            sample.energy,
            sample.position_residual,
            sample.velocity_residual,
        ]);
        record.extend(&sample.extra);
        writer.write_record(record.iter().map(|&x| format_number(x)))?;
    }
    writer.flush()?;
    Ok(())
}

/// Formats `x` so that it reads back to the same `f64`, in scientific notation when tiny or huge.
pub fn format_number(x: f64) -> String {
    if x == 0.0 || (1e-4..1e15).contains(&x.abs()) {
        x.to_string()
    } else {
        format!("{x:e}")
    }
}

/// Draws the energy error `|E(t) − E(0)|` (top, with the deviation of every method-specific
/// `energy.*` column) and the position and velocity constraint residuals (bottom) of
/// `trajectory` against time on log axes, as a PNG at `path`.
///
/// The text uses the DejaVu Sans font embedded in the binary, so no system font is needed.
/// Exact zeros (e.g. at `t = 0`) sit on the floor of the log axis, `1e-17`.
pub fn plot<const N: usize>(
    path: &Path,
    title: &str,
    trajectory: &Trajectory<N>,
) -> Result<(), Box<dyn Error>> {
    create_parent(path)?;
    plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular())
        .map_err(|_| "the embedded DejaVu font is invalid")?;
    let root = BitMapBackend::new(path, (1000, 800)).into_drawing_area();
    root.fill(&WHITE)?;
    let (top, bottom) = root.split_vertically(400);
    let samples = &trajectory.samples;
    let t_end = trajectory.t_last().max(f64::MIN_POSITIVE);
    let floor = 1e-17;
    let log_range = |values: &mut dyn Iterator<Item = f64>| {
        let (min, max) = values
            .filter(|&y| y > floor && y.is_finite())
            .fold((f64::INFINITY, floor), |(lo, hi), y| (lo.min(y), hi.max(y)));
        (min.min(max) / 10.0).max(floor)..(max * 10.0)
    };
    let e0 = samples.first().map_or(0.0, |s| s.energy);
    let series = |f: &dyn Fn(&Sample<N>) -> f64| -> Vec<(f64, f64)> {
        samples
            .iter()
            .map(|s| (s.state.t, f(s).max(floor)))
            .collect()
    };

    let energy_error = series(&|s| (s.energy - e0).abs());
    // Other energies the method tracks (`energy.generalized`, `energy.penalized`, …).
    let other_energies: Vec<(&str, Vec<(f64, f64)>)> = trajectory
        .extra
        .iter()
        .enumerate()
        .filter(|(_, name)| name.starts_with("energy."))
        .map(|(i, name)| {
            let x0 = samples.first().map_or(0.0, |s| s.extra[i]);
            (name.as_str(), series(&|s| (s.extra[i] - x0).abs()))
        })
        .collect();
    let mut chart = ChartBuilder::on(&top)
        .caption(format!("{title}: energy error"), ("sans-serif", 22))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(70)
        .build_cartesian_2d(
            0.0..t_end,
            log_range(
                &mut energy_error
                    .iter()
                    .chain(other_energies.iter().flat_map(|(_, e)| e))
                    .map(|p| p.1),
            )
            .log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("t")
        .y_desc("|E(t) - E(0)|")
        .y_label_formatter(&|y| format!("{y:.0e}"))
        .draw()?;
    chart
        .draw_series(LineSeries::new(energy_error, &BLUE))?
        .label("energy: T + V")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLUE));
    let palette = [MAGENTA, CYAN, BLACK];
    for (k, (name, values)) in other_energies.into_iter().enumerate() {
        let color = palette[k % palette.len()];
        chart
            .draw_series(LineSeries::new(values, &color))?
            .label(name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;

    let position = series(&|s| s.position_residual);
    let velocity = series(&|s| s.velocity_residual);
    let mut chart = ChartBuilder::on(&bottom)
        .caption(
            if samples
                .iter()
                .all(|s| s.position_residual == 0.0 && s.velocity_residual == 0.0)
            {
                "constraint residuals (all zero)"
            } else {
                "constraint residuals"
            },
            ("sans-serif", 22),
        )
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(70)
        .build_cartesian_2d(
            0.0..t_end,
            log_range(&mut position.iter().chain(&velocity).map(|p| p.1)).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("t")
        .y_desc("max |residual|")
        .y_label_formatter(&|y| format!("{y:.0e}"))
        .draw()?;
    chart
        .draw_series(LineSeries::new(position, &RED))?
        .label("position: max |g_i|")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], RED));
    chart
        .draw_series(LineSeries::new(velocity, &GREEN))?
        .label("velocity: max |(G v)_i|")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], GREEN));
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(())
}

/// Prints the common summary of `trajectory`: its time span, the maximal energy error, the
/// largest relative energy change over one step, and the maximal constraint residuals.
pub fn print_summary<const N: usize>(title: &str, trajectory: &Trajectory<N>) {
    let energy = trajectory.energy();
    let e0 = energy.first().copied().unwrap_or(0.0);
    let scale = if e0 == 0.0 { 1.0 } else { e0.abs() };
    let max = |f: &dyn Fn(&Sample<N>) -> f64| trajectory.samples.iter().map(f).fold(0.0, f64::max);
    println!(
        "{title}, t = 0 … {:.6} ({} steps)",
        trajectory.t_last(),
        trajectory.samples.len().saturating_sub(1)
    );
    println!("  max |E - E0|           = {:.3e}", max_deviation(&energy));
    println!(
        "  max |E_n+1 - E_n|      = {:.3e} (relative to |E0|: {:.3e})",
        max_increment(&energy),
        max_increment(&energy) / scale
    );
    println!(
        "  max |g_i|              = {:.3e}",
        max(&|s| s.position_residual)
    );
    println!(
        "  max |(G v)_i|          = {:.3e}",
        max(&|s| s.velocity_residual)
    );
}

/// Writes the CSV and the plot of `trajectory`, prints where, and returns the trajectory's
/// failure (after writing what was computed up to it) as an error.
pub fn write_outputs<const N: usize>(
    csv: &Path,
    png: &Path,
    title: &str,
    trajectory: &Trajectory<N>,
) -> Result<(), Box<dyn Error>> {
    write_csv(csv, trajectory)?;
    plot(png, title, trajectory)?;
    println!(
        "wrote {} ({} rows) and {}",
        csv.display(),
        trajectory.samples.len(),
        png.display()
    );
    trajectory.completed()?;
    Ok(())
}

/// Turns the result of an example's `run` into its exit code, printing an error as one
/// readable line (`main` returning `Err` would print its `Debug` form).
pub fn exit_code(result: Result<(), Box<dyn Error>>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
