//! The driver's rows as a Parquet file: one `REQUIRED DOUBLE` column per CSV column, for runs
//! too large for CSV and for reading with pyarrow, polars or DuckDB.
//!
//! A [`ParquetSink`] is a [`Sink`]: give it to
//! [`Simulation::write_to`](crate::runtime::simulation::Simulation::write_to) in place of a
//! [`CsvSink`](crate::runtime::simulation::CsvSink), or write a [`Table`] kept in memory with
//! [`write_table`]. The columns are the CSV header's names in the same order (`t`, `q.x`,
//! `v.x`, `energy`, `residual.position`, …, `q.x[0]` for a family), and every value is the
//! `f64` the driver computed, bit for bit (NaN and infinities included), where CSV keeps the
//! shortest decimal that reads back to it.
//!
//! ```
//! use bytes::Bytes;
//! use mechanism::parquet::write_table;
//! use mechanism::runtime::simulation::{Sink, Table};
//! use parquet::file::reader::{FileReader, SerializedFileReader};
//! use parquet::record::RowAccessor;
//!
//! let mut table = Table::default();
//! table.begin(&["t".into(), "q.x".into()], None)?;
//! Sink::row(&mut table, &[0.0, 1.0])?; // `Table::row` is the getter
//! Sink::row(&mut table, &[0.1, f64::NAN])?;
//!
//! let bytes = write_table(Vec::new(), &table)?;
//! let file = SerializedFileReader::new(Bytes::from(bytes))?;
//! let schema = file.metadata().file_metadata().schema_descr();
//! assert_eq!(schema.column(1).name(), "q.x");
//! let rows = file.get_row_iter(None)?.collect::<Result<Vec<_>, _>>()?;
//! assert_eq!(rows.len(), 2);
//! assert_eq!(rows[1].get_double(0)?, 0.1);
//! assert!(rows[1].get_double(1)?.is_nan());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Rows are kept column by column in a buffer sized once in [`Sink::begin`] for one row group
//! (at most [`ROW_GROUP`] rows, fewer when the driver announces fewer rows or the table is very
//! wide), and a full buffer is encoded as one row group: [`Sink::row`] only copies the values,
//! while the encoder allocates once per row group, for its pages and their statistics. The
//! pages are compressed with Snappy and otherwise keep the `parquet` crate's defaults
//! (dictionary encoding that falls back to plain, page statistics), which every common reader
//! understands. [`Sink::finish`] writes the footer. A sink dropped before it leaves a file
//! without a footer, which readers reject, and the driver does not call it after a failed
//! step: call `finish` (or [`ParquetSink::into_inner`]) then to keep the rows up to the failure.
//!
//! Ensembles and shards: a Parquet file cannot be concatenated byte by byte the way the shards'
//! CSV files can (each file ends with its own footer), so a sharded run writes one file per
//! shard into one directory, and the readers take the directory as one dataset:
//! `pyarrow.dataset.dataset("out/runs/")`, `pl.scan_parquet("out/runs/*.parquet")`, DuckDB's
//! `SELECT * FROM 'out/runs/*.parquet'`. Add the member's index as a column (a
//! [`Column`](crate::runtime::simulation::Column) that returns it) so that the rows say which
//! member they belong to.

use std::io::{self, Write};
use std::sync::Arc;

use parquet::basic::{Compression, Repetition, Type as PhysicalType};
use parquet::data_type::DoubleType;
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

use crate::runtime::simulation::{Sink, Table};

/// The number of rows of a row group when it is not set with [`ParquetSink::with_row_group`]
/// (fewer for a table so wide that the buffer would exceed [`BUFFER_BYTES`]).
pub const ROW_GROUP: usize = 65_536;

/// The size of the row buffer above which a sink made with [`ParquetSink::new`] writes smaller
/// row groups than [`ROW_GROUP`]: 32 MiB, i.e. 64 columns of 65 536 rows.
pub const BUFFER_BYTES: usize = 32 << 20;

/// Streams the driver's rows into a Parquet file, one `REQUIRED DOUBLE` column per column; see
/// the [module documentation](self).
///
/// The writer need not be buffered: the encoder writes whole pages through its own buffer.
pub struct ParquetSink<W: Write + Send> {
    /// The rows per row group asked for, or `None` for the default.
    row_group: Option<usize>,
    stage: Stage<W>,
}

