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

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parquet::basic::{Compression, Repetition, Type as PhysicalType};
use parquet::data_type::{DoubleType, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

use crate::runtime::simulation::{OutputPosition, Sink, Table};

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

/// Streams the driver's rows into a Parquet file, one `REQUIRED DOUBLE` column per column; see
/// the [module documentation](self).
///
/// The writer need not be buffered: the encoder writes whole pages through its own buffer.
pub struct ParquetSink<W: Write + Send> {
    /// The driver rows per row group asked for, or `None` for the default.
    row_group: Option<usize>,
    /// The layout asked for.
    layout: Layout,
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
    /// Where each table column's values come from.
    plan: Arc<Plan>,
    /// The driver rows a row group holds.
    capacity: usize,
    /// The driver rows buffered so far, `< capacity` between calls.
    rows: usize,
    /// `DOUBLE` column `c` of the buffered table rows is `values[c * n..c * n + rows * members]`
    /// with `n = capacity * members`.
    values: Vec<f64>,
    /// The member index of every table row of a full buffer (`k % members`), for the long
    /// layout's `i` column; empty for the wide layout.
    members: Vec<i64>,
}

impl<W: Write + Send> ParquetSink<W> {
    /// Streams to `out`, in row groups of [`ROW_GROUP`] rows (fewer for very wide tables).
    pub fn new(out: W) -> Self {
        ParquetSink {
            row_group: None,
            layout: Layout::Auto,
            stage: Stage::Ready(out),
        }
    }

    /// Streams to `out`, in row groups of `rows` driver rows (at least one; each is `N` table
    /// rows in the long layout of a family of `N` members): smaller groups cost less memory,
    /// larger ones compress and scan better.
    pub fn with_row_group(out: W, rows: usize) -> Self {
        ParquetSink {
            row_group: Some(rows.max(1)),
            layout: Layout::Auto,
            stage: Stage::Ready(out),
        }
    }

    /// Lays the columns out as `layout` says instead of [`Layout::Auto`]; takes effect at
    /// [`Sink::begin`].
    pub fn with_layout(mut self, layout: Layout) -> Self {
        self.layout = layout;
        self
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

    /// Writes the file header for the columns `plan` lays out and allocates the row group's
    /// buffer (`hint`: the driver rows announced); fails if called twice.
    fn begin_planned(&mut self, plan: Arc<Plan>, hint: Option<usize>) -> io::Result<()> {
        let capacity = row_group_rows(self.row_group, plan.values_per_row(), hint);
        let out = match std::mem::replace(&mut self.stage, Stage::Broken) {
            Stage::Ready(out) => out,
            stage => {
                self.stage = stage;
                return Err(invalid("begin called twice on one ParquetSink"));
            }
        };
        let file = SerializedFileWriter::new(out, plan.schema()?, properties())
            .map_err(|e| parquet_error("cannot start the Parquet file", e))?;
        let table_rows = capacity * plan.members;
        let members = match plan.member_column {
            Some(_) => (0..table_rows).map(|k| (k % plan.members) as i64).collect(),
            None => Vec::new(),
        };
        self.stage = Stage::Writing(Box::new(Open {
            file,
            capacity,
            rows: 0,
            values: vec![0.0; plan.sources.len() * table_rows],
            members,
            plan,
        }));
        Ok(())
    }
}

impl<W: Write + Send> Sink for ParquetSink<W> {
    /// Chooses the layout, writes the file header and allocates the row group's buffer; fails
    /// for no columns, or if called twice.
    fn begin(&mut self, columns: &[String], rows: Option<usize>) -> io::Result<()> {
        let plan = Plan::new(columns, self.layout)?;
        self.begin_planned(Arc::new(plan), rows)
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
        if values.len() != open.plan.width {
            return Err(invalid(&format!(
                "a row of {} values for the {} columns given to begin",
                values.len(),
                open.plan.width
            )));
        }
        let members = open.plan.members;
        let (table_rows, first) = (open.capacity * members, open.rows * members);
        for (source, column) in open
            .plan
            .sources
            .iter()
            .zip(open.values.chunks_exact_mut(table_rows))
        {
            let rows = &mut column[first..first + members];
            match source {
                Source::Scalar(j) => rows.fill(values[*j]),
                Source::Family(columns) => {
                    for (x, &j) in rows.iter_mut().zip(columns) {
                        *x = values[j];
                    }
                }
            }
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
        let members = self.plan.members;
        let rows = self.rows * members;
        let mut doubles = self.values.chunks_exact(self.capacity * members);
        for c in 0..self.plan.names.len() {
            let mut writer = group
                .next_column()
                .map_err(|e| parquet_error(context, e))?
                .ok_or_else(|| {
                    io::Error::other(format!(
                        "{context}: the schema has fewer columns than the rows"
                    ))
                })?;
            // The schema's types are the plan's: INT64 for the member column, DOUBLE for the
            // rest, so `typed` finds the type it expects.
            if self.plan.member_column == Some(c) {
                writer
                    .typed::<Int64Type>()
                    .write_batch(&self.members[..rows], None, None)
                    .map_err(|e| parquet_error(context, e))?;
            } else {
                let column = doubles.next().ok_or_else(|| {
                    io::Error::other(format!("{context}: fewer buffers than columns"))
                })?;
                writer
                    .typed::<DoubleType>()
                    .write_batch(&column[..rows], None, None)
                    .map_err(|e| parquet_error(context, e))?;
            }
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
            .field("layout", &self.layout)
            .field("stage", &stage)
            .finish()
    }
}

/// Streams the driver's rows into a directory of Parquet files that readers take as one table
/// and that a killed run leaves readable; see the [module documentation](self#output-that-survives-a-crash-a-dataset-directory).
///
/// ```
/// use mechanism::parquet::ParquetDataset;
/// use mechanism::runtime::simulation::Sink;
///
/// let dir = std::env::temp_dir().join(format!("mechanism-doc-{}.parquet", std::process::id()));
/// let mut sink = ParquetDataset::create(&dir)?.rows_per_part(2);
/// sink.begin(&["t".into(), "q.x".into()], None)?;
/// for i in 0..5 {
///     sink.row(&[i as f64, 1.0])?;
/// }
/// assert_eq!(sink.parts(), 2, "two parts of two rows are closed, the fifth row is open");
/// sink.finish()?;
/// let names: Vec<_> = std::fs::read_dir(&dir)?.map(|e| e.unwrap().file_name()).collect();
/// assert_eq!(names.len(), 3);
/// std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct ParquetDataset {
    dir: PathBuf,
    /// The rows of a part, or `None` for [`ROW_GROUP`] (fewer for wide tables).
    rows_per_part: Option<usize>,
    /// The wall time after which a part is closed.
    seconds: Duration,
    /// The layout asked for.
    layout: Layout,
    /// The layout of the columns, from [`Sink::begin`].
    plan: Option<Arc<Plan>>,
    /// The rows a part holds, from the width of the table.
    capacity: usize,
    /// The number of parts closed so far (the next part's number).
    parts: usize,
    /// The part being written.
    open: Option<Part>,
}

/// A part being written: its sink, its temporary name and when it was started.
#[derive(Debug)]
struct Part {
    sink: ParquetSink<File>,
    temporary: PathBuf,
    rows: usize,
    started: Instant,
}

impl ParquetDataset {
    /// Makes the directory `dir` (and its parents) for a dataset, removing the parts of an
    /// earlier run in it (`part-*.parquet` and `.part-*.inprogress`, as creating a CSV file
    /// truncates an earlier one; other files are left alone); fails, naming `dir`, if it
    /// cannot be made or is a file.
    pub fn create(dir: &Path) -> io::Result<Self> {
        let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", dir.display()));
        if dir.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!(
                    "{} is a file; a Parquet output is a directory of parts (remove the file)",
                    dir.display()
                ),
            ));
        }
        fs::create_dir_all(dir).map_err(named)?;
        for entry in fs::read_dir(dir).map_err(named)? {
            let path = entry.map_err(named)?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let ours = (name.starts_with("part-") && name.ends_with(".parquet"))
                || (name.starts_with(".part-") && name.ends_with(".inprogress"));
            if ours && path.is_file() {
                fs::remove_file(&path).map_err(named)?;
            }
        }
        Ok(ParquetDataset {
            dir: dir.to_path_buf(),
            rows_per_part: None,
            seconds: PART_SECONDS,
            layout: Layout::Auto,
            plan: None,
            capacity: 1,
            parts: 0,
            open: None,
        })
    }

    /// Opens the dataset `dir` of a checkpointed run to continue it, leaving its parts alone
    /// until [`Sink::resume`] removes those written after the checkpoint; fails, naming
    /// `dir`, if it is not a directory.
    pub fn open(dir: &Path) -> io::Result<Self> {
        if !dir.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{} is not the dataset directory of a run", dir.display()),
            ));
        }
        Ok(ParquetDataset {
            dir: dir.to_path_buf(),
            rows_per_part: None,
            seconds: PART_SECONDS,
            layout: Layout::Auto,
            plan: None,
            capacity: 1,
            parts: 0,
            open: None,
        })
    }

    /// Closes a part after `rows` rows (at least one) instead of [`ROW_GROUP`].
    pub fn rows_per_part(mut self, rows: usize) -> Self {
        self.rows_per_part = Some(rows.max(1));
        self
    }

    /// Closes a part after `interval` of wall time instead of [`PART_SECONDS`].
    pub fn seconds_per_part(mut self, interval: Duration) -> Self {
        self.seconds = interval;
        self
    }

    /// Lays the columns out as `layout` says instead of [`Layout::Auto`]; takes effect at
    /// [`Sink::begin`].
    pub fn with_layout(mut self, layout: Layout) -> Self {
        self.layout = layout;
        self
    }

    /// Returns the directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Returns the number of parts closed so far.
    pub fn parts(&self) -> usize {
        self.parts
    }

    /// Starts the next part under its temporary name; fails before [`Sink::begin`].
    fn open_part(&mut self) -> io::Result<&mut Part> {
        let plan = self
            .plan
            .clone()
            .ok_or_else(|| invalid("a row before begin of a ParquetDataset"))?;
        let temporary = self
            .dir
            .join(format!(".part-{:06}.parquet.inprogress", self.parts));
        let file = File::create(&temporary).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot write {}: {e}", temporary.display()),
            )
        })?;
        let mut sink = ParquetSink::with_row_group(file, self.capacity);
        sink.begin_planned(plan, None)?;
        Ok(self.open.insert(Part {
            sink,
            temporary,
            rows: 0,
            started: Instant::now(),
        }))
    }

    /// Writes the open part's footer and renames it into place.
    fn close_part(&mut self) -> io::Result<()> {
        let Some(mut part) = self.open.take() else {
            return Ok(());
        };
        part.sink.finish()?;
        let name = self.dir.join(format!("part-{:06}.parquet", self.parts));
        fs::rename(&part.temporary, &name).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "cannot rename {} to {}: {e}",
                    part.temporary.display(),
                    name.display()
                ),
            )
        })?;
        self.parts += 1;
        Ok(())
    }
}

