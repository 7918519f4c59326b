//! Where a mechanism rests and how it vibrates there (`runtime::linearization`): the static
//! equilibrium, the lowest undamped modes with their residuals, and the angle coordinates'
//! frequencies beside them where they are known in closed form; then, for the fixed-size
//! models, a run released in a mode, against its linear prediction.
//!
//! ```sh
//! cargo run --release --example modes                                   # the README's double pendulum
//! cargo run --release --example modes -- --model chain --n 20 --m 1,2 --l 0.5 --animate out/modes.gif
//! cargo run --release --example modes -- --model ladder --links 100 --out out/modes.json
//! cargo run --release --example modes -- --model top --spin 8
//! ```
//!
//! - `double_pendulum`: the README's model (`m = 1, 1`, `l = 1, √2`, `g = 1`) on the
//!   fixed-size tier (dense null-space basis), `--m`, `--l` with one or two values, `--g`;
//! - `chain`: `--n` pendula on the sparse tier (a model with families: saddle-point systems and
//!   shift-invert Lanczos), per-link `--m LIST`, `--l LIST` (one value: every link), `--g`;
//! - `ladder`: the SPOOK ladder of `--links` cells with its top rung held horizontal
//!   (`reference::HeldLadder`: hanging from one pin only its cells would fold flat), sparse;
//! - `top`: the heavy symmetric top standing upright and spinning at `--spin` about the
//!   vertical, linearized in the co-rotating frame; stable exactly above the sleeping-top
//!   threshold `Ω² = 4 m g l I₁ / I₃²`.
//!
//! Outputs: the modes' table `--csv` (default `out/modes.csv`: `mode`, `eigenvalue` = `ω²`,
//! `omega`, `kind`, `residual`, `reference.omega`); with `--out FILE.json` the ascending
//! angular frequencies and residuals as `{"omega": [...], "residuals": [...]}`; for the planar
//! models `--animate FILE.gif`: each of the lowest modes (up to 4) oscillating for two of its
//! periods, `q = q* + a φ sin(ω t)`, the time stamp counting periods.
//!
//! The release run (double pendulum and top; `--method rattle|spook`, `--h`, `--t-end`,
//! `--save-every`, `--every`, `--plot`, `--checkpoint`): the double pendulum started at rest
//! position with the velocity `a ω φ` of mode `--mode K` (amplitude `a` = `--amplitude` times
//! the pendulum's length over `φ`'s largest entry), for ten of its periods by default, with
//! the column `linear.deviation` = `max |q − q* − a φ sin ωt| / a`, which stays `O(a)`; the
//! top spinning at `--spin` tilted by `--amplitude` rad, for ten turns, with the column `tilt`
//! (`√(R₁₃² + R₂₃²)`), which grows as `e^{rate t}` below the threshold and stays small above
//! it. The rows go to `--out FILE.csv` (or `.parquet`; default `out/modes_release.csv`) and the
//! plot to `out/modes_release.png`.

use mechanism_examples as common;

#[path = "modes/outputs.rs"]
mod outputs;

use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use common::{cli, Column, RunOptions};
use mechanism::models::{matrix_state, DoublePendulum, HeavyTopMatrix, VariedPendulumChain};
use mechanism::pictures::Frame;
use mechanism::runtime::checkpoint::ModelIdentity;
use mechanism::runtime::linearization::{
    equilibrium, sparse_equilibrium, sparse_modes, EquilibriumSettings, Linearization,
    LinearizationError, ModeKind, SparseLinearizable, SparseModeSettings, SteadyLinearization,
    SteadyMotion,
};
use mechanism::runtime::reference::{HangingChain, HeldLadder, SpookLadder};
use mechanism::runtime::{
    Configuration, Holonomic, Inertia, Integrator, Potential, Rattle, SMatrix, SVector, Spook,
    State,
};
use outputs::{animate, omega, print, write_csv, write_json};

/// Which mechanism to analyse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Model {
    /// The README's double pendulum (fixed-size tier).
    #[value(name = "double_pendulum")]
    DoublePendulum,
    /// A chain of `--n` pendula (sparse tier).
    Chain,
    /// The held SPOOK ladder of `--links` cells (sparse tier).
    Ladder,
    /// The heavy symmetric top spinning upright at `--spin`.
    Top,
}

