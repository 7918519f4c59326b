//! `--compare`: Tao–Owhadi (2014) §4.1 — the errors of Fig. 1, the timing paragraph, and the
//! `O(ω⁻²)` model error of Fig. 2a — printed as Markdown tables with the paper's statements
//! next to our numbers.
//!
//! Fig. 1 runs, from `q0 = (0, −1, 1, −2)` at rest with `β = 0.4` and `ω = 20`:
//! row 1 the benchmark (small-step variational Euler in the angles; here RK4, see
//! [`reference`](super::reference)), row 2 SHAKE at `h = 0.1`, row 3 variational Euler on the
//! penalized model at `h = 0.1/ω` ("for stability"), rows 4–6 full Newmark, one-iteration
//! Newmark and Z&S on the penalized model at `h = 0.1`. The paper gives the errors only as
//! curves, and the run times in seconds (Matlab, `fsolve`): 91.3, 3.8, 1.0, 5.3, 0.2 and 0.4.
//! Fig. 2a plots `ω² ‖g(q(T))‖` against `ω` at `T = 50`, computed with Z&S at `h = 0.01`.

use std::error::Error;
use std::hint::black_box;
use std::time::Instant;

use crate::common;
use crate::reference;
use mechanism::models::DoublePendulum;
use mechanism::runtime::reference::fit::loglog_slope;
use mechanism::runtime::{
    Holonomic, Integrator, Newmark, NewmarkOneIteration, Penalized, PushForwardNewmark, Rattle,
    SVector, Shake, Spook, State, StepError, SymplecticEuler, Verlet, ZhangSkeel,
    ZhangSkeelSimplified, ZhangSkeelStiff,
};

/// The parameters of the comparison (the paper's: `ω = 20`, `β = 0.4`, `h = 0.1`, `t = 10`).
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// Penalty frequency ω of rows 3–6.
    pub omega: f64,
    /// β of the Newmark and Zhang–Skeel methods.
    pub beta: f64,
    /// The large step `h` of rows 2, 4–6; also the interval at which errors are sampled.
    pub h: f64,
    /// The time at which the error is reported.
    pub t_end: f64,
}

/// Steps of the reference per large step `h`.
const REFERENCE_SUBSTEPS: usize = 1000;

/// The penalty frequencies of Fig. 2a.
const OMEGAS: [f64; 4] = [10.0, 20.0, 40.0, 80.0];

/// The end time and step of Fig. 2a (Z&S).
const FIG2_T: f64 = 50.0;
const FIG2_H: f64 = 0.01;

