//! The output table of a run chosen by its file name: CSV, or Parquet for a name ending in
//! `.parquet` (in any case).
//!
//! A run's rows go to a [`Sink`] of the driver: [`table_sink`] creates one for a path — the
//! driver's [`CsvSink`] (flushed at least once a second) or, with the feature `parquet`, a
//! [`ParquetDataset`] directory of closed parts — so that a killed run leaves its rows readable;
//! [`resume_sink`] continues the file of a checkpointed run; [`write_table`] writes a [`Table`]
//! kept in memory. Every error is an [`OutputError`] that names the path. Without the feature
//! `parquet`, a `.parquet` name is refused ([`OutputError::ParquetDisabled`]) rather than written
//! as CSV.
//!
//! ```
//! use mechanism::output::{is_parquet, write_table};
//! use mechanism::runtime::simulation::{Sink, Table};
//!
//! let mut table = Table::default();
//! table.begin(&["t".into(), "q.x".into()], None)?;
//! Sink::row(&mut table, &[0.0, 1.0])?; // `Table::row` is the getter
//! Sink::row(&mut table, &[0.5, 0.25])?;
//!
//! let dir = std::env::temp_dir().join(format!("mechanism-output-doc-{}", std::process::id()));
//! let csv = dir.join("run.csv");
//! assert!(!is_parquet(&csv) && is_parquet(&dir.join("run.PARQUET")));
//! write_table(&csv, &table)?; // creates `dir` too
//! assert_eq!(std::fs::read_to_string(&csv)?, "t,q.x\n0,1\n0.5,0.25\n");
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

#[cfg(feature = "parquet")]
use crate::parquet::ParquetDataset;
use crate::runtime::simulation::{CsvSink, OutputPosition, Sink, Table};

/// Why an output file could not be written; every variant names the path.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The directory of an output file could not be created.
    #[error("cannot create directory {}: {source}", dir.display())]
    Directory {
        /// The directory.
        dir: PathBuf,
        /// The file system's error.
        source: io::Error,
    },
    /// The output file (or Parquet dataset directory) could not be created.
    #[error("cannot write {}: {source}", path.display())]
    Create {
        /// The output file.
        path: PathBuf,
        /// The file system's or the writer's error.
        source: io::Error,
    },
    /// The output of a checkpointed run could not be continued at the checkpoint.
    #[error("cannot continue {}: {source}", path.display())]
    Continue {
        /// The output file.
        path: PathBuf,
        /// The file system's or the writer's error.
        source: io::Error,
    },
    /// A row, the header or the end of the file could not be written.
    #[error("cannot write the rows to {}: {source}", path.display())]
    Write {
        /// The output file.
        path: PathBuf,
        /// The writer's error.
        source: io::Error,
    },
    /// A table with text cells was given a Parquet name ([`csv_only`]).
    #[error("{}: {what} is written as CSV only (it has text cells); use a .csv name", path.display())]
    CsvOnly {
        /// The output file.
        path: PathBuf,
        /// What was to be written.
        what: String,
    },
    /// A Parquet name without the feature `parquet`.
    #[error("{}: Parquet output needs the feature `parquet` of mechanism; use a .csv name", path.display())]
    ParquetDisabled {
        /// The output file.
        path: PathBuf,
    },
}

/// Returns whether `path` names a Parquet file (its extension is `.parquet`, in any case).
pub fn is_parquet(path: &Path) -> bool {
    path.extension()
        .is_some_and(|extension| extension.eq_ignore_ascii_case("parquet"))
}

/// Creates the parent directory of `path` if it has one and it does not exist.
pub fn create_parent(path: &Path) -> Result<(), OutputError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(|source| OutputError::Directory {
            dir: dir.to_path_buf(),
            source,
        })?;
    }
    Ok(())
}

/// Returns a sink streaming rows to `path`, creating its directory: a Parquet dataset directory of
/// closed parts ([`ParquetDataset`]) if [`is_parquet`], the driver's CSV ([`CsvSink`], flushed at
/// least once a second) otherwise, so that a killed run leaves its rows readable. Call
/// [`Sink::finish`] after the run, also after a failed one: it flushes the CSV and closes the last
/// Parquet part.
pub fn table_sink(path: &Path) -> Result<Box<dyn Sink>, OutputError> {
    create_parent(path)?;
    let create = |source| OutputError::Create {
        path: path.to_path_buf(),
        source,
    };
    if is_parquet(path) {
        return parquet_dataset(path, true);
    }
    let file = fs::File::create(path).map_err(create)?;
    Ok(Box::new(CsvSink::new(io::BufWriter::new(file))))
}