/// Where a [`ParquetSink`] is in its file.
enum Stage<W: Write + Send> {
    /// Before [`Sink::begin`]: nothing written yet.
    Ready(W),
    /// Between [`Sink::begin`] and [`Sink::finish`]: the header is written, rows are buffered.
    Writing(Box<Open<W>>),
    /// After [`Sink::finish`]: the footer is written.
    Finished(W),
    /// After an error that lost the writer (the file cannot be completed).
    Broken,
}

/// A file being written: the encoder and one row group's buffer.
struct Open<W: Write + Send> {
    file: SerializedFileWriter<W>,
    /// The number of columns.
    width: usize,
    /// The rows a row group holds.
    capacity: usize,
    /// The rows buffered so far, `< capacity` between calls.
    rows: usize,
    /// Column `j` of the buffered rows is `values[j * capacity..j * capacity + rows]`.
    values: Vec<f64>,
}

impl<W: Write + Send> ParquetSink<W> {
    /// Streams to `out`, in row groups of [`ROW_GROUP`] rows (fewer for very wide tables).
    pub fn new(out: W) -> Self {
        ParquetSink {
            row_group: None,
            stage: Stage::Ready(out),
        }
    }

    /// Streams to `out`, in row groups of `rows` rows (at least one): smaller groups cost less
    /// memory, larger ones compress and scan better.
    pub fn with_row_group(out: W, rows: usize) -> Self {
        ParquetSink {
            row_group: Some(rows.max(1)),
            stage: Stage::Ready(out),
        }
    }

    /// Writes the footer if [`Sink::begin`] was called and [`Sink::finish`] was not (e.g.
    /// after a failed run), and returns the writer.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.finish()?;
        match self.stage {
            Stage::Ready(out) | Stage::Finished(out) => Ok(out),
            Stage::Writing(_) | Stage::Broken => Err(broken()),
        }
    }

    /// Returns the rows of a row group for `width` columns and `hint` rows announced.
    fn capacity(&self, width: usize, hint: Option<usize>) -> usize {
        let rows = self
            .row_group
            .unwrap_or_else(|| ROW_GROUP.min(BUFFER_BYTES / (8 * width.max(1))));
        rows.min(hint.unwrap_or(usize::MAX)).max(1)
    }
}

impl<W: Write + Send> Sink for ParquetSink<W> {
    /// Writes the file header and allocates the row group's buffer; fails for no columns, or
    /// if called twice.
    fn begin(&mut self, columns: &[String], rows: Option<usize>) -> io::Result<()> {
        if columns.is_empty() {
            return Err(invalid("a Parquet file needs at least one column"));
        }
        let capacity = self.capacity(columns.len(), rows);
        let out = match std::mem::replace(&mut self.stage, Stage::Broken) {
            Stage::Ready(out) => out,
            stage => {
                self.stage = stage;
                return Err(invalid("begin called twice on one ParquetSink"));
            }
        };
        let file = SerializedFileWriter::new(out, schema(columns)?, properties())
            .map_err(|e| parquet_error("cannot start the Parquet file", e))?;
        self.stage = Stage::Writing(Box::new(Open {
            file,
            width: columns.len(),
            capacity,
            rows: 0,
            values: vec![0.0; columns.len() * capacity],
        }));
        Ok(())
    }

    /// Copies the row into the buffer, and encodes the buffer as a row group when it is full;
    /// fails with `InvalidInput` unless `values` has one value per column.
    fn row(&mut self, values: &[f64]) -> io::Result<()> {
        let open = match &mut self.stage {
            Stage::Writing(open) => open,
            Stage::Broken => return Err(broken()),
            _ => {
                return Err(invalid(
                    "a row before begin or after finish of a ParquetSink",
                ))
            }
        };
        if values.len() != open.width {
            return Err(invalid(&format!(
                "a row of {} values for {} Parquet columns",
                values.len(),
                open.width
            )));
        }
        for (j, &x) in values.iter().enumerate() {
            open.values[j * open.capacity + open.rows] = x;
        }
        open.rows += 1;
        if open.rows == open.capacity {
            open.write_row_group()?;
        }
        Ok(())
    }