impl Sink for ParquetDataset {
    /// Chooses the layout and sizes the parts; fails for no columns. The first part is started
    /// with the first row.
    fn begin(&mut self, columns: &[String], _rows: Option<usize>) -> io::Result<()> {
        let plan = Plan::new(columns, self.layout)?;
        self.close_part()?;
        self.capacity = row_group_rows(self.rows_per_part, plan.values_per_row(), None);
        self.plan = Some(Arc::new(plan));
        Ok(())
    }

    /// Writes the row into the open part (starting one if needed) and closes the part when it
    /// is full or older than its time bound.
    fn row(&mut self, values: &[f64]) -> io::Result<()> {
        let (capacity, seconds) = (self.capacity, self.seconds);
        let part = match self.open {
            Some(ref mut part) => part,
            None => self.open_part()?,
        };
        part.sink.row(values)?;
        part.rows += 1;
        if part.rows >= capacity || part.started.elapsed() >= seconds {
            self.close_part()?;
        }
        Ok(())
    }

    /// Closes the open part; with no row written at all, writes one part without rows, so
    /// that the dataset has its schema.
    fn finish(&mut self) -> io::Result<()> {
        if self.open.is_none() && self.parts == 0 && self.plan.is_some() {
            self.open_part()?;
        }
        self.close_part()
    }

