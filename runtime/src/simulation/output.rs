//! Where rows go: an in-memory [`Table`] or a streamed [`CsvSink`], with the examples' CSV
//! contract.
//!
//! The CSV is written here rather than through the `csv` crate: a row is numbers only, which
//! need no quoting, and a header name is quoted as RFC 4180 says when it needs it; a row goes
//! straight into the writer without a per-row allocation. The facade crate adds a Parquet sink,
//! `mechanism::parquet::ParquetSink`.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::time::{Duration, Instant};

pub use crate::checkpoint::OutputPosition;

/// Receives the driver's rows: the column names once, then one row per output time.
///
/// Rows are written from a buffer the driver owns, so a sink that stores or streams them
/// without growing a buffer per row keeps the run free of heap allocation.
pub trait Sink {
    /// Receives the column names before the first row; `rows` is the number of rows the
    /// schedule will write when it is known (a hint for reserving).
    fn begin(&mut self, columns: &[String], rows: Option<usize>) -> io::Result<()>;

    /// Receives one more row, with as many values as there are columns.
    fn row(&mut self, values: &[f64]) -> io::Result<()>;

    /// Reserves room for `additional` more rows; called once, after the first step, when the
    /// number of rows of a step-based schedule can be estimated from the step size.
    fn reserve(&mut self, _additional: usize) {}

    /// Flushes what is buffered; called when the run reaches its end.
    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// Flushes what is buffered and returns where the output is, for a checkpoint: the byte
    /// length of a file the rows stream into, or the parts of a dataset closed so far. The
    /// default, for a sink that keeps nothing a resumed run must continue (a [`Table`] in
    /// memory), is no position.
    fn position(&mut self) -> io::Result<OutputPosition> {
        Ok(OutputPosition::default())
    }

    /// Continues the output of a checkpointed run at `position`, with `columns`, instead of
    /// [`begin`](Self::begin): a sink that writes a file checks that it holds exactly what the
    /// run had written at the checkpoint and writes no header. The default begins afresh (a
    /// [`Table`] then holds the rows from the checkpoint on).
    fn resume(&mut self, columns: &[String], position: &OutputPosition) -> io::Result<()> {
        let _ = position;
        self.begin(columns, None)
    }
}

/// Forwards to the boxed sink, so that a sink chosen at run time (`Box<dyn Sink>`, e.g. CSV or
/// Parquet after a file's extension) can be given to the driver.
impl<S: Sink + ?Sized> Sink for Box<S> {
    fn begin(&mut self, columns: &[String], rows: Option<usize>) -> io::Result<()> {
        (**self).begin(columns, rows)
    }

    fn row(&mut self, values: &[f64]) -> io::Result<()> {
        (**self).row(values)
    }

    fn reserve(&mut self, additional: usize) {
        (**self).reserve(additional)
    }

    fn finish(&mut self) -> io::Result<()> {
        (**self).finish()
    }

    fn position(&mut self) -> io::Result<OutputPosition> {
        (**self).position()
    }

    fn resume(&mut self, columns: &[String], position: &OutputPosition) -> io::Result<()> {
        (**self).resume(columns, position)
    }
}

/// Sends every row to both sinks (e.g. a [`Table`] kept for a plot and a file streamed while
/// the run goes on, so that a killed run leaves its rows on disk).
///
/// Both sinks get every call, even when the first fails; the first error is returned.
impl<A: Sink, B: Sink> Sink for (A, B) {
    fn begin(&mut self, columns: &[String], rows: Option<usize>) -> io::Result<()> {
        let first = self.0.begin(columns, rows);
        let second = self.1.begin(columns, rows);
        first.and(second)
    }

    fn row(&mut self, values: &[f64]) -> io::Result<()> {
        let first = self.0.row(values);
        let second = self.1.row(values);
        first.and(second)
    }

    fn reserve(&mut self, additional: usize) {
        self.0.reserve(additional);
        self.1.reserve(additional);
    }

    fn finish(&mut self) -> io::Result<()> {
        let first = self.0.finish();
        let second = self.1.finish();
        first.and(second)
    }

    /// Returns the first sink's file position where it has one, else the second's (the
    /// usual pair is a [`Table`] for plots and a file).
    fn position(&mut self) -> io::Result<OutputPosition> {
        let (first, second) = (self.0.position()?, self.1.position()?);
        let file = if first.bytes.is_some() { first } else { second };
        Ok(OutputPosition {
            rows: first.rows.max(second.rows),
            bytes: file.bytes,
            crc32: file.crc32,
            parts: first.parts.or(second.parts),
        })
    }

