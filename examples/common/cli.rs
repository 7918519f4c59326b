//! The command line every example shares: [`parse`] turns clap's errors into one line and a
//! usage exit status, and the value parsers ([`positive`], [`count`], [`output`], [`input`]) refuse a bad
//! `--h`, `--t-end`, `--save-every`, `--every`, size or output path while the command line is
//! read, so that nothing is simulated with it and no example repeats the checks. [`Thin`] is
//! what `--every K` means for the rows of any schedule.
//!
//! An example's size options (`--n`, `--links`, …) take `value_parser = common::count` (with
//! `allow_negative_numbers = true`, so that `--n -3` is refused as a value rather than taken
//! for an unknown flag); its float parameters keep their own checks, which depend on the model.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use clap::error::ErrorKind;
use mechanism::runtime::simulation::{OutputPosition, Sink};

/// The exit status of a command line that cannot be used (clap's and the BSD `EX_USAGE`
/// convention of 2, apart from the 1 of a run that failed).
pub const USAGE: i32 = 2;

/// Parses the command line into `A` and installs the SIGINT and SIGTERM handlers
/// ([`interrupt_flag`](super::interrupt_flag)), or exits: with status 0 after printing
/// `--help` or `--version`, and with [`USAGE`] after printing the error as one line
/// (`error: …`, with clap's possible values and tips on the same line, without the usage
/// block), so that a script sees what is wrong in the first line of stderr and a value refused
/// by a value parser never reaches the run.
pub fn parse<A: clap::Parser>() -> A {
    match A::try_parse() {
        Ok(args) => {
            // From here on SIGINT and SIGTERM stop the example's runs at a step boundary, also
            // when they arrive while it prepares one (a signal before its first run used to
            // kill it outright).
            super::interrupt_flag();
            args
        }
        Err(error) if !error.use_stderr() => {
            // --help, --version: clap's own text on stdout.
            let _ = error.print();
            std::process::exit(error.exit_code());
        }
        Err(error) => {
            eprintln!("error: {}", one_line(&error));
            std::process::exit(USAGE);
        }
    }
}

/// Returns clap's message of `error` on one line: its lines joined with `; `, without the
/// `error:` prefix, the usage block and the pointer to `--help` (which [`parse`] appends once).
fn one_line(error: &clap::Error) -> String {
    let text = error.render().to_string();
    let mut parts: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|line| {
            !line.is_empty() && !line.starts_with("Usage:") && !line.starts_with("For more info")
        })
        .collect();
    if let Some(first) = parts.first_mut() {
        *first = first.strip_prefix("error:").unwrap_or(first).trim_start();
    }
    let hint = match error.kind() {
        ErrorKind::ValueValidation => "",
        _ => " (see --help)",
    };
    format!("{}{hint}", parts.join("; "))
}

/// Parses a positive finite number (`--h`, `--t-end`, `--save-every`): zero, a negative
/// number, NaN and infinity are refused with the value, as a step, a time span or an output
/// interval cannot be any of them.
pub fn positive(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("expected a positive number, got `{text}`"))?;
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(format!("must be a positive finite number, got {value}"))
    }
}

/// Parses a whole number of at least 1 (`--every K` and the examples' sizes `--n`,
/// `--links`, …): zero and negative numbers are refused, as a stride or a model of no members
/// has no meaning.
pub fn count(text: &str) -> Result<usize, String> {
    match text.trim().parse::<i128>() {
        Ok(value) if value >= 1 => usize::try_from(value)
            .map_err(|_| format!("must be at most {}, got {value}", usize::MAX)),
        Ok(value) => Err(format!("must be a whole number of at least 1, got {value}")),
        Err(_) => Err(format!(
            "expected a whole number of at least 1, got `{text}`"
        )),
    }
}