    /// Closes the open part and returns the number of closed parts: a checkpoint falls on a
    /// part boundary, so that a resumed run continues with the next part and no part is ever
    /// rewritten. (Frequent checkpoints make more, smaller parts; the table is the same.)
    fn position(&mut self) -> io::Result<OutputPosition> {
        self.close_part()?;
        Ok(OutputPosition {
            rows: 0,
            bytes: None,
            crc32: None,
            parts: Some(self.parts as u64),
        })
    }

    /// Continues a dataset at a checkpoint's `position`: the parts it had closed must all be
    /// there (else `InvalidData`, naming the first missing one); the parts written after it
    /// and any part in progress are removed, and the run writes on from the next part.
    fn resume(&mut self, columns: &[String], position: &OutputPosition) -> io::Result<()> {
        let Some(parts) = position.parts.and_then(|p| usize::try_from(p).ok()) else {
            return Err(invalid(
                "the checkpoint records no Parquet dataset position",
            ));
        };
        if let Some(missing) =
            (0..parts).find(|i| !self.dir.join(format!("part-{i:06}.parquet")).is_file())
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: part {missing} of the {parts} closed at the checkpoint is missing",
                    self.dir.display()
                ),
            ));
        }
        for entry in fs::read_dir(&self.dir)? {
            let path = entry?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let later = name
                .strip_prefix("part-")
                .and_then(|rest| rest.strip_suffix(".parquet"))
                .and_then(|number| number.parse::<usize>().ok())
                .is_some_and(|number| number >= parts);
            let in_progress = name.starts_with(".part-") && name.ends_with(".inprogress");
            if (later || in_progress) && path.is_file() {
                fs::remove_file(&path)?;
            }
        }
        self.begin(columns, None)?;
        self.parts = parts;
        Ok(())
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

