//! Fig. 5 of Tao–Owhadi (2014) §4.3: the constraint multipliers of the first molecule, read
//! off the stiff Z&Ss trajectory of the penalized cluster by eq. 8 and compared with SHAKE's.
//!
//! Eq. 8 recovers the multipliers of the hard constraints from the penalty as a window average,
//! `λ(t) ≈ (1/T_w) ∫_t^{t+T_w} ω² g(q(s)) ds`. The sign here is the runtime's convention
//! `M q̈ = −∇V − Gᵀλ` (the penalty's force is `−ω² Gᵀ g`, so `λ ≈ +ω² ⟨g⟩`; the paper writes
//! `M q̈ = −∇V + Gᵀλ` and a minus sign). The paper enlarges ω to 500 "for clearer
//! visualization", takes `T_w = 0.2` and stops "before chaos"; EXPERIMENTS-M2 §D.8 fixes
//! `n = 7`, `T = 20` and molecule 1's three rows. Both runs are deterministic (no GLA) from the
//! example's common quenched start. SHAKE is RATTLE, whose averaged multipliers
//! `½(μ_{k−1} + λ_k)` are second-order accurate at `t_k`; they are compared with the penalty's
//! estimate over the same window, i.e. both window-averaged.

use std::cell::RefCell;
use std::error::Error;
use std::path::Path;

use mechanism::models::WaterCluster;
use mechanism::pictures::{draw_panels, Panel, Series};
use mechanism::runtime::model::SparseHolonomic;
use mechanism::runtime::simulation::{Schedule, Simulation, SimulationError};
use mechanism::runtime::{DynState, Penalized, SparseRattle, SparseZhangSkeelStiff};

/// The paper's enlarged penalty frequency of Fig. 5.
pub const OMEGA: f64 = 500.0;
/// The length of the runs (EXPERIMENTS-M2 D8).
pub const T_END: f64 = 20.0;
/// The averaging window `T_w` of eq. 8.
pub const WINDOW: f64 = 0.2;
/// Molecule 1's rows, in the model's order.
const ROWS: [&str; 3] = ["O–H1", "O–H2", "H1–H2"];

/// A multiplier history: `(t_k, λ(t_k))` of molecule 1's three rows.
type History = Vec<(f64, [f64; 3])>;

/// Runs both methods for [`T_END`] (or `t_end` if shorter), prints the agreement table and
/// draws `png`. A method that breaks down is reported with its error and the figure is not
/// drawn: it is a result of this experiment, not a failure of the example (an interrupt is).
pub fn figure(
    cluster: &WaterCluster,
    start: &DynState,
    (beta, h): (f64, f64),
    t_end: f64,
    png: &Path,
) -> Result<(), Box<dyn Error>> {
    let span = T_END.min(t_end);
    let runs = penalty_estimate(cluster, start, beta, h, span)
        .map_err(|e| ("stiff Z&Ss", e))
        .and_then(|penalty| {
            let shake = shake_multipliers(cluster, start, h, span).map_err(|e| ("SHAKE", e))?;
            Ok((penalty, shake))
        });
    let (penalty, shake) = match runs {
        Ok(runs) => runs,
        Err((_, error)) if is_interrupt(error.as_ref()) => return Err(error),
        Err((method, error)) => {
            println!("\n## Fig. 5: {method} broke down: {error}; no figure");
            return Ok(());
        }
    };
    let width = (WINDOW / h).round() as usize;
    let (penalty_window, shake_window) = (
        window_average(&penalty, width),
        window_average(&shake, width),
    );
    println!(
        "\n## Fig. 5: molecule 1's multipliers, penalty (ω = {OMEGA}, eq. 8 over T_w = {WINDOW}) vs SHAKE, T = {span}\n"
    );
    println!("| row | rms λ SHAKE | rms difference, t ≤ 2 | rms difference, t ≤ {span} |\n|---|---|---|---|");
    for (r, name) in ROWS.iter().enumerate() {
        let rms = |until: f64| {
            let (mut sum, mut count) = (0.0, 0usize);
            for ((t, a), (_, b)) in penalty_window.iter().zip(&shake_window) {
                if *t <= until {
                    sum += (a[r] - b[r]).powi(2);
                    count += 1;
                }
            }
            (sum / count.max(1) as f64).sqrt()
        };
        let scale = (shake_window.iter().map(|(_, l)| l[r] * l[r]).sum::<f64>()
            / shake_window.len().max(1) as f64)
            .sqrt();
        println!(
            "| {name} | {scale:.3} | {:.3} ({:.1} %) | {:.3} ({:.1} %) |",
            rms(2.0),
            100.0 * rms(2.0) / scale,
            rms(span),
            100.0 * rms(span) / scale
        );
    }
    let panels: Vec<Panel> = ROWS
        .iter()
        .enumerate()
        .map(|(r, name)| {
            Panel::new(
                format!("molecule 1, row {name}: multiplier λ (kcal/mol/Å²)"),
                "t",
                "λ",
            )
            .series(Series::new(
                "SHAKE (RATTLE, averaged multipliers)",
                shake.iter().map(|(t, l)| (*t, l[r])),
            ))
            .series(Series::new(
                format!("stiff Z&Ss, ω² g averaged over {WINDOW} (eq. 8)"),
                penalty_window.iter().map(|(t, l)| (*t, l[r])),
            ))
        })
        .collect();
    draw_panels(png, (1000, 1100), &panels)?;
    println!("\nwrote {}", png.display());
    Ok(())
}

