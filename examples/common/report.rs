//! What an example prints and writes after its run: the common summary, Kinon–Betsch–Livens'
//! energy increments, the table and its plot.

use std::error::Error;
use std::path::Path;

use mechanism::output::write_table;
use mechanism::pictures;
use mechanism::runtime::simulation::{max_increment, write_number, Table, Trajectory};

/// Formats `x` as the driver's CSV writer does ([`write_number`]: it reads back to the same
/// `f64`), for an example that writes a table of its own.
pub fn format_number(x: f64) -> String {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail, and the digits are ASCII.
    let _ = write_number(&mut out, x);
    String::from_utf8(out).unwrap_or_default()
}

/// Prints the common summary of `trajectory` (over every step, whatever `--save-every`): its
/// time span, the maximal energy error, the largest relative energy change over one step, and
/// the maximal constraint residuals.
pub fn print_summary(title: &str, trajectory: &Trajectory) {
    let s = &trajectory.summary;
    let scale = if s.e0 == 0.0 { 1.0 } else { s.e0.abs() };
    println!("{title}, t = 0 … {:.6} ({} steps)", s.t_last, s.steps);
    println!("  max |E - E0|           = {:.3e}", s.max_energy_error);
    println!(
        "  max |E_n+1 - E_n|      = {:.3e} (relative to |E0|: {:.3e})",
        s.max_energy_increment,
        s.max_energy_increment / scale
    );
    println!("  max |g_i|              = {:.3e}", s.max_position_residual);
    println!("  max |(G v)_i|          = {:.3e}", s.max_velocity_residual);
}

/// Prints the energy increments per step that Kinon–Betsch–Livens plot: the total energy
/// (their eq. 35, over every step, with its increment relative to `|E0|` if `relative`) and,
/// if the method tracks it, the generalized energy (eq. 31, column `energy.generalized`);
/// `notes` are the figures to compare with.
pub fn print_kinon_betsch(trajectory: &Trajectory, relative: bool, notes: [&str; 2]) {
    let e0 = trajectory.summary.e0.abs();
    let increment = trajectory.summary.max_energy_increment;
    let note = |n: &str| {
        if n.is_empty() {
            String::new()
        } else {
            format!("  ({n})")
        }
    };
    let relative = if relative {
        format!(", relative {:.3e}", increment / e0)
    } else {
        String::new()
    };
    println!(
        "  total energy (35):       max |E_n+1 - E_n| = {increment:.3e}{relative}{}",
        note(notes[0])
    );
    if let Some(generalized) = trajectory.column("energy.generalized") {
        println!(
            "  generalized energy (31): max |E_n+1 - E_n| = {:.3e}, relative {:.3e}{}",
            max_increment(&generalized),
            max_increment(&generalized) / e0,
            note(notes[1])
        );
    }
}

/// Writes `table` as CSV or Parquet ([`write_table`]; not again if the trajectory's rows were
/// streamed to `out` and `table` is all of them) and plot, prints where, and returns the
/// trajectory's failure (after writing what was computed up to it) as an error.
pub fn write_outputs(
    out: &Path,
    png: &Path,
    title: &str,
    trajectory: &Trajectory,
    table: &Table,
) -> Result<(), Box<dyn Error>> {
    let streamed = trajectory.file.as_deref() == Some(out) && table == &trajectory.table;
    if !streamed {
        write_table(out, table)?;
    }
    pictures::plot_run(png, title, table)?;
    println!(
        "wrote {} ({} rows) and {}",
        out.display(),
        table.len(),
        png.display()
    );
    trajectory.outcome()?;
    Ok(())
}
