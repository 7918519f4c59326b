//! Where a mechanism rests and how it vibrates there (`runtime::linearization`): the static
//! equilibrium, the lowest undamped modes with their residuals, and the angle coordinates'
//! frequencies beside them where they are known in closed form.
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
//! Writes `--out FILE.json` as `{"omega": [ascending angular frequencies], "residuals": [...]}`,
//! the table `--csv` (default `out/modes.csv`: `mode`, `eigenvalue` = `ω²`, `omega`, `kind`,
//! `residual`, `reference.omega`) and, for the planar models, `--animate FILE.gif`: each of the
//! lowest modes (up to 4) oscillating for two of its periods, `q = q* + a φ sin(ω t)`, the time
//! stamp counting periods.

use mechanism_examples as common;

use std::error::Error;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use common::cli;
use mechanism::models::{DoublePendulum, HeavyTopMatrix, VariedPendulumChain};
use mechanism::pictures::{Animation, Frame, Sketch};
use mechanism::runtime::linearization::{
    equilibrium, sparse_equilibrium, sparse_modes, EquilibriumSettings, Linearization,
    LinearizationError, ModeKind, SparseLinearizable, SparseModeSettings, SteadyLinearization,
    SteadyMotion,
};
use mechanism::runtime::reference::{HangingChain, HeldLadder, SpookLadder};
use mechanism::runtime::simulation::{Sink, Table};
use mechanism::runtime::{SMatrix, SVector};

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

/// Finds a mechanism's rest and its lowest modes; prints, writes JSON, CSV and a GIF.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// The mechanism.
    #[arg(long, value_enum, default_value_t = Model::DoublePendulum)]
    model: Model,
    /// The chain's number of pendula.
    #[arg(long, default_value_t = 10, value_parser = cli::count)]
    n: usize,
    /// The bobs' masses, root first, comma separated; one value sets every bob.
    #[arg(long, value_delimiter = ',', value_parser = cli::positive)]
    m: Vec<f64>,
    /// The rods' lengths, root first, comma separated; one value sets every rod.
    #[arg(long, value_delimiter = ',', value_parser = cli::positive)]
    l: Vec<f64>,
    /// The gravitational acceleration (default: the model's).
    #[arg(long, value_parser = cli::positive)]
    g: Option<f64>,
    /// The held ladder's number of cells.
    #[arg(long, default_value_t = 5, value_parser = cli::count)]
    links: usize,
    /// How many of the lowest modes the sparse models compute.
    #[arg(long, default_value_t = 10, value_parser = cli::count)]
    count: usize,
    /// The top's spin about the vertical, rad per unit time (default: twice the threshold).
    #[arg(long)]
    spin: Option<f64>,
    /// Write the ascending angular frequencies and the residuals as JSON.
    #[arg(long, value_name = "FILE.json", value_parser = cli::output)]
    out: Option<PathBuf>,
    /// The modes' table.
    #[arg(long, value_name = "FILE.csv", default_value = "out/modes.csv", value_parser = cli::output)]
    csv: PathBuf,
    /// Animate the lowest modes (planar models).
    #[arg(long, value_name = "FILE.gif", value_parser = cli::output)]
    animate: Option<PathBuf>,
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