/// The integrator of the release run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Method {
    /// RATTLE (Andersen 1983).
    Rattle,
    /// SPOOK (Lacoursière 2007).
    Spook,
}

/// Finds a mechanism's rest and its lowest modes; prints, writes JSON, CSV and a GIF; runs a
/// motion released in a mode (fixed-size models).
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// The mechanism.
    #[arg(long, value_enum, default_value_t = Model::DoublePendulum)]
    model: Model,
    /// The chain's number of pendula.
    #[arg(long, default_value_t = 10, value_parser = cli::count, allow_negative_numbers = true)]
    n: usize,
    /// The bobs' masses, root first, comma separated; one value sets every bob.
    #[arg(long, value_delimiter = ',', value_parser = cli::positive, allow_negative_numbers = true)]
    m: Vec<f64>,
    /// The rods' lengths, root first, comma separated; one value sets every rod.
    #[arg(long, value_delimiter = ',', value_parser = cli::positive, allow_negative_numbers = true)]
    l: Vec<f64>,
    /// The gravitational acceleration (default: the model's).
    #[arg(long, value_parser = cli::positive, allow_negative_numbers = true)]
    g: Option<f64>,
    /// The held ladder's number of cells.
    #[arg(long, default_value_t = 5, value_parser = cli::count, allow_negative_numbers = true)]
    links: usize,
    /// How many of the lowest modes the sparse models compute.
    #[arg(long, default_value_t = 10, value_parser = cli::count, allow_negative_numbers = true)]
    count: usize,
    /// The top's spin about the vertical, rad per unit time (default: twice the threshold).
    #[arg(long, allow_negative_numbers = true)]
    spin: Option<f64>,
    /// The modes' table.
    #[arg(long, value_name = "FILE.csv", default_value = "out/modes.csv", value_parser = cli::output)]
    csv: PathBuf,
    /// The integrator of the release run (double pendulum and top).
    #[arg(long, value_enum, default_value_t = Method::Rattle)]
    method: Method,
    /// The mode the double pendulum's run is released in (1: the lowest).
    #[arg(long, default_value_t = 1, value_parser = cli::count, allow_negative_numbers = true)]
    mode: usize,
    /// The release's amplitude: of the double pendulum's mode, relative to its length; of
    /// the top's tilt, in radians.
    #[arg(long, default_value_t = 1e-3, value_parser = cli::positive, allow_negative_numbers = true)]
    amplitude: f64,
    /// --out FILE.json writes the frequencies and residuals as JSON; --animate the lowest
    /// modes; any other --out is the release run's table.
    #[command(flatten)]
    run: RunOptions,
}

/// One mode as the example reports it.
struct Row {
    eigenvalue: f64,
    kind: ModeKind,
    /// The mode's relative residual (none for the top's eigenvalues).
    residual: Option<f64>,
    reference: Option<f64>,
    shape: Vec<f64>,
}

/// Draws a configuration `q` into a frame.
type Drawing = Box<dyn Fn(&[f64], &mut Frame)>;

/// What an analysis found: the rest, the modes, and how to draw a configuration (planar).
struct Analysis {
    title: String,
    rest: Vec<f64>,
    rows: Vec<Row>,
    /// A displacement of the drawing's size, for the animation's amplitude.
    size: f64,
    draw: Option<Drawing>,
}

fn main() -> ExitCode {
    common::exit_code(run(common::cli::parse::<Args>()))
}

/// Where `--out` goes: a `.json` path is the modes' JSON, anything else the release run's rows.
fn json_path(args: &Args) -> Option<&Path> {
    args.run
        .out
        .as_deref()
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
}

