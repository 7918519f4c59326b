//! Cuell (2005) §7: the uniform ball rolling along `e₁` (case 1, Figs. 6–8) and Routh's sphere
//! rocking (case 2, Figs. 9–11), a unit sphere with a unit quaternion `q = (w, x, y, z)` and the
//! rolling constraint through the contact point as nonholonomic rows
//! (`mechanism::models::RollingSphere`), stepped with the midpoint discrete Lagrange–d'Alembert
//! integrator (`MidpointLagrangeDAlembert`, McLachlan–Perlmutter 2006; Cuell's own scheme,
//! eqs. 71–74, is underspecified — EXPERIMENTS-M2 §G.4 G7 — so a standard DLA on the same
//! `(a, q)` model stands in for it) and compared with a DOPRI5 (rtol = atol = 1e-12) of the
//! continuous equations 61–64 written by hand in `(a, q, Ω)`
//! (`mechanism::runtime::reference::rolling_sphere`).
//!
//! ```sh
//! cargo run --release --example rolling_sphere -- --case 1     # h = 0.01, T = 200
//! cargo run --release --example rolling_sphere -- --case 2
//! ```
//!
//! Columns: `t`, `q.a1` … `q.z`, `v.a1` … `v.z`, `energy`, `residual.position` (`||q| − 1|`),
//! `residual.velocity` (the contact point's velocity `|ȧ + ω × (R s)|`, from the independent
//! formula of the reference), then `omega.x`, `omega.y`, `omega.z` (body frame),
//! `residual.height` (`a₃ + α R₃₃ − 1`, the centre's height above the plane minus the
//! radius), and the reference `reference.a1` … `reference.omega.z`, `reference.energy`. The
//! PNG has the paper's figures (energy, `ω₂`, and `q₀` for case 1 or `a₃` for case 2, DLA
//! against DOPRI5) and a panel of the residuals; a Markdown table of drifts and deviations is
//! printed. Parameters and initial values: EXPERIMENTS-M2 §G.4 (`m = g = 1`; case 1: `α = 0`,
//! `I = 1`, `Ω = (0, 1, 0)`; case 2: `α = 0.2`, `I₃ = 0.8`, tilted about `e₂` by
//! `θ = asin(0.199/0.2)`, at rest).

use mechanism_examples as common;

use std::error::Error;
use std::process::ExitCode;
use std::sync::atomic::Ordering;

use clap::{Parser, ValueEnum};
use common::{RunOptions, Thin};
use mechanism::models::{body_angular_velocity, RollingSphere};
use mechanism::pictures::{draw_panels, Corner, Panel, Scale, Series};
use mechanism::runtime::reference::fit;
use mechanism::runtime::reference::rolling_sphere::{self as reference, RollingState};
use mechanism::runtime::simulation::{Schedule, SimulationError, Sink};
use mechanism::runtime::{Inertia, Integrator, MidpointLagrangeDAlembert, Potential, State};
use nalgebra::Vector3;

/// Which integrator to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Method {
    /// Midpoint discrete Lagrange–d'Alembert (McLachlan–Perlmutter), second order.
    DldaMidpoint,
}

/// Simulates Cuell's rolling sphere and writes a CSV file and the figures.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Integrator.
    #[arg(long, value_enum, default_value_t = Method::DldaMidpoint)]
    method: Method,
    /// Cuell §7.3 case: 1 (uniform ball rolling along e1) or 2 (Routh's sphere rocking).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
    case: u8,
    #[command(flatten)]
    run: RunOptions,
}

fn main() -> ExitCode {
    common::exit_code(run(common::cli::parse::<Args>()))
}

/// One row of the run: DLA state and its observables, and the reference at the same time.
struct Row {
    t: f64,
    state: State<7>,
    energy: f64,
    norm: f64,
    rolling: f64,
    height: f64,
    omega: [f64; 3],
    reference: RollingState,
    reference_energy: f64,
    reference_height: f64,
}

