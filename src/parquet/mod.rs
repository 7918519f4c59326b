//! The driver's rows as a Parquet file, for runs too large for CSV and for reading with
//! pyarrow, polars or DuckDB: one `REQUIRED DOUBLE` column per CSV column for a model without
//! families, and a long table (one row per member and output time) for a family model.
//!
//! A [`ParquetSink`] is a [`Sink`]: give it to
//! [`Simulation::write_to`](crate::runtime::simulation::Simulation::write_to) in place of a
//! [`CsvSink`](crate::runtime::simulation::CsvSink), or write a [`Table`] kept in memory with
//! [`write_table`]. In the wide layout the columns are the CSV header's names in the same order
//! (`t`, `q.x`, `v.x`, `energy`, `residual.position`, …), and every value is the `f64` the
//! driver computed, bit for bit (NaN and infinities included), where CSV keeps the shortest
//! decimal that reads back to it.
//!
//! # The long layout of a family model
//!
//! A family model's CSV has one column per member and quantity (`q.x[0]`, `q.y[0]`, `q.x[1]`,
//! …: 400 000 columns for a chain of 100 000 pendula), the examples' wide contract. As Parquet
//! that shape is the format's worst case: every column chunk of every row group carries its
//! own metadata, page header and statistics, so the wide file was 6 times larger than the CSV
//! and 4–5 times slower to write (issue 28). The long table below is smaller and faster than
//! the CSV: for that chain (SPOOK, 21 rows, `--out x.csv` against `--out x.parquet`) the CSV is
//! 165 MB and its rows cost 1.6 s of wall time, the long dataset 73 MB and 0.6 s. With
//! [`Layout::Auto`] (the default) a sink whose columns include a family therefore writes a
//! long ("tidy") table instead, one row per output time and member:
//!
//! | `t` | `i` | `q.x` | `q.y` | `v.x` | `v.y` | `energy` | `residual.position` | … |
//! | --- | --- | --- | --- | --- | --- | --- | --- | --- |
//! | 0.0 | 0 | … | … | … | … | … | … | |
//! | 0.0 | 1 | … | … | … | … | … | … | |
//!
//! `t` (the driver's first column), the member index `i` ([`MEMBER_COLUMN`], `INT64`), one
//! `DOUBLE` column per family quantity (`q.x` holds `q.x[i]`) in order of first appearance,
//! then the other scalar columns (`energy`, `residual.*`, extra columns), repeated on each of
//! the time's rows. Every value is still the driver's `f64` bit for bit, and a table row of
//! member `i` at time `t` holds exactly the wide row's `q.x[i]`, `v.x[i]`, ….
//!
//! Why long rather than list columns (one row per time, `q.x` a list of `N` values): a long
//! table is what every reader filters, groups and joins without a special operation (`WHERE
//! i = 7`, `GROUP BY t`), where a list column needs `explode`/`unnest` first, and DuckDB and
//! polars push a filter on `i` down to the row groups' statistics. It compresses as well: the
//! repeated `t` and scalar columns are runs of one dictionary index, which the RLE encoding
//! stores in a few bytes per run, and the family columns are the same doubles a list column
//! would hold. And it streams through the dataset's parts unchanged: a driver row becomes `N`
//! table rows in the same part, so a part closed before a kill holds whole output times, with
//! their scalars. Why the scalars are repeated rather than written to a second table: one
//! table keeps the output one dataset that readers take as it is, and keeps each part
//! self-contained, at the cost of the runs above.
//!
//! A family is recognized by names that end in `[k]`; the long layout is used when every family
//! quantity has the same members `0..N` and no long column name is taken (a scalar column
//! named `i`, say); otherwise, and with [`Layout::Wide`] ([`ParquetSink::with_layout`],
//! [`ParquetDataset::with_layout`]), the table is wide. The CSV stays wide in every case.
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
//! # Output that survives a crash: a dataset directory
//!
//! A Parquet file is readable only once its footer is written, at the end, and a run killed
//! with SIGKILL (out of time on a cluster, out of memory) never gets there: one file would lose
//! every row. A [`ParquetDataset`] therefore writes `FILE.parquet/` as a directory of complete
//! files, `part-000000.parquet`, `part-000001.parquet`, …, one row group each, and closes a
//! part (footer written, then renamed into place) after [`ROW_GROUP`] rows or
//! [`PART_SECONDS`] of wall time, whichever comes first. The part being written has a name
//! that starts with a dot and does not end in `.parquet` (`.part-000002.parquet.inprogress`),
//! which every reader skips, and the rename that publishes a closed part is atomic, so at any
//! moment, killed or not, the directory holds only complete files: every row group closed so
//! far, and at most the last ten seconds or 65 536 rows lost. The readers take the directory
//! as one table, the parts in name order: `pyarrow.parquet.read_table("out/run.parquet")`
//! (pyarrow's datasets skip names that start with `.` or `_`),
//! `pl.read_parquet("out/run.parquet/*.parquet")` in polars, and
//! `SELECT * FROM 'out/run.parquet/*.parquet'` in DuckDB. The alternatives do not survive a
//! kill: a footer rewritten after every row group (the format has one footer, at the end, so
//! the file would be rewritten or truncated at each step), or a side index (which no reader
//! knows).
//!
//! Ensembles and shards: a Parquet file cannot be concatenated byte by byte the way the shards'
//! CSV files can (each file ends with its own footer), so a sharded run writes one file per
//! shard into one directory, and the readers take the directory as one dataset:
//! `pyarrow.dataset.dataset("out/runs/")`, `pl.scan_parquet("out/runs/*.parquet")`, DuckDB's
//! `SELECT * FROM 'out/runs/*.parquet'`. Add the member's index as a column (a
//! [`Column`](crate::runtime::simulation::Column) that returns it) so that the rows say which
//! member they belong to.
//!
//! [`Sink`]: crate::runtime::simulation::Sink
//! [`Sink::begin`]: crate::runtime::simulation::Sink::begin
//! [`Sink::row`]: crate::runtime::simulation::Sink::row
//! [`Sink::finish`]: crate::runtime::simulation::Sink::finish
//! [`Table`]: crate::runtime::simulation::Table

mod dataset;
mod layout;
mod sink;

use std::io;
use std::sync::Arc;
use std::time::Duration;

use parquet::basic::Compression;
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;

pub use dataset::ParquetDataset;
pub use layout::{Layout, MEMBER_COLUMN};
pub use sink::{write_table, ParquetSink};

/// The number of rows of a row group when it is not set with [`ParquetSink::with_row_group`]
/// (fewer for a table so wide that the buffer would exceed [`BUFFER_BYTES`]).
pub const ROW_GROUP: usize = 65_536;

/// The size of the row buffer above which a sink made with [`ParquetSink::new`] writes smaller
/// row groups than [`ROW_GROUP`]: 32 MiB, i.e. 64 columns of 65 536 rows.
pub const BUFFER_BYTES: usize = 32 << 20;

/// The wall time after which a [`ParquetDataset`] closes the part it writes, even if the part
/// has fewer than [`ROW_GROUP`] rows: ten seconds, so that a killed run loses at most the
/// last ten seconds of rows while a day-long run writes at most 8 640 parts.
pub const PART_SECONDS: Duration = Duration::from_secs(10);

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