    fn resume(&mut self, columns: &[String], position: &OutputPosition) -> io::Result<()> {
        self.0.resume(columns, position)?;
        self.1.resume(columns, position)
    }
}

/// Forwards to the sink if there is one and discards the rows otherwise, so that an output
/// chosen at run time can be absent (the second half of a `(Table, Option<S>)` pair).
impl<S: Sink> Sink for Option<S> {
    fn begin(&mut self, columns: &[String], rows: Option<usize>) -> io::Result<()> {
        self.as_mut()
            .map_or(Ok(()), |sink| sink.begin(columns, rows))
    }

    fn row(&mut self, values: &[f64]) -> io::Result<()> {
        self.as_mut().map_or(Ok(()), |sink| sink.row(values))
    }

    fn reserve(&mut self, additional: usize) {
        if let Some(sink) = self {
            sink.reserve(additional);
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        self.as_mut().map_or(Ok(()), Sink::finish)
    }

    fn position(&mut self) -> io::Result<OutputPosition> {
        self.as_mut()
            .map_or(Ok(OutputPosition::default()), Sink::position)
    }

    fn resume(&mut self, columns: &[String], position: &OutputPosition) -> io::Result<()> {
        self.as_mut()
            .map_or(Ok(()), |sink| sink.resume(columns, position))
    }
}

/// Rows kept in memory, row-major, with their column names.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    columns: Vec<String>,
    values: Vec<f64>,
}

impl Table {
    /// Returns the column names.
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// Returns the number of rows.
    pub fn len(&self) -> usize {
        if self.columns.is_empty() {
            0
        } else {
            self.values.len() / self.columns.len()
        }
    }

    /// Returns whether there is no row.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Returns row `i`, if there is one.
    pub fn row(&self, i: usize) -> Option<&[f64]> {
        let width = self.columns.len();
        self.values.get(i * width..(i + 1) * width)
    }

    /// Returns the rows in order.
    pub fn rows(&self) -> impl Iterator<Item = &[f64]> + '_ {
        self.values.chunks_exact(self.columns.len().max(1))
    }

    /// Returns the values of the column `name`, one per row, if there is such a column.
    pub fn column(&self, name: &str) -> Option<impl Iterator<Item = f64> + '_> {
        let j = self.columns.iter().position(|c| c == name)?;
        Some(self.rows().map(move |row| row[j]))
    }

    /// Writes the table as CSV with the same header and number format as [`CsvSink`].
    pub fn write_csv<W: Write>(&self, out: &mut W) -> io::Result<()> {
        write_header(out, &self.columns)?;
        self.rows().try_for_each(|row| write_row(out, row))
    }
}

impl Sink for Table {
    fn begin(&mut self, columns: &[String], rows: Option<usize>) -> io::Result<()> {
        self.columns = columns.to_vec();
        self.values.clear();
        self.reserve(rows.unwrap_or(0));
        Ok(())
    }

    fn row(&mut self, values: &[f64]) -> io::Result<()> {
        self.values.extend_from_slice(values);
        Ok(())
    }

    /// Reserves if the memory is there; otherwise the table grows as rows come.
    fn reserve(&mut self, additional: usize) {
        if let Some(values) = additional.checked_mul(self.columns.len()) {
            let _ = self.values.try_reserve(values);
        }
    }
}

/// Streams rows as CSV to a writer (wrap a file in a `BufWriter`): the header, then one line per
/// row, numbers as [`write_number`] writes them.
///
/// # What a killed run leaves
///
/// The sink flushes its writer after the header and after any row written at least
/// [`FLUSH_INTERVAL`] (one second of wall time, [`flush_every`](Self::flush_every) to change
/// it) after the last flush, so that a run killed with SIGKILL, which runs no destructor,
/// leaves on disk every row written up to the last flush: all rows but those of the last
/// second while rows keep coming. The clock is read once per row (`Instant::now`, a vDSO call
/// of some tens of nanoseconds on Linux, against about a microsecond to format a row of a
/// dozen numbers), which allocates nothing. The last line of a killed file may be cut short
/// where a flush of a full `BufWriter` buffer was interrupted mid-row (the buffer is written
/// when it fills, wherever a row ends); every line before it is complete. A sink flushed by
/// [`Sink::finish`] (the end of the run, or an interrupt) has only complete lines.
///
/// # Resuming
///
/// The sink counts the bytes it writes and their CRC-32 (crc32fast, some GB/s: nothing next
/// to formatting the numbers); [`Sink::position`] flushes and reports both, and a checkpoint
/// keeps them. [`CsvSink::resume_file`] opens the file again, checks the CRC-32 of its first
/// bytes (another run's file, or one edited since, is refused), cuts it to that length (the
/// rows written after the checkpoint, which the resumed run writes again) and appends, so that
/// the resumed run's file equals the uninterrupted run's byte for byte.
#[derive(Debug)]
pub struct CsvSink<W: Write> {
    out: W,
    interval: Duration,
    last_flush: Option<Instant>,
    /// The bytes in the writer: those written through this sink, plus those it held when the
    /// sink was created to continue it.
    bytes: u64,
    /// The CRC-32 of those bytes.
    crc: crc32fast::Hasher,
}