fn run(args: Args) -> Result<(), Box<dyn Error>> {
    args.run
        .refuse_motion("rolling_sphere", "the sphere rolls in three dimensions")?;
    args.run.refuse_checkpoints(
        "rolling_sphere",
        "its midpoint Lagrange–d'Alembert integrator carries no checkpointable state yet",
    )?;
    let (model, shape, start) = match args.case {
        1 => (
            RollingSphere::uniform_ball(),
            reference::RollingSphere::uniform_ball(),
            RollingSphere::uniform_ball().uniform_ball_state(),
        ),
        _ => (
            RollingSphere::routh(),
            reference::RollingSphere::routh(),
            RollingSphere::routh().routh_state(),
        ),
    };
    let h = args.run.h_or(0.01);
    // The rows of --save-every (on the step grid) and --every: every `stride`-th step.
    let plan = args.run.plan(h, args.run.t_end_or(200.0))?;
    let (steps, stride) = match plan.schedule {
        Schedule::Every(dt) => (plan.steps, (dt / h).round() as usize * plan.every),
        _ => (plan.steps, plan.every),
    };
    let mut dla = match args.method {
        Method::DldaMidpoint => MidpointLagrangeDAlembert::<7, 4>::new(h)?,
    };

    let times: Vec<f64> = (0..=steps).map(|k| k as f64 * h).collect();
    let y0 = to_reference(&start);
    let references = shape.solve(y0, &times, 1e-12)?;
    let observe = |state: State<7>, reference: RollingState| {
        let q = &state.q.as_slice()[3..7];
        let omega = body_angular_velocity(q, &state.v.as_slice()[3..7]);
        let a_dot = Vector3::new(state.v[0], state.v[1], state.v[2]);
        Row {
            t: state.t,
            state,
            energy: model.kinetic_energy(&state.q, &state.v) + model.potential(&state.q),
            norm: (q.iter().map(|x| x * x).sum::<f64>().sqrt() - 1.0).abs(),
            rolling: shape
                .contact_velocity(&a_dot, q, &Vector3::from(omega))
                .norm(),
            height: shape.height_residual(state.q[2], q),
            omega,
            reference,
            reference_energy: shape.energy(&reference),
            reference_height: shape.height_residual(reference[2], &reference.as_slice()[3..7]),
        }
    };
    let csv = args
        .run
        .csv_or(&format!("rolling_sphere_case{}", args.case));
    let png = args
        .run
        .png_or(&format!("rolling_sphere_case{}", args.case));
    // The rows go to the file while the run goes, so that a killed run leaves them.
    let mut sink = Thin::new(common::table_sink(&csv)?, stride);
    sink.begin(&columns(), Some(steps + 1))?;
    let mut rows = Vec::with_capacity(steps + 1);
    let mut state = start;
    rows.push(observe(state, references[0]));
    sink.row(&values(&rows[0]))?;
    for (t, reference) in times.iter().zip(&references).skip(1) {
        if common::interrupt_flag().load(Ordering::Relaxed) {
            sink.finish()?;
            let stop = SimulationError::Interrupted {
                t: state.t,
                rows: sink.written(),
            };
            return Err(common::interrupted(&stop, &csv).into());
        }
        let stepped = dla.step(&model, &mut state);
        if let Err(error) = stepped {
            sink.finish()?; // the rows up to the failure stay readable
            return Err(error.into());
        }
        let mut row = observe(state, *reference);
        row.t = *t; // the grid time k h, not the sum of k steps
        sink.row(&values(&row))?;
        rows.push(row);
    }
    sink.finish()?;
    let title = format!(
        "Cuell §7 case {}: {}, midpoint DLA, h = {h}",
        args.case,
        if args.case == 1 {
            "uniform ball"
        } else {
            "Routh's sphere"
        }
    );
    draw(&png, &title, args.case, &rows)?;
    print_table(&title, &rows);
    println!(
        "wrote {} ({} rows) and {}",
        csv.display(),
        sink.written(),
        png.display()
    );
    Ok(())
}

/// The reference state `(a, q, Ω)` of a model state.
fn to_reference(s: &State<7>) -> RollingState {
    let omega = body_angular_velocity(&s.q.as_slice()[3..7], &s.v.as_slice()[3..7]);
    let mut y = RollingState::zeros();
    y.fixed_rows_mut::<7>(0).copy_from(&s.q);
    for (i, w) in omega.iter().enumerate() {
        y[7 + i] = *w;
    }
    y
}

