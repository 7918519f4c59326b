//! The DNA chain's figure (`--figure`).

use std::error::Error;
use std::fs::File;
use std::io::BufWriter;

use mechanism::ensemble::{Cell, EnsembleCsv, Shard};
use mechanism::models::DnaChain;
use mechanism::pictures::{draw_panels, Corner, Panel, Series};
use mechanism::runtime::simulation::{Schedule, Table};

use crate::common::create_parent;
use crate::{best_time, common, pairs, simulate, time, Args, Method, Setup, Trace, CLOSED, OPEN};

/// Fig. 8: Z&S and Z&Ss at `h = 2` and Verlet at `h = 0.2` from the same seed: `θ̄(t)`, the
/// phase portrait and `H(t)` of the three, the transition times, the energies and the CPU
/// times beside the paper's.
pub(crate) fn figure(chain: &DnaChain, args: &Args) -> Result<(), Box<dyn Error>> {
    let t_end = args.run.t_end_or(3000.0);
    let start = chain.initial_state(args.seed);
    let setups = [Method::Zs, Method::Zss, Method::Verlet].map(|method| Setup {
        method,
        h: method.paper_h(),
        beta: args.beta,
    });
    let mut traces = Vec::new();
    let mut seconds = Vec::new();
    for setup in setups {
        let steps = common::step_count(setup.h, t_end)?;
        let schedule = Schedule::EveryNthStep(steps.max(1));
        let outcome = simulate(
            chain,
            setup,
            start.clone(),
            steps,
            schedule,
            Table::default(),
            true,
            None,
        )?;
        if let Some(error) = &outcome.failure {
            println!("{} stopped early: {error}", setup.label());
        }
        seconds.push(best_time(chain, setup, &start, steps, args.repeat)?);
        traces.push(outcome.trace);
    }
    let labels = setups.map(|s| s.label());
    let row = |name: &str, value: &dyn Fn(&Trace) -> String, pilot: &str| {
        let cells: Vec<String> = traces.iter().map(value).collect();
        println!("| {name} | {} | {pilot} |", cells.join(" | "));
    };
    println!(
        "## Fig. 8: DNA chain, N = {}, seed {}, T = {t_end}, beta = {}\n",
        args.n, args.seed, args.beta
    );
    println!(
        "| quantity | {} | pilot / paper (EXPERIMENTS-M2 §E) |",
        labels.join(" | ")
    );
    println!("|---|---|---|---|---|");
    row(
        "θ̄ leaves the closed state (first θ̄ > 1.0)",
        &|t| time(t.first(0.0, CLOSED, true)),
        "Verlet ≈ 45–47 (level not stated)",
    );
    let opens = |t: &Trace| t.first(0.0, OPEN, true);
    let closes = |t: &Trace| opens(t).and_then(|o| t.first(o, OPEN, false));
    row(
        "first opening (θ̄ > 4.3)",
        &|t| time(opens(t)),
        "Verlet ≈ 134–142",
    );
    row("back below 4.3", &|t| time(closes(t)), "Verlet ≈ 235–242");
    row(
        "back in the closed state (θ̄ < 1.0)",
        &|t| time(closes(t).and_then(|c| t.first(c, CLOSED, false))),
        "Verlet ≈ 334–396",
    );
    row(
        "openings (θ̄ > 4.3 after < 1.0)",
        &|t| t.openings().to_string(),
        "chaotic: statistics only",
    );
    row(
        "time in the open state",
        &|t| format!("{:.0}%", 100.0 * t.open_fraction()),
        "",
    );
    row("H(0)", &|t| format!("{:.3}", t.energy[0]), "2.06–2.52");
    row(
        "H after the first step",
        &|t| format!("{:.3}", t.energy.get(1).copied().unwrap_or(f64::NAN)),
        "Z&S ≈ 0.63 from 2.06",
    );
    row(
        "mean H",
        &|t| format!("{:.3}", t.mean_energy()),
        "Z&S below Verlet (fast modes damped)",
    );
    row(
        "max \\|H − H(0)\\|",
        &|t| format!("{:.3}", common::max_deviation(&t.energy)),
        "Verlet 0.035–0.047 (T = 2·10⁴)",
    );
    println!(
        "\n## CPU time, the same run (ours: best of {}, through the driver, no output)\n",
        args.repeat.max(1)
    );
    println!("| run | ours (s) | paper (s, Matlab) | ours / Z&S | paper / Z&S |");
    println!("|---|---|---|---|---|");
    let paper = [Some(3.24), None, Some(23.26)];
    for (k, label) in labels.iter().enumerate() {
        let (paper_s, paper_ratio) = paper[k].map_or(("—".into(), "—".into()), |p: f64| {
            (format!("{p}"), format!("{:.1}", p / 3.24))
        });
        println!(
            "| {label} | {:.4} | {paper_s} | {:.2} | {paper_ratio} |",
            seconds[k],
            seconds[k] / seconds[0]
        );
    }

    let mut angle = Panel::new(
        format!(
            "Fig. 8: DNA chain, N = {}, seed {}: mean angle (metastable at 0.795 and 5.49)",
            args.n, args.seed
        ),
        "t",
        "mean theta",
    )
    .legend(Corner::LowerRight);
    let mut phase = Panel::new("phase portrait", "mean theta", "d(mean theta)/dt");
    let mut energy = Panel::new("energy", "t", "H");
    for (trace, label) in traces.iter().zip(&labels) {
        angle = angle.series(Series::new(label, pairs(&trace.t, &trace.mean)));
        phase = phase.series(Series::new(label, pairs(&trace.mean, &trace.rate)));
        energy = energy.series(Series::new(label, pairs(&trace.t, &trace.energy)));
    }
    let png = args.run.png_or("dna_fig8");
    draw_panels(&png, (1000, 1200), &[angle, phase, energy])?;
    println!("\nwrote {}", png.display());

    // The three runs' slow variables in one CSV, a row per run and step.
    let csv = args.run.csv_or("dna_fig8");
    create_parent(&csv)?;
    let file = File::create(&csv).map_err(|e| format!("cannot write {}: {e}", csv.display()))?;
    let columns = ["run", "t", "theta.mean", "theta.mean.rate", "energy"];
    let mut out = EnsembleCsv::new(BufWriter::new(file), Shard::WHOLE, &columns)?;
    for (k, trace) in traces.iter().enumerate() {
        for i in 0..trace.t.len() {
            let cells = [
                Cell::Text(&labels[k]),
                Cell::Number(trace.t[i]),
                Cell::Number(trace.mean[i]),
                Cell::Number(trace.rate[i]),
                Cell::Number(trace.energy[i]),
            ];
            out.row(k, &cells)?;
        }
    }
    out.into_inner()?;
    println!("wrote {}", csv.display());
    Ok(())
}