/// A writer that counts the bytes written through it, so that the sink knows its file's
/// length without asking the writer (a `BufWriter` cannot tell).
struct Counting<'a, W> {
    out: &'a mut W,
    bytes: &'a mut u64,
    crc: &'a mut crc32fast::Hasher,
}

impl<W: Write> Write for Counting<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = self.out.write(buf)?;
        *self.bytes += written as u64;
        self.crc.update(&buf[..written]);
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// The longest wall time a [`CsvSink`] keeps written rows in its writer's buffer while rows
/// keep coming: one second.
pub const FLUSH_INTERVAL: Duration = Duration::from_secs(1);

impl<W: Write> CsvSink<W> {
    /// Streams to `out`, flushing it at least every [`FLUSH_INTERVAL`] while rows come.
    pub fn new(out: W) -> Self {
        Self::continuing(out, 0, 0)
    }

    /// Streams to `out`, which already holds the first `bytes` bytes of the run's CSV, of
    /// CRC-32 `crc32` (the file at a checkpoint): [`Sink::resume`] accepts a checkpoint of
    /// exactly that length and CRC and appends after it.
    pub fn continuing(out: W, bytes: u64, crc32: u32) -> Self {
        CsvSink {
            out,
            interval: FLUSH_INTERVAL,
            last_flush: None,
            bytes,
            crc: crc32fast::Hasher::new_with_initial_len(crc32, bytes),
        }
    }

    /// Returns the number of bytes in the writer (written through the sink, or held before).
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Returns the writer with the byte counter, for writing through.
    fn counting(&mut self) -> Counting<'_, W> {
        Counting {
            out: &mut self.out,
            bytes: &mut self.bytes,
            crc: &mut self.crc,
        }
    }

    /// Flushes after a row once `interval` has passed since the last flush instead
    /// (`Duration::ZERO`: after every row; `Duration::MAX`: only at the end).
    pub fn flush_every(mut self, interval: Duration) -> Self {
        self.interval = interval;
        self
    }

    /// Returns the writer.
    pub fn into_inner(self) -> W {
        self.out
    }

    /// Returns a reference to the writer (e.g. to see what a `BufWriter` still holds).
    pub fn get_ref(&self) -> &W {
        &self.out
    }

    /// Flushes the writer and notes the time.
    fn flush_now(&mut self, now: Instant) -> io::Result<()> {
        self.last_flush = Some(now);
        self.out.flush()
    }
}

impl<W: Write> Sink for CsvSink<W> {
    fn begin(&mut self, columns: &[String], _rows: Option<usize>) -> io::Result<()> {
        write_header(&mut self.counting(), columns)?;
        self.flush_now(Instant::now())
    }

    fn row(&mut self, values: &[f64]) -> io::Result<()> {
        write_row(&mut self.counting(), values)?;
        let now = Instant::now();
        match self.last_flush {
            Some(last) if now.saturating_duration_since(last) < self.interval => Ok(()),
            _ => self.flush_now(now),
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        self.flush_now(Instant::now())
    }

    fn position(&mut self) -> io::Result<OutputPosition> {
        self.flush_now(Instant::now())?;
        Ok(OutputPosition {
            rows: 0,
            bytes: Some(self.bytes),
            crc32: Some(self.crc.clone().finalize()),
            parts: None,
        })
    }

    /// Writes no header: the writer must hold exactly the checkpoint's bytes (a sink made by
    /// [`CsvSink::resume_file`] or [`CsvSink::continuing`]); any other length is an
    /// `InvalidInput` error rather than a file with a gap or a repeated stretch.
    fn resume(&mut self, _columns: &[String], position: &OutputPosition) -> io::Result<()> {
        let crc = self.crc.clone().finalize();
        match position.bytes {
            Some(bytes) if bytes == self.bytes && position.crc32.is_none_or(|c| c == crc) => Ok(()),
            expected => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "the CSV writer holds {} bytes where the checkpoint's file had {}; continue \
                     the file with CsvSink::resume_file",
                    self.bytes,
                    expected.map_or("none (the checkpoint has no CSV)".to_string(), |b| b
                        .to_string())
                ),
            )),
        }
    }
}