/// Returns the driver rows of a row group: `requested`, or [`ROW_GROUP`] (fewer when the
/// buffer of `values` per driver row would exceed [`BUFFER_BYTES`]), at most `hint`, at least
/// one.
fn row_group_rows(requested: Option<usize>, values: usize, hint: Option<usize>) -> usize {
    let rows = requested.unwrap_or_else(|| ROW_GROUP.min(BUFFER_BYTES / (8 * values.max(1))));
    rows.min(hint.unwrap_or(usize::MAX)).max(1)
}

/// How the driver's columns are laid out in a Parquet table.
///
/// The CSV is always wide (`q.x[0]`, `q.x[1]`, … as columns, the examples' contract); Parquet
/// is long for a family model unless [`Layout::Wide`] is asked for. See the [module
/// documentation](self#the-long-layout-of-a-family-model) for why.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// Long when the columns include a family (names `name[i]` with every quantity over the
    /// same members `0..N`, and no column already named like a long column), wide otherwise.
    #[default]
    Auto,
    /// One `DOUBLE` column per driver column, as the CSV.
    Wide,
}

/// The name of the long layout's member column.
pub const MEMBER_COLUMN: &str = "i";

/// Where a `DOUBLE` column of the table takes its values from in a driver row.
#[derive(Debug)]
enum Source {
    /// Driver column `j`, the same in each of the driver row's table rows.
    Scalar(usize),
    /// Driver column `columns[k]` in the table row of member `k`.
    Family(Vec<usize>),
}

/// The layout of one table: its columns and where their values come from.
#[derive(Debug)]
struct Plan {
    /// The table's column names, in order.
    names: Vec<String>,
    /// The driver's columns per row.
    width: usize,
    /// The table rows per driver row: the family's `N` in the long layout, 1 in the wide one.
    members: usize,
    /// The sources of the `DOUBLE` columns, in table order (the member column skipped).
    sources: Vec<Source>,
    /// The position of the `INT64` member column, in the long layout.
    member_column: Option<usize>,
}