/// Parses a file to read (`--resume FILE`): it must exist and be a file, so that a mistyped
/// path is refused with the command line rather than after the example prepared its run.
pub fn input(text: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(text);
    match fs::metadata(&path) {
        Ok(meta) if meta.is_file() => Ok(path),
        Ok(_) => Err(format!("{} is not a file", path.display())),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Parses an output path (`--out`, `--plot`, `--animate`, `--paths`) and checks that it can
/// be written ([`check_writable`]), so that a run is not computed into a file it cannot
/// create.
pub fn output(text: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(text);
    check_writable(&path)?;
    Ok(path)
}

/// Checks that `path` can be written by opening it as the run will: its parent directories
/// are created (as the run creates them), a `.parquet` path must not be a file (it is a
/// directory of parts) and is created as a directory, any other path must not be a directory
/// and is opened for appending, which leaves an existing file as it is. What the check
/// creates and the run would create anyway is removed again only for a new plain file, so
/// that a refused run leaves no empty output behind.
pub fn check_writable(path: &Path) -> Result<(), String> {
    if path.as_os_str().is_empty() {
        return Err("the path is empty".to_string());
    }
    let cannot = |e: io::Error| format!("cannot write {}: {e}", path.display());
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        // A file where a directory must be says so, rather than "File exists".
        if let Some(file) = dir.ancestors().find(|a| a.is_file()) {
            return Err(format!("{} is a file, not a directory", file.display()));
        }
        fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create directory {}: {e}", dir.display()))?;
    }
    if super::is_parquet(path) {
        if path.is_file() {
            return Err(format!(
                "{} is a file; a Parquet output is a directory of parts",
                path.display()
            ));
        }
        fs::create_dir_all(path).map_err(cannot)?;
        // A directory we may not write into fails here rather than at the first part.
        let probe = path.join(".mechanism-probe");
        fs::File::create(&probe).map_err(cannot)?;
        let _ = fs::remove_file(probe);
        return Ok(());
    }
    if path.is_dir() {
        return Err(format!("{} is a directory", path.display()));
    }
    let existed = path.exists();
    fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(cannot)?;
    if !existed {
        let _ = fs::remove_file(path);
    }
    Ok(())
}

/// `--every K`: passes every `K`-th row of the schedule to the inner sink (the first, the
/// `K+1`-th, …) and, when the run finishes, the last row if it was not among them, so that a
/// thinned table still starts at `t_0` and ends where the run ended. With `--save-every DT`
/// the rows are those at `t_0, K·DT, 2K·DT, …` (computed by the schedule as `t_0 + i·DT`,
/// exactly the times of the unthinned run) and the end.
///
/// The rows kept back are at most one: a killed run loses only that last row (it is written
/// by [`Sink::finish`], which an interrupt and the end of a run call).
#[derive(Debug)]
pub struct Thin<S> {
    inner: S,
    every: usize,
    seen: usize,
    written: usize,
    held: Option<Vec<f64>>,
}

impl<S: Sink> Thin<S> {
    /// Thins the rows given to `inner` to every `every`-th and the last (`every = 0` is
    /// taken as 1: all rows).
    pub fn new(inner: S, every: usize) -> Self {
        Thin {
            inner,
            every: every.max(1),
            seen: 0,
            written: 0,
            held: None,
        }
    }

    /// Returns the number of rows passed to the inner sink.
    pub fn written(&self) -> usize {
        self.written
    }

    /// Returns the inner sink.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S: Sink> Sink for Thin<S> {
    fn begin(&mut self, columns: &[String], rows: Option<usize>) -> io::Result<()> {
        let rows = rows.map(|r| r.div_ceil(self.every) + 1);
        self.inner.begin(columns, rows)
    }

    fn row(&mut self, values: &[f64]) -> io::Result<()> {
        let kept = self.seen.is_multiple_of(self.every);
        self.seen += 1;
        if kept {
            self.held = None;
            self.written += 1;
            self.inner.row(values)
        } else {
            match &mut self.held {
                Some(held) => {
                    held.clear();
                    held.extend_from_slice(values);
                }
                None => self.held = Some(values.to_vec()),
            }
            Ok(())
        }
    }

    fn reserve(&mut self, additional: usize) {
        self.inner.reserve(additional / self.every + 1);
    }

    fn finish(&mut self) -> io::Result<()> {
        if let Some(last) = self.held.take() {
            self.written += 1;
            self.inner.row(&last)?;
        }
        self.inner.finish()
    }

    /// The inner sink's position; the driver sets its row count to the rows of the schedule
    /// (those this sink has seen), which is what [`resume`](Sink::resume) continues from. The
    /// row held back is not in the file at a checkpoint: an interrupt's checkpoint is written
    /// before the run finishes its sink, and a resumed run cuts the file to the checkpoint.
    fn position(&mut self) -> io::Result<OutputPosition> {
        self.inner.position()
    }

    /// Continues the thinning at the checkpoint's row of the schedule, so that the resumed
    /// run keeps the same rows as the uninterrupted one.
    fn resume(&mut self, columns: &[String], position: &OutputPosition) -> io::Result<()> {
        let seen = usize::try_from(position.rows)
            .map_err(|_| io::Error::other(format!("{} rows", position.rows)))?;
        self.seen = seen;
        self.written = seen.div_ceil(self.every);
        self.held = None;
        self.inner.resume(columns, position)
    }
}