/// Returns the names of the columns: the CSV contract's, then the body rate, the height
/// residual and the reference's state and energy.
fn columns() -> Vec<String> {
    let names = ["a1", "a2", "a3", "w", "x", "y", "z"];
    let mut columns = vec!["t".to_string()];
    for prefix in ["q", "v"] {
        columns.extend(names.iter().map(|n| format!("{prefix}.{n}")));
    }
    columns.extend(
        [
            "energy",
            "residual.position",
            "residual.velocity",
            "omega.x",
            "omega.y",
            "omega.z",
            "residual.height",
        ]
        .map(String::from),
    );
    for n in [
        "a1", "a2", "a3", "q0", "q1", "q2", "q3", "omega.x", "omega.y", "omega.z", "energy",
    ] {
        columns.push(format!("reference.{n}"));
    }
    columns
}

/// Returns the values of `r` in the order of [`columns`].
fn values(r: &Row) -> Vec<f64> {
    let mut values = vec![r.t];
    values.extend(r.state.q.iter().chain(r.state.v.iter()));
    values.extend([r.energy, r.norm, r.rolling]);
    values.extend(r.omega);
    values.push(r.height);
    values.extend(r.reference.iter());
    values.push(r.reference_energy);
    values
}

fn draw(png: &std::path::Path, title: &str, case: u8, rows: &[Row]) -> Result<(), Box<dyn Error>> {
    common::create_parent(png)?;
    let e0 = rows[0].energy;
    let pair =
        |f: &dyn Fn(&Row) -> f64| -> Vec<(f64, f64)> { rows.iter().map(|r| (r.t, f(r))).collect() };
    let (fig_e, fig_w) = if case == 1 {
        ("Fig. 6", "Fig. 7")
    } else {
        ("Fig. 9", "Fig. 11")
    };
    // Deviations are tiny: draw them in units of a power of ten so the ticks are readable.
    let de = |r: &Row| r.energy - e0;
    let (e_unit, e_label) = unit(
        rows.iter()
            .map(de)
            .chain(rows.iter().map(|r| r.reference_energy - e0)),
    );
    let energy = Panel::new(
        format!("{title} — {fig_e}: energy E − E0"),
        "t",
        format!("(E - E0) / {e_label}"),
    )
    .legend(Corner::LowerLeft)
    .series(Series::new("midpoint DLA", pair(&|r| de(r) / e_unit)))
    .series(Series::new(
        "DOPRI5 1e-12",
        pair(&|r| (r.reference_energy - e0) / e_unit),
    ));
    let omega = if case == 1 {
        let w0 = rows[0].omega[1];
        let (w_unit, w_label) = unit(rows.iter().map(|r| r.omega[1] - w0));
        Panel::new(
            format!("{fig_w}: body angular velocity omega2 − omega2(0)"),
            "t",
            format!("(omega2 - 1) / {w_label}"),
        )
        .legend(Corner::LowerLeft)
        .series(Series::new(
            "midpoint DLA",
            pair(&|r| (r.omega[1] - w0) / w_unit),
        ))
        .series(Series::new(
            "DOPRI5 1e-12",
            pair(&|r| (r.reference[8] - w0) / w_unit),
        ))
    } else {
        Panel::new(
            format!("{fig_w}: body angular velocity omega2 (the curves coincide)"),
            "t",
            "omega2",
        )
        .legend(Corner::LowerLeft)
        .series(Series::new("midpoint DLA", pair(&|r| r.omega[1])))
        .series(Series::new("DOPRI5 1e-12", pair(&|r| r.reference[8])))
    };
    let third = if case == 1 {
        Panel::new("Fig. 8: quaternion q0", "t", "q0")
            .legend(Corner::LowerLeft)
            .series(Series::new("midpoint DLA", pair(&|r| r.state.q[3])))
            .series(Series::new("DOPRI5 1e-12", pair(&|r| r.reference[3])))
    } else {
        Panel::new("Fig. 10: height of the centre of mass a3", "t", "a3")
            .legend(Corner::LowerLeft)
            .series(Series::new("midpoint DLA", pair(&|r| r.state.q[2])))
            .series(Series::new("DOPRI5 1e-12", pair(&|r| r.reference[2])))
    };
    let residuals = Panel::new("residuals of the midpoint DLA", "t", "residual")
        .y_scale(Scale::Log)
        .legend(Corner::LowerRight)
        .series(Series::new("rolling |a' + w x Rs|", pair(&|r| r.rolling)))
        .series(Series::new("||q| - 1|", pair(&|r| r.norm)))
        .series(Series::new(
            "|a3 + alpha R33 - 1|",
            pair(&|r| r.height.abs()),
        ))
        .series(Series::new(
            "|omega2 - reference|",
            pair(&|r| (r.omega[1] - r.reference[8]).abs()),
        ));
    draw_panels(png, (1000, 1400), &[energy, omega, third, residuals])?;
    Ok(())
}

