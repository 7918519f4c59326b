//! A [`ParquetDataset`]: a directory of closed parts, so that a killed run leaves every part
//! closed so far readable.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::layout::{Layout, Plan};
use super::sink::{row_group_rows, ParquetSink};
use super::{invalid, PART_SECONDS};
use crate::runtime::simulation::{OutputPosition, Sink};

/// Streams the driver's rows into a directory of Parquet files that readers take as one table and
/// that a killed run leaves readable; see the [module
/// documentation](super#output-that-survives-a-crash-a-dataset-directory).
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
    /// The rows of a part, or `None` for [`ROW_GROUP`](super::ROW_GROUP) (fewer for wide tables).
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
        Ok(Self::at(dir))
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
        Ok(Self::at(dir))
    }

    /// Returns the dataset `dir` with the default settings and no part written or open, as
    /// both [`create`](Self::create) and [`open`](Self::open) start it.
    fn at(dir: &Path) -> Self {
        ParquetDataset {
            dir: dir.to_path_buf(),
            rows_per_part: None,
            seconds: PART_SECONDS,
            layout: Layout::Auto,
            plan: None,
            capacity: 1,
            parts: 0,
            open: None,
        }
    }

    /// Closes a part after `rows` rows (at least one) instead of [`ROW_GROUP`](super::ROW_GROUP).
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