fn run(args: Args) -> Result<(), Box<dyn Error>> {
    let fixed_size = matches!(args.model, Model::DoublePendulum | Model::Top);
    if !fixed_size {
        refuse_release(&args)?;
    }
    if args.model == Model::Top {
        args.run
            .refuse_motion("modes", "the top moves in space, not in a plane")?;
    }
    let analysis = match args.model {
        Model::DoublePendulum => double_pendulum(&args)?,
        Model::Chain => chain(&args)?,
        Model::Ladder => ladder(&args)?,
        Model::Top => top(&args)?,
    };
    print(&analysis);
    write_csv(&args.csv, &analysis)?;
    println!("wrote {}", args.csv.display());
    if let Some(path) = json_path(&args) {
        write_json(path, &analysis)?;
        println!("wrote {}", path.display());
    }
    if let Some(path) = &args.run.animate {
        animate(path, &analysis)?;
    }
    match args.model {
        Model::DoublePendulum => release_double_pendulum(&args, &analysis),
        Model::Top => release_top(&args),
        Model::Chain | Model::Ladder => Ok(()),
    }
}

/// Refuses the release run's options for a model without one (the sparse models).
fn refuse_release(args: &Args) -> Result<(), Box<dyn Error>> {
    let run = &args.run;
    let given = [
        (run.h.is_some(), "--h"),
        (run.t_end.is_some(), "--t-end"),
        (run.save_every.is_some(), "--save-every"),
        (run.every.is_some(), "--every"),
        (run.plot.is_some(), "--plot"),
        (run.paths.is_some(), "--paths"),
        (
            run.out.is_some() && json_path(args).is_none(),
            "--out (other than FILE.json)",
        ),
    ];
    if let Some((_, option)) = given.iter().find(|(set, _)| *set) {
        return Err(format!(
            "{option} is for the release run, which the double pendulum and the top have; \
             the sparse models' modes are computed, not run"
        )
        .into());
    }
    run.refuse_checkpoints("the sparse models' modes", "there is no run to checkpoint")
}

/// Expands a `--m` or `--l` list to `n` values: empty gives the model's `default`, one value
/// sets all.
fn per_link(name: &str, values: &[f64], n: usize, default: f64) -> Result<Vec<f64>, String> {
    match values.len() {
        0 => Ok(vec![default; n]),
        1 => Ok(vec![values[0]; n]),
        k if k == n => Ok(values.to_vec()),
        k => Err(format!(
            "--{name} has {k} values for {n} links; give one or {n}"
        )),
    }
}

/// The frequencies of a hanging chain in its angle coordinates, ascending.
fn angle_frequencies(masses: &[f64], lengths: &[f64], g: f64) -> Vec<f64> {
    HangingChain::new(masses.to_vec(), lengths.to_vec(), g)
        .map(|chain| chain.angle_modes().0.iter().map(|w2| w2.sqrt()).collect())
        .unwrap_or_default()
}

/// Draws bobs at `q = (x₀, y₀, x₁, y₁, …)` hanging from the origin.
fn draw_bobs(q: &[f64], frame: &mut Frame) {
    frame.anchor((0.0, 0.0));
    let mut previous = (0.0, 0.0);
    for bob in q.chunks_exact(2) {
        let here = (bob[0], bob[1]);
        frame.link(previous, here).body(here);
        previous = here;
    }
}

/// The double pendulum of `--m`, `--l`, `--g` (defaults: the README's), with its masses and
/// lengths.
fn double_pendulum_model(args: &Args) -> Result<(DoublePendulum, Vec<f64>, Vec<f64>), String> {
    let defaults = DoublePendulum::default();
    let masses = per_link("m", &args.m, 2, defaults.m1)?;
    let mut lengths = per_link("l", &args.l, 2, defaults.l1)?;
    if args.l.is_empty() {
        lengths[1] = defaults.l2;
    }
    let model = DoublePendulum {
        m1: masses[0],
        m2: masses[1],
        l1: lengths[0],
        l2: lengths[1],
        g: args.g.unwrap_or(defaults.g),
    };
    Ok((model, masses, lengths))
}

