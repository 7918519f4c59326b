//! The `modes` example's outputs: the printed table, the modes' CSV and JSON, and the GIF of
//! the lowest modes.

use std::error::Error;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use mechanism::pictures::{Animation, Frame, Sketch};
use mechanism::runtime::linearization::ModeKind;
use mechanism::runtime::simulation::{Sink, Table};

use super::{Analysis, Row};

/// The angular frequency of an oscillation, else `None`.
pub(crate) fn omega(row: &Row) -> Option<f64> {
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

pub(crate) fn print(analysis: &Analysis) {
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

pub(crate) fn write_csv(path: &Path, analysis: &Analysis) -> Result<(), Box<dyn Error>> {
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

pub(crate) fn write_json(path: &Path, analysis: &Analysis) -> Result<(), Box<dyn Error>> {
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
pub(crate) fn animate(path: &Path, analysis: &Analysis) -> Result<(), Box<dyn Error>> {
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
