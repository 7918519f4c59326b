//! The planar double pendulum of Tao–Owhadi (2014) §4.1 in Cartesian coordinates, stepped with
//! SPOOK on the hard constraints or with Z&Ss / Z&S on the ω-penalized model, written to CSV and
//! plotted.
//!
//! ```sh
//! cargo run --release --example double_pendulum -- --method zs --h 0.1 --omega 20
//! ```
//!
//! The model itself is `mechanism::models::DoublePendulum`, written with `mechanism!` in
//! `src/models/double_pendulum.rs`.

use std::error::Error;
use std::fs;
use std::path::{Path, PathBuf};

use clap::{Parser, ValueEnum};
use mechanism::models::DoublePendulum;
use mechanism::runtime::{
    observers, Configuration, Integrator, Penalized, Spook, State, ZhangSkeel, ZhangSkeelSimplified,
};
use plotters::prelude::*;

/// Which integrator to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Method {
    /// SPOOK (Lacoursière 2007, eq. 27–29) on the hard constraints.
    Spook,
    /// Simplified Zhang–Skeel (Tao–Owhadi eq. 18) on the penalized model.
    Zss,
    /// Full Zhang–Skeel (Tao–Owhadi eq. 3) on the penalized model.
    Zs,
}

/// Simulates the double pendulum and writes a CSV file and a plot.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Integrator.
    #[arg(long, value_enum, default_value_t = Method::Spook)]
    method: Method,
    /// Step size [default: 1/60 for spook, 0.1 for zss and zs].
    #[arg(long)]
    h: Option<f64>,
    /// End time.
    #[arg(long, default_value_t = 10.0)]
    t_end: f64,
    /// Penalty frequency ω of the Zhang–Skeel methods (V + ½ω²|g|²).
    #[arg(long, default_value_t = 20.0)]
    omega: f64,
    /// Parameter β of the Zhang–Skeel methods.
    #[arg(long, default_value_t = 0.4)]
    beta: f64,
    /// Output CSV file.
    #[arg(long, default_value = "out/double_pendulum.csv")]
    out: PathBuf,
    /// Output plot (PNG).
    #[arg(long, default_value = "out/double_pendulum.png")]
    plot: PathBuf,
}

/// One output row: the state and what is observed of it.
struct Row {
    state: State<4>,
    energy: f64,
    position_residual: f64,
    velocity_residual: f64,
}

fn observe(model: &DoublePendulum, state: &State<4>) -> Row {
    Row {
        state: *state,
        energy: observers::energy(model, state),
        position_residual: observers::position_residual(model, state),
        velocity_residual: observers::velocity_residual(model, state),
    }
}

/// Steps `integrator` on `stepped` from the initial state to `t_end`, observing the
/// unpenalized `model` after every step.
fn simulate<Stepped, I: Integrator<Stepped, 4>>(
    mut integrator: I,
    stepped: &Stepped,
    model: &DoublePendulum,
    h: f64,
    t_end: f64,
) -> Result<Vec<Row>, Box<dyn Error>> {
    let mut state = DoublePendulum::initial_state();
    let steps = (t_end / h).round() as usize;
    let mut rows = Vec::with_capacity(steps + 1);
    rows.push(observe(model, &state));
    for _ in 0..steps {
        integrator.step(stepped, &mut state)?;
        rows.push(observe(model, &state));
    }
    Ok(rows)
}

fn write_csv(path: &Path, rows: &[Row]) -> Result<(), Box<dyn Error>> {
    let mut writer = csv::Writer::from_path(path)?;
    let mut header = vec!["t".to_string()];
    let coordinates = <DoublePendulum as Configuration<4>>::COORDINATES;
    header.extend(coordinates.iter().map(|c| format!("q.{c}")));
    header.extend(coordinates.iter().map(|c| format!("v.{c}")));
    header.extend(["energy", "residual.position", "residual.velocity"].map(String::from));
    writer.write_record(&header)?;
    for row in rows {
        let s = &row.state;
        let mut record = vec![s.t];
        record.extend(s.q.iter());
        record.extend(s.v.iter());
        record.extend([row.energy, row.position_residual, row.velocity_residual]);
        writer.write_record(record.iter().map(|&x| format_number(x)))?;
    }
    writer.flush()?;
    Ok(())
}

/// Formats `x` so that it reads back to the same `f64`, in scientific notation when tiny or huge.
fn format_number(x: f64) -> String {
    if x == 0.0 || (1e-4..1e15).contains(&x.abs()) {
        x.to_string()
    } else {
        format!("{x:e}")
    }
}

