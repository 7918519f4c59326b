//! Fig. 6 of Tao–Owhadi (2014) §4.3: energy, total linear momentum and total angular momentum
//! of the deterministic runs (γ = 0, no noise) of stiff Z&Ss, SHAKE and the partially solved
//! Newmark, with rows every 20 steps (the paper's "20:1 downsample rate").
//!
//! "Partially solved Newmark" is Newmark's eq. 12 (γ = ½, β = `--beta`) with one Newton
//! iteration per step (EXPERIMENTS-M2 §D.2). Its Jacobian is the one stiff Z&Ss factors,
//! `M + βh² Hess(½ω²|g|²)`, block-diagonal per molecule, so that both cost one block solve per
//! step and differ only in the scheme (`SparseNewmarkOneIterationStiff`). The energy of the
//! penalized runs is that of the penalized cluster, `T + V + ½ω²|g|²`.

use std::error::Error;
use std::path::PathBuf;

use mechanism::models::WaterCluster;
use mechanism::pictures::{draw_panels, Panel, Scale, Series};
use mechanism::runtime::simulation::{Schedule, SimulationError, Table};
use mechanism::runtime::DynState;

use super::{report_invariants, simulate, Args, Method};

/// Rows every this many steps, as the paper's Fig. 6.
const DOWNSAMPLE: usize = 20;

/// Runs `methods` deterministically for `t_end`, writes their CSVs, prints their drifts and
/// draws the three invariants' deviations to `out/water_invariants.png` (or `--plot`).
///
/// A method that breaks down (stiff Z&Ss at `n = 100`: `M + βh² ε⁻¹ Hess V1` loses its
/// definiteness at t ≈ 212) is a result of the figure, not a failure of the example: its line
/// says when and why, its curve stops there, and the other methods run. Only a single
/// `--method` (the user's own run) or an interrupt ends the figure with an error.
pub fn figure(
    cluster: &WaterCluster,
    start: &DynState,
    args: &Args,
    methods: &[Method],
    h: f64,
    t_end: f64,
) -> Result<(), Box<dyn Error>> {
    let steps = crate::common::step_count(h, t_end)?;
    println!(
        "\n## Fig. 6: deterministic runs (γ = 0), n = {}, T = {t_end}, rows every {DOWNSAMPLE} steps\n",
        args.n
    );
    let mut curves = Vec::new();
    for &method in methods {
        let csv = if methods.len() == 1 {
            args.run.csv_or(&format!("{}_deterministic", method.file()))
        } else {
            PathBuf::from(format!("out/{}_deterministic.csv", method.file()))
        };
        let outcome = simulate(
            cluster,
            start,
            args,
            method,
            (h, steps),
            Schedule::EveryNthStep(DOWNSAMPLE),
            (0.0, 0.0),
            &csv,
            None,
        )?;
        match &outcome.failure {
            None => println!(
                "{}: {steps} steps in {:.2} s; wrote {}",
                method.label(),
                outcome.seconds,
                csv.display()
            ),
            Some(error)
                if methods.len() > 1 && !matches!(error, SimulationError::Interrupted { .. }) =>
            {
                println!(
                    "{}: broke down at t = {:.2}: {}; wrote {} up to it",
                    method.label(),
                    outcome.last.t,
                    breakdown(error),
                    csv.display()
                )
            }
            Some(_) => outcome.completed(&csv)?,
        }
        report_invariants(&outcome.table);
        curves.push((method, deviations(&outcome.table)));
    }
    let titles = [
        "|E − E(0)| (penalized energy for Z&Ss and Newmark)",
        "|P − P(0)|, total linear momentum",
        "|L − L(0)|, total angular momentum about the origin",
    ];
    let panels: Vec<Panel> = titles
        .iter()
        .enumerate()
        .map(|(k, title)| {
            curves.iter().fold(
                Panel::new(*title, "t", "deviation").y_scale(Scale::Log),
                |panel, (method, curve)| {
                    panel.series(Series::new(
                        method.label(),
                        curve.iter().map(|(t, d)| (*t, d[k])),
                    ))
                },
            )
        })
        .collect();
    let png = if methods.len() == 1 {
        args.run
            .png_or(&format!("{}_invariants", method_file(methods)))
    } else {
        PathBuf::from("out/water_invariants.png")
    };
    draw_panels(&png, (1000, 1100), &panels)?;
    println!("\nwrote {}", png.display());
    Ok(())
}

/// Returns the reason of a failed step without the driver's "step k (from t = …) failed"
/// prefix, which the breakdown's line gives as its time.
fn breakdown(error: &SimulationError) -> String {
    match error {
        SimulationError::Step { source, .. } => source.to_string(),
        other => other.to_string(),
    }
}

/// Returns the file stem of a single method's run.
fn method_file(methods: &[Method]) -> &'static str {
    methods.first().map_or("water", |m| m.file())
}

/// Returns per row `t` and the deviations from the first row of the energy (the penalized one
/// where the table has it), of the linear momentum vector and of the angular momentum vector.
fn deviations(table: &Table) -> Vec<(f64, [f64; 3])> {
    let columns = table.columns();
    let index = |name: &str| columns.iter().position(|c| c == name);
    let energy = index("energy.penalized").or_else(|| index("energy"));
    let vector = |prefix: &str| ["x", "y", "z"].map(|a| index(&format!("{prefix}.{a}")));
    let (momentum, angular) = (vector("momentum"), vector("angular"));
    let rows: Vec<&[f64]> = table.rows().collect();
    let Some(first) = rows.first() else {
        return Vec::new();
    };
    let distance = |row: &[f64], columns: [Option<usize>; 3]| {
        columns
            .iter()
            .flatten()
            .map(|&c| (row[c] - first[c]).powi(2))
            .sum::<f64>()
            .sqrt()
    };
    rows.iter()
        .map(|row| {
            let e = energy.map_or(f64::NAN, |c| (row[c] - first[c]).abs());
            (row[0], [e, distance(row, momentum), distance(row, angular)])
        })
        .collect()
}
