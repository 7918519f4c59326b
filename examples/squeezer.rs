//! Andrews' seven-body squeezing mechanism, Example 3 of Ascher–Chin–Petzold–Reich (1995) §6:
//! the index-1 formulation integrated by DOPRI5 (or fixed-step Heun / RK4) with Baumgarte's
//! stabilization or a post-stabilization, written to CSV and plotted; `--table` reproduces
//! Table 6.4 with the paper's numbers alongside.
//!
//! ```sh
//! cargo run --release --example squeezer                             # DOPRI5, S-both², t = 0.3
//! cargo run --release --example squeezer -- --stabilization baumgarte --alpha1 200 --alpha0 10000
//! cargo run --release --example squeezer -- --t-end 0.03 --animate out/squeezer.gif
//! cargo run --release --example squeezer -- --table
//! ```
//!
//! `--method dopri5` (default) uses `--rtol` (default 1e-5, the paper's TOL) and `--atol`
//! (default 0.1 rtol), `--h` setting its first step; `rk2` (Heun) and `rk4` use the fixed step
//! `--h` (default 1e-5). `--stabilization`: `none`, `baumgarte` (`--alpha1`, `--alpha0`,
//! default 200 and 10000 as in Table 6.4), `s-full`, `s-both`, `s-both2` (default), `s-vel`,
//! `s-pos`. `--t-end` defaults to the paper's 0.3 s (the literature's usual interval is 0.03 s;
//! `tests/it/squeezer.rs` checks the run against the IVP test set's reference solution there).
//!
//! Extra CSV columns: `drift.position` = `|g|`, `drift.velocity` = `|G v|` (the paper's drifts,
//! max norms over the six rows; they equal the common `residual.*` columns, the constraints
//! being scleronomic), and `h` for `dopri5`. The energy column is `T + V` of the spring; it is
//! not conserved, since the motor torque does work.
//!
//! The model is `mechanism::models::Squeezer`, written with `mechanism!` in
//! `src/models/squeezer.rs`.

use mechanism_examples as common;

use std::error::Error;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use common::stabilization::{Method, Stabilization};
use common::{Column, Plan, RunOptions, Trajectory};
use mechanism::models::Squeezer;
use mechanism::pictures::{Animation, Frame, Sketch};
use mechanism::runtime::integrators::stabilized::{
    drift, Baumgarte, Dopri5, Drift, PostStabilization, StabilizedRk, Tableau, DOPRI5, HEUN, RK4,
};
use mechanism::runtime::{State, StepError};

/// Simulates Andrews' squeezer (Ascher et al. 1995 Example 3) and writes a CSV file and a plot,
/// or prints Table 6.4.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Integrator.
    #[arg(long, value_enum, default_value_t = Method::Dopri5)]
    method: Method,
    /// Stabilization.
    #[arg(long, value_enum, default_value_t = Stabilization::BothTwice)]
    stabilization: Stabilization,
    /// Baumgarte's α1 (with --stabilization baumgarte) [default: 200].
    #[arg(long, allow_negative_numbers = true)]
    alpha1: Option<f64>,
    /// Baumgarte's α0 (with --stabilization baumgarte) [default: 10000].
    #[arg(long, allow_negative_numbers = true)]
    alpha0: Option<f64>,
    /// Relative tolerance of dopri5 [default: 1e-5].
    #[arg(long, allow_negative_numbers = true)]
    rtol: Option<f64>,
    /// Absolute tolerance of dopri5 [default: 0.1 rtol].
    #[arg(long, allow_negative_numbers = true)]
    atol: Option<f64>,
    #[command(flatten)]
    run: RunOptions,
    /// Print Table 6.4 of the paper (its own fixed settings) beside ours, instead of one run.
    #[arg(long, conflicts_with_all = [
        "method", "stabilization", "alpha1", "alpha0", "rtol", "atol", "h", "t_end", "out", "plot",
    ])]
    table: bool,
}

fn main() -> ExitCode {
    common::exit_code(run(common::cli::parse::<Args>()))
}