fn run(args: Args) -> Result<(), Box<dyn Error>> {
    if args.model == Model::Top && args.animate.is_some() {
        return Err("--animate is for planar models; the top moves in space".into());
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
    if let Some(path) = &args.out {
        write_json(path, &analysis)?;
        println!("wrote {}", path.display());
    }
    if let Some(path) = &args.animate {
        animate(path, &analysis)?;
    }
    Ok(())
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

fn double_pendulum(args: &Args) -> Result<Analysis, Box<dyn Error>> {
    let defaults = DoublePendulum::default();
    let masses = per_link("m", &args.m, 2, defaults.m1)?;
    let mut lengths = per_link("l", &args.l, 2, defaults.l1)?;
    if args.l.is_empty() {
        lengths[1] = defaults.l2;
    }
    let g = args.g.unwrap_or(defaults.g);
    let model = DoublePendulum {
        m1: masses[0],
        m2: masses[1],
        l1: lengths[0],
        l2: lengths[1],
        g,
    };
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
    let critical = 2.0 * (top.mgl * top.i1).sqrt() / top.i3;
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

/// The angular frequency of an oscillation, else `None`.
fn omega(row: &Row) -> Option<f64> {
    match row.kind {
        ModeKind::Oscillation { omega } => Some(omega),
        _ => None,
    }
}

fn kind_name(kind: ModeKind) -> &'static str {
    match kind {
        ModeKind::Oscillation { .. } => "oscillation",
        ModeKind::Zero => "zero",
        ModeKind::Unstable { .. } => "unstable",
    }
}

fn print(analysis: &Analysis) {
    println!("{}", analysis.title);
    println!(
        "{:>5} {:>14} {:>16} {:>16} {:>10}",
        "mode", "omega", "angle coords", "relative diff", "residual"
    );
    for (k, row) in analysis.rows.iter().enumerate() {
        let omega = omega(row);
        let shown = match row.kind {
            ModeKind::Oscillation { omega } => format!("{omega:.10}"),
            ModeKind::Unstable { rate } => format!("grows {rate:.6}"),
            ModeKind::Zero => "zero".to_string(),
        };
        let (reference, difference) = match (omega, row.reference) {
            (Some(w), Some(r)) => (format!("{r:.10}"), format!("{:.1e}", (w - r).abs() / r)),
            _ => (String::new(), String::new()),
        };
        let residual = row.residual.map_or(String::new(), |r| format!("{r:.1e}"));
        println!(
            "{:>5} {shown:>14} {reference:>16} {difference:>16} {residual:>10}",
            k + 1
        );
    }
}

fn write_csv(path: &Path, analysis: &Analysis) -> Result<(), Box<dyn Error>> {
    let mut text = String::from("mode,eigenvalue,omega,kind,residual,reference.omega\n");
    for (k, row) in analysis.rows.iter().enumerate() {
        let omega = omega(row).map_or(String::new(), |w| format!("{w:e}"));
        let reference = row.reference.map_or(String::new(), |r| format!("{r:e}"));
        let residual = row.residual.map_or(String::new(), |r| format!("{r:e}"));
        writeln!(
            text,
            "{},{:e},{omega},{},{residual},{reference}",
            k + 1,
            row.eigenvalue,
            kind_name(row.kind)
        )?;
    }
    write_file(path, &text)
}

fn write_json(path: &Path, analysis: &Analysis) -> Result<(), Box<dyn Error>> {
    let oscillations: Vec<&Row> = analysis
        .rows
        .iter()
        .filter(|r| omega(r).is_some())
        .collect();
    let json = serde_json::json!({
        "omega": oscillations.iter().filter_map(|r| omega(r)).collect::<Vec<f64>>(),
        "residuals": oscillations.iter().map(|r| r.residual).collect::<Vec<Option<f64>>>(),
    });
    write_file(path, &serde_json::to_string_pretty(&json)?)
}

fn write_file(path: &Path, text: &str) -> Result<(), Box<dyn Error>> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir)?;
    }
    fs::write(path, text)?;
    Ok(())
}

/// Frames per period of each animated mode.
const FRAMES_PER_PERIOD: usize = 30;

/// Writes each of the lowest (up to 4) oscillating modes for two of its periods,
/// `q* + a φ sin(2π s)` with `s` in periods, `a` a tenth of the drawing's size over `φ`'s
/// largest displacement.
fn animate(path: &Path, analysis: &Analysis) -> Result<(), Box<dyn Error>> {
    let Some(draw) = &analysis.draw else {
        return Err("--animate is for planar models; the top moves in space".into());
    };
    let n = analysis.rest.len();
    let mut columns = vec!["t".to_string()];
    columns.extend((0..n).map(|i| format!("q.{i}")));
    let mut table = Table::default();
    table.begin(&columns, None)?;
    let modes: Vec<&Row> = analysis
        .rows
        .iter()
        .filter(|r| omega(r).is_some())
        .take(4)
        .collect();
    let mut row = vec![0.0; n + 1];
    for (k, mode) in modes.iter().enumerate() {
        let largest = mode.shape.iter().fold(0.0f64, |a, x| a.max(x.abs()));
        let amplitude = 0.1 * analysis.size / largest.max(f64::MIN_POSITIVE);
        for frame in 0..2 * FRAMES_PER_PERIOD {
            let s = frame as f64 / FRAMES_PER_PERIOD as f64;
            row[0] = 2.0 * k as f64 + s;
            let phase = (2.0 * std::f64::consts::PI * s).sin();
            for (i, value) in row[1..].iter_mut().enumerate() {
                *value = analysis.rest[i] + amplitude * phase * mode.shape[i];
            }
            Sink::row(&mut table, &row)?;
        }
    }
    let scene = Sketch::new(|_t: f64, q: &[f64], frame: &mut Frame| draw(q, frame));
    let summary = Animation::new(format!(
        "the lowest {} modes, two periods each (t in periods)",
        modes.len()
    ))
    .interval(1.0 / FRAMES_PER_PERIOD as f64)
    .write(path, &table, &scene)?;
    println!("wrote {}: {summary}", path.display());
    Ok(())
}
