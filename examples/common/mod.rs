//! The harness shared by the examples: one command line ([`RunOptions`], read by [`cli::parse`],
//! which refuses bad values before anything runs), the run through the runtime's driver
//! ([`Simulation`](mechanism::runtime::Simulation)) with the observed model's energy and residuals,
//! a summary over every step, and the pictures. The loop, the recorder, the schedule of rows and
//! the CSV writer are the driver's, the run's [`Summary`] and [`Trajectory`] are
//! `mechanism::runtime::simulation`'s, the choice of CSV or Parquet by the file's name is
//! `mechanism::output`, the Parquet writer is `mechanism::parquet`; the plots and GIFs are
//! `mechanism::pictures`. What stays here is the examples' own: the command line, the plan of a
//! run, the signals and the exit status. It is a package of its own (`mechanism-examples`, a
//! dev-dependency of `mechanism`), so that the root's tests run the same code
//! (`tests/it/save_every.rs`); [`sampling`] holds the `langevin_oscillator` example's runs, which
//! `tests/it/langevin_examples.rs` runs too.
//!
//! An example uses it with `use mechanism_examples as common;` and then
//!
//! 1. declares its own `--method` (a `clap::ValueEnum`, since the methods depend on what its
//!    model can feed) next to `#[command(flatten)] run: common::RunOptions`, its sizes with
//!    `value_parser = common::cli::count`, and reads them with [`cli::parse`];
//! 2. builds an integrator and calls [`simulate`] (or [`simulate_adaptive`]) with the model it
//!    steps (e.g. a [`Penalized`](mechanism::runtime::Penalized) model), the model it observes
//!    (the hard constraints), the [`Plan`] from [`RunOptions::plan`] (with `--save-every` and
//!    `--every`) streaming to `--out` ([`Plan::stream_to`]) and method-specific [`Column`]s;
//! 3. draws the plot of the [`Trajectory`] ([`write_outputs`], which writes the table only if
//!    it was not streamed), the GIF and paths of `--animate` and `--paths` with
//!    [`RunOptions::draw_motion`] (a planar model's `Scene`; the others call
//!    [`RunOptions::refuse_motion`] first), prints [`print_summary`], and exits through
//!    [`exit_code`] so that an error is one readable line, not a panic or a `Debug` dump.
//!
//! A step that fails (a Newton iteration that diverges, a blow-up to NaN) ends the trajectory
//! early: the samples up to the failure are kept, and [`Trajectory::failure`] says why, so the
//! partial run can still be written and plotted before the example reports the error.
//!
//! Every example streams the rows of its run to the file while it goes ([`Plan::stream_to`],
//! or a [`table_sink`] given to the driver): the CSV is flushed at least once a second and
//! Parquet is a directory of closed parts (`mechanism::parquet`), so a SIGKILL leaves every row
//! up to the last second readable. SIGINT and SIGTERM set the [`interrupt_flag`] (installed by
//! [`cli::parse`]), which every run of the harness reads once per step: the run stops at a step
//! boundary, its file is finished, and the example exits with 130 or 143 (128 + the signal,
//! the shell's convention) and `interrupted at t = …: N rows written to FILE`
//! ([`interrupted`]). A second signal ends the process at once.

// The options' doc comments are clap's `--help` text, kept byte for byte: `[default:
// out/<example>.csv]` is not HTML.
#![allow(rustdoc::invalid_html_tags)]

// The harness needs plots and Parquet (the features `pictures` and `parquet`, on by default);
// `sampling` needs neither.
#[cfg(all(feature = "pictures", feature = "parquet"))]
pub mod cli;
#[cfg(all(feature = "pictures", feature = "parquet"))]
mod options;
#[cfg(all(feature = "pictures", feature = "parquet"))]
mod plan;
#[cfg(all(feature = "pictures", feature = "parquet"))]
mod report;
#[cfg(all(feature = "pictures", feature = "parquet"))]
mod run;
pub mod sampling;
#[cfg(all(feature = "pictures", feature = "parquet"))]
mod signals;
#[cfg(all(feature = "pictures", feature = "parquet"))]
pub mod stabilization;

#[cfg(all(feature = "pictures", feature = "parquet"))]
pub use cli::Thin;
#[cfg(all(feature = "pictures", feature = "parquet"))]
pub use mechanism::output::{
    create_parent, csv_only, is_parquet, resume_sink, table_sink, write_table,
};
#[cfg(all(feature = "pictures", feature = "parquet"))]
pub use mechanism::runtime::simulation::interruption_message as interrupted;
#[cfg(all(feature = "pictures", feature = "parquet"))]
pub use mechanism::runtime::simulation::{max_deviation, max_increment, Summary, Trajectory};
#[cfg(all(feature = "pictures", feature = "parquet"))]
pub use options::RunOptions;
#[cfg(all(feature = "pictures", feature = "parquet"))]
pub use plan::{adaptive_plan, plan, schedule, step_count, Plan};
#[cfg(all(feature = "pictures", feature = "parquet"))]
pub use report::{format_number, print_kinon_betsch, print_summary, write_outputs};
#[cfg(all(feature = "pictures", feature = "parquet"))]
pub use run::{
    checkpointed, plan_sink, sample, simulate, simulate_adaptive, simulate_sensitive, thinned,
    with_checkpoints, Column, Stream,
};
#[cfg(all(feature = "pictures", feature = "parquet"))]
pub use signals::{exit_code, exit_status, in_file, interrupt_flag};