fn run(args: Args) -> Result<(), Box<dyn Error>> {
    if args.table {
        args.run.refuse_checkpoints(
            "squeezer --table",
            "it computes a table of many short runs; checkpoint a single --method run instead",
        )?;
        return print_table();
    }
    if args.stabilization != Stabilization::Baumgarte
        && (args.alpha1.is_some() || args.alpha0.is_some())
    {
        return Err("--alpha1 and --alpha0 apply to --stabilization baumgarte only".into());
    }
    if args.method != Method::Dopri5 && (args.rtol.is_some() || args.atol.is_some()) {
        return Err("--rtol and --atol apply to --method dopri5 only".into());
    }
    let (alpha1, alpha0) = (args.alpha1.unwrap_or(200.0), args.alpha0.unwrap_or(10000.0));
    let (baumgarte, post) = args.stabilization.parts(alpha1, alpha0)?;
    let model = Squeezer::default();
    let t_end = args.run.t_end_or(0.3);
    // The rows go to the file while the run goes, so that a killed run leaves them.
    let csv = args.run.csv_or("squeezer");
    let (trajectory, label) = match args.method {
        Method::Rk2 => {
            let h = args.run.h_or(1e-5);
            let trajectory = {
                let plan = args.run.plan(h, t_end)?.stream_to(csv.clone());
                fixed_step(&model, HEUN, &plan, baumgarte, post)?
            };
            (trajectory, format!("Heun, h = {h:e}"))
        }
        Method::Rk4 => {
            let h = args.run.h_or(1e-5);
            let trajectory = {
                let plan = args.run.plan(h, t_end)?.stream_to(csv.clone());
                fixed_step(&model, RK4, &plan, baumgarte, post)?
            };
            (trajectory, format!("RK4, h = {h:e}"))
        }
        Method::Dopri5 => {
            let rtol = args.rtol.unwrap_or(1e-5);
            let atol = args.atol.unwrap_or(0.1 * rtol);
            let mut dopri = Dopri5::<7, 6>::new(DOPRI5, rtol, atol)?
                .with_baumgarte(baumgarte)
                .with_post_stabilization(post);
            if let Some(h) = args.run.h {
                dopri = dopri.with_initial_step(h)?;
            }
            let trajectory = common::simulate_adaptive(
                dopri,
                &model,
                Squeezer::initial_state(),
                t_end,
                drift_columns(&model),
                &args.run.adaptive_plan()?.stream_to(csv.clone()),
            )?;
            (
                trajectory,
                format!("DOPRI5, rtol = {rtol:e}, atol = {atol:e}"),
            )
        }
    };
    let stabilization = match args.stabilization {
        Stabilization::Baumgarte => format!("Baum({alpha1}, {alpha0})"),
        other => other
            .to_possible_value()
            .map_or_else(String::new, |v| v.get_name().to_string()),
    };
    let title = format!("squeezer, {label}, {stabilization}");
    common::print_summary(&title, &trajectory);
    // The crank turns several times in 0.03 s: 150 frames over the run, 60 ms each.
    let animation = Animation::new(&title).interval(t_end / 150.0).delay_ms(60);
    args.run
        .draw_motion_with(animation, &title, &trajectory.table, &scene(model))?;
    common::write_outputs(
        &csv,
        &args.run.png_or("squeezer"),
        &title,
        &trajectory,
        &trajectory.table,
    )
}