/// Runs the comparison and prints its tables.
pub fn run(model: &DoublePendulum, settings: &Settings) -> Result<(), Box<dyn Error>> {
    let Settings {
        omega,
        beta,
        h,
        t_end,
    } = *settings;
    let intervals = common::step_count(h, t_end)?;
    let t_end = intervals as f64 * h;
    let initial = DoublePendulum::initial_state();

    let (reference, reference_seconds) = timed(|| {
        reference::positions_every(
            model,
            &initial,
            h / REFERENCE_SUBSTEPS as f64,
            intervals * REFERENCE_SUBSTEPS,
            REFERENCE_SUBSTEPS,
        )
    })?;
    let half = REFERENCE_SUBSTEPS / 2;
    let coarser =
        reference::positions_every(model, &initial, h / half as f64, intervals * half, half)?;
    let reference_error = max_distance(&reference, &coarser) / 15.0;

    let penalized = Penalized::new(*model, omega);
    let fine = h / omega.ceil();
    let rows = fig1_rows(model, &penalized, beta, h, fine, t_end, &reference)?;

    println!("## Tao–Owhadi §4.1, Fig. 1 and timings: double pendulum, t = {t_end}\n");
    println!(
        "ω = {omega}, β = {beta}, g = {}, q0 = (0, −1, 1, −2), v0 = 0. Error: ‖q − q_ref‖₂ over \
         (x1, y1, x2, y2), at t = {t_end} and the maximum over the samples t = 0, {h}, …, {t_end}. \
         Reference: RK4 in (θ1, θ2), h = {:e}, {:.3} s per run, estimated error {:.1e} \
         (Richardson against h = {:e}).\n",
        model.g,
        h / REFERENCE_SUBSTEPS as f64,
        reference_seconds,
        reference_error,
        h / half as f64,
    );
    println!("| row | method | model | h | error at t = {t_end} | max error | time per run | time / VE | paper: error (Fig. 1: qualitative) | paper: time [s] | paper: time / VE |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    let ve_seconds = rows
        .iter()
        .find(|r| r.row == "3")
        .and_then(|r| r.outcome.as_ref().ok())
        .map(|m| m.seconds);
    println!(
        "| 1 | benchmark: RK4 in angles | hard (angles) | {:e} | 0 (reference) | {:.1e} (est.) | {} | {} | 0 (benchmark: small-step VE in angles) | 91.3 | {:.0} |",
        h / REFERENCE_SUBSTEPS as f64,
        reference_error,
        format_seconds(reference_seconds),
        ratio(reference_seconds, ve_seconds),
        91.3,
    );
    for row in &rows {
        let (at_end, max, time, time_ratio) = match &row.outcome {
            Ok(m) => (
                format!("{:.2e}", m.at_end),
                format!("{:.2e}", m.max),
                format_seconds(m.seconds),
                ratio(m.seconds, ve_seconds),
            ),
            Err(message) => (
                format!("failed: {message}"),
                "—".into(),
                "—".into(),
                "—".into(),
            ),
        };
        let paper_ratio = row
            .paper_seconds
            .map_or("—".to_string(), |s| format!("{s:.1}"));
        let paper_seconds = row
            .paper_seconds
            .map_or("—".to_string(), |s| format!("{s:.1}"));
        println!(
            "| {} | {} | {} | {} | {at_end} | {max} | {time} | {time_ratio} | {} | {paper_seconds} | {paper_ratio} |",
            row.row, row.method, row.model, row.h, row.paper
        );
    }
    println!();

    fig2a(model, beta, h, t_end, &reference)?;
    print_notes(&rows);
    Ok(())
}

/// One method of the Fig. 1 table.
struct Row {
    /// Fig. 1's row number, or "—" for a method the paper does not run.
    row: &'static str,
    method: &'static str,
    model: &'static str,
    h: String,
    /// What the paper says about this row's error.
    paper: &'static str,
    /// The paper's run time in seconds (Matlab), also its ratio to variational Euler's 1.0 s.
    paper_seconds: Option<f64>,
    outcome: Result<Measured, String>,
}

/// The error and cost of one run.
struct Measured {
    /// `‖q(t_end) − q_ref(t_end)‖₂`.
    at_end: f64,
    /// The maximum of `‖q − q_ref‖₂` over the samples.
    max: f64,
    /// Mean wall time of one run.
    seconds: f64,
}

/// Runs every method of Fig. 1 (and the other methods of the model) against `reference`.
fn fig1_rows(
    model: &DoublePendulum,
    penalized: &Penalized<DoublePendulum>,
    beta: f64,
    h: f64,
    fine: f64,
    t_end: f64,
    reference: &[SVector<f64, 4>],
) -> Result<Vec<Row>, Box<dyn Error>> {
    let initial = DoublePendulum::initial_state();
    let hard = "hard";
    let pen = "penalized";
    let span = Span {
        h,
        t_end,
        reference,
    };
    let mut rows = vec![
        Row {
            row: "2",
            method: "SHAKE",
            model: hard,
            h: format!("{h}"),
            paper: "smallest of rows 2–6: no model error",
            paper_seconds: Some(3.8),
            outcome: span.measure(h, model, || {
                let mut shake = Shake::<4, 2>::new(h)?;
                let mut start = initial;
                shake.stagger_velocity(model, &mut start)?;
                Ok((shake, start))
            }),
        },
        Row {
            row: "3",
            method: "variational (symplectic) Euler",
            model: pen,
            h: format!("{fine} = h/ω"),
            paper: "model error of finite ω (its h = 0.1/ω resolves ω)",
            paper_seconds: Some(1.0),
            outcome: span.measure(fine, penalized, || fresh(SymplecticEuler::new(fine)?)),
        },
        Row {
            row: "4",
            method: "Newmark, Newton to convergence",
            model: pen,
            h: format!("{h}"),
            paper: "small, almost identical to Z&S",
            paper_seconds: Some(5.3),
            outcome: span.measure(h, penalized, || fresh(Newmark::new(h)?.with_beta(beta)?)),
        },
        Row {
            row: "5",
            method: "Newmark, 1 Newton iteration",
            model: pen,
            h: format!("{h}"),
            paper: "large (loss of symplecticity), though consistent",
            paper_seconds: Some(0.2),
            outcome: span.measure(h, penalized, || {
                fresh(NewmarkOneIteration::new(h)?.with_beta(beta)?)
            }),
        },
        Row {
            row: "6",
            method: "Z&S",
            model: pen,
            h: format!("{h}"),
            paper: "small, almost identical to row 4; larger than SHAKE (model error)",
            paper_seconds: Some(0.4),
            outcome: span.measure(h, penalized, || fresh(ZhangSkeel::new(h)?.with_beta(beta)?)),
        },
        Row {
            row: "—",
            method: "Z&Ss",
            model: pen,
            h: format!("{h}"),
            paper: "not in Fig. 1",
            paper_seconds: None,
            outcome: span.measure(h, penalized, || {
                fresh(ZhangSkeelSimplified::new(h)?.with_beta(beta)?)
            }),
        },
    ];
    let others = [
        (
            "variational Euler at the large h",
            pen,
            h,
            span.measure(h, penalized, || fresh(SymplecticEuler::new(h)?)),
        ),
        (
            "stiff Z&Ss",
            pen,
            h,
            span.measure(h, penalized, || {
                fresh(ZhangSkeelStiff::new(h)?.with_beta(beta)?)
            }),
        ),
        (
            "push-forward Newmark",
            pen,
            h,
            span.measure(h, penalized, || {
                fresh(PushForwardNewmark::new(h)?.with_beta(beta)?)
            }),
        ),
        (
            "Verlet",
            pen,
            fine,
            span.measure(fine, penalized, || fresh(Verlet::new(fine)?)),
        ),
        (
            "RATTLE",
            hard,
            h,
            span.measure(h, model, || fresh(Rattle::<4, 2>::new(h)?)),
        ),
        (
            "SPOOK",
            hard,
            h,
            span.measure(h, model, || fresh(Spook::<4, 2>::new(h)?)),
        ),
        (
            "Livens",
            hard,
            h,
            span.measure(h, model, || {
                fresh(mechanism::runtime::Livens::<4, 2>::new(h)?)
            }),
        ),
    ];
    rows.extend(
        others
            .into_iter()
            .map(|(method, model, step, outcome)| Row {
                row: "—",
                method,
                model,
                h: format!("{step}"),
                paper: "not in Fig. 1",
                paper_seconds: None,
                outcome,
            }),
    );
    Ok(rows)
}

/// The sampling of a comparison: the large step, the end time and the reference positions at
/// `0, h, 2h, …`.
struct Span<'a> {
    h: f64,
    t_end: f64,
    reference: &'a [SVector<f64, 4>],
}