/// Returns whether `error` is the driver's interrupt (SIGINT, SIGTERM), which ends the
/// example rather than being reported as a breakdown.
fn is_interrupt(error: &(dyn Error + 'static)) -> bool {
    matches!(
        error.downcast_ref::<SimulationError>(),
        Some(SimulationError::Interrupted { .. })
    )
}

/// Returns `ω² g(q_k)` of molecule 1's rows along stiff Z&Ss on the penalized cluster up to
/// `t_end`.
fn penalty_estimate(
    cluster: &WaterCluster,
    start: &DynState,
    beta: f64,
    h: f64,
    t_end: f64,
) -> Result<History, Box<dyn Error>> {
    let penalized = Penalized::new(cluster.clone(), OMEGA);
    let mut g = vec![0.0; cluster.constraint_count()];
    let mut jacobian = vec![0.0; cluster.jacobian_pattern().len()];
    let history = RefCell::new(History::new());
    let mut record = |s: &DynState| {
        cluster.constraints_and_jacobian(&s.q, s.t, &mut g, &mut jacobian);
        let squared = OMEGA * OMEGA;
        history
            .borrow_mut()
            .push((s.t, [squared * g[0], squared * g[1], squared * g[2]]));
    };
    record(start);
    let zss = SparseZhangSkeelStiff::new(&penalized, h)?.with_beta(beta)?;
    let steps = crate::common::step_count(h, t_end)?;
    let mut run = Simulation::sparse(
        &penalized,
        zss,
        start.clone(),
        t_end,
        Schedule::EveryNthStep(steps),
    )?
    .interrupt_on(crate::common::interrupt_flag())
    .on_step(|_, s: &DynState| record(s))
    .with_progress("Fig. 5, Z&Ss");
    run.run()?;
    drop(run);
    Ok(history.into_inner())
}

/// Returns RATTLE's averaged multipliers `λ(t_k)` of molecule 1's rows up to `t_end`.
fn shake_multipliers(
    cluster: &WaterCluster,
    start: &DynState,
    h: f64,
    t_end: f64,
) -> Result<History, Box<dyn Error>> {
    let history = RefCell::new(History::new());
    let rattle = SparseRattle::new(cluster, h)?.with_tolerance(1e-10)?;
    let steps = crate::common::step_count(h, t_end)?;
    let mut run = Simulation::sparse(
        cluster,
        rattle,
        start.clone(),
        t_end,
        Schedule::EveryNthStep(steps),
    )?
    .interrupt_on(crate::common::interrupt_flag())
    .on_step(|rattle: &SparseRattle, s: &DynState| {
        if let Some(l) = rattle.averaged_multipliers() {
            history.borrow_mut().push((s.t - h, [l[0], l[1], l[2]]));
        }
    })
    .with_progress("Fig. 5, SHAKE");
    run.run()?;
    drop(run);
    Ok(history.into_inner())
}

/// Returns the trapezoidal average of `history` over each window of `width` steps that fits,
/// `(1/T_w) ∫_{t_k}^{t_k + T_w} λ`, labelled by its start `t_k`.
fn window_average(history: &[(f64, [f64; 3])], width: usize) -> History {
    if width == 0 || history.len() <= width {
        return History::new();
    }
    history
        .windows(width + 1)
        .map(|w| {
            let mut mean = [0.0; 3];
            for (k, (_, l)) in w.iter().enumerate() {
                let weight = if k == 0 || k == width { 0.5 } else { 1.0 };
                for r in 0..3 {
                    mean[r] += weight * l[r] / width as f64;
                }
            }
            (w[0].0, mean)
        })
        .collect()
}