fn double_pendulum(args: &Args) -> Result<Analysis, Box<dyn Error>> {
    let (model, masses, lengths) = double_pendulum_model(args)?;
    let g = model.g;
    // A guess off the rest: both rods 0.3 rad from the vertical.
    let chain = HangingChain::new(masses.clone(), lengths.clone(), g).ok_or("a bad chain")?;
    let guess = SVector::<f64, 4>::from_column_slice(&chain.configuration(&[0.3, -0.3]));
    let rest = equilibrium::<_, 4, 2>(&model, &guess, &EquilibriumSettings::default())?;
    let modes = Linearization::at(&model, &rest)?.modes()?;
    let reference = angle_frequencies(&masses, &lengths, g);
    let rows = modes
        .modes
        .iter()
        .zip(&reference)
        .map(|(mode, reference)| Row {
            eigenvalue: mode.eigenvalue,
            kind: mode.kind,
            residual: Some(mode.residual),
            reference: Some(*reference),
            shape: mode.shape.as_slice().to_vec(),
        })
        .collect();
    Ok(Analysis {
        title: format!(
            "double pendulum, m = {:?}, l = {:?}, g = {g}: rest found in {} iterations (residual {:.1e})",
            masses, lengths, rest.iterations, rest.residual
        ),
        rest: rest.q.as_slice().to_vec(),
        rows,
        size: lengths.iter().sum(),
        draw: Some(Box::new(draw_bobs)),
    })
}

/// The rest of a sparse model from `guess` and its lowest `count` modes, with the angle
/// frequencies `reference` beside them if known.
fn sparse<S: SparseLinearizable>(
    model: &S,
    guess: &[f64],
    count: usize,
    reference: Option<Vec<f64>>,
) -> Result<(Vec<f64>, Vec<Row>, String), LinearizationError> {
    let settings = EquilibriumSettings {
        tolerance: 1e-10,
        ..EquilibriumSettings::default()
    };
    let rest = sparse_equilibrium(model, guess, &settings)?;
    let modes = sparse_modes(
        model,
        &rest,
        &SparseModeSettings {
            count,
            ..SparseModeSettings::default()
        },
    )?;
    let rows = modes
        .modes
        .into_iter()
        .enumerate()
        .map(|(k, mode)| Row {
            eigenvalue: mode.eigenvalue,
            kind: mode.kind,
            residual: Some(mode.residual),
            reference: reference.as_ref().and_then(|r| r.get(k).copied()),
            shape: mode.shape,
        })
        .collect();
    let found = format!(
        "rest found in {} iterations (residual {:.1e}, {:?})",
        rest.iterations, rest.residual, rest.stability
    );
    Ok((rest.q, rows, found))
}

fn chain(args: &Args) -> Result<Analysis, Box<dyn Error>> {
    let n = args.n;
    let mut model = VariedPendulumChain::new(n)?;
    let masses = per_link("m", &args.m, n, 1.0)?;
    let lengths = per_link("l", &args.l, n, model.l[0])?;
    let g = args.g.unwrap_or(model.g);
    model.m.copy_from_slice(&masses);
    model.l.copy_from_slice(&lengths);
    model.g = g;
    let reference = HangingChain::new(masses.clone(), lengths.clone(), g).ok_or("a bad chain")?;
    // A guess off the rest: the rods 0.05 rad from the vertical, in a wave.
    let angles: Vec<f64> = (0..n).map(|i| 0.05 * (0.37 * i as f64).sin()).collect();
    let frequencies = angle_frequencies(&masses, &lengths, g);
    let (rest, rows, found) = sparse(
        &model,
        &reference.configuration(&angles),
        args.count,
        Some(frequencies),
    )?;
    Ok(Analysis {
        title: format!("chain of {n} pendula (g = {g}): {found}"),
        rest,
        rows,
        size: lengths.iter().sum(),
        draw: Some(Box::new(draw_bobs)),
    })
}

