//! The ladder's tables (`--table`): Lacoursière's comparison of SPOOK with the index-1 and
//! projection methods, and the convergence measurements.

use std::error::Error;
use std::path::Path;
use std::time::Instant;

use mechanism::models::Ladder;
use mechanism::pictures::draw_panels;
use mechanism::runtime::model::SparseHolonomic;
use mechanism::runtime::reference::fit::loglog_slope;
use mechanism::runtime::{SparseIntegrator, SparseSpook};

use crate::plots::{loglog_panel, time_panel, whiplash_chart};
use crate::{common, spook, track, Method, Sample};

/// The figures of §6 as tables beside the paper's claims, and their plots.
pub(crate) fn tables() -> Result<(), Box<dyn Error>> {
    // (a) Stability at h = 1/20.
    let ladder = Ladder::new(20)?;
    let mut worst = 0.0f64;
    let outcome = track(
        &ladder,
        spook(&ladder, 1.0 / 20.0)?,
        (1.0 / 20.0, 600),
        |_, s| {
            worst = worst.max(s.rms);
        },
    );
    println!("## (a) Stability, L = 20, h = 1/20, T = 30\n");
    println!("| quantity | ours | paper / pilot |\n|---|---|---|");
    println!(
        "| outcome | {} | \"stable … for h as large as h = 1/20 for N = 20\" |",
        match &outcome {
            Ok(()) => "600 steps, no error".to_string(),
            Err(e) => format!("failed: {e}"),
        }
    );
    println!("| max RMS violation | {worst:.3} | pilot (EXPERIMENTS-M2 §A.7): 0.23 |\n");

    // (b) Fig. 6: ⟨‖g‖⟩ against h.
    let hs = [
        1.0 / 30.0,
        1.0 / 60.0,
        1.0 / 120.0,
        1.0 / 240.0,
        1.0 / 480.0,
    ];
    let pilot = [2.19e-1, 4.22e-2, 2.27e-2, 3.29e-3, 1.22e-3];
    let mut averages = Vec::new();
    for &h in &hs {
        let steps = common::step_count(h, 10.0)?;
        let mut sum = 0.0;
        track(&ladder, spook(&ladder, h)?, (h, steps), |step, s| {
            if step > 0 {
                sum += s.rms * (ladder.constraint_count() as f64).sqrt();
            }
        })?;
        averages.push(sum / steps as f64);
    }
    let slope = loglog_slope(&hs, &averages).unwrap_or(f64::NAN);
    println!("## (b) Fig. 6: average violation ⟨‖g‖⟩ over T = 10, L = 20\n");
    println!("| h | ⟨‖g‖⟩ ours | ⟨‖g‖⟩ pilot (SciPy, EXPERIMENTS-M2 §A.7) |\n|---|---|---|");
    for ((h, a), p) in hs.iter().zip(&averages).zip(pilot) {
        println!("| 1/{:.0} | {a:.3e} | {p:.2e} |", 1.0 / h);
    }
    println!("\nfitted slope: **{slope:.2}** (paper: \"appears to be O(h²)\"; pilot 1.9)\n");
    let fig6 = loglog_panel(
        "Fig. 6: average constraint violation, L = 20, T = 10",
        ("h", "<|g|>"),
        format!("SPOOK, slope {slope:.2}"),
        hs.iter().copied().zip(averages.iter().copied()).collect(),
    );
    draw_panels(Path::new("out/ladder_fig6.png"), (900, 600), &[fig6])?;

    // (c) Fig. 7: CPU time per step against L.
    let links = [10, 20, 50, 100, 200, 500, 1000];
    let mut times = Vec::new();
    println!(
        "## (c) Fig. 7: time per step against L (h = 1/60, 300 steps after 30 warm-up steps)\n"
    );
    println!(
        "| L | unknowns n + m | entries of L | time per step | per link |\n|---|---|---|---|---|"
    );
    for &l in &links {
        let ladder = Ladder::new(l)?;
        let mut spook = SparseSpook::new(&ladder, 1.0 / 60.0)?;
        let mut state = ladder.horizontal_state();
        for _ in 0..30 {
            spook.step(&ladder, &mut state)?;
        }
        let start = Instant::now();
        let steps = 300;
        for _ in 0..steps {
            spook.step(&ladder, &mut state)?;
        }
        let per_step = start.elapsed().as_secs_f64() / steps as f64;
        times.push(per_step);
        println!(
            "| {l} | {} | {} | {:.1} µs | {:.2} µs |",
            spook.system().unknown_count(),
            spook.system().factor_entry_count(),
            per_step * 1e6,
            per_step * 1e6 / l as f64
        );
    }
    let xs: Vec<f64> = links.iter().map(|&l| l as f64).collect();
    let exponent = loglog_slope(&xs, &times).unwrap_or(f64::NAN);
    println!("\nfitted exponent: **{exponent:.2}** (paper: \"linear as it should\")\n");
    let fig7 = loglog_panel(
        "Fig. 7: time per SPOOK step against the number of links",
        ("L", "seconds per step"),
        format!("SPOOK, exponent {exponent:.2}"),
        xs.into_iter().zip(times).collect(),
    );
    draw_panels(Path::new("out/ladder_fig7.png"), (900, 600), &[fig7])?;

    // (d) The whiplash contrast: RK4 + Baumgarte on the same ladder (EXPERIMENTS-M2 §A.5:
    // γ = 1/h, ACPR §2, and γ = 10).
    println!(
        "## (d) The whiplash: SPOOK against RK4 + Baumgarte and RATTLE, L = 20, h = 1/60, T = 30\n"
    );
    println!("| method | outcome | E(end) − E(0) | max RMS violation | max end speed |");
    println!("|---|---|---|---|---|");
    let ladder = Ladder::new(20)?;
    let (mut energies, mut speeds) = (Vec::new(), Vec::new());
    for (method, gamma) in [
        (Method::Spook, 0.0),
        (Method::Rk4, 10.0),
        (Method::Rk4, 60.0),
        (Method::Rattle, 0.0),
    ] {
        let mut samples: Vec<Sample> = Vec::new();
        let integrator = method.integrator(&ladder, 1.0 / 60.0, gamma)?;
        let outcome = track(&ladder, integrator, (1.0 / 60.0, 1800), |_, s| {
            samples.push(s)
        });
        let e0 = samples[0].energy;
        let last = samples[samples.len() - 1];
        let max = |f: fn(&Sample) -> f64| samples.iter().map(f).fold(0.0, f64::max);
        println!(
            "| {} | {} | {:.1} | {:.3e} | {:.1} |",
            method.label(gamma),
            match &outcome {
                Ok(()) => "1800 steps, no error".to_string(),
                Err(e) => format!("fails at t = {:.2}: {}", last.t, first_words(e.as_ref(), 2)),
            },
            last.energy - e0,
            max(|s| s.rms),
            max(|s| s.speed)
        );
        energies.push((
            method.label(gamma),
            samples
                .iter()
                .map(|s| (s.t, s.energy - e0))
                .collect::<Vec<_>>(),
        ));
        speeds.push((
            method.label(gamma),
            samples.iter().map(|s| (s.t, s.speed)).collect::<Vec<_>>(),
        ));
    }
    println!(
        "\nPaper (§6): \"Runge–Kutta fourth order with Baumgarte stabilization or plain SHAKE \
         break down completely when whiplash occurs\"; SPOOK only dissipates.\n"
    );
    whiplash_chart(Path::new("out/ladder_whiplash.png"), &energies, &speeds)?;

    // (e) The runs of Figs. 4–5.
    println!("## (e) Figs. 4–5: h = 1/60, T = 30\n");
    println!("| L | E(0) | E(30) − E(0) | max RMS violation | mean RMS violation | max end speed (at t) |");
    println!("|---|---|---|---|---|---|");
    let mut energy_series = Vec::new();
    for l in [10, 100] {
        let ladder = Ladder::new(l)?;
        let mut samples = Vec::new();
        track(
            &ladder,
            spook(&ladder, 1.0 / 60.0)?,
            (1.0 / 60.0, 1800),
            |_, s| samples.push(s),
        )?;
        let e0 = samples[0].energy;
        let last = samples[samples.len() - 1];
        let max_rms = samples.iter().map(|s| s.rms).fold(0.0, f64::max);
        let mean_rms = samples.iter().map(|s| s.rms).sum::<f64>() / samples.len() as f64;
        let fastest = samples
            .iter()
            .max_by(|a, b| a.speed.total_cmp(&b.speed))
            .copied();
        let fastest = fastest.unwrap_or(last);
        println!(
            "| {l} | {e0:.1} | {:.1} | {max_rms:.3e} | {mean_rms:.3e} | {:.1} (t = {:.2}) |",
            last.energy - e0,
            fastest.speed,
            fastest.t
        );
        energy_series.push((
            format!("L = {l}"),
            samples
                .iter()
                .map(|s| (s.t, (s.energy - e0) / e0.abs()))
                .collect::<Vec<_>>(),
        ));
    }
    println!(
        "\nPaper (§6, Figs. 4–5): energy is dissipated, most when the chain passes the vertical; \
         \"whiplash develops at the end links after a few oscillations\".\n"
    );
    let fig45 = time_panel(
        "Figs. 4-5: energy dissipated by SPOOK, h = 1/60",
        "(E(t) - E(0)) / |E(0)|",
        &energy_series,
    );
    draw_panels(Path::new("out/ladder_fig45.png"), (1000, 500), &[fig45])?;

    println!(
        "\nwrote out/ladder_fig6.png, out/ladder_fig7.png, out/ladder_fig45.png, \
         out/ladder_whiplash.png"
    );
    Ok(())
}

/// Returns the first `count` words of an error's message.
fn first_words(error: &dyn Error, count: usize) -> String {
    let text = error.to_string();
    let words: Vec<&str> = text.split_whitespace().take(count).collect();
    format!("{} …", words.join(" "))
}