impl CsvSink<io::BufWriter<File>> {
    /// Opens the CSV file `path` of a checkpointed run to continue it: the file must hold at
    /// least the checkpoint's `position.bytes`, with the checkpoint's CRC-32 (else
    /// `InvalidData`: it is not the file the run wrote, or it was cut or edited), is cut to
    /// exactly that length (dropping the rows written after the checkpoint, which the resumed
    /// run writes again) and is appended to. Reading the prefix for its CRC takes a second
    /// per GB or so, once.
    pub fn resume_file(path: &Path, position: &OutputPosition) -> io::Result<Self> {
        let Some(bytes) = position.bytes else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the checkpoint records no CSV file position",
            ));
        };
        let mut file = OpenOptions::new().read(true).write(true).open(path)?;
        let length = file.metadata()?.len();
        if length < bytes {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} has {length} bytes, fewer than the {bytes} it had at the checkpoint",
                    path.display()
                ),
            ));
        }
        let mut crc = crc32fast::Hasher::new();
        let mut buffer = vec![0u8; 1 << 16];
        let mut left = bytes;
        while left > 0 {
            let chunk = buffer
                .len()
                .min(usize::try_from(left).unwrap_or(usize::MAX));
            file.read_exact(&mut buffer[..chunk])?;
            crc.update(&buffer[..chunk]);
            left -= chunk as u64;
        }
        let crc = crc.finalize();
        if position.crc32.is_some_and(|expected| expected != crc) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} is not the file the checkpointed run wrote: its first {bytes} bytes \
                     differ from the checkpoint's (CRC-32)",
                    path.display()
                ),
            ));
        }
        file.set_len(bytes)?;
        file.seek(SeekFrom::End(0))?;
        Ok(Self::continuing(io::BufWriter::new(file), bytes, crc))
    }
}

/// Writes the comma-separated `columns` and a newline; a name with a comma, a quote or a line
/// break is quoted as RFC 4180 says (`"a,b"`, `"say ""hi"""`).
fn write_header<W: Write>(out: &mut W, columns: &[String]) -> io::Result<()> {
    for (j, name) in columns.iter().enumerate() {
        if j > 0 {
            out.write_all(b",")?;
        }
        if name.contains([',', '"', '\n', '\r']) {
            write!(out, "\"{}\"", name.replace('"', "\"\""))?;
        } else {
            out.write_all(name.as_bytes())?;
        }
    }
    out.write_all(b"\n")
}

/// Writes the comma-separated `values` and a newline, without allocating.
fn write_row<W: Write>(out: &mut W, values: &[f64]) -> io::Result<()> {
    for (j, &x) in values.iter().enumerate() {
        if j > 0 {
            out.write_all(b",")?;
        }
        write_number(out, x)?;
    }
    out.write_all(b"\n")
}

/// Writes `x` so that it reads back to the same `f64` (Rust's shortest round-trip form): plain
/// for `0` and `1e-4 ≤ |x| < 1e15`, in scientific notation otherwise — the examples' format.
pub fn write_number<W: Write>(out: &mut W, x: f64) -> io::Result<()> {
    if x == 0.0 || (1e-4..1e15).contains(&x.abs()) {
        write!(out, "{x}")
    } else {
        write!(out, "{x:e}")
    }
}

/// Returns the coordinate names of a family of `count` bodies with per-body coordinates
/// `names`, body by body: `x[0], y[0], x[1], y[1], …` for `family(&["x", "y"], 2)`, which the
/// driver writes as the columns `q.x[0]`, …, `v.x[0]`, ….
pub fn family(names: &[&str], count: usize) -> Vec<String> {
    (0..count)
        .flat_map(|i| names.iter().map(move |name| format!("{name}[{i}]")))
        .collect()
}