fn ladder(args: &Args) -> Result<Analysis, Box<dyn Error>> {
    let ladder = HeldLadder::new(SpookLadder::new(args.links));
    let rest = ladder.rest();
    // A guess off the rest: every coordinate moved by up to 0.01.
    let guess: Vec<f64> = rest
        .iter()
        .enumerate()
        .map(|(i, x)| x + 0.01 * (0.7 * i as f64).sin())
        .collect();
    let (rest, rows, found) = sparse(&ladder, &guess, args.count, None)?;
    let length = ladder.ladder().length;
    Ok(Analysis {
        title: format!("held ladder of {} cells: {found}", args.links),
        rest,
        rows,
        size: length * args.links as f64,
        draw: Some(Box::new(move |q: &[f64], frame: &mut Frame| {
            frame.anchor((0.0, 0.0));
            for rod in q.chunks_exact(4) {
                let (x, y, ux, uy) = (rod[0], rod[1], rod[2], rod[3]);
                let h = 0.5 * length;
                frame.link((x - h * ux, y - h * uy), (x + h * ux, y + h * uy));
            }
        })),
    })
}

/// The generator of `R ↦ exp(θ ẑ) R`, a turn about the vertical, on the nine entries of `R`
/// row by row: `(ẑ R)_0j = −R_1j`, `(ẑ R)_1j = R_0j`.
fn vertical_turn() -> SMatrix<f64, 9, 9> {
    let mut s = SMatrix::<f64, 9, 9>::zeros();
    for j in 0..3 {
        s[(j, 3 + j)] = -1.0;
        s[(3 + j, j)] = 1.0;
    }
    s
}