impl Plan {
    /// Lays `columns` out as `layout` says; fails for no columns.
    fn new(columns: &[String], layout: Layout) -> io::Result<Plan> {
        if columns.is_empty() {
            return Err(invalid("a Parquet file needs at least one column"));
        }
        let wide = || Plan {
            names: columns.to_vec(),
            width: columns.len(),
            members: 1,
            sources: (0..columns.len()).map(Source::Scalar).collect(),
            member_column: None,
        };
        if layout == Layout::Wide {
            return Ok(wide());
        }
        Ok(Plan::long(columns).unwrap_or_else(wide))
    }

    /// Returns the long layout of `columns`, or `None` when they have no family, when the
    /// family's quantities do not all have the members `0..N`, or when a long column's name is
    /// taken: the first scalar column (`t`), the member column `i`, one column per family
    /// quantity (`q.x` for `q.x[0]`, `q.x[1]`, …) in order of first appearance, then the other
    /// scalar columns.
    fn long(columns: &[String]) -> Option<Plan> {
        let mut scalars = Vec::new();
        let mut quantities: Vec<(&str, Vec<Option<usize>>)> = Vec::new();
        for (j, name) in columns.iter().enumerate() {
            let Some((quantity, member)) = member_of(name) else {
                scalars.push(j);
                continue;
            };
            if member >= columns.len() {
                return None; // some member below it has no column
            }
            let at = match quantities.iter().position(|(q, _)| *q == quantity) {
                Some(at) => at,
                None => {
                    quantities.push((quantity, Vec::new()));
                    quantities.len() - 1
                }
            };
            let members = &mut quantities[at].1;
            if members.len() <= member {
                members.resize(member + 1, None);
            }
            if members[member].replace(j).is_some() {
                return None;
            }
        }
        let members = quantities.first()?.1.len();
        let mut families = Vec::with_capacity(quantities.len());
        for (_, of) in &quantities {
            if of.len() != members {
                return None;
            }
            families.push(of.iter().copied().collect::<Option<Vec<usize>>>()?);
        }
        let (first, rest) = scalars
            .split_first()
            .map_or((None, &[][..]), |(f, r)| (Some(*f), r));
        let mut names: Vec<String> = first.iter().map(|&j| columns[j].clone()).collect();
        let mut sources: Vec<Source> = first.into_iter().map(Source::Scalar).collect();
        let member_column = Some(names.len());
        names.push(MEMBER_COLUMN.into());
        for ((quantity, _), family) in quantities.iter().zip(families) {
            names.push((*quantity).into());
            sources.push(Source::Family(family));
        }
        for &j in rest {
            names.push(columns[j].clone());
            sources.push(Source::Scalar(j));
        }
        let mut sorted: Vec<&String> = names.iter().collect();
        sorted.sort();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            return None;
        }
        Some(Plan {
            names,
            width: columns.len(),
            members,
            sources,
            member_column,
        })
    }

    /// Returns the values the buffer holds per driver row.
    fn values_per_row(&self) -> usize {
        self.names.len() * self.members
    }

    /// Returns the flat schema: `REQUIRED DOUBLE` columns, and the `REQUIRED INT64` member
    /// column of the long layout.
    fn schema(&self) -> io::Result<Arc<Type>> {
        let fields = self
            .names
            .iter()
            .enumerate()
            .map(|(c, name)| {
                let physical = if self.member_column == Some(c) {
                    PhysicalType::INT64
                } else {
                    PhysicalType::DOUBLE
                };
                Type::primitive_type_builder(name, physical)
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
}

/// Returns the quantity and member of a family column's name (`("q.x", 12)` for `q.x[12]`), or
/// `None` for a scalar column.
fn member_of(name: &str) -> Option<(&str, usize)> {
    let (quantity, index) = name.strip_suffix(']')?.rsplit_once('[')?;
    if quantity.is_empty() || index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((quantity, index.parse().ok()?))
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
