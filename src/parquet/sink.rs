//! One Parquet file: the [`ParquetSink`] (rows buffered column by column, one row group per
//! full buffer, the footer at [`Sink::finish`]) and [`write_table`] for a table in memory.

use std::io::{self, Write};
use std::sync::Arc;

use parquet::data_type::{DoubleType, Int64Type};
use parquet::file::writer::SerializedFileWriter;

use super::layout::{Layout, Plan, Source};
use super::{broken, invalid, parquet_error, properties, BUFFER_BYTES, ROW_GROUP};
use crate::runtime::simulation::{Sink, Table};

/// Streams the driver's rows into a Parquet file, one `REQUIRED DOUBLE` column per column; see
/// the [module documentation](super).
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
    pub(super) fn begin_planned(&mut self, plan: Arc<Plan>, hint: Option<usize>) -> io::Result<()> {
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
pub(super) fn row_group_rows(
    requested: Option<usize>,
    values: usize,
    hint: Option<usize>,
) -> usize {
    let rows = requested.unwrap_or_else(|| ROW_GROUP.min(BUFFER_BYTES / (8 * values.max(1))));
    rows.min(hint.unwrap_or(usize::MAX)).max(1)
}