/// Returns what to draw of the squeezer at `q = (β, Θ, γ, Φ, δ, Ω, ε)` (Hairer–Wanner Fig. 7.1):
/// the fixed points O (the crank's axis), A, B and C as anchors; the crank O–P (body 1), the
/// rod P–E (body 2), the triangle E–B–D (body 3) with the spring C–D, and the chains E–F–A
/// (bodies 4, 5) and E–G–A (bodies 6, 7), each point where the constraint rows put it.
fn scene(m: Squeezer) -> Sketch<impl Fn(f64, &[f64], &mut Frame)> {
    Sketch::new(move |_t, q, frame| {
        let (beta, theta, gamma, phi, delta, omega, epsilon) =
            (q[0], q[1], q[2], q[3], q[4], q[5], q[6]);
        let (a, b, c) = ((m.xa, m.ya), (m.xb, m.yb), (m.xc, m.yc));
        let p = (m.rr * beta.cos(), m.rr * beta.sin());
        let e = (
            p.0 - m.d * (beta + theta).cos(),
            p.1 - m.d * (beta + theta).sin(),
        );
        let d = (
            m.xb + m.sd * gamma.cos() + m.sc * gamma.sin(),
            m.yb + m.sd * gamma.sin() - m.sc * gamma.cos(),
        );
        let f = (
            e.0 - m.e * (phi + delta).sin(),
            e.1 + m.e * (phi + delta).cos(),
        );
        let g = (
            e.0 - m.zf * (omega + epsilon).cos(),
            e.1 - m.zf * (omega + epsilon).sin(),
        );
        for anchor in [(0.0, 0.0), a, b, c] {
            frame.anchor(anchor);
        }
        frame.link((0.0, 0.0), p).link(p, e);
        frame.link(e, b).link(b, d).link(d, e).link(c, d);
        frame.link(e, f).link(f, a).link(e, g).link(g, a);
        for body in [p, e, d, f, g] {
            frame.body(body);
        }
    })
}

/// The columns `drift.position` and `drift.velocity` (the paper's drifts) for any integrator.
fn drift_columns<I>(model: &Squeezer) -> Vec<Column<'_, I, 7>> {
    vec![
        Column::new("drift.position", |_: &I, s: &State<7>| {
            drift::<_, 7, 6>(model, s).position
        }),
        Column::new("drift.velocity", |_: &I, s: &State<7>| {
            drift::<_, 7, 6>(model, s).velocity
        }),
    ]
}

/// Runs the fixed-step `tableau` as `plan` says through the common harness.
fn fixed_step<const S: usize>(
    model: &Squeezer,
    tableau: Tableau<S>,
    plan: &Plan,
    baumgarte: Baumgarte,
    post: PostStabilization,
) -> Result<Trajectory, Box<dyn Error>> {
    let rk = StabilizedRk::<7, 6, S>::new(tableau, plan.h)?
        .with_baumgarte(baumgarte)
        .with_post_stabilization(post);
    common::simulate(
        rk,
        model,
        model,
        Squeezer::initial_state(),
        plan,
        drift_columns(model),
    )
}

// ---------------------------------------------------------------------------------------------
// --table: Table 6.4.

/// One run of the table: NSTEP, the maximum drifts, and the end state; or the typed error
/// that ended it (the paper's `*`).
type Run = Result<(usize, Drift, State<7>), StepError>;

/// Runs DOPRI5 at `rtol`, `atol = 0.1 rtol` with the given stabilization to `t_end`.
fn dopri5_run(
    model: &Squeezer,
    baumgarte: Baumgarte,
    post: PostStabilization,
    rtol: f64,
    t_end: f64,
) -> Run {
    let mut dopri = Dopri5::<7, 6>::new(DOPRI5, rtol, 0.1 * rtol)?
        .with_baumgarte(baumgarte)
        .with_post_stabilization(post);
    let mut state = Squeezer::initial_state();
    let mut worst = Drift::default();
    let stats = dopri.advance_to(model, &mut state, t_end, |s| {
        worst = worst.max(drift::<_, 7, 6>(model, s));
    })?;
    Ok((stats.steps(), worst, state))
}

/// Table 6.4 of Ascher et al. (1995): `(label, α1, α0, S-both², NSTEP, drift-position,
/// drift-velocity)`.
const TABLE_6_4: [(&str, f64, f64, bool, f64, f64, f64); 4] = [
    ("Baum(0,0)", 0.0, 0.0, false, 2872.0, 0.93e-3, 0.11e-1),
    ("Baum(12,70)", 12.0, 70.0, false, 2842.0, 0.45e-3, 0.44e-2),
    (
        "Baum(200,10000)",
        200.0,
        10000.0,
        false,
        2853.0,
        0.91e-5,
        0.95e-4,
    ),
    ("S-both²", 0.0, 0.0, true, 2838.0, 0.29e-13, 0.17e-7),
];