fn top(args: &Args) -> Result<Analysis, Box<dyn Error>> {
    let top = HeavyTopMatrix::default();
    let critical = top_threshold(&top);
    let rate = args.spin.unwrap_or(2.0 * critical);
    if !rate.is_finite() {
        return Err(format!("--spin must be finite, got {rate}").into());
    }
    let upright =
        SVector::<f64, 9>::from_column_slice(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
    let motion = SteadyMotion {
        generator: vertical_turn(),
        rate,
    };
    let linear = SteadyLinearization::<9, 6>::at(&top, &upright, &motion, 0.0, 1e-12)?;
    let stability = linear.stability()?;
    // The co-rotating frame's eigenvalues: frequencies of oscillations, growth rates, zeros.
    let eigenvalues = linear.eigenvalues()?;
    let scale = eigenvalues.iter().fold(0.0f64, |a, s| a.max(s.norm()));
    let mut rows: Vec<Row> = eigenvalues
        .into_iter()
        // One of each conjugate pair, and of each ±s the growing one (a decaying partner of an
        // unstable pair is not a mode of its own).
        .filter(|s| s.im >= 0.0 && s.re >= -1e-6 * scale)
        .map(|s| Row {
            eigenvalue: -(s * s).re,
            kind: if s.norm() <= 1e-6 * scale {
                ModeKind::Zero
            } else if s.re > 1e-6 * scale {
                ModeKind::Unstable { rate: s.re }
            } else {
                ModeKind::Oscillation { omega: s.im }
            },
            residual: None,
            reference: None,
            shape: Vec::new(),
        })
        .collect();
    rows.sort_by(|a, b| a.eigenvalue.total_cmp(&b.eigenvalue));
    Ok(Analysis {
        title: format!(
            "heavy top (I₁ = {}, I₃ = {}, mgl = {}) upright, spinning at Ω = {rate}: {stability:?} \
             (the sleeping-top threshold 2√(mgl I₁)/I₃ = {critical:.6}; frequencies in the frame \
             turning with it)",
            top.i1, top.i3, top.mgl
        ),
        rest: upright.as_slice().to_vec(),
        rows,
        size: 1.0,
        draw: None,
    })
}

/// Runs the double pendulum released at its rest with the velocity `a ω φ` of mode `--mode`,
/// with the column `linear.deviation` (see the module docs), and writes its rows and plot.
fn release_double_pendulum(args: &Args, analysis: &Analysis) -> Result<(), Box<dyn Error>> {
    let (model, _, lengths) = double_pendulum_model(args)?;
    let row = analysis.rows.get(args.mode - 1).ok_or_else(|| {
        format!(
            "--mode {} of a model with {} modes",
            args.mode,
            analysis.rows.len()
        )
    })?;
    let omega = omega(row).ok_or("the released mode does not oscillate")?;
    let largest = row.shape.iter().fold(0.0f64, |a, x| a.max(x.abs()));
    let size: f64 = lengths.iter().sum();
    let amplitude = args.amplitude * size / largest;
    let shape = SVector::<f64, 4>::from_column_slice(&row.shape);
    let rest = SVector::<f64, 4>::from_column_slice(&analysis.rest);
    let initial = State::new(0.0, rest.into(), (shape * (amplitude * omega)).into());
    let period = std::f64::consts::TAU / omega;
    let (h, t_end) = (
        args.run.h_or(period / 400.0),
        args.run.t_end_or(10.0 * period),
    );
    let deviation = move |s: &State<4>| {
        let linear = rest + shape * (amplitude * (omega * s.t).sin());
        (s.q - linear).amax() / amplitude
    };
    let title = format!(
        "double pendulum in mode {} (ω = {omega:.4}, a = {amplitude:.1e}), {:?}, h = {h:.4}",
        args.mode, args.method
    );
    release::<_, 4, 2>(
        args,
        &model,
        initial,
        (h, t_end),
        &title,
        ("linear.deviation", deviation),
    )
}

/// Runs the top spinning at `--spin` about the vertical, tilted by `--amplitude` rad, for ten
/// turns, with the column `tilt`, and writes its rows and plot.
fn release_top(args: &Args) -> Result<(), Box<dyn Error>> {
    let top = HeavyTopMatrix::default();
    let rate = args.spin.unwrap_or(2.0 * top_threshold(&top));
    let a = args.amplitude;
    let tilted = [
        [1.0, 0.0, 0.0],
        [0.0, a.cos(), -a.sin()],
        [0.0, a.sin(), a.cos()],
    ];
    let initial = matrix_state(tilted, [0.0, 0.0, rate]);
    let turn = std::f64::consts::TAU / rate.abs().max(1e-3);
    let (h, t_end) = (args.run.h_or(turn / 400.0), args.run.t_end_or(10.0 * turn));
    let tilt = |s: &State<9>| s.q[2].hypot(s.q[5]);
    let title = format!(
        "top spinning at Ω = {rate:.4}, tilted {a:.1e} rad, {:?}, h = {h:.2e}",
        args.method
    );
    release::<_, 9, 6>(args, &top, initial, (h, t_end), &title, ("tilt", tilt))
}

/// Runs `model` from `initial` with `--method` for `t_end` in steps of `h` through the shared
/// harness (rows streamed to `--out` or `out/modes_release.csv`, with the extra column
/// `column`), and writes its summary, rows and plot.
fn release<Model, const N: usize, const M: usize>(
    args: &Args,
    model: &Model,
    initial: State<N>,
    (h, t_end): (f64, f64),
    title: &str,
    (name, column): (&'static str, impl Fn(&State<N>) -> f64 + Copy),
) -> Result<(), Box<dyn Error>>
where
    Model: ModelIdentity + Configuration<N> + Inertia<N> + Potential<N> + Holonomic<N, M>,
    Rattle<N, M>: Integrator<Model, N>,
    Spook<N, M>: Integrator<Model, N>,
{
    let file = "modes_release";
    let plan = args.run.plan(h, t_end)?.stream_to(args.run.csv_or(file));
    let trajectory = match args.method {
        Method::Rattle => common::simulate(
            Rattle::<N, M>::new(h)?,
            model,
            model,
            initial,
            &plan,
            [Column::new(name, move |_: &Rattle<N, M>, s: &State<N>| {
                column(s)
            })],
        )?,
        Method::Spook => common::simulate(
            Spook::<N, M>::new(h)?,
            model,
            model,
            initial,
            &plan,
            [Column::new(name, move |_: &Spook<N, M>, s: &State<N>| {
                column(s)
            })],
        )?,
    };
    common::print_summary(title, &trajectory);
    common::write_outputs(
        &args.run.csv_or(file),
        &args.run.png_or(file),
        title,
        &trajectory,
        &trajectory.table,
    )
}

/// The sleeping-top threshold `2 √(m g l I₁) / I₃`.
fn top_threshold(top: &HeavyTopMatrix) -> f64 {
    2.0 * (top.mgl * top.i1).sqrt() / top.i3
}