    /// Writes the buffered rows as a last row group, then the footer, and flushes; does
    /// nothing if the file is already finished or was never begun.
    fn finish(&mut self) -> io::Result<()> {
        match std::mem::replace(&mut self.stage, Stage::Broken) {
            Stage::Writing(mut open) => {
                if open.rows > 0 {
                    open.write_row_group()?;
                }
                let mut out = open
                    .file
                    .into_inner()
                    .map_err(|e| parquet_error("cannot write the Parquet footer", e))?;
                out.flush()?;
                self.stage = Stage::Finished(out);
                Ok(())
            }
            Stage::Broken => Err(broken()),
            stage => {
                self.stage = stage;
                Ok(())
            }
        }
    }
}

impl<W: Write + Send> Open<W> {
    /// Encodes the buffered rows as one row group and empties the buffer.
    fn write_row_group(&mut self) -> io::Result<()> {
        let context = "cannot write a Parquet row group";
        let mut group = self
            .file
            .next_row_group()
            .map_err(|e| parquet_error(context, e))?;
        for column in self.values.chunks_exact(self.capacity) {
            let mut writer = group
                .next_column()
                .map_err(|e| parquet_error(context, e))?
                .ok_or_else(|| {
                    io::Error::other(format!(
                        "{context}: the schema has fewer columns than the rows"
                    ))
                })?;
            // The schema holds DOUBLE columns only, so `typed` finds the type it expects.
            writer
                .typed::<DoubleType>()
                .write_batch(&column[..self.rows], None, None)
                .map_err(|e| parquet_error(context, e))?;
            writer.close().map_err(|e| parquet_error(context, e))?;
        }
        group.close().map_err(|e| parquet_error(context, e))?;
        self.rows = 0;
        Ok(())
    }
}

impl<W: Write + Send> std::fmt::Debug for ParquetSink<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let stage = match &self.stage {
            Stage::Ready(_) => "ready",
            Stage::Writing(_) => "writing",
            Stage::Finished(_) => "finished",
            Stage::Broken => "broken",
        };
        f.debug_struct("ParquetSink")
            .field("row_group", &self.row_group)
            .field("stage", &stage)
            .finish()
    }
}

/// Writes `table` to `out` as a Parquet file (the columns and values of [`ParquetSink`]) and
/// returns the writer.
pub fn write_table<W: Write + Send>(out: W, table: &Table) -> io::Result<W> {
    let mut sink = ParquetSink::new(out);
    sink.begin(table.columns(), Some(table.len()))?;
    for row in table.rows() {
        sink.row(row)?;
    }
    sink.into_inner()
}

/// Returns the flat schema of one `REQUIRED DOUBLE` column per name.
fn schema(columns: &[String]) -> io::Result<Arc<Type>> {
    let fields = columns
        .iter()
        .map(|name| {
            Type::primitive_type_builder(name, PhysicalType::DOUBLE)
                .with_repetition(Repetition::REQUIRED)
                .build()
                .map(Arc::new)
        })
        .collect::<Result<Vec<_>, _>>()
        .and_then(|fields| {
            Type::group_type_builder("schema")
                .with_fields(fields)
                .build()
        })
        .map_err(|e| parquet_error("cannot make the Parquet schema", e))?;
    Ok(Arc::new(fields))
}

/// Returns the writer's settings: Snappy pages, the `parquet` crate's defaults otherwise.
fn properties() -> Arc<WriterProperties> {
    Arc::new(
        WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .build(),
    )
}

/// Returns an `InvalidInput` error with `message`.
fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message.to_owned())
}

/// Returns the error of a sink whose file could not be completed after an earlier error.
fn broken() -> io::Error {
    io::Error::other("the Parquet file cannot be completed after an earlier write error")
}

/// Returns `error` as an `io::Error` that says what failed (`context`); an I/O error keeps its
/// kind.
fn parquet_error(context: &str, error: ParquetError) -> io::Error {
    let kind = match &error {
        ParquetError::External(source) => source
            .downcast_ref::<io::Error>()
            .map_or(io::ErrorKind::Other, io::Error::kind),
        _ => io::ErrorKind::Other,
    };
    io::Error::new(kind, format!("{context}: {error}"))
}