/// Formats a ratio: two decimals near 1, scientific far from it.
fn ratio(r: f64) -> String {
    if (0.01..100.0).contains(&r) {
        format!("{r:.2}")
    } else {
        format!("{r:.1e}")
    }
}

/// Prints Table 6.4 with the paper's numbers, ratios ours/paper, the error at `t_f` against a
/// tight-tolerance run (the paper's remark that the first two rows are wrong in the leading
/// digit), and notes.
fn print_table() -> Result<(), Box<dyn Error>> {
    let model = Squeezer::default();
    let t_f = 0.3;
    let (_, _, reference) = dopri5_run(
        &model,
        Baumgarte::NONE,
        PostStabilization::BothTwice,
        1e-10,
        t_f,
    )?;
    println!("## Table 6.4: maximum drifts for the seven-body squeezer, DOPRI5, TOL = 1e-5, atol = 1e-6, t_f = 0.3\n");
    println!(
        "| stabilization | NSTEP | paper | ratio | drift-position | paper | ratio | drift-velocity | paper | ratio | error at t_f |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let mut failures = Vec::new();
    for (label, alpha1, alpha0, both2, nstep, position, velocity) in TABLE_6_4 {
        let baumgarte = if both2 {
            Baumgarte::NONE
        } else {
            Baumgarte::new(alpha1, alpha0)?
        };
        let post = if both2 {
            PostStabilization::BothTwice
        } else {
            PostStabilization::None
        };
        match dopri5_run(&model, baumgarte, post, 1e-5, t_f) {
            Ok((steps, d, end)) => {
                let error = (end.q - reference.q).amax() / reference.q.amax();
                println!(
                    "| {label} | {steps} | {nstep} | {} | {:.2e} | {position:.2e} | {} | {:.2e} | {velocity:.2e} | {} | {error:.1e} |",
                    ratio(steps as f64 / nstep),
                    d.position,
                    ratio(d.position / position),
                    d.velocity,
                    ratio(d.velocity / velocity),
                );
            }
            Err(error) => {
                println!(
                    "| {label} | * | {nstep} | — | * | {position:.2e} | — | * | {velocity:.2e} | — | — |"
                );
                failures.push(format!("- `*` for {label}: {error}."));
            }
        }
    }
    println!();
    for failure in failures {
        println!("{failure}");
    }
    println!("{NOTES_6_4}");
    Ok(())
}

/// The notes under Table 6.4.
const NOTES_6_4: &str = "\
- Method: our DOPRI5 (see the robot arm's Table 6.3 notes), rtol = 1e-5, atol = 1e-6, from
  Hairer–Wanner's consistent initial values; drifts are max over accepted steps of |g| (m) and
  |G v| (m/s), max norms over the six rows; S-both² uses F of eq. 5.6. \"error at t_f\" is
  max |q − q_ref| / max |q_ref| against S-both² at TOL = 1e-10.
- NSTEP: within 1% of the paper's for every row. The mechanism is driven hard (β̇ reaches
  ~1e3 rad/s within 0.03 s), so the step size is set by the motion, not by the stabilization,
  in both codes: all four variants cost the same, as the paper says.
- Baumgarte rows: ours are 3.1–4.0× the paper's, the same factor in all three rows and on
  both levels, while NSTEP agrees to 1% and the gain from Baum(0,0) to Baum(200,10000) is the
  paper's (ours 89×, the paper's 102× in position). A factor common to every row points at how
  the drift is measured, which the paper does not say (norm over the six rows and the sampling
  times; ours is the max norm at every accepted step, the largest choice), not at the
  dynamics. It is just above the factor 3 we aim for; the paper's method is not fully
  specified here.
- S-both²: position drift at round-off, as in the paper; velocity drift far below the paper's
  for the reason discussed under the robot arm's Table 6.3 (our fixed-step S-both² matches
  the paper's Tables 6.1–6.2).
- The last column confirms the paper's remark that small drifts do not mean small errors: at
  TOL = 1e-5 every variant, S-both² included, has an error far above its drift.
";