impl Span<'_> {
    /// Runs the integrator made by `prepare` (with its start state) with step `step` on `model`
    /// to `t_end`, timing it, and measures its position error against the reference.
    fn measure<I, Model>(
        &self,
        step: f64,
        model: &Model,
        prepare: impl Fn() -> Result<(I, State<4>), StepError>,
    ) -> Result<Measured, String>
    where
        I: Integrator<Model, 4>,
    {
        let every = (self.h / step).round().max(1.0) as usize;
        let steps = (self.t_end / step).round() as usize;
        let run = || -> Result<Vec<State<4>>, Box<dyn Error>> {
            let (integrator, start) = prepare()?;
            Ok(common::sample(
                integrator, model, start, step, steps, every,
            )?)
        };
        let (states, seconds) = timed(run).map_err(|e| e.to_string())?;
        let positions: Vec<_> = states.iter().map(|s| s.q).collect();
        let at_end = match (positions.last(), self.reference.last()) {
            (Some(q), Some(r)) if positions.len() == self.reference.len() => (q - r).norm(),
            _ => return Err("sample count differs from the reference's".into()),
        };
        Ok(Measured {
            at_end,
            max: max_distance(&positions, self.reference),
            seconds,
        })
    }
}

/// Fig. 2a: `ω²‖g(q(T))‖` at `T = 50` with Z&S at `h = 0.01`, and the model error
/// `‖q^ω(t) − q(t)‖` of the penalized solution against the constrained reference.
fn fig2a(
    model: &DoublePendulum,
    beta: f64,
    h: f64,
    t_end: f64,
    reference: &[SVector<f64, 4>],
) -> Result<(), Box<dyn Error>> {
    let initial = DoublePendulum::initial_state();
    let span = Span {
        h,
        t_end,
        reference,
    };
    let fig2_steps = common::step_count(FIG2_H, FIG2_T)?;
    println!(
        "## Tao–Owhadi §4.1, Fig. 2a: the penalty's model error is O(ω⁻²)\n\n\
         ‖g(q(T))‖₂ at T = {FIG2_T} and its maximum over t ≤ {FIG2_T}: Z&S, h = {FIG2_H}, β = {beta} \
         (the paper's setting). Model error ‖q^ω − q_ref‖₂ at t = {t_end} and its maximum over \
         t ≤ {t_end}: velocity Verlet at h = {}/(10 ω), whose integration error is far below \
         the model error. Paper: Fig. 2a qualitative — it plots ω²‖g(q(T))‖ at T = 50 against \
         ω; the text predicts an approximation error O(ω⁻²) (Remark 6.1), so ω²‖g‖ stays O(1) \
         and the slopes below should be ≈ −2.\n",
        h
    );
    println!("| ω | ‖g(q(50))‖ | ω²‖g(q(50))‖ | max ω²‖g‖ | model error at t = {t_end} | ω² × model error | max model error |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let mut g_end = Vec::new();
    let mut g_max = Vec::new();
    let mut error_end = Vec::new();
    let mut error_max = Vec::new();
    for omega in OMEGAS {
        let penalized = Penalized::new(*model, omega);
        let zs = ZhangSkeel::new(FIG2_H)?.with_beta(beta)?;
        let states = common::sample(zs, &penalized, initial, FIG2_H, fig2_steps, 1)?;
        let norms: Vec<f64> = states.iter().map(|s| constraint_norm(model, s)).collect();
        let end = norms.last().copied().unwrap_or(f64::NAN);
        let max = norms.iter().copied().fold(0.0, f64::max);
        let fine = h / (10.0 * omega.ceil());
        let error = span
            .measure(fine, &penalized, || Ok((Verlet::new(fine)?, initial)))
            .map_err(|e| format!("ω = {omega}: {e}"))?;
        let w2 = omega * omega;
        println!(
            "| {omega} | {end:.3e} | {:.3} | {:.3} | {:.3e} | {:.3} | {:.3e} |",
            w2 * end,
            w2 * max,
            error.at_end,
            w2 * error.at_end,
            error.max
        );
        g_end.push(end);
        g_max.push(max);
        error_end.push(error.at_end);
        error_max.push(error.max);
    }
    println!(
        "| log-log slope vs ω | {:.2} | — | {:.2} (of max ‖g‖) | {:.2} | — | {:.2} |\n",
        loglog_slope(&OMEGAS, &g_end).unwrap_or(f64::NAN),
        loglog_slope(&OMEGAS, &g_max).unwrap_or(f64::NAN),
        loglog_slope(&OMEGAS, &error_end).unwrap_or(f64::NAN),
        loglog_slope(&OMEGAS, &error_max).unwrap_or(f64::NAN),
    );
    Ok(())
}

/// Prints what differs from the paper's set-up, and the ratios the text talks about.
fn print_notes(rows: &[Row]) {
    let error = |row: &str| {
        rows.iter()
            .find(|r| r.row == row)
            .and_then(|r| r.outcome.as_ref().ok())
            .map(|m| m.max)
    };
    println!("Notes:\n");
    if let (Some(one), Some(full), Some(zs)) = (error("5"), error("4"), error("6")) {
        println!(
            "- One-iteration Newmark / full Newmark, max error: {:.1}×; Z&S / full Newmark: {:.2}× \
             (paper: row 5 \"large\", row 6 \"almost identical\" to row 4).",
            one / full,
            zs / full
        );
    }
    if let (Some(shake), Some(zs)) = (error("2"), error("6")) {
        println!(
            "- Z&S / SHAKE, max error: {:.1}× (paper: Z&S larger than SHAKE because of the \
             penalty's model error at finite ω).",
            zs / shake
        );
    }
    println!(
        "- Times are wall-clock means of repeated runs of the compiled Rust steppers (no output, \
         2 shared cores), the paper's are Matlab 7.7 with fsolve on a 2008 laptop: compare the \
         ratios to variational Euler, not the seconds. Our Newton solvers use the generated \
         analytic Hess V (the paper's 0.2 s for row 5 is also with an analytic Hessian).\n\
         - The benchmark is RK4 in the angles, not variational Euler in the angles; its time is \
         for h = h/1000 and is not comparable to the paper's 91.3 s.\n\
         - Our one-iteration Newmark starts its Newton step from the carried a_k (the \
         previous step's iterate); the paper does not say where fsolve started, and a guess \
         this good leaves little to lose for the hanging pendulum, whose penalty oscillations \
         are small (O(ω⁻²)). Stiff Z&Ss equals Z&Ss here: V is linear, so Hess V = Hess of \
         the penalty.\n\
         - SHAKE solves all constraints together by Newton (not the original one-at-a-time \
         sweep); Z&S, Z&Ss and push-forward Newmark step x = q + βh²M⁻¹∇V (eq. 13), which is \
         compared with q_ref as it stands (an O(h²) difference, as in the paper's plots).\n\
         - The paper's potential is printed as V = −g y1 − g y2 with q0 = (0, −1, 1, −2), i.e. \
         gravity along +y and the pendulum starting upside down; the library model has gravity \
         along −y (hanging). --gravity=-1 reproduces the printed sign. The paper does not state \
         the end time of Fig. 1; we report t = 10."
    );
}

/// Pairs a new integrator with Tao–Owhadi's initial state.
fn fresh<I>(integrator: I) -> Result<(I, State<4>), StepError> {
    Ok((integrator, DoublePendulum::initial_state()))
}

/// Returns `‖g(q)‖₂` of the hard constraints at `state`.
fn constraint_norm(model: &DoublePendulum, state: &State<4>) -> f64 {
    let mut g = SVector::<f64, 2>::zeros();
    model.constraints(&state.q, state.t, &mut g);
    g.norm()
}

/// Returns `max_k ‖a_k − b_k‖₂` over the common length of `a` and `b`.
fn max_distance(a: &[SVector<f64, 4>], b: &[SVector<f64, 4>]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).norm())
        .fold(0.0, f64::max)
}

/// Runs `f` once for its result, then again until at least 0.2 s have passed (at most 1000
/// runs), and returns the result with the mean wall time of one run.
fn timed<T, E>(mut f: impl FnMut() -> Result<T, E>) -> Result<(T, f64), E> {
    let start = Instant::now();
    let result = f()?;
    let mut runs = 1u32;
    while start.elapsed().as_secs_f64() < 0.2 && runs < 1000 {
        black_box(f()?);
        runs += 1;
    }
    Ok((result, start.elapsed().as_secs_f64() / f64::from(runs)))
}

/// Formats a duration in seconds with a readable unit.
fn format_seconds(seconds: f64) -> String {
    if seconds >= 1.0 {
        format!("{seconds:.2} s")
    } else if seconds >= 1e-3 {
        format!("{:.2} ms", seconds * 1e3)
    } else {
        format!("{:.1} µs", seconds * 1e6)
    }
}

/// Formats `seconds / reference` (the ratio to variational Euler), or "—" without a reference.
fn ratio(seconds: f64, reference: Option<f64>) -> String {
    reference.map_or("—".into(), |r| format!("{:.2}", seconds / r))
}