/// Returns a sink that continues the output `path` of a checkpointed run at `position`: the
/// CSV cut to its length at the checkpoint and appended to ([`CsvSink::resume_file`]), or the
/// Parquet dataset without the parts written after the checkpoint
/// ([`ParquetDataset::open`](crate::parquet::ParquetDataset::open); a checkpoint closes the
/// open part, so none is ever rewritten).
pub fn resume_sink(path: &Path, position: &OutputPosition) -> Result<Box<dyn Sink>, OutputError> {
    let resume = |source| OutputError::Continue {
        path: path.to_path_buf(),
        source,
    };
    if is_parquet(path) {
        return parquet_dataset(path, false);
    }
    let sink = CsvSink::resume_file(path, position).map_err(resume)?;
    Ok(Box::new(sink))
}

/// Writes `table` to `path` through [`table_sink`]: CSV (the driver's contract: `t`, `q.*`,
/// `v.*`, `energy`, `residual.position`, `residual.velocity`, then the extras) or, for a name
/// ending in `.parquet`, Parquet with the same columns.
pub fn write_table(path: &Path, table: &Table) -> Result<(), OutputError> {
    let mut sink = table_sink(path)?;
    let write = |source| OutputError::Write {
        path: path.to_path_buf(),
        source,
    };
    sink.begin(table.columns(), Some(table.len()))
        .map_err(write)?;
    for row in table.rows() {
        sink.row(row).map_err(write)?;
    }
    sink.finish().map_err(write)
}

/// Fails if `path` names a Parquet file: `what` is written as CSV only (its rows hold text,
/// which Parquet tables of `f64` columns do not).
pub fn csv_only(path: &Path, what: &str) -> Result<(), OutputError> {
    if is_parquet(path) {
        return Err(OutputError::CsvOnly {
            path: path.to_path_buf(),
            what: what.to_string(),
        });
    }
    Ok(())
}

/// Creates (`create`) or opens (to continue it) the Parquet dataset directory `path`.
#[cfg(feature = "parquet")]
fn parquet_dataset(path: &Path, create: bool) -> Result<Box<dyn Sink>, OutputError> {
    let path = path.to_path_buf();
    let dataset = if create {
        ParquetDataset::create(&path).map_err(|source| OutputError::Create { path, source })?
    } else {
        ParquetDataset::open(&path).map_err(|source| OutputError::Continue { path, source })?
    };
    Ok(Box::new(dataset))
}

/// Refuses the Parquet name `path`: the feature `parquet` is off.
#[cfg(not(feature = "parquet"))]
fn parquet_dataset(path: &Path, _create: bool) -> Result<Box<dyn Sink>, OutputError> {
    Err(OutputError::ParquetDisabled {
        path: path.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh scratch directory for `label`.
    fn scratch(label: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("mechanism-output-{label}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    fn table() -> Table {
        let mut table = Table::default();
        table.begin(&["t".into(), "q.x".into()], None).unwrap();
        Sink::row(&mut table, &[0.0, 1.0]).unwrap();
        Sink::row(&mut table, &[0.1, -2.5]).unwrap();
        table
    }

    #[test]
    fn the_extension_chooses_the_format_in_any_case() {
        assert!(is_parquet(Path::new("out/run.parquet")));
        assert!(is_parquet(Path::new("run.Parquet")));
        assert!(!is_parquet(Path::new("run.csv")));
        assert!(!is_parquet(Path::new("parquet")));
        assert!(!is_parquet(Path::new("run.parquet.csv")));
    }

    #[test]
    fn a_table_is_written_as_the_drivers_csv_in_a_new_directory() {
        let dir = scratch("csv");
        let path = dir.join("nested").join("run.csv");
        write_table(&path, &table()).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "t,q.x\n0,1\n0.1,-2.5\n");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(feature = "parquet")]
    #[test]
    fn a_parquet_name_is_a_dataset_directory() {
        let dir = scratch("parquet");
        let path = dir.join("run.parquet");
        write_table(&path, &table()).unwrap();
        assert!(path.is_dir());
        assert!(fs::read_dir(&path).unwrap().count() >= 1);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn errors_name_the_path() {
        let dir = scratch("errors");
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("a-file");
        fs::write(&file, "").unwrap();
        // A directory cannot be created below a file.
        let below = file.join("run.csv");
        let error = table_sink(&below).err().unwrap();
        assert!(matches!(error, OutputError::Directory { .. }));
        assert!(error.to_string().contains(&file.display().to_string()));
        // A CSV cannot be continued without a byte position.
        let error = resume_sink(&dir.join("run.csv"), &OutputPosition::default())
            .err()
            .unwrap();
        assert!(error.to_string().starts_with("cannot continue "));
        assert!(error.to_string().contains("run.csv"));
        let error = csv_only(Path::new("x.parquet"), "the table").unwrap_err();
        assert_eq!(
            error.to_string(),
            "x.parquet: the table is written as CSV only (it has text cells); use a .csv name"
        );
        assert!(csv_only(Path::new("x.csv"), "the table").is_ok());
        fs::remove_dir_all(&dir).unwrap();
    }
}
