//! The DNA chain's stability table (`--stability`).

use std::error::Error;

use mechanism::models::DnaChain;
use mechanism::runtime::simulation::{Schedule, SimulationError, Table};

use crate::{common, simulate, time, Args, Method, Setup};

/// Runs full Z&S at `h = 2` and `h = 1`, Z&Ss at `h = 2` and full Z&S at `h = 2` with
/// `β = 0.5` to `T = 2·10⁴` from `--seeds` seeds and reports, per run, whether and when it
/// diverged: the driver's typed error and the first time `H > 10 H(0)`.
pub(crate) fn stability(chain: &DnaChain, args: &Args) -> Result<(), Box<dyn Error>> {
    let t_end = args.run.t_end_or(2e4);
    let setups = [
        (Method::Zs, 2.0, args.beta),
        (Method::Zss, 2.0, args.beta),
        (Method::Zs, 1.0, args.beta),
        (Method::Zs, 2.0, 0.5),
        (Method::Zs, 2.0, 0.25),
    ];
    println!(
        "## Stability: DNA chain, N = {}, T = {t_end}, seeds {}–{}\n",
        args.n,
        args.seed,
        args.seed + args.seeds.max(1) - 1
    );
    println!("| method | seed | stopped at t | driver's error | first H > 10 H(0) | max H / H(0) | open |");
    println!("|---|---|---|---|---|---|---|");
    for (method, h, beta) in setups {
        let setup = Setup { method, h, beta };
        let steps = common::step_count(h, t_end)?;
        let mut diverged = Vec::new();
        for seed in args.seed..args.seed + args.seeds.max(1) {
            let outcome = simulate(
                chain,
                setup,
                chain.initial_state(seed),
                steps,
                Schedule::EveryNthStep(steps.max(1)),
                Table::default(),
                true,
                None,
            )?;
            let trace = &outcome.trace;
            let error = match &outcome.failure {
                Some(SimulationError::Step { step, source, .. }) => {
                    format!("step {step}: {source}")
                }
                Some(other) => other.to_string(),
                None => "—".into(),
            };
            let blow_up = trace.energy_exceeds(10.0);
            if outcome.failure.is_some() || blow_up.is_some() {
                diverged.push(blow_up.unwrap_or(*trace.t.last().unwrap_or(&0.0)));
            }
            let max_h = trace.energy.iter().fold(0.0f64, |m, &e| m.max(e)) / trace.energy[0];
            println!(
                "| {}, β = {beta} | {seed} | {} | {error} | {} | {} | {:.0}% |",
                setup.label(),
                if outcome.failure.is_some() {
                    format!("{:.0}", trace.t.last().unwrap_or(&0.0))
                } else {
                    "— (reached T)".into()
                },
                time(blow_up),
                if max_h < 1e3 {
                    format!("{max_h:.3}")
                } else {
                    format!("{max_h:.1e}")
                },
                100.0 * trace.open_fraction()
            );
        }
        let times: Vec<String> = diverged.iter().map(|t| format!("{t:.0}")).collect();
        println!(
            "| **{}, β = {beta}** | **{}/{} diverged** | {} | | | | |",
            setup.label(),
            diverged.len(),
            args.seeds.max(1),
            times.join(", ")
        );
    }
    Ok(())
}