fn plot(path: &Path, title: &str, rows: &[Row]) -> Result<(), Box<dyn Error>> {
    plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular())
        .map_err(|_| "the embedded DejaVu font is invalid")?;
    let root = BitMapBackend::new(path, (1000, 800)).into_drawing_area();
    root.fill(&WHITE)?;
    let (top, bottom) = root.split_vertically(400);
    let t_end = rows.last().map_or(1.0, |r| r.state.t);
    // Log axes: values that are exactly zero (at t = 0) sit on the floor of the axis.
    let floor = 1e-17;
    let log_range = |values: &mut dyn Iterator<Item = f64>| {
        let (min, max) = values
            .filter(|&y| y > floor)
            .fold((f64::INFINITY, floor), |(lo, hi), y| (lo.min(y), hi.max(y)));
        (min.min(max) / 10.0).max(floor)..(max * 10.0)
    };
    let e0 = rows[0].energy;
    let energy_error: Vec<(f64, f64)> = rows
        .iter()
        .map(|r| (r.state.t, (r.energy - e0).abs().max(floor)))
        .collect();
    let mut chart = ChartBuilder::on(&top)
        .caption(format!("{title}: energy error"), ("sans-serif", 22))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(70)
        .build_cartesian_2d(
            0.0..t_end,
            log_range(&mut energy_error.iter().map(|p| p.1)).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("t")
        .y_desc("|E(t) - E(0)|")
        .y_label_formatter(&|y| format!("{y:.0e}"))
        .draw()?;
    chart.draw_series(LineSeries::new(energy_error, &BLUE))?;

    let position: Vec<(f64, f64)> = rows
        .iter()
        .map(|r| (r.state.t, r.position_residual.max(floor)))
        .collect();
    let velocity: Vec<(f64, f64)> = rows
        .iter()
        .map(|r| (r.state.t, r.velocity_residual.max(floor)))
        .collect();
    let mut chart = ChartBuilder::on(&bottom)
        .caption("constraint residuals", ("sans-serif", 22))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(70)
        .build_cartesian_2d(
            0.0..t_end,
            log_range(&mut position.iter().chain(&velocity).map(|p| p.1)).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("t")
        .y_desc("max |residual|")
        .y_label_formatter(&|y| format!("{y:.0e}"))
        .draw()?;
    chart
        .draw_series(LineSeries::new(position, &RED))?
        .label("position: max |g_i|")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], RED));
    chart
        .draw_series(LineSeries::new(velocity, &GREEN))?
        .label("velocity: max |(G v)_i|")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], GREEN));
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

fn main() -> Result<(), Box<dyn Error>> {
    let args = Args::parse();
    let model = DoublePendulum::default();
    let h = args.h.unwrap_or(match args.method {
        Method::Spook => 1.0 / 60.0,
        Method::Zss | Method::Zs => 0.1,
    });
    let penalized = Penalized::new(model, args.omega);
    let (rows, title) = match args.method {
        Method::Spook => (
            simulate(Spook::<4, 2>::new(h)?, &model, &model, h, args.t_end)?,
            format!("SPOOK, h = {h:.4}"),
        ),
        Method::Zss => (
            simulate(
                ZhangSkeelSimplified::<4>::new(h)?.with_beta(args.beta)?,
                &penalized,
                &model,
                h,
                args.t_end,
            )?,
            format!("Z&Ss, h = {h}, omega = {}", args.omega),
        ),
        Method::Zs => (
            simulate(
                ZhangSkeel::<4>::new(h)?.with_beta(args.beta)?,
                &penalized,
                &model,
                h,
                args.t_end,
            )?,
            format!("Z&S, h = {h}, omega = {}", args.omega),
        ),
    };
    for path in [&args.out, &args.plot] {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir)?;
        }
    }
    write_csv(&args.out, &rows)?;
    plot(&args.plot, &title, &rows)?;

    let e0 = rows[0].energy;
    let max = |f: &dyn Fn(&Row) -> f64| rows.iter().map(f).fold(0.0, f64::max);
    println!("{title}, t = 0 … {}", args.t_end);
    println!(
        "  max |E - E0|       = {:.3e}",
        max(&|r| (r.energy - e0).abs())
    );
    println!(
        "  max |g_i|          = {:.3e}",
        max(&|r| r.position_residual)
    );
    println!(
        "  max |(G v)_i|      = {:.3e}",
        max(&|r| r.velocity_residual)
    );
    println!(
        "wrote {} ({} rows) and {}",
        args.out.display(),
        rows.len(),
        args.plot.display()
    );
    Ok(())
}