/// Returns `10^k` and its label for the largest `|x|` of `values`, `10^k ≤ max|x| < 10^(k+1)`
/// (1 if all are 0).
fn unit(values: impl Iterator<Item = f64>) -> (f64, String) {
    let largest = values.fold(0.0f64, |m, x| m.max(x.abs()));
    if largest == 0.0 || !largest.is_finite() {
        return (1.0, "1".to_string());
    }
    let k = largest.log10().floor() as i32;
    (10f64.powi(k), format!("1e{k}"))
}

fn print_table(title: &str, rows: &[Row]) {
    let t: Vec<f64> = rows.iter().map(|r| r.t).collect();
    let e0 = rows[0].energy;
    let de: Vec<f64> = rows.iter().map(|r| r.energy - e0).collect();
    let de_ref: Vec<f64> = rows.iter().map(|r| r.reference_energy - e0).collect();
    let w2: Vec<f64> = rows.iter().map(|r| r.omega[1]).collect();
    let max = |f: &dyn Fn(&Row) -> f64| rows.iter().map(f).fold(0.0, f64::max);
    println!("\n{title}, t = 0 … {}\n", rows.last().map_or(0.0, |r| r.t));
    println!("| quantity | midpoint DLA | DOPRI5 reference (1e-12) |");
    println!("| --- | --- | --- |");
    println!(
        "| energy drift slope (fitted dE/dt) | {:.3e} | {:.3e} |",
        fit::slope(&t, &de).unwrap_or(f64::NAN),
        fit::slope(&t, &de_ref).unwrap_or(f64::NAN)
    );
    println!(
        "| max abs(E − E0) | {:.3e} | {:.3e} |",
        max(&|r| (r.energy - e0).abs()),
        max(&|r| (r.reference_energy - e0).abs())
    );
    println!(
        "| omega2 drift slope (fitted) | {:.3e} | {:.3e} |",
        fit::slope(&t, &w2).unwrap_or(f64::NAN),
        fit::slope(&t, &rows.iter().map(|r| r.reference[8]).collect::<Vec<_>>())
            .unwrap_or(f64::NAN)
    );
    println!(
        "| max abs(Δω2) vs reference | {:.3e} | — |",
        max(&|r| (r.omega[1] - r.reference[8]).abs())
    );
    println!(
        "| max abs(Δa3), abs(Δq0) vs reference | {:.3e}, {:.3e} | — |",
        max(&|r| (r.state.q[2] - r.reference[2]).abs()),
        max(&|r| (r.state.q[3] - r.reference[3]).abs())
    );
    println!(
        "| max rolling residual abs(ȧ + ω × Rs) | {:.3e} | — |",
        max(&|r| r.rolling)
    );
    println!("| max abs(abs(q) − 1) | {:.3e} | — |", max(&|r| r.norm));
    println!(
        "| max abs(a3 + α R33 − 1) (touching) | {:.3e} | {:.3e} |",
        max(&|r| r.height.abs()),
        max(&|r| r.reference_height.abs())
    );
    println!(
        "| range of a3, omega2 | [{:.6}, {:.6}], [{:.6}, {:.6}] | — |\n",
        rows.iter()
            .map(|r| r.state.q[2])
            .fold(f64::INFINITY, f64::min),
        rows.iter()
            .map(|r| r.state.q[2])
            .fold(f64::NEG_INFINITY, f64::max),
        w2.iter().copied().fold(f64::INFINITY, f64::min),
        w2.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
}
